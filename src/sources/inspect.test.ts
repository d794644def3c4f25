import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { inspectSource } from './inspect.ts';

const SAMPLES = resolve(dirname(fileURLToPath(import.meta.url)), '../../samples');
const dir = mkdtempSync(join(tmpdir(), 'ferry-inspect-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fileWith(name: string, content: string): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

describe('inspectSource', () => {
  it('reports the UTF-8 sample: format, columns, fill rates, samples', async () => {
    const report = await inspectSource(join(SAMPLES, 'contacts.csv'));
    expect(report).toMatchObject({
      format: 'csv',
      encoding: 'utf-8',
      encodingBasis: 'valid-utf8',
      bom: false,
      delimiter: ',',
      delimiterBasis: 'sniffed',
      headerRow: 1,
      rowCount: 30,
      errorCount: 0,
      warningCount: 0,
    });
    expect(report.columns.map((c) => c.name)).toEqual([
      'first_name',
      'last_name',
      'email',
      'phone',
      'company',
      'job_title',
      'street',
      'city',
      'postcode',
      'country',
      'tags',
      'notes',
      'date_added',
    ]);
    const byName = new Map(report.columns.map((c) => [c.name, c]));
    expect(byName.get('first_name')).toEqual({
      name: 'first_name',
      filled: 30,
      fillRate: 100,
      samples: ['Anna', 'François', 'Kari'],
    });
    expect(byName.get('tags')).toMatchObject({ filled: 27, fillRate: 90 });
    expect(byName.get('notes')).toMatchObject({ filled: 16, fillRate: 53.3 });
  });

  it('counts row errors and keeps the first few with their locations', async () => {
    const lines = ['a,b', ...Array.from({ length: 8 }, (_, i) => (i % 2 === 0 ? `${i},x,extra` : `${i},ok`))];
    const report = await inspectSource(fileWith('bad.csv', `${lines.join('\n')}\n`), { maxErrors: 3 });
    expect(report.rowCount).toBe(4);
    expect(report.errorCount).toBe(4);
    expect(report.errors).toEqual([
      { code: 'SOURCE_COLUMN_COUNT', message: 'expected 2 fields, found 3', row: 2, line: 2 },
      { code: 'SOURCE_COLUMN_COUNT', message: 'expected 2 fields, found 3', row: 4, line: 4 },
      { code: 'SOURCE_COLUMN_COUNT', message: 'expected 2 fields, found 3', row: 6, line: 6 },
    ]);
  });

  it('shows the columns of a file with a header and no rows', async () => {
    const report = await inspectSource(fileWith('empty.csv', 'id;name\n'));
    expect(report.rowCount).toBe(0);
    expect(report.columns).toEqual([
      { name: 'id', filled: 0, fillRate: 0, samples: [] },
      { name: 'name', filled: 0, fillRate: 0, samples: [] },
    ]);
  });

  it('keeps distinct non-blank samples, shortened', async () => {
    const long = 'y'.repeat(80);
    const report = await inspectSource(fileWith('samples.csv', `v\nx\n\n  \nx\n${long}\nz\nw\n`));
    expect(report.columns[0]?.samples).toEqual(['x', `${'y'.repeat(59)}…`, 'z']);
    // The blank-only row counts as a row with an empty value.
    expect(report.columns[0]).toMatchObject({ filled: 5 });
    expect(report.rowCount).toBe(6);
  });

  it('passes header row, delimiter and encoding on', async () => {
    const report = await inspectSource(fileWith('opts.txt', 'title\nid|name\n1|Ann\n'), {
      headerRow: 2,
      delimiter: '|',
      encoding: 'latin1',
    });
    expect(report).toMatchObject({
      headerRow: 2,
      delimiter: '|',
      delimiterBasis: 'option',
      encoding: 'latin1',
      encodingBasis: 'option',
      rowCount: 1,
    });
    expect(report.columns.map((c) => c.samples)).toEqual([['1'], ['Ann']]);
  });

  it('reports warnings with their count', async () => {
    const report = await inspectSource(fileWith('dups.csv', 'a,a,\n1,2,3\n'));
    expect(report.warningCount).toBe(2);
    expect(report.warnings.map((w) => w.code)).toEqual(['HEADER_RENAMED', 'HEADER_BLANK']);
  });
});

describe('inspectSource: what would ruin an import later', () => {
  it.each([
    // The key-like column is the first id column; a later one ("Account ID") links to another file, where repeats are expected.
    [
      'a repeated key',
      'Customer ID,Name,Account ID\nC1,Ada,A1\nC2,Bob,A1\nC1,Ada again,A2\n',
      [['DUPLICATE_KEYS', 'Customer ID', /"C1" on rows 2 and 4/]],
    ],
    [
      'an e-mail on two rows, case ignored',
      'Name,E-Mail\nAda,ada@x.org\nBob,ADA@x.org\n',
      [
        [
          'DUPLICATE_EMAILS',
          'E-Mail',
          /1 value occurs on more than one row \(1 repeat\), e\.g\. "ADA@x\.org" on rows 2 and 3 \(case ignored\)/,
        ],
      ],
    ],
    ['an "email" column of yes/no is not one of addresses', 'Name,Email opt out\nAda,no\nBob,no\n', []],
    [
      'dates that read either way, one deciding',
      'Name,Signed\nAda,03/04/2024\nBob,25/04/2024\n',
      [
        [
          'DATE_ORDER_AMBIGUOUS',
          'Signed',
          /"03\/04\/2024", row 2: 3 April or 4 March\); "25\/04\/2024" \(row 3\) has a number over 12 first: the day comes first\. Give the mapping \{date: "dd\/MM\/yyyy"\}/,
        ],
      ],
    ],
    [
      'dates that read either way, none deciding',
      'Name,Signed\nAda,03/04/2024\nBob,05/06/2024\n',
      [['DATE_ORDER_AMBIGUOUS', 'Signed', /no date has a number over 12 to tell the order/]],
    ],
    [
      'dates in two orders',
      'Name,Signed\nAda,25/04/2024\nBob,04/25/2024\n',
      [
        [
          'DATE_ORDER_MIXED',
          'Signed',
          /only day first \("25\/04\/2024", row 2\) and dates that read only month first \("04\/25\/2024", row 3\)/,
        ],
      ],
    ],
    [
      'unique keys, clear dates, a text with a date now and then',
      'ID,Email,Signed,Note\n1,a@x.org,25/04/2024,call 03/04/2024\n2,b@x.org,26/04/2024,ok\n3,c@x.org,,fine\n',
      [],
    ],
  ] as const)('%s', async (_name, content, expected) => {
    const report = await inspectSource(fileWith('checks.csv', content));
    expect(report.findings.map((f) => f.code)).toEqual(expected.map(([code]) => code));
    expected.forEach(([, column, message], i) => {
      expect(report.findings[i]?.column).toBe(column);
      expect(report.findings[i]?.message).toMatch(message);
    });
  });
});
