import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { afterAll, describe, expect, it } from 'vitest';

/**
 * crm-ferry as another program gets it: the package packed (`npm pack`) and installed from the
 * tarball into an empty project on this node (20 in CI) with TypeScript and @types/node as its
 * development dependencies. There: the install warns of no engine; the package brings no tsx or
 * esbuild; importing `crm-ferry` loads nothing of the sandbox and costs at most 4 times a bare
 * node's start; every code block of docs/library.md compiles under strict TypeScript as written
 * and runs, in order, against a sandbox started through `crm-ferry/sandbox`; a wrong option is a
 * FerryError of kind `input`; and the installed command runs its bundle.
 */
const ROOT = resolve(import.meta.dirname, '../..');
const run = promisify(execFile);
const work = mkdtempSync(join(tmpdir(), 'ferry-package-'));
const npm = (args: string[], cwd: string) =>
  run('npm', [...args, '--no-audit', '--no-fund'], {
    cwd,
    maxBuffer: 64 * 1024 * 1024,
    env: { ...process.env, npm_config_update_notifier: 'false', npm_config_loglevel: 'warn' },
  });

afterAll(() => rmSync(work, { recursive: true, force: true }));

/** Whether dist/ was built after every source file changed (as bin/crm-ferry.js decides in a checkout). */
function builtIsFresh(): boolean {
  let built: number;
  try {
    built = statSync(join(ROOT, 'dist/.build-stamp')).mtimeMs;
  } catch {
    return false;
  }
  return readdirSync(join(ROOT, 'src'), { recursive: true }).every(
    (name) => !String(name).endsWith('.ts') || statSync(join(ROOT, 'src', String(name))).mtimeMs <= built,
  );
}

const versionOf = (name: string): string =>
  (JSON.parse(readFileSync(join(ROOT, 'node_modules', name, 'package.json'), 'utf8')) as { version: string }).version;

/** The ```ts blocks of docs/library.md, in order. */
function docBlocks(): string[] {
  const text = readFileSync(join(ROOT, 'docs/library.md'), 'utf8');
  return [...text.matchAll(/^```ts\n([\s\S]*?)^```$/gm)].map((match) => match[1] as string);
}

/** What the doc's examples read: a plan of one step, its mapping and input, and a mapping with a transform of its own. */
const FIXTURES: Record<string, string> = {
  'migration/people.csv': 'no,first,last\n17,Ada,Lovelace\n4711,Alan,Turing\nnone,Grace,Hopper\n',
  'migration/people.yaml':
    'version: 1\nentity: party\nkey: "{{no}}"\nfields:\n  - { to: type, value: person }\n  - { to: firstName, value: { column: first } }\n  - { to: lastName, value: { column: last } }\n',
  'migration/customers.yaml':
    'version: 1\nentity: party\nkey: "customer-{{no}}"\nfields:\n  - { to: type, value: person }\n  - { to: lastName, value: { column: last } }\n  - { to: about, value: { column: no, transform: [{ customerNumber: K- }] } }\n',
  'migration/plan.yaml': 'version: 1\nsteps:\n  - { name: people, mapping: people.yaml, input: people.csv }\n',
};

/**
 * The program that runs the examples: starts a sandbox through `crm-ferry/sandbox`, gives the
 * first block (Connecting) its token and address, imports each block in order, and checks that a
 * wrong option is refused as the doc says.
 */
const RUNNER = `
import { FerryError, runExport } from 'crm-ferry';
import { startSandbox, type Sandbox } from 'crm-ferry/sandbox';

const sandbox: Sandbox = await startSandbox({ port: 0, host: '127.0.0.1' });
try {
  process.env.MY_CRM_TOKEN = sandbox.token;
  process.env.MY_CRM_URL = sandbox.url;
  const { client } = await import('./doc-0.js');
  for (let i = 1; i < Number(process.argv[2]); i += 1) {
    console.error('--- block', i);
    // The service stamps records in whole seconds, and verify reports a record made in the second
    // its state's first run began as added beside the run: a block starts in a second of its own,
    // so that the records of the block before are not the next block's to verify.
    await new Promise((next) => setTimeout(next, 1000 - (Date.now() % 1000)));
    await import('./doc-' + i + '.js');
  }
  const refused = await runExport({ entity: 'parties', out: 'x.csv', where: 'type is person' as unknown as string[] }, { client }).catch((error: unknown) => error);
  const other = await startSandbox({ port: 0, host: '127.0.0.1', rateLimit: { limit: 0, windowSeconds: 60 } }).catch((error: unknown) => error);
  const described = (error: unknown) => (error instanceof FerryError ? { code: error.code, kind: error.kind, retryable: error.retryable, message: error.message } : String(error));
  console.log(JSON.stringify({ refused: described(refused), sandbox: described(other) }));
  await client.close();
} finally {
  await sandbox.close();
}
`;

