import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../errors/index.ts';
import type { SourceWarning } from './types.ts';
import { listXlsxSheets, readXlsx } from './xlsx.ts';
import { uniqueHeaderNames } from './xlsx-headers.ts';
import { isDateFormat, serialToDate } from './xlsx-cells.ts';
import { collect, failureOf, rowValues, scratchDir } from '../../test/unit/sources/source-test-kit.ts';
import { buildZip, minimalWorkbookParts, sheetXml } from '../../test/unit/sources/zip-builder.ts';

const SAMPLE = fileURLToPath(new URL('../../samples/contacts.xlsx', import.meta.url));
const scratch = scratchDir();
afterAll(() => scratch.remove());

function read(options: Parameters<typeof readXlsx>[1] = {}, file = SAMPLE) {
  const warnings: SourceWarning[] = [];
  return collect(readXlsx(file, { ...options, onWarning: (warning) => warnings.push(warning) }), warnings);
}

describe('readXlsx on samples/contacts.xlsx', () => {
  it('lists the sheets in tab order', async () => {
    expect(await listXlsxSheets(SAMPLE)).toEqual(['Contacts', 'Companies', 'Deals']);
  });

  it('reads the first sheet by default with typed cells', async () => {
    const { items } = await read();
    const [ada, alan, grace] = rowValues(items);
    expect(items).toHaveLength(3);
    expect(ada).toEqual({
      Name: 'Ada Lovelace',
      Email: 'ada@example.com',
      Phone: '0612345678',
      Born: new Date(Date.UTC(1915, 11, 10)),
      Score: 0.30000000000000004,
      Double: 0.6000000000000001,
      Website: 'example.com',
      Notes: 'Very important',
      Email_2: 'ada.alt@example.com',
      'Next call': new Date(Date.UTC(1915, 11, 11)),
    });
    expect(alan?.['Double']).toBe(84);
    expect(alan?.['Website']).toBeNull();
    expect(grace?.['Phone']).toBe('00441234');
    expect(grace?.['Score']).toBe(-1.5);
  });

  it('gives each row its record count, its sheet row and the book#sheet source', async () => {
    const { items } = await read();
    expect(items.map((item) => [item.row, item.location.row, item.source, item.location.sheet])).toEqual([
      [1, 2, 'contacts.xlsx#Contacts', 'Contacts'],
      [2, 3, 'contacts.xlsx#Contacts', 'Contacts'],
      [3, 5, 'contacts.xlsx#Contacts', 'Contacts'],
    ]);
  });

  it('warns about the duplicate header and the skipped empty row', async () => {
    const { warnings } = await read();
    expect(warnings.map((warning) => warning.code)).toEqual(['HEADER_RENAMED', 'EMPTY_ROWS_SKIPPED']);
    expect(warnings[0]?.message).toContain('Email_2');
    expect(warnings[0]?.location).toMatchObject({ sheet: 'Contacts', row: 1 });
    expect(warnings[1]?.message).toMatch(/^1 empty row/);
  });

  it('picks a sheet by name; a merged cell keeps its value in the top-left cell only', async () => {
    const { items } = await read({ sheet: 'Companies' });
    expect(rowValues(items)).toEqual([
      { Company: 'Acme Ltd', Industry: 'Retail', Employees: 120 },
      { Company: 'Acme Shops', Industry: null, Employees: 35 },
      { Company: 'Globex', Industry: 'Energy', Employees: 5000 },
    ]);
  });

  it('picks a sheet by 1-based index and a header further down', async () => {
    const { items } = await read({ sheet: 3, headerRow: 3 });
    expect(rowValues(items)).toEqual([
      { Deal: 'Website redesign', Value: 12000, 'Close date': new Date(Date.UTC(2024, 2, 31)), Stage: 'Proposal' },
      { Deal: 'Support contract', Value: 4999.99, 'Close date': new Date(Date.UTC(2024, 5, 30)), Stage: 'Won' },
    ]);
    expect(items[0]?.location.row).toBe(4);
  });

  it("names columns column1... with headerRow 'none' and keeps the first row as data", async () => {
    const { items } = await read({ sheet: 'Companies', headerRow: 'none' });
    const values = rowValues(items);
    expect(values).toHaveLength(4);
    expect(values[0]).toEqual({ column1: 'Company', column2: 'Industry', column3: 'Employees' });
    expect(values[3]).toEqual({ column1: 'Globex', column2: 'Energy', column3: 5000 });
  });

  it('fails with SOURCE_HEADER when the header row is empty', async () => {
    const { error } = await failureOf(readXlsx(SAMPLE, { sheet: 'Deals', headerRow: 2 }));
    expect(error.code).toBe('SOURCE_HEADER');
    expect(error.location).toMatchObject({ sheet: 'Deals', row: 2 });
  });

  it('names the sheets it has when the wanted one is missing', async () => {
    for (const sheet of ['contacts', 4] as const) {
      const { error } = await failureOf(readXlsx(SAMPLE, { sheet }));
      expect(error.code).toBe('SOURCE_SHEET_NOT_FOUND');
      expect(error.message).toContain('"Contacts", "Companies", "Deals"');
    }
  });

  it('leaves no temporary copies of sheets behind, even when a read stops early', async () => {
    const ours = () => readdirSync(tmpdir()).filter((name) => name.startsWith(`tmp-${process.pid}-`));
    const before = ours();
    await read({ sheet: 'Deals', headerRow: 3 });
    await failureOf(readXlsx(SAMPLE, { sheet: 'Deals', headerRow: 2 }));
    expect(ours()).toEqual(before);
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort(new Error('user stop'));
    await expect(collect(readXlsx(SAMPLE, { signal: controller.signal }))).rejects.toThrow('user stop');
  });
});

