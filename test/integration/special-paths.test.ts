import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { makeFolders } from '../../src/util/make-folders.ts';
import { runCli } from '../helpers/fake-io.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const PLAN = join(ROOT, 'samples/plans/contacts.plan.yaml');
const dir = mkdtempSync(join(tmpdir(), 'ferry-special-'));
const FIFO = join(dir, 'pipe');
execFileSync('mkfifo', [FIFO]);
writeFileSync(join(dir, 'plain'), 'x');
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/**
 * Paths that are not storage are refused before anything waits on them: a recursive mkdir under
 * /proc never ends and ignores Ctrl-C, and opening a FIFO blocks until a writer comes.
 */
describe('special paths are refused up front', () => {
  it.each([
    [
      'sandbox --data under /proc',
      ['sandbox', '--port', '0', '--token', 'special-token', '--data', '/proc/x/sb.json'],
      /the sandbox data file cannot live under \/proc/,
    ],
    [
      'sandbox --data in a missing /proc folder',
      ['sandbox', '--port', '0', '--token', 'special-token', '--data', '/proc/self/x/y/sb.json'],
      /cannot live under \/proc/,
    ],
    [
      'sandbox --data that is a FIFO',
      ['sandbox', '--port', '0', '--token', 'special-token', '--data', FIFO],
      /is a FIFO, not a regular file/,
    ],
    [
      'validate --rejects-dir under /proc',
      ['validate', '--plan', PLAN, '--rejects-dir', '/proc/x'],
      /the rejects folder cannot live under \/proc/,
    ],
    [
      'validate --rejects-dir deep under /proc',
      ['validate', '--plan', PLAN, '--rejects-dir', '/proc/self/x/y'],
      /the rejects folder cannot live under \/proc/,
    ],
    [
      'validate --rejects-dir through a FIFO',
      ['validate', '--plan', PLAN, '--rejects-dir', join(FIFO, 'out')],
      /pipe is not a folder/,
    ],
    [
      'validate --rejects-dir through a file',
      ['validate', '--plan', PLAN, '--rejects-dir', join(dir, 'plain', 'out')],
      /plain is not a folder/,
    ],
    ['inspect of a FIFO', ['inspect', FIFO], /this is not a regular file/],
    // Looking whether an input is a rejects file fed back must not open a FIFO (that blocks).
    [
      'validate of a FIFO',
      ['validate', '--mapping', join(ROOT, 'samples/plans/organisations.yaml'), '--input', FIFO],
      /this is not a regular file/,
    ],
  ])('%s: exit 2 with a clear message', async (_what, args, message) => {
    const { code, stderr } = await runCli(args, { env: {}, cwd: dir });
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/internal error/);
    expect(code).toBe(2);
  });

  it('creates ordinary missing folders level by level with the mode asked for', async () => {
    const deep = join(dir, 'a', 'b', 'c');
    expect(await makeFolders(deep, { mode: 0o700, what: 'the folder', hint: '' })).toBe(deep);
    for (const level of [join(dir, 'a'), join(dir, 'a', 'b'), deep]) expect(statSync(level).mode & 0o777).toBe(0o700);
    // Again: nothing to do, no error.
    await makeFolders(deep, { mode: 0o700, what: 'the folder', hint: '' });
  });
});