/** Lists every module an import loads (node's resolve hook), for `import('crm-ferry')`. */
const HOOKS = `export async function resolve(specifier, context, next) {
  const resolved = await next(specifier, context);
  process.stderr.write('LOADED ' + resolved.url + '\\n');
  return resolved;
}
`;

describe('the packed package', () => {
  it('installs into an empty project without warnings or build tools, loads its library lightly, and runs every example of docs/library.md', async () => {
    if (!builtIsFresh()) await npm(['run', 'build'], ROOT);
    // dist/ is what `npm ci` built (the prepare script); packing does not build it again.
    const packed = await npm(['pack', '--ignore-scripts', '--json', '--pack-destination', work], ROOT);
    const [{ filename, files }] = JSON.parse(packed.stdout) as [{ filename: string; files: Array<{ path: string }> }];
    const shipped = files.map((file) => file.path);
    expect(shipped).toEqual(
      expect.arrayContaining([
        'dist/lib/index.js',
        'dist/lib/sandbox.js',
        'dist/index.d.ts',
        'dist/sandbox-door.d.ts',
        'dist/bundle/main.js',
        'bin/crm-ferry.js',
        'mappings/generic-people.yaml',
      ]),
    );
    // The sources are not shipped: the bundles are what runs, the declarations what type-checks.
    expect(shipped.filter((path) => path.startsWith('src/') || path.endsWith('.test.ts'))).toEqual([]);

    const app = join(work, 'app');
    mkdirSync(app);
    writeFileSync(
      join(app, 'package.json'),
      JSON.stringify({
        name: 'consumer',
        private: true,
        type: 'module',
        dependencies: { 'crm-ferry': `file:${join(work, filename)}` },
        devDependencies: { typescript: versionOf('typescript'), '@types/node': versionOf('@types/node') },
      }),
    );
    const installed = await npm(['install', '--prefer-offline'], app);
    // npm 11 names every package with a script it may run on install, crm-ferry's `prepare` (the
    // checkout's build, which an install from the registry or a tarball never runs) included: that
    // note aside, no warning.
    const warnings = `${installed.stdout}${installed.stderr}`
      .split('\n')
      .filter((line) => /^npm warn/i.test(line) && !/^npm warn install-scripts/i.test(line));
    expect(`${installed.stdout}${installed.stderr}`).not.toMatch(/EBADENGINE/);
    expect(warnings).toEqual([]);
    const production = await npm(['ls', '--omit=dev', '--all', '--parseable'], app);
    const packages = production.stdout.split('\n').map((line) => line.replace(/^.*node_modules[\\/]/, ''));
    expect(packages).toContain('crm-ferry');
    expect(packages.filter((name) => /^(tsx|esbuild|@esbuild[\\/].*|fastify|typescript)$/.test(name))).toEqual([]);

    // The library alone: none of the sandbox's modules (its bundle, fastify, pino, ajv).
    writeFileSync(join(app, 'hooks.mjs'), HOOKS);
    writeFileSync(
      join(app, 'register.mjs'),
      "import { register } from 'node:module';\nregister('./hooks.mjs', import.meta.url);\n",
    );
    const loaded = await run(
      process.execPath,
      ['--import', './register.mjs', '--input-type=module', '-e', "await import('crm-ferry')"],
      { cwd: app },
    );
    const urls = loaded.stderr.split('\n').filter((line) => line.startsWith('LOADED '));
    expect(urls.some((url) => url.includes('crm-ferry/dist/lib/index.js'))).toBe(true);
    expect(urls.filter((url) => /sandbox|fastify|pino|ajv|workbench/.test(url))).toEqual([]);
    // How long that takes is measured by `npm run bench -- library-import` (docs/benchmarks.md), not here:
    // a timed assertion fails on a busy machine without anything being wrong.

    // The examples of docs/library.md, each a module compiled as written; the first makes the
    // client and the account the others go on with (it exports them, and they import them).
    const blocks = docBlocks();
    expect(blocks.length).toBeGreaterThanOrEqual(12);
    for (const [index, block] of blocks.entries()) {
      const uses = ['client', 'account'].filter(
        (name) =>
          index > 0 &&
          new RegExp(`\\b${name}\\b`).test(block) &&
          !new RegExp(`const (\\{[^}]*\\b)?${name}\\b`).test(block),
      );
      const prelude = uses.length > 0 ? `import { ${uses.join(', ')} } from './doc-0.js';\n` : '';
      writeFileSync(
        join(app, `doc-${index}.ts`),
        `${prelude}${block}${index === 0 ? 'export { account, client };\n' : 'export {};\n'}`,
      );
    }
    writeFileSync(join(app, 'runner.ts'), RUNNER);
    writeFileSync(
      join(app, 'tsconfig.json'),
      JSON.stringify({
        compilerOptions: {
          target: 'ES2022',
          module: 'NodeNext',
          moduleResolution: 'NodeNext',
          strict: true,
          outDir: 'out',
          skipLibCheck: false,
          types: ['node'],
        },
        include: ['*.ts'],
      }),
    );
    await run(join(app, 'node_modules/.bin/tsc'), ['-p', app], { cwd: app }).catch((error: { stdout?: string }) => {
      throw new Error(`tsc failed on the examples of docs/library.md:\n${error.stdout ?? String(error)}`);
    });
    const folder = join(app, 'out');
    for (const [file, text] of Object.entries(FIXTURES)) {
      mkdirSync(join(folder, file, '..'), { recursive: true });
      writeFileSync(join(folder, file), text);
    }
    const examples = await run(process.execPath, ['runner.js', String(blocks.length)], {
      cwd: folder,
      maxBuffer: 64 * 1024 * 1024,
    }).catch((error: { stderr?: string }) => {
      throw new Error(`the examples of docs/library.md failed:\n${error.stderr ?? String(error)}`);
    });
    const outcome = JSON.parse(examples.stdout.trim().split('\n').pop() as string) as Record<
      string,
      { code: string; kind: string; message: string }
    >;
    expect(outcome.refused).toMatchObject({
      code: 'CONFIG_INVALID',
      kind: 'input',
      retryable: false,
      message: expect.stringContaining('option `where`'),
    });
    expect(outcome.sandbox).toMatchObject({
      code: 'CONFIG_INVALID',
      kind: 'input',
      message: expect.stringContaining('option `rateLimit.limit`'),
    });
    // What the examples did, as they printed it: the plan's three people, the export of them, the
    // verify of the mapping with a transform of its own (true: it agrees), the refused option of
    // the errors' example, and the export of all seven parties.
    expect(examples.stdout).toMatch(/people: 3 created, 0 rejected/);
    expect(examples.stdout).toMatch(/^3 records in parties\.jsonl$/m);
    expect(examples.stdout, `the examples printed:\n${examples.stdout}\n${examples.stderr}`).toMatch(/^true$/m);
    expect(examples.stderr).toMatch(/^USAGE \(input\): `format` xlsx disagrees with the extension of parties\.csv/m);
    // Rows from anywhere: two rows of a program's own, a mapping value, imported and verified.
    expect(examples.stdout).toMatch(/^2 created from rows true$/m);
    expect(examples.stdout).toMatch(/^7 records$/m);

    // The command as installed runs its bundle (dist/bundle/, build/bundle-cli.ts); the paths it
    // reads beside its own files (package.json, the ready mappings, the samples) resolve from it.
    const bin = join(app, 'node_modules/.bin/crm-ferry');
    const version = await run(bin, ['--version'], { cwd: app });
    expect(version.stdout.trim()).toBe(
      (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version,
    );
    const drafted = await run(
      bin,
      ['mapping', 'init', join(app, 'node_modules/crm-ferry/samples/crm/hubspot-contacts.csv')],
      { cwd: app },
    );
    expect(drafted.stdout).toMatch(
      /^# Started by crm-ferry mapping init from the ready-made mappings\/hubspot-contacts\.yaml:/m,
    );
  }, 900_000);
});