describe('readXlsx on crafted sheets', () => {
  it('reads inline strings, booleans, error cells, uncalculated formulas and cells beyond the header', async () => {
    const file = scratch.path('crafted.xlsx');
    const rows =
      '<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t></t></is></c><c r="C1" t="inlineStr"><is><t>Name</t></is></c></row>' +
      '<row r="2"><c r="A2" t="inlineStr"><is><t>x</t></is></c><c r="B2" t="b"><v>1</v></c><c r="C2" t="e"><v>#N/A</v></c><c r="D2"><f>A1*2</f></c><c r="E2"><v>7</v></c></row>';
    writeFileSync(file, buildZip(minimalWorkbookParts(sheetXml(rows))));
    const { items, warnings } = await read({}, file);
    expect(rowValues(items)).toEqual([{ Name: 'x', column2: true, Name_2: null, column4: null, column5: 7 }]);
    expect(warnings.map((warning) => warning.code)).toEqual(['HEADER_BLANK', 'HEADER_RENAMED', 'OTHER', 'OTHER', 'OTHER']);
    expect(warnings[2]?.message).toBe('cell C2 holds the error #N/A; read as empty');
    expect(warnings[3]?.message).toBe('cell D2 holds a formula with no saved result (=A1*2); read as empty');
    expect(warnings[4]?.message).toContain('column4...column5');
  });
});

