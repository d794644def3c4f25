import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * crm-ferry as another program gets it: the package packed (`npm pack`), installed from the
 * tarball into an empty folder (its dependencies from npm's cache where it has them), and a
 * TypeScript program there that imports it by name, type-checked with `tsc --noEmit` against the
 * declarations the package ships, then run: it registers a transform of its own, runs a plan
 * against the sandbox and verifies it.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'ferry-package-'));
const npm = (args: string[], cwd: string) => run('npm', [...args, '--no-audit', '--no-fund', '--loglevel=error'], { cwd, maxBuffer: 64 * 1024 * 1024, env: { ...process.env, npm_config_update_notifier: 'false' } });

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Whether dist/ was built after every source file changed (as bin/crm-ferry.js decides in a checkout). */
function builtIsFresh(): boolean {
  let built: number;
  try {
    built = statSync(join(ROOT, 'dist/.build-stamp')).mtimeMs;
  } catch {
    return false;
  }
  return readdirSync(join(ROOT, 'src'), { recursive: true }).every((name) => !String(name).endsWith('.ts') || statSync(join(ROOT, 'src', String(name))).mtimeMs <= built);
}

const versionOf = (name: string): string => (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

const PROGRAM = `
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { z } from 'zod';
import { accountOf, connect, type CustomTransform, type ImportSummary, runImport, runVerify, startSandbox, transformRegistry, TransformError } from 'crm-ferry';

const initials: CustomTransform<{ separator: string }> = {
  name: 'initials',
  options: z.object({ separator: z.string().default('.') }),
  create: ({ separator }) => (value) => {
    const words = String(value ?? '').split(/\\s+/).filter(Boolean);
    if (words.length === 0) throw new TransformError('no name to take initials of', 'initials');
    return words.map((word) => word[0]!.toUpperCase() + separator).join('');
  },
};

// The declarations are real: a wrong option is a type error (this line would be unused with \`any\`).
export function wrong(): Promise<ImportSummary> {
  // @ts-expect-error concurrency is a number
  return runImport({ source: { kind: 'plan', planFile: 'p' }, stateDir: 's', concurrency: 'many' }, null!);
}

const dir = mkdtempSync(join(tmpdir(), 'consumer-'));
writeFileSync(join(dir, 'people.csv'), 'id,name\\n1,Ada Lovelace\\n2,Alan Mathison Turing\\n');
writeFileSync(join(dir, 'people.yaml'), [
  'version: 1',
  'entity: party',
  'key: "{{id}}"',
  'fields:',
  '  - { to: type, value: person }',
  '  - { to: lastName, value: { column: name } }',
  '  - { to: jobTitle, value: { column: name, transform: [initials] } }',
  '',
].join('\\n'));
writeFileSync(join(dir, 'plan.yaml'), 'version: 1\\nsteps:\\n  - { name: people, mapping: people.yaml, input: people.csv }\\n');

const sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
try {
  const { client } = await connect({ token: sandbox.token, baseUrl: sandbox.url, env: {} });
  const deps = { client, account: accountOf(client), transforms: transformRegistry([initials]) };
  const options = { source: { kind: 'plan' as const, planFile: join(dir, 'plan.yaml') }, stateDir: join(dir, 'state') };
  const imported = await runImport(options, deps);
  const verified = await runVerify(options, deps);
  const people = await client.transport.request<{ parties: Array<{ jobTitle: string }> }>({ method: 'GET', path: '/parties', query: { perPage: 100 } });
  console.log(JSON.stringify({ created: imported.steps[0]?.created, matches: verified.matches, jobTitles: people.body.parties.map((p) => p.jobTitle).sort() }));
} finally {
  await sandbox.close();
}
`;

describe('the packed package', () => {
  it('installs into an empty folder, type-checks a program that imports it, and runs a plan and a verify there', async () => {
    if (!builtIsFresh()) await npm(['run', 'build'], ROOT);
    // dist/ is what `npm ci` built (the prepare script); packing does not build it again.
    const packed = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT);
    const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: Array<{ path: string }> }];
    const shipped = files.map((file) => file.path);
    expect(shipped).toEqual(expect.arrayContaining(['dist/index.js', 'dist/index.d.ts', 'bin/crm-ferry.js', 'mappings/generic-people.yaml']));
    expect(shipped.filter((path) => path.endsWith('.test.ts'))).toEqual([]);

    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(join(app, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }));
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({ compilerOptions: { target: 'ES2022', module: 'NodeNext', moduleResolution: 'NodeNext', strict: true, noEmit: true, skipLibCheck: true, types: ['node'] }, include: ['main.ts'] }),
    );
    writeFileSync(join(app, 'main.ts'), PROGRAM);
    await npm(['install', '--prefer-offline', join(work, filename), `typescript@${versionOf('typescript')}`, `@types/node@${versionOf('@types/node')}`], app);

    await run(join(app, 'node_modules/.bin/tsc'), ['--noEmit', '-p', app], { cwd: app }).catch((error: { stdout?: string }) => {
      throw new Error(`tsc --noEmit failed on the program:\n${error.stdout ?? String(error)}`);
    });
    const { stdout } = await run(process.execPath, ['--import', 'tsx', 'main.ts'], { cwd: app });
    expect(JSON.parse(stdout.trim().split('\n').pop() as string)).toEqual({ created: 2, matches: true, jobTitles: ['A.L.', 'A.M.T.'] });

    // The command as installed runs its bundle (dist/bundle/, build/bundle-cli.ts), never the
    // sources through tsx, though npm unpacked src/ after dist/ (the newer files): sources that
    // cannot run make that sure. The paths it reads beside its own files (package.json, the
    // ready mappings, the samples) still resolve from the bundle.
    expect(shipped).toContain('dist/bundle/main.js');
    const bin = join(app, 'node_modules/.bin/crm-ferry');
    const installed = join(app, 'node_modules/crm-ferry');
    writeFileSync(join(installed, 'src/cli/main.ts'), "throw new Error('the installed command ran its sources');\n");
    const version = await run(bin, ['--version'], { cwd: app });
    expect(version.stdout.trim()).toBe((JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version);
    const drafted = await run(bin, ['mapping', 'init', join(installed, 'samples/crm/hubspot-contacts.csv')], { cwd: app });
    expect(drafted.stdout).toMatch(/^# Started by crm-ferry mapping init from the ready-made mappings\/hubspot-contacts\.yaml:/m);
  }, 600_000);
});
