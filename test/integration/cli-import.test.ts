import { spawn } from 'node:child_process';
import { copyFileSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-cli-import-'));
let box: TestSandbox;

beforeAll(async () => {
  box = await startTestSandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 40, latencyJitterMs: 0 } });
  copyFileSync(join(ROOT, 'mappings/generic-organisations.yaml'), join(dir, 'organisations.yaml'));
  copyFileSync(join(ROOT, 'mappings/generic-people.yaml'), join(dir, 'people.yaml'));
  copyFileSync(join(ROOT, 'samples/contacts.csv'), join(dir, 'contacts.csv'));
  writeFileSync(join(dir, 'plan.yaml'), 'version: 1\nsteps:\n  - { name: organisations, mapping: organisations.yaml, input: contacts.csv }\n  - { name: people, mapping: people.yaml, input: contacts.csv }\n');
});

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });

describe('crm-ferry import / run / rollback: usage', () => {
  it.each([
    [['import', '--mapping', 'people.yaml'], /import needs --mapping M and --input F/],
    [['import', 'people.yaml'], /import takes no positional arguments/],
    [['run'], /run takes one PLAN file/],
    [['run', 'plan.yaml', '--limit', '0'], /--limit takes a whole number from 1/],
    [['run', 'plan.yaml', '--concurrency', '500'], /--concurrency takes a whole number from 1 to 64/],
    [['run', 'plan.yaml', '--limit', '5', '--delete-missing'], /--delete-missing does not go with --limit/],
    [['run', 'plan.yaml', '--fresh'], /add --yes to confirm it in a script/],
    [['rollback'], /rollback needs the PLAN/],
    [['export', 'parties', '--out', 'x.csv', '--where', 'nope is 1'], /parties have no field "nope"/],
  ])('%j exits 2 with one clear line', async (args, message) => {
    const { code, stderr } = await runCli(args, { cwd: dir, env: env() });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/internal error|\n\s+at /);
  });
});

describe('crm-ferry run: a real process interrupted with Ctrl-C', () => {
  it('stops on SIGINT with exit 130 and says how to go on; the same command then finishes', async () => {
    const stateDir = join(dir, 'sigint-state');
    const child = spawn(process.execPath, [join(ROOT, 'bin/crm-ferry.js'), 'run', join(dir, 'plan.yaml'), '--state-dir', stateDir, '--concurrency', '1'], {
      cwd: dir,
      env: { ...process.env, ...env() },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk) => (stdout += chunk));
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
      // Writing has begun: interrupt a little later, in the middle of the rows.
      if (stderr.includes('Writing') && !child.killed) setTimeout(() => child.kill('SIGINT'), 400);
    });
    const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
    expect(code, stderr).toBe(130);
    expect(stdout).toContain('Interrupted. Run the same command again to go on where it stopped.');

    const again = await runCli(['run', join(dir, 'plan.yaml'), '--state-dir', stateDir], { cwd: dir, env: env() });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/unchanged\s+\d+/);
    expect(again.stdout).toContain('Done: every row is in the account.');
  }, 60_000);

  it('exit 3 when rows are rejected, with the rejects file named', async () => {
    writeFileSync(join(dir, 'bad.yaml'), 'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: type, value: person }\n  - { to: lastName, value: { column: last } }\n  - { to: custom, definition: Account number, tag: null, value: { column: account } }\n');
    writeFileSync(join(dir, 'bad.csv'), 'id,last,account\n1,Good,AB-1234\n2,Bad,nope\n');
    const { code, stdout } = await runCli(['import', '--mapping', 'bad.yaml', '--input', 'bad.csv', '--state-dir', 'bad-state'], { cwd: dir, env: env() });
    expect(code).toBe(3);
    expect(stdout).toMatch(/rejected\s+1\s+-> bad-state\/results\/bad\.rejects\.csv/);
    expect(stdout).toContain('--retry-rejects');
  });
});