describe('readXlsx refuses bad files with a clear error', () => {
  const contacts = readFileSync(SAMPLE);
  const cfbHeader = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
  const cases: Array<{ name: string; bytes: () => Buffer; code: ErrorCode; message: RegExp }> = [
    { name: 'a CSV renamed .xlsx', bytes: () => Buffer.from('name,email\nAda,ada@example.com\n'), code: 'SOURCE_XLSX_CORRUPT', message: /does not start with a zip signature/ },
    { name: 'an empty file', bytes: () => Buffer.alloc(0), code: 'SOURCE_XLSX_CORRUPT', message: /zip signature/ },
    { name: 'a truncated zip', bytes: () => contacts.subarray(0, Math.floor(contacts.length / 2)), code: 'SOURCE_XLSX_CORRUPT', message: /damaged workbook/ },
    {
      name: 'a password-protected workbook',
      bytes: () => Buffer.concat([cfbHeader, Buffer.alloc(1000), Buffer.from('EncryptedPackage', 'utf16le'), Buffer.alloc(100)]),
      code: 'SOURCE_XLSX_ENCRYPTED',
      message: /password-protected/,
    },
    { name: 'a legacy .xls', bytes: () => Buffer.concat([cfbHeader, Buffer.alloc(2000)]), code: 'SOURCE_FORMAT_UNKNOWN', message: /legacy \.xls/ },
    {
      name: 'a zip that is not a workbook',
      bytes: () => buildZip([{ name: 'readme.txt', data: 'hello' }]),
      code: 'SOURCE_XLSX_CORRUPT',
      message: /no xl\/workbook\.xml/,
    },
    {
      name: 'a zip bomb declaring 3 GB for the sheet',
      bytes: () => buildZip(minimalWorkbookParts(sheetXml('')).map((part) => (part.name === 'xl/worksheets/sheet1.xml' ? { ...part, declaredSize: 3_000_000_000 } : part))),
      code: 'SOURCE_XLSX_TOO_LARGE',
      message: /declares 3000000000 bytes uncompressed; the limit is 1073741824/,
    },
    {
      name: 'a zip bomb declaring a 50 MB shared-strings part in a few bytes',
      bytes: () => buildZip([...minimalWorkbookParts(sheetXml('')), { name: 'xl/sharedStrings.xml', data: '<sst/>', declaredSize: 50_000_000 }]),
      code: 'SOURCE_XLSX_TOO_LARGE',
      message: /compression ratio of \d+:1/,
    },
    {
      name: 'a sheet whose compressed data is garbage',
      bytes: () => buildZip(minimalWorkbookParts(sheetXml('<row r="1"><c r="A1"><v>1</v></c></row>')), { corruptData: 'xl/worksheets/sheet1.xml' }),
      code: 'SOURCE_XLSX_CORRUPT',
      message: /damaged workbook \(part xl\/worksheets\/sheet1\.xml\)/,
    },
    {
      name: 'a sheet that inflates to more than its declared size',
      bytes: () => buildZip(minimalWorkbookParts(sheetXml('<row r="1"><c r="A1"><v>1</v></c></row>')).map((part) => (part.name === 'xl/worksheets/sheet1.xml' ? { ...part, declaredSize: 10 } : part))),
      code: 'SOURCE_XLSX_CORRUPT',
      message: /damaged workbook \(part xl\/worksheets\/sheet1\.xml\): too many bytes/,
    },
  ];

  for (const testCase of cases) {
    it(`${testCase.name} -> ${testCase.code}`, async () => {
      const file = scratch.path(`${testCase.name.replace(/\W+/g, '-')}.xlsx`);
      writeFileSync(file, testCase.bytes());
      const { error, before } = await failureOf(readXlsx(file));
      expect(before).toEqual([]);
      expect(error.code).toBe(testCase.code);
      expect(error.message).toMatch(testCase.message);
      expect(error.location?.file).toBe(file);
      expect(error.hint ?? '').not.toBe('');
    });
  }

  it('lets a caller raise the size limit on purpose, and lower it', async () => {
    const { error } = await failureOf(readXlsx(SAMPLE, { maxUncompressedBytes: 1000 }));
    expect(error.code).toBe('SOURCE_XLSX_TOO_LARGE');
    expect(error.message).toContain('the limit is 1000');
  });

  it('says SOURCE_NOT_FOUND for a missing file, also when listing sheets', async () => {
    const missing = scratch.path('missing.xlsx');
    expect((await failureOf(readXlsx(missing))).error.code).toBe('SOURCE_NOT_FOUND');
    await expect(listXlsxSheets(missing)).rejects.toMatchObject({ code: 'SOURCE_NOT_FOUND' });
    expect((await failureOf(readXlsx(scratch.dir))).error.code).toBe('SOURCE_UNREADABLE');
  });

  it('rejects nonsense options with CONFIG_INVALID', async () => {
    expect((await failureOf(readXlsx(SAMPLE, { sheet: 0 }))).error.code).toBe('CONFIG_INVALID');
    expect((await failureOf(readXlsx(SAMPLE, { headerRow: -1 }))).error.code).toBe('CONFIG_INVALID');
  });
});

describe('xlsx helpers', () => {
  it.each([
    [['Email', 'Email', 'Email'], ['Email', 'Email_2', 'Email_3']],
    [['A', 'A', 'A_2'], ['A', 'A_3', 'A_2']],
    [['', 'B', ''], ['column1', 'B', 'column3']],
  ])('makes %j unique as %j', (headers, expected) => {
    const { names } = uniqueHeaderNames([undefined, ...headers], headers.length);
    expect(names.slice(1)).toEqual(expected);
  });

  it.each([
    ['yyyy-mm-dd', true],
    ['[$-409]d-mmm-yy;@', true],
    ['h:mm:ss', true],
    ['0.00', false],
    ['"Day "0', false],
    ['General', false],
    ['[Red]#,##0', false],
  ])('isDateFormat(%j) is %s', (format, expected) => {
    expect(isDateFormat(format)).toBe(expected);
  });

  it('converts serial days in both date systems', () => {
    expect(serialToDate(45292, false).toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(serialToDate(43830, true).toISOString()).toBe('2024-01-01T00:00:00.000Z');
    expect(serialToDate(45292.5, false).toISOString()).toBe('2024-01-01T12:00:00.000Z');
  });
});
