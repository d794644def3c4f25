import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const MAPPING = join(ROOT, 'samples/plans/organisations.yaml');
const INPUT = join(ROOT, 'samples/contacts.csv');
const dir = mkdtempSync(join(tmpdir(), 'ferry-file-options-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let box: TestSandbox;
beforeAll(async () => {
  box = await startTestSandbox({ tokens: ['file-options-token'] });
});
afterAll(() => box.close());

/**
 * Every option (or argument) that names a file crm-ferry reads, as a command line around FILE.
 * A new one belongs here: the tests below hold each to the rules every input follows.
 */
const FILE_OPTIONS: Array<[string, (file: string) => string[]]> = [
  ['inspect FILE', (f) => ['inspect', f]],
  ['mapping init FILE', (f) => ['mapping', 'init', f]],
  ['validate --mapping', (f) => ['validate', '--mapping', f, '--input', INPUT, '--rejects', join(dir, 'v1.rejects.csv')]],
  ['validate --input', (f) => ['validate', '--mapping', MAPPING, '--input', f, '--rejects', join(dir, 'v2.rejects.csv')]],
  ['validate --plan', (f) => ['validate', '--plan', f]],
  ['import --mapping', (f) => ['import', '--mapping', f, '--input', INPUT, '--state-dir', join(dir, 'state-1'), ...connection()]],
  ['import --input', (f) => ['import', '--mapping', MAPPING, '--input', f, '--state-dir', join(dir, 'state-2'), ...connection()]],
  ['run PLAN', (f) => ['run', f, '--state-dir', join(dir, 'state-3'), ...connection()]],
  ['export --filter', (f) => ['export', 'parties', '--out', join(dir, 'out.csv'), '--filter', f, ...connection()]],
  ['export --mapping', (f) => ['export', 'parties', '--out', join(dir, 'out.csv'), '--mapping', f, ...connection()]],
  ['export --state', (f) => ['export', 'parties', '--out', join(dir, 'out.csv'), '--since', 'auto', '--state', f, ...connection()]],
  ['api --data @FILE', (f) => ['api', '/parties', '--data', `@${f}`, ...connection()]],
  ['sandbox --data', (f) => ['sandbox', '--port', '0', '--token', 'file-options-token', '--data', f]],
];

function connection(): string[] {
  return ['--base-url', box.url, '--token', 'file-options-token'];
}

describe('every file option refuses a path under /proc, /sys or /dev (one checkNotSpecial rule)', () => {
  it.each(FILE_OPTIONS)('%s', async (_name, args) => {
    const { code, stderr } = await runCli(args('/proc/self/status'), { env: {}, cwd: dir });
    expect(stderr).toMatch(/cannot live under \/proc: it holds no ordinary files|cannot write \/proc\/self\/status: it is not a regular file/);
    expect(code).toBe(2);
  });

  it('follows a link into /proc', async () => {
    const { symlinkSync } = await import('node:fs');
    const link = join(dir, 'status.csv');
    symlinkSync('/proc/self/status', link);
    const { code, stderr } = await runCli(['inspect', link], { env: {}, cwd: dir });
    expect(stderr).toMatch(/the input file cannot live under \/proc/);
    expect(code).toBe(2);
  });
});
