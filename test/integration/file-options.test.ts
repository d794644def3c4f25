import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
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
  [
    'validate --mapping',
    (f) => ['validate', '--mapping', f, '--input', INPUT, '--rejects', join(dir, 'v1.rejects.csv')],
  ],
  [
    'validate --input',
    (f) => ['validate', '--mapping', MAPPING, '--input', f, '--rejects', join(dir, 'v2.rejects.csv')],
  ],
  ['validate --plan', (f) => ['validate', '--plan', f]],
  [
    'import --mapping',
    (f) => ['import', '--mapping', f, '--input', INPUT, '--state-dir', join(dir, 'state-1'), ...connection()],
  ],
  [
    'import --input',
    (f) => ['import', '--mapping', MAPPING, '--input', f, '--state-dir', join(dir, 'state-2'), ...connection()],
  ],
  ['run PLAN', (f) => ['run', f, '--state-dir', join(dir, 'state-3'), ...connection()]],
  [
    'run --retry-rejects FILE',
    (f) => [
      'run',
      join(ROOT, 'samples/plans/contacts.plan.yaml'),
      '--retry-rejects',
      f,
      '--state-dir',
      join(dir, 'state-4'),
      ...connection(),
    ],
  ],
  ['verify PLAN', (f) => ['verify', f, '--state-dir', join(dir, 'state-3'), ...connection()]],
  ['export --filter', (f) => ['export', 'parties', '--out', join(dir, 'out.csv'), '--filter', f, ...connection()]],
  ['export --mapping', (f) => ['export', 'parties', '--out', join(dir, 'out.csv'), '--mapping', f, ...connection()]],
  [
    'export --state',
    (f) => ['export', 'parties', '--out', join(dir, 'out.csv'), '--since', 'auto', '--state', f, ...connection()],
  ],
  ['api --data @FILE', (f) => ['api', '/parties', '--data', `@${f}`, ...connection()]],
  ['sandbox --data', (f) => ['sandbox', '--port', '0', '--token', 'file-options-token', '--data', f]],
];

function connection(): string[] {
  return ['--base-url', box.url, '--token', 'file-options-token'];
}

describe('every file option refuses a path under /proc, /sys or /dev (one checkNotSpecial rule)', () => {
  it.each(FILE_OPTIONS)('%s', async (_name, args) => {
    const { code, stderr } = await runCli(args('/proc/self/status'), { env: {}, cwd: dir });
    expect(stderr).toMatch(
      /cannot live under \/proc: it holds no ordinary files|cannot write \/proc\/self\/status: it is not a regular file/,
    );
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

/** Bytes no text file holds: every byte value, terminal escapes (clear screen, red) among them. */
const BINARY = join(dir, 'garbage.csv');
writeFileSync(
  BINARY,
  Buffer.concat([
    Buffer.from('name,\x1b[2J\x1b[31mred\r\n'),
    Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256)),
  ]),
);
/** Valid UTF-8 without a zero byte, but with control characters: in names, values and lines. */
const CONTROL_TEXT = join(dir, 'control.csv');
writeFileSync(CONTROL_TEXT, 'name\x1b[2J,\x07bell\u202eevil\n"a\x01b",\x1b[31mred\u2028x\n');
/** A control character other than tab and the line ends, raw, anywhere in what was printed. */
const RAW_CONTROL = /[\x00-\x08\x0b-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

describe('every message that quotes input is one line, with control characters escaped', () => {
  it.each(FILE_OPTIONS)('%s with a binary file', async (_name, args) => {
    const { code, stdout, stderr } = await runCli(args(BINARY), { env: {}, cwd: dir });
    expect(code).toBe(2);
    expect(stdout + stderr).not.toMatch(RAW_CONTROL);
    // One line for what is wrong, at most one more (indented) for what to do.
    const lines = stderr.trimEnd().split('\n');
    // `import` says which step it writes before it reads the file.
    lines.splice(
      0,
      lines.findIndex((line) => line.startsWith('error [')),
    );
    expect(lines[0]).toMatch(/^error \[[A-Z_]+\] at .*garbage\.csv.*: /);
    expect(lines.length).toBeLessThanOrEqual(2);
    expect(lines.slice(1).every((line) => line.startsWith('  '))).toBe(true);
    expect(stderr).not.toMatch(/internal error/);
  });

  it.each(FILE_OPTIONS)('%s with text holding control characters', async (_name, args) => {
    const { stdout, stderr } = await runCli(args(CONTROL_TEXT), { env: {}, cwd: dir });
    expect(stdout + stderr).not.toMatch(RAW_CONTROL);
    expect(stderr).not.toMatch(/internal error/);
  });

  it('names a control character of a mapping by code and place', async () => {
    const { code, stderr } = await runCli(['validate', '--mapping', CONTROL_TEXT, '--input', INPUT], {
      env: {},
      cwd: dir,
    });
    expect(code).toBe(2);
    expect(stderr).toBe(
      `error [MAPPING_INVALID] at ${CONTROL_TEXT}: the mapping file holds the control character 0x1B on line 1, column 5, which a text file does not\n`,
    );
  });

  it('says where a filter file does not parse, in one line without the YAML code frame', async () => {
    const file = join(dir, 'broken.yaml');
    writeFileSync(file, 'conditions: [\n  b: {: "\n  c\n');
    const { code, stderr } = await runCli(
      ['export', 'parties', '--out', join(dir, 'out.csv'), '--filter', file, ...connection()],
      { env: {}, cwd: dir },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(
      new RegExp(`^error \\[USAGE\\] at ${file}, line \\d: the filter file ${file} does not parse: [^\\n]+[^:]\\n$`),
    );
  });

  it('inspect and mapping init print the names and values they quote with escapes', async () => {
    const inspect = await runCli(['inspect', CONTROL_TEXT], { env: {}, cwd: dir });
    expect(inspect.code).toBe(0);
    expect(inspect.stdout).toContain('name\\u001b[2J');
    const init = await runCli(['mapping', 'init', CONTROL_TEXT], { env: {}, cwd: dir });
    expect(init.code).toBe(0);
    expect(init.stderr).toMatch(
      /^mapped 1 of 2 columns; key \{\{name\\u001b\[2J\}\}\nnot carried .*\n  "\\u0007bell\\u202eevil": no standard field takes it: create a custom field "\\u0007bell\\u202eevil" \(Text\)/,
    );
    expect(init.stdout).toContain('#     definition: "\\u0007bell\\u202eevil"');
  });
});
