import { describe, expect, it } from 'vitest';
import { commands } from '../../../src/cli/commands.ts';
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

  it('prints a command usage with --help, its options in groups', async () => {
    const f = fakeIo();
    expect(await main(['sandbox', '--help'], f.io)).toBe(0);
    expect(f.out()).toMatch(/^Usage: crm-ferry sandbox \[options\]/);
    expect(f.out()).toMatch(/Rehearsing trouble:\n\s+--rate-limit\s+<N\/h\|N\/min\|N\/s> limit requests per user/);
  });

  it.each(commands.map((c) => c.name))('crm-ferry %s --help: its usage, every option, exit 0', async (name) => {
    const command = await (commands.find((c) => c.name === name) as (typeof commands)[number]).load();
    const f = fakeIo();
    expect(await main([...name.split(' '), '--help'], f.io)).toBe(0);
    expect(f.out()).toMatch(new RegExp(`^Usage: crm-ferry ${name}`));
    for (const option of Object.keys(command.options)) expect(f.out()).toContain(`--${option}`);
    // The connection options have a group of their own wherever they appear.
    if ('token' in command.options && 'base-url' in command.options) expect(f.out()).toMatch(/Connection \(each flag, else the CRM_FERRY_\* variable named\):\n\s+--base-url/);
    expect(f.err()).toBe('');
  });

  it.each([
    [['help', 'inspect'], /^Usage: crm-ferry inspect FILE/],
    [['version'], /^\d+\.\d+\.\d+\n$/],
    [['-V'], /^\d+\.\d+\.\d+\n$/],
  ])('crm-ferry %j as people type it', async (argv, text) => {
    const f = fakeIo();
    expect(await main(argv, f.io)).toBe(0);
    expect(f.out()).toMatch(text);
  });

  it('a group word alone names its commands, exit 2', async () => {
    const f = fakeIo();
    expect(await main(['auth'], f.io)).toBe(2);
    expect(f.err()).toBe("crm-ferry auth needs a command: login, status or logout\nRun 'crm-ferry auth --help' for its options.\n");
  });

  it('a repeatable option keeps every value; any other option keeps the last one', async () => {
    const { parseCommandLine } = await import('../../../src/cli/parse.ts');
    const outcome = await parseCommandLine(['export', 'parties', '--where', 'tag is VIP', '--where', 'name is Acme', '--out', 'a.csv', '--out', 'b.csv', '--any', '--', '--odd']);
    expect(outcome.kind).toBe('run');
    if (outcome.kind !== 'run') return;
    expect(outcome.args).toEqual({ values: { where: ['tag is VIP', 'name is Acme'], out: 'b.csv', any: true }, positionals: ['parties', '--odd'] });
  });

  it('values stay the text typed: no numbers, no negation, no camelCase copies', async () => {
    const { parseCommandLine } = await import('../../../src/cli/parse.ts');
    const outcome = await parseCommandLine(['auth', 'login', '--client-id', '0012', '--no-browser']);
    if (outcome.kind !== 'run') throw new Error(`expected a run, got ${outcome.kind}`);
    expect(outcome.args.values).toEqual({ 'client-id': '0012', 'no-browser': true });
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
