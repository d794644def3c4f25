import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-inspect-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function run(args: string[], cwd = ROOT): Promise<{ code: number; stdout: string; stderr: string }> {
  return runCli(['inspect', ...args], { cwd });
}

describe('crm-ferry inspect', () => {
  it('prints the report of the Windows-1252 sample', async () => {
    const { code, stdout, stderr } = await run(['samples/contacts-win1252.csv']);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toContain('File:       samples/contacts-win1252.csv');
    expect(stdout).toContain('Encoding:   windows-1252 (guessed: not valid UTF-8)');
    expect(stdout).toContain('Delimiter:  ";" (sniffed)');
    expect(stdout).toContain('Rows:       30');
    expect(stdout).toMatch(/ 2\s+last_name\s+100\.0%\s+"Müller", "Lefèvre", "Ødegård"/);
    expect(stdout).toMatch(
      /notes\s+53\.3%\s+"Prefers email\.\\nSpeaks English and German\.", "Met at the “Salon du Cuir” – asked for a quote of €4,500\."/,
    );
    expect(stdout).toContain('[ENCODING_GUESSED]');
  });

  it('lists what would ruin an import under "Check before importing", exit 0 (the rows read)', async () => {
    writeFileSync(
      join(dir, 'checks.csv'),
      'Customer ID,Email,Signed\nC1,ada@x.org,03/04/2024\nC1,bob@x.org,25/04/2024\n',
    );
    const { code, stdout } = await run([join(dir, 'checks.csv')]);
    expect(code).toBe(0);
    expect(stdout).toMatch(
      /\nCheck before importing \(2\):\n  \[DUPLICATE_KEYS\] "Customer ID" looks like the key[^\n]*\n  \[DATE_ORDER_AMBIGUOUS\] 1 date in "Signed" reads either way/,
    );
    const json = JSON.parse((await run([join(dir, 'checks.csv'), '--json'])).stdout);
    expect(json.findings.map((f: { code: string }) => f.code)).toEqual(['DUPLICATE_KEYS', 'DATE_ORDER_AMBIGUOUS']);
  });

  it('prints JSON with --json', async () => {
    const { code, stdout } = await run(['samples/contacts.csv', '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as Record<string, unknown>;
    expect(report).toMatchObject({
      file: 'samples/contacts.csv',
      format: 'csv',
      encoding: 'utf-8',
      delimiter: ',',
      rowCount: 30,
      errorCount: 0,
    });
  });

  it('exits 3 and lists the first errors when rows cannot be read', async () => {
    const path = join(dir, 'bad.csv');
    writeFileSync(path, 'a\tb\n1\t2\n3\n"4\t5\n');
    const { code, stdout } = await run([path]);
    expect(code).toBe(3);
    expect(stdout).toContain('Row errors: 2');
    expect(stdout).toContain('row 3, line 3: [SOURCE_COLUMN_COUNT] expected 2 fields, found 1');
    expect(stdout).toContain('row 4, line 4: [SOURCE_MALFORMED_RECORD]');
    expect(stdout).toContain('Delimiter:  tab (sniffed)');
  });

  const flagCases: Array<[string, string[], string, Record<string, unknown>]> = [
    ['--delimiter tab', ['--delimiter', 'tab'], 'a\tb\n1\t2\n', { delimiter: '\t', delimiterBasis: 'option' }],
    ['--delimiter ;', ['--delimiter', ';'], 'a;b\n1;2\n', { delimiter: ';', delimiterBasis: 'option' }],
    ['--header-row 2', ['--header-row', '2'], 'junk\na,b\n1,2\n', { headerRow: 2, rowCount: 1 }],
    ['--header-row none', ['--header-row', 'none'], '1,2\n3,4\n', { headerRow: 'none', rowCount: 2 }],
    [
      '--encoding windows-1252',
      ['--encoding', 'windows-1252'],
      'a\nplain\n',
      { encoding: 'windows-1252', encodingBasis: 'option' },
    ],
  ];
  it.each(flagCases)('passes %s on', async (_name, flags, content, expected) => {
    const path = join(dir, `flags-${flags.join('')}.csv`.replace(/[^\w.-]/g, '_'));
    writeFileSync(path, content);
    const { code, stdout } = await run([path, '--json', ...flags]);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject(expected);
  });

  const usageCases: Array<[string, string[], number, RegExp]> = [
    ['no file', [], 2, /error \[USAGE\].*exactly one FILE/],
    ['two files', ['a.csv', 'b.csv'], 2, /error \[USAGE\]/],
    ['a bad header row', ['samples/contacts.csv', '--header-row', 'first'], 2, /error \[USAGE\].*header row/],
    ['a bad delimiter', ['samples/contacts.csv', '--delimiter', '::'], 2, /error \[USAGE\].*delimiter/],
    [
      'an unknown encoding',
      ['samples/contacts.csv', '--encoding', 'nope-8'],
      2,
      /error \[CONFIG_INVALID\].*unknown encoding/,
    ],
    ['a missing file', ['samples/nope.csv'], 2, /error \[SOURCE_NOT_FOUND\] at .*samples\/nope\.csv: no such file/],
    ['an unknown flag', ['samples/contacts.csv', '--colour'], 2, /^crm-ferry inspect: unknown option --colour\n/],
  ];
  it.each(usageCases)('fails with %s', async (_name, args, exitCode, message) => {
    const { code, stderr, stdout } = await run(args);
    expect(code).toBe(exitCode);
    expect(stderr).toMatch(message);
    expect(stdout).toBe('');
  });

  // The readers of these formats are tested with their own code; this checks inspect reaches them.
  it.each([
    ['samples/contacts.xlsx', 'xlsx'],
    ['samples/v1/parties.xml', 'v1-xml'],
    ['samples/v1/parties.json', 'v1-json'],
  ])('dispatches %s to the %s reader', async (file, format) => {
    const { code, stdout } = await run([file, '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { format: string; rowCount: number; sheets?: string[]; sheet?: string };
    expect(report.format).toBe(format);
    expect(report.rowCount).toBeGreaterThan(0);
    if (format === 'xlsx') expect(report.sheets).toContain(report.sheet);
  });

  it('takes --sheet as a 1-based sheet number', async () => {
    const { code, stdout } = await run(['samples/contacts.xlsx', '--sheet', '2', '--json']);
    expect(code).toBe(0);
    const report = JSON.parse(stdout) as { sheets: string[]; sheet: string };
    expect(report.sheets.length).toBeGreaterThan(1);
    expect(report.sheet).toBe(report.sheets[1]);
  });

  it('resolves the file against the working directory it is given', async () => {
    writeFileSync(join(dir, 'here.csv'), 'x\n1\n');
    const { code, stdout } = await run(['here.csv', '--json'], dir);
    expect(code).toBe(0);
    expect(JSON.parse(stdout)).toMatchObject({ file: 'here.csv', rowCount: 1 });
  });
});
