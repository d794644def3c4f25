import { describe, expect, it } from 'vitest';
import { main, reportError } from '../../../src/cli/main.ts';
import { FerryError } from '../../../src/errors/index.ts';
import { fakeIo } from '../../helpers/fake-io.ts';

describe('command line entry', () => {
  it.each([
    [[], 2, /Usage: crm-ferry <command>/],
    [['--help'], 0, /sandbox\s+run the local copy of the CRM service/],
  ])('crm-ferry %j exits %i', async (argv, code, text) => {
    const f = fakeIo();
    expect(await main(argv, f.io)).toBe(code);
    expect(f.out()).toMatch(text);
  });

  it('refuses an unknown command with exit code 2', async () => {
    const f = fakeIo();
    expect(await main(['frobnicate'], f.io)).toBe(2);
    expect(f.err()).toMatch(/^unknown command: frobnicate/);
  });

  it('refuses an unknown flag in one line, pointing at the command\'s help', async () => {
    const f = fakeIo();
    expect(await main(['sandbox', '--colour', 'red'], f.io)).toBe(2);
    expect(f.err()).toBe("crm-ferry sandbox: unknown option --colour\nRun 'crm-ferry sandbox --help' for its options.\n");
  });

  it('prints a command usage with --help', async () => {
    const f = fakeIo();
    expect(await main(['sandbox', '--help'], f.io)).toBe(0);
    expect(f.out()).toMatch(/--rate-limit N\/h\|N\/min\|N\/s/);
  });

  it('reports a FerryError with code, location and hint', () => {
    const f = fakeIo();
    const error = new FerryError('SOURCE_MALFORMED_RECORD', 'unclosed quote', {
      location: { file: 'people.csv', row: 12, line: 14 },
      hint: 'Fix the quote in the file.',
    });
    expect(reportError(error, f.io)).toBe(2);
    expect(f.err()).toBe('error [SOURCE_MALFORMED_RECORD] at people.csv, line 14, row 12: unclosed quote\n  Fix the quote in the file.\n');
  });

  it('reports anything else as a bug with exit code 1', () => {
    const f = fakeIo();
    expect(reportError(new TypeError('x is undefined'), f.io)).toBe(1);
    expect(f.err()).toMatch(/^internal error: this is a bug in crm-ferry/);
  });
});
