import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { commands } from '../../../src/cli/commands.ts';
import { main, reportError } from '../../../src/cli/main.ts';
import { MIN_TOKEN } from '../../../src/cli/sandbox.ts';
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

  it("refuses an unknown flag in one line, pointing at the command's help", async () => {
    const f = fakeIo();
    expect(await main(['sandbox', '--colour', 'red'], f.io)).toBe(2);
    expect(f.err()).toBe(
      "crm-ferry sandbox: unknown option --colour\nRun 'crm-ferry sandbox --help' for its options.\n",
    );
  });

  it('prints a command usage with --help, its options in groups', async () => {
    const f = fakeIo();
    expect(await main(['sandbox', '--help'], f.io)).toBe(0);
    expect(f.out()).toMatch(/^Usage: crm-ferry sandbox \[options\]/);
    expect(f.out()).toMatch(/Rehearsing trouble:\n\s+--rate-limit\s+<N\/h\|N\/min\|N\/s> limit requests per user/);
  });

  it('shows a value that may be left out in brackets, as docs/importer.md writes --retry-rejects [FILE]', async () => {
    const f = fakeIo();
    expect(await main(['run', '--help'], f.io)).toBe(0);
    expect(f.out()).toMatch(/--retry-rejects\s+\[FILE\] only the rows/);
    expect(f.out()).toMatch(/--state-dir\s+<DIR> /);
  });

  it('says in export --help which --where conditions are checked here and cost a full read', async () => {
    const f = fakeIo();
    expect(await main(['export', '--help'], f.io)).toBe(0);
    const help = f.out().replace(/\s+/g, ' ');
    expect(help).toContain("an opportunity's value (or amount) `is greater than` / `is less than` N is checked here");
    expect(help).toContain('with no other condition, a full read of the list');
  });

  it('says in sandbox --help and docs/sandbox.md how long a --token must be, the rule it is refused by', async () => {
    const f = fakeIo();
    expect(await main(['sandbox', '--help'], f.io)).toBe(0);
    const rule = `at least ${MIN_TOKEN} visible characters`;
    expect(f.out().replace(/\s+/g, ' ')).toMatch(new RegExp(`--token <VALUE> accept VALUE \\(${rule}, no spaces\\)`));
    const docs = await readFile(new URL('../../../docs/sandbox.md', import.meta.url), 'utf8');
    expect(docs).toMatch(new RegExp(`^\\| \`--token VALUE\` \\|.*${rule}`, 'm'));
    const short = fakeIo();
    expect(await main(['sandbox', '--token', 't'.repeat(MIN_TOKEN - 1)], short.io)).toBe(2);
    expect(short.err()).toContain(rule);
  });

  it.each(commands.map((c) => c.name))('crm-ferry %s --help: its usage, every option, exit 0', async (name) => {
    const command = await (commands.find((c) => c.name === name) as (typeof commands)[number]).load();
    const f = fakeIo();
    expect(await main([...name.split(' '), '--help'], f.io)).toBe(0);
    expect(f.out()).toMatch(new RegExp(`^Usage: crm-ferry ${name}`));
    for (const option of Object.keys(command.options)) expect(f.out()).toContain(`--${option}`);
    // The connection options have a group of their own wherever they appear.
    if ('token' in command.options && 'base-url' in command.options)
      expect(f.out()).toMatch(/Connection \(each flag, else the CRM_FERRY_\* variable named\):\n\s+--base-url/);
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
    expect(f.err()).toBe(
      "crm-ferry auth needs a command: login, status or logout\nRun 'crm-ferry auth --help' for its options.\n",
    );
  });

  it('a repeatable option keeps every value; any other option keeps the last one', async () => {
    const { parseCommandLine } = await import('../../../src/cli/parse.ts');
    const outcome = await parseCommandLine([
      'export',
      'parties',
      '--where',
      'tag is VIP',
      '--where',
      'name is Acme',
      '--out',
      'a.csv',
      '--out',
      'b.csv',
      '--any',
      '--',
      '--odd',
    ]);
    expect(outcome.kind).toBe('run');
    if (outcome.kind !== 'run') return;
    expect(outcome.args).toEqual({
      values: { where: ['tag is VIP', 'name is Acme'], out: 'b.csv', any: true },
      positionals: ['parties', '--odd'],
    });
  });

  it('values stay the text typed: no numbers, no negation, no camelCase copies', async () => {
    const { parseCommandLine } = await import('../../../src/cli/parse.ts');
    const outcome = await parseCommandLine(['auth', 'login', '--client-id', '0012', '--no-browser']);
    if (outcome.kind !== 'run') throw new Error(`expected a run, got ${outcome.kind}`);
    expect(outcome.args.values).toEqual({ 'client-id': '0012', 'no-browser': true });
  });

  it.each(['', ...commands.map((c) => c.name)])(
    'crm-ferry %s --help reads well in an 80-column terminal',
    async (name) => {
      const f = fakeIo();
      (f.io.stdout as NodeJS.WritableStream & { columns: number }).columns = 80;
      expect(await main([...(name ? name.split(' ') : []), '--help'], f.io)).toBe(0);
      const lines = f.out().split('\n');
      const usageEnds = lines.indexOf('');
      for (const [i, line] of lines.entries()) {
        expect(line.length, line).toBeLessThanOrEqual(80);
        // Prose is filled to the width: a short line followed by more of its paragraph is a line
        // broken for 100 columns and broken again at 80.
        const next = lines[i + 1] ?? '';
        if (i > usageEnds && /^[^\s-]/.test(line) && /^[^\s-]/.test(next) && !/:$/.test(line)) {
          expect(line.length + 1 + (next.split(' ')[0] as string).length, `${line}\n${next}`).toBeGreaterThan(80);
        }
      }
    },
  );

  it('help is filled to the width asked, as one paragraph', async () => {
    const { reflow } = await import('../../../src/cli/parse.ts');
    expect(reflow('Usage: x [options]\n  x --other\n\nOne line\nand two.\n\nExamples:\n  x --a\n  x --b\n')).toBe(
      'Usage: x [options]\n  x --other\n\nOne line and two.\n\nExamples:\n  x --a\n  x --b',
    );
  });

  it.each([
    [['sandbox', '8080'], 'error [USAGE]: sandbox takes no arguments, got "8080"'],
    [['auth', 'logout', 'work'], 'error [USAGE]: auth logout takes no arguments, got "work"'],
    [['auth', 'status', 'work'], 'error [USAGE]: auth status takes no arguments, got "work"'],
    [['auth', 'login', '--client-id', 'x', 'now'], 'error [USAGE]: auth login takes no arguments, got "now"'],
    [['export', 'parties', 'tasks', '--out', 'x.csv'], 'error [USAGE]: export takes ENTITY only, got also "tasks"'],
  ])('crm-ferry %j: a stray word is refused, not ignored', async (argv, message) => {
    const f = fakeIo({ CRM_FERRY_TOKEN: 'never-used-1', CRM_FERRY_BASE_URL: 'http://127.0.0.1:9' });
    expect(await main(argv, f.io)).toBe(2);
    expect(f.err()).toBe(
      `${message}\n  Run 'crm-ferry ${argv[0] === 'auth' ? `auth ${argv[1]}` : argv[0]} --help' for its options.\n`,
    );
  });

  it.each([
    [
      ['export', 'parties', '--where', '-x'],
      "crm-ferry export: --where needs a value; for a value starting with '-', write --where=-x",
    ],
    [
      ['api', '/parties', '--token', '--verbose'],
      "crm-ferry api: --token needs a value; for a value starting with '-', write --token=--verbose",
    ],
    [['api', '/parties', '--token'], 'crm-ferry api: --token needs a value'],
  ])(
    'crm-ferry %j: a value starting with - is read as an option, and the line says how to give it',
    async (argv, message) => {
      const f = fakeIo();
      expect(await main(argv, f.io)).toBe(2);
      expect(f.err().split('\n')[0]).toBe(message);
    },
  );

  it.each([
    [
      ['import', '--mapping', 'm.yaml', '--input', 'f.csv', '--dry-run=1'],
      'crm-ferry import: --dry-run takes no value, got --dry-run=1; write --dry-run alone, or leave it out',
    ],
    [
      ['inspect', 'f.csv', '--json=yes'],
      'crm-ferry inspect: --json takes no value, got --json=yes; write --json alone, or leave it out',
    ],
    [
      ['api', '/parties', '--verbose=1'],
      'crm-ferry api: --verbose takes no value, got --verbose=1; write --verbose alone, or leave it out',
    ],
  ])(
    'crm-ferry %j: a switch with a value is refused (yargs would read it as false, and import would write)',
    async (argv, message) => {
      const f = fakeIo();
      expect(await main(argv, f.io)).toBe(2);
      expect(f.err().split('\n')[0]).toBe(message);
    },
  );

  it('a switch may still say true or false, and after -- the word is an argument', async () => {
    const { parseCommandLine } = await import('../../../src/cli/parse.ts');
    const outcome = await parseCommandLine(['inspect', '--json=false', '--', '--json=1']);
    if (outcome.kind !== 'run') throw new Error(`expected a run, got ${outcome.kind}`);
    expect(outcome.args).toEqual({ values: { json: false }, positionals: ['--json=1'] });
  });

  it.each([
    [['api', '/parties', '--tokn=s3cret-value-1'], 'crm-ferry api: unknown option --tokn; did you mean --token?'],
    [['inspect', 'f.csv', '--token=s3cret-value-1'], 'crm-ferry inspect: unknown option --token'],
  ])('crm-ferry %j: an unknown option is named without its value (it may be a secret)', async (argv, message) => {
    const f = fakeIo();
    expect(await main(argv, f.io)).toBe(2);
    expect(f.err().split('\n')[0]).toBe(message);
    expect(f.err()).not.toContain('s3cret');
  });

  it('reports a FerryError with code, location and hint', () => {
    const f = fakeIo();
    const error = new FerryError('SOURCE_MALFORMED_RECORD', 'unclosed quote', {
      location: { file: 'people.csv', row: 12, line: 14 },
      hint: 'Fix the quote in the file.',
    });
    expect(reportError(error, f.io)).toBe(2);
    expect(f.err()).toBe(
      'error [SOURCE_MALFORMED_RECORD] at people.csv, line 14, row 12: unclosed quote\n  Fix the quote in the file.\n',
    );
  });

  it('reports anything else as a bug with exit code 1', () => {
    const f = fakeIo();
    expect(reportError(new TypeError('x is undefined'), f.io)).toBe(1);
    expect(f.err()).toMatch(/^internal error: this is a bug in crm-ferry/);
  });
});
