import { readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { fileURLToPath } from 'node:url';
import ExcelJS from 'exceljs';
import { afterAll, describe, expect, it } from 'vitest';
import type { ErrorCode } from '../../errors/index.ts';
import type { SourceWarning } from '../types.ts';
import { listXlsxSheets, readXlsx } from './xlsx.ts';
import { nameColumns } from '../csv/csv-header.ts';
import { columnLetters, serialToDate } from '../../files/index.ts';
import { isDateFormat } from './xlsx-cells.ts';
import { columnOfRef } from './xlsx-sheet.ts';
import { SharedStringTable } from './xlsx-strings.ts';
import { isDateFormatId } from './xlsx-styles.ts';
import { xmlText } from './xlsx-xml.ts';
import { collect, failureOf, rowValues, scratchDir } from '../../../test/unit/sources/source-test-kit.ts';
import { buildZip, minimalWorkbookParts, sheetXml } from '../../../test/unit/sources/zip-builder.ts';
import type { ZipPart } from '../../../test/unit/sources/zip-builder.ts';

const SAMPLE = fileURLToPath(new URL('../../../samples/contacts.xlsx', import.meta.url));
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

const MAIN_NS = 'http://schemas.openxmlformats.org/spreadsheetml/2006/main';
const REL_NS = 'http://schemas.openxmlformats.org/officeDocument/2006/relationships';

/** A workbook with shared strings and styles, its parts where the rels say (not always the usual names). */
function fullWorkbookParts(options: {
  sheet: string;
  sharedStrings?: string;
  styles?: string;
  date1904?: boolean;
  sheetTarget?: string;
  stringsTarget?: string;
}): ZipPart[] {
  const sheetTarget = options.sheetTarget ?? 'worksheets/sheet1.xml';
  const stringsTarget = options.stringsTarget ?? 'sharedStrings.xml';
  const inXl = (target: string): string => (target.startsWith('/') ? target.slice(1) : `xl/${target}`);
  const parts: ZipPart[] = [
    {
      name: 'xl/workbook.xml',
      data: `<?xml version="1.0"?><workbook xmlns="${MAIN_NS}" xmlns:r="${REL_NS}"><workbookPr${options.date1904 ? ' date1904="1"' : ''}/><sheets><sheet name="Only" sheetId="1" r:id="rId1"/></sheets></workbook>`,
    },
    {
      name: 'xl/_rels/workbook.xml.rels',
      data:
        `<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">` +
        `<Relationship Id="rId1" Type="${REL_NS}/worksheet" Target="${sheetTarget}"/>` +
        `<Relationship Id="rId2" Type="${REL_NS}/sharedStrings" Target="${stringsTarget}"/>` +
        `<Relationship Id="rId3" Type="${REL_NS}/styles" Target="styles.xml"/></Relationships>`,
    },
    { name: inXl(sheetTarget), data: sheetXml(options.sheet) },
  ];
  if (options.sharedStrings !== undefined)
    parts.push({
      name: inXl(stringsTarget),
      data: `<?xml version="1.0"?><sst xmlns="${MAIN_NS}">${options.sharedStrings}</sst>`,
    });
  if (options.styles !== undefined)
    parts.push({
      name: 'xl/styles.xml',
      data: `<?xml version="1.0"?><styleSheet xmlns="${MAIN_NS}">${options.styles}</styleSheet>`,
    });
  return parts;
}

const STRINGS =
  '<si><t>plain</t></si>' +
  '<si><r><rPr><b/></rPr><t>Very</t></r><r><t xml:space="preserve"> important</t></r></si>' +
  '<si><t>東京</t><rPh sb="0" eb="2"><t>トウキョウ</t></rPh></si>' +
  '<si><t>line1_x000D_\nline2</t></si>' +
  '<si><t>_x005F_x0041_</t></si>';
// Styles 0..6: General, built-in 14 (date), custom yyyy-mm-dd, custom with a quoted d (not a date),
// built-in 49 (text), built-in 47 (mm:ss.0), built-in 22 (date and time).
const STYLES =
  '<numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/><numFmt numFmtId="165" formatCode="0.00&quot; d&quot;"/></numFmts>' +
  '<cellStyleXfs count="1"><xf numFmtId="14"/></cellStyleXfs>' +
  '<cellXfs count="7"><xf numFmtId="0"/><xf numFmtId="14" applyNumberFormat="1"/><xf numFmtId="164"/><xf numFmtId="165"/><xf numFmtId="49"/><xf numFmtId="47"/><xf numFmtId="22"/></cellXfs>';

async function* chunksOf(buffers: Buffer[]): AsyncGenerator<Buffer> {
  yield* buffers;
}

function inline(ref: string, text: string): string {
  return `<c r="${ref}" t="inlineStr"><is><t>${text}</t></is></c>`;
}

describe('readXlsx reads each kind of cell the way Excel shows it', () => {
  const utc = (...parts: [number, number, number, number?, number?]) => new Date(Date.UTC(...parts));
  const cases: Array<{ name: string; cell: string; value: unknown; warning?: string }> = [
    { name: 'a shared string', cell: '<c r="A2" t="s"><v>0</v></c>', value: 'plain' },
    { name: 'a shared rich-text string, runs joined', cell: '<c r="A2" t="s"><v>1</v></c>', value: 'Very important' },
    { name: 'a shared string without its phonetic guide', cell: '<c r="A2" t="s"><v>2</v></c>', value: '東京' },
    {
      name: 'a shared string with an escaped carriage return',
      cell: '<c r="A2" t="s"><v>3</v></c>',
      value: 'line1\r\nline2',
    },
    { name: 'a shared string with an escaped escape', cell: '<c r="A2" t="s"><v>4</v></c>', value: '_x0041_' },
    {
      name: 'a missing shared string',
      cell: '<c r="A2" t="s"><v>99</v></c>',
      value: null,
      warning: 'cell A2 holds shared string 99, which the workbook does not have; read as empty',
    },
    {
      name: 'an inline string in rich-text runs',
      cell: '<c r="A2" t="inlineStr"><is><r><t>in</t></r><r><rPr><i/></rPr><t>line</t></r></is></c>',
      value: 'inline',
    },
    { name: 'a formula giving text', cell: '<c r="A2" t="str"><f>B2&amp;"x"</f><v>kx</v></c>', value: 'kx' },
    { name: 'a formula giving false', cell: '<c r="A2" t="b"><f>1=2</f><v>0</v></c>', value: false },
    { name: 'a formula giving 0', cell: '<c r="A2"><f>B1-B1</f><v>0</v></c>', value: 0 },
    {
      name: 'a formula giving an error',
      cell: '<c r="A2" t="e"><f>1/0</f><v>#DIV/0!</v></c>',
      value: null,
      warning: 'cell A2 holds the error #DIV/0!; read as empty',
    },
    {
      name: 'a shared formula never calculated',
      cell: '<c r="A2"><f t="shared" si="0"/></c>',
      value: null,
      warning: 'cell A2 holds a formula with no saved result; read as empty',
    },
    { name: 'a number in built-in date format 14', cell: '<c r="A2" s="1"><v>45292</v></c>', value: utc(2024, 0, 1) },
    {
      name: 'a number in a custom date format',
      cell: '<c r="A2" s="2"><v>45292.5</v></c>',
      value: utc(2024, 0, 1, 12),
    },
    {
      name: 'a formula result in a date format',
      cell: '<c r="A2" s="2"><f>B1+1</f><v>45293</v></c>',
      value: utc(2024, 0, 2),
    },
    {
      name: 'a number in built-in date-time format 22',
      cell: '<c r="A2" s="6"><v>45292.25</v></c>',
      value: utc(2024, 0, 1, 6),
    },
    {
      name: 'a number in built-in time format 47',
      cell: '<c r="A2" s="5"><v>0.5</v></c>',
      value: utc(1899, 11, 30, 12),
    },
    { name: 'a number whose format has a quoted d', cell: '<c r="A2" s="3"><v>45292</v></c>', value: 45292 },
    { name: 'a number in the text format', cell: '<c r="A2" s="4"><v>12</v></c>', value: 12 },
    { name: 'a number with an unknown style', cell: '<c r="A2" s="40"><v>1.5</v></c>', value: 1.5 },
    { name: 'an ISO date cell', cell: '<c r="A2" t="d"><v>2024-03-01T10:00:00</v></c>', value: utc(2024, 2, 1, 10) },
    {
      name: 'a number that is not one',
      cell: '<c r="A2"><v>abc</v></c>',
      value: null,
      warning: 'cell A2 holds the number "abc", which is not a number; read as empty',
    },
    { name: 'an empty value', cell: '<c r="A2"><v></v></c>', value: null },
  ];

  for (const testCase of cases) {
    it(`reads ${testCase.name}`, async () => {
      const file = scratch.path(`cell-${testCase.name.replace(/\W+/g, '-')}.xlsx`);
      const sheet = `<row r="1">${inline('A1', 'v')}${inline('B1', 'k')}</row><row r="2">${testCase.cell}${inline('B2', 'k')}</row>`;
      writeFileSync(file, buildZip(fullWorkbookParts({ sheet, sharedStrings: STRINGS, styles: STYLES })));
      const { items, warnings } = await read({}, file);
      expect(rowValues(items)).toEqual([{ v: testCase.value, k: 'k' }]);
      expect(warnings.map((warning) => warning.message)).toEqual(
        testCase.warning === undefined ? [] : [testCase.warning],
      );
    });
  }

  it('counts serial dates from 1904 when the workbook says so', async () => {
    const file = scratch.path('date1904.xlsx');
    const sheet = `<row r="1">${inline('A1', 'd')}</row><row r="2"><c r="A2" s="1"><v>43830</v></c></row>`;
    writeFileSync(file, buildZip(fullWorkbookParts({ sheet, styles: STYLES, date1904: true })));
    expect(rowValues((await read({}, file)).items)).toEqual([{ d: new Date(Date.UTC(2024, 0, 1)) }]);
  });

  it('finds the sheet and the shared strings wherever the rels put them', async () => {
    const file = scratch.path('odd-names.xlsx');
    const sheet = `<row r="1">${inline('A1', 'name')}</row><row r="2"><c r="A2" t="s"><v>1</v></c></row>`;
    writeFileSync(
      file,
      buildZip(
        fullWorkbookParts({
          sheet,
          sharedStrings: STRINGS,
          sheetTarget: '/xl/data/first.xml',
          stringsTarget: 'strings/table.xml',
        }),
      ),
    );
    expect(rowValues((await read({}, file)).items)).toEqual([{ name: 'Very important' }]);
  });
});

describe('readXlsx on crafted sheets', () => {
  it('places cells by their references, counts on where they have none, and counts missing rows as empty', async () => {
    const file = scratch.path('references.xlsx');
    const rows =
      `<row r="1">${inline('A1', 'a')}${inline('B1', 'b')}${inline('C1', 'c')}</row>` +
      '<row><c t="inlineStr"><is><t>x</t></is></c><c><v>2</v></c><c r="C2"><v>3</v></c></row>' +
      '<row r="5"><c r="B5"><v>5</v></c></row>' +
      '<row r="6" customFormat="1"/>' +
      '<row r="7"><c r="C7"><v>7</v></c><c><v>8</v></c></row>';
    writeFileSync(file, buildZip(minimalWorkbookParts(sheetXml(rows))));
    const { items, warnings } = await read({}, file);
    expect(rowValues(items)).toEqual([
      { a: 'x', b: 2, c: 3 },
      { a: null, b: 5, c: null },
      { a: null, b: null, c: 7, column4: 8 },
    ]);
    expect(items.map((item) => [item.row, item.location.row])).toEqual([
      [1, 2],
      [2, 5],
      [3, 7],
    ]);
    expect(warnings.map((warning) => warning.message)).toEqual([
      'row 7 has values right of the last header column; kept as column4...column4',
      '3 empty row(s) skipped in sheet "Only"',
    ]);
  });

  it('reads elements written with a namespace prefix', async () => {
    const file = scratch.path('prefixed.xlsx');
    const xml =
      `<?xml version="1.0"?><x:worksheet xmlns:x="${MAIN_NS}"><x:sheetData>` +
      '<x:row r="1"><x:c r="A1" t="inlineStr"><x:is><x:t>Name</x:t></x:is></x:c></x:row>' +
      '<x:row r="2"><x:c r="A2"><x:v>42</x:v></x:c></x:row></x:sheetData></x:worksheet>';
    writeFileSync(file, buildZip(minimalWorkbookParts(xml)));
    expect(rowValues((await read({}, file)).items)).toEqual([{ Name: 42 }]);
  });

  it('hands out the rows before a fault in the sheet XML, then fails with the row it was in', async () => {
    const file = scratch.path('malformed.xlsx');
    const rows =
      '<row r="1"><c r="A1"><v>1</v></c></row><row r="2"><c r="A2"><v>2</v></c></row><row r="3"><c r="A3"><v>3&bogus;</v></c></row><row r="4"><c r="A4"><v>4</v></c></row>';
    writeFileSync(file, buildZip(minimalWorkbookParts(sheetXml(rows))));
    const { error, before } = await failureOf(readXlsx(file, { headerRow: 'none' }));
    expect(rowValues(before)).toEqual([{ column1: 1 }, { column1: 2 }]);
    expect(error.code).toBe('SOURCE_XLSX_CORRUPT');
    expect(error.message).toMatch(/^xl\/worksheets\/sheet1\.xml in .* is not well-formed XML near row 3: /);
    expect(error.location).toMatchObject({ file, sheet: 'Only', row: 3 });
    expect(error.hint ?? '').not.toBe('');
  });

  it('refuses a cell beyond column XFD instead of making a row that wide', async () => {
    const file = scratch.path('too-wide.xlsx');
    writeFileSync(file, buildZip(minimalWorkbookParts(sheetXml('<row r="1"><c r="XFE1"><v>1</v></c></row>'))));
    const { error } = await failureOf(readXlsx(file, { headerRow: 'none' }));
    expect(error.code).toBe('SOURCE_XLSX_CORRUPT');
    expect(error.message).toContain('cell XFE1');
    expect(error.location).toMatchObject({ sheet: 'Only', row: 1 });
  });

  it('fails with SOURCE_XLSX_CORRUPT when the shared strings are not well-formed XML', async () => {
    const file = scratch.path('bad-strings.xlsx');
    writeFileSync(
      file,
      buildZip(
        fullWorkbookParts({ sheet: '<row r="1"><c r="A1" t="s"><v>0</v></c></row>', sharedStrings: '<si><t>a</si>' }),
      ),
    );
    const { error, before } = await failureOf(readXlsx(file));
    expect(before).toEqual([]);
    expect(error.code).toBe('SOURCE_XLSX_CORRUPT');
    expect(error.message).toMatch(/^xl\/sharedStrings\.xml in .* is not well-formed XML: /);
  });

  it('stops in the middle of a sheet when the signal is aborted', async () => {
    const file = scratch.path('abort.xlsx');
    let rows = `<row r="1">${inline('A1', 'n')}</row>`;
    for (let n = 2; n <= 200; n++) rows += `<row r="${n}"><c r="A${n}"><v>${n}</v></c></row>`;
    writeFileSync(file, buildZip(minimalWorkbookParts(sheetXml(rows))));
    const controller = new AbortController();
    const seen: number[] = [];
    const run = async (): Promise<void> => {
      for await (const item of readXlsx(file, { signal: controller.signal })) {
        seen.push(item.location.row);
        if (seen.length === 3) controller.abort(new Error('user stop'));
      }
    };
    await expect(run()).rejects.toThrow('user stop');
    expect(seen).toEqual([2, 3, 4]);
  });

  it('reads a workbook exceljs wrote: formulas, hyperlinks, merged cells, rich text, booleans and errors', async () => {
    const file = scratch.path('exceljs.xlsx');
    const workbook = new ExcelJS.Workbook();
    const sheet = workbook.addWorksheet('People');
    sheet.addRow(['Name', 'Site', 'Twice', 'Adult', 'Since', 'Check']);
    sheet.addRow([
      { richText: [{ text: 'Ada ', font: { bold: true } }, { text: 'L.' }] },
      { text: 'home', hyperlink: 'https://example.com' },
      { formula: 'B1-B1', result: 0 },
      { formula: '1=2', result: false },
      new Date(Date.UTC(2020, 4, 17)),
      { error: '#N/A' },
    ]);
    sheet.addRow(['Alan', null, { formula: '21*2', result: 42 }, true, null, 'ok']);
    sheet.getCell('E2').numFmt = 'dd/mm/yyyy';
    sheet.mergeCells('A3:B3');
    await workbook.xlsx.writeFile(file);
    const { items, warnings } = await read({}, file);
    expect(rowValues(items)).toEqual([
      { Name: 'Ada L.', Site: 'home', Twice: 0, Adult: false, Since: new Date(Date.UTC(2020, 4, 17)), Check: null },
      { Name: 'Alan', Site: null, Twice: 42, Adult: true, Since: null, Check: 'ok' },
    ]);
    expect(warnings.map((warning) => warning.message)).toEqual(['cell F2 holds the error #N/A; read as empty']);
  });

  it('reads inline strings, booleans, error cells, uncalculated formulas and cells beyond the header', async () => {
    const file = scratch.path('crafted.xlsx');
    const rows =
      '<row r="1"><c r="A1" t="inlineStr"><is><t>Name</t></is></c><c r="B1" t="inlineStr"><is><t></t></is></c><c r="C1" t="inlineStr"><is><t>Name</t></is></c></row>' +
      '<row r="2"><c r="A2" t="inlineStr"><is><t>x</t></is></c><c r="B2" t="b"><v>1</v></c><c r="C2" t="e"><v>#N/A</v></c><c r="D2"><f>A1*2</f></c><c r="E2"><v>7</v></c></row>';
    writeFileSync(file, buildZip(minimalWorkbookParts(sheetXml(rows))));
    const { items, warnings } = await read({}, file);
    expect(rowValues(items)).toEqual([{ Name: 'x', column2: true, Name_2: null, column4: null, column5: 7 }]);
    expect(warnings.map((warning) => warning.code)).toEqual([
      'HEADER_BLANK',
      'HEADER_RENAMED',
      'OTHER',
      'OTHER',
      'OTHER',
    ]);
    expect(warnings[2]?.message).toBe('cell C2 holds the error #N/A; read as empty');
    expect(warnings[3]?.message).toBe('cell D2 holds a formula with no saved result (=A1*2); read as empty');
    expect(warnings[4]?.message).toContain('column4...column5');
  });
});

describe('readXlsx refuses bad files with a clear error', () => {
  const contacts = readFileSync(SAMPLE);
  const cfbHeader = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1]);
  const cases: Array<{ name: string; bytes: () => Buffer; code: ErrorCode; message: RegExp }> = [
    {
      name: 'a CSV renamed .xlsx',
      bytes: () => Buffer.from('name,email\nAda,ada@example.com\n'),
      code: 'SOURCE_XLSX_CORRUPT',
      message: /does not start with a zip signature/,
    },
    { name: 'an empty file', bytes: () => Buffer.alloc(0), code: 'SOURCE_XLSX_CORRUPT', message: /zip signature/ },
    {
      name: 'a truncated zip',
      bytes: () => contacts.subarray(0, Math.floor(contacts.length / 2)),
      code: 'SOURCE_XLSX_CORRUPT',
      message: /damaged workbook/,
    },
    {
      name: 'a password-protected workbook',
      bytes: () =>
        Buffer.concat([cfbHeader, Buffer.alloc(1000), Buffer.from('EncryptedPackage', 'utf16le'), Buffer.alloc(100)]),
      code: 'SOURCE_XLSX_ENCRYPTED',
      message: /password-protected/,
    },
    {
      name: 'a legacy .xls',
      bytes: () => Buffer.concat([cfbHeader, Buffer.alloc(2000)]),
      code: 'SOURCE_FORMAT_UNKNOWN',
      message: /legacy \.xls/,
    },
    {
      name: 'a zip that is not a workbook',
      bytes: () => buildZip([{ name: 'readme.txt', data: 'hello' }]),
      code: 'SOURCE_XLSX_CORRUPT',
      message: /no xl\/workbook\.xml/,
    },
    {
      name: 'a zip bomb declaring 3 GB for the sheet',
      bytes: () =>
        buildZip(
          minimalWorkbookParts(sheetXml('')).map((part) =>
            part.name === 'xl/worksheets/sheet1.xml' ? { ...part, declaredSize: 3_000_000_000 } : part,
          ),
        ),
      code: 'SOURCE_XLSX_TOO_LARGE',
      message: /declares 3000000000 bytes uncompressed; the limit is 1073741824/,
    },
    {
      name: 'a zip bomb declaring a 50 MB shared-strings part in a few bytes',
      bytes: () =>
        buildZip([
          ...minimalWorkbookParts(sheetXml('')),
          { name: 'xl/sharedStrings.xml', data: '<sst/>', declaredSize: 50_000_000 },
        ]),
      code: 'SOURCE_XLSX_TOO_LARGE',
      message: /compression ratio of \d+:1/,
    },
    {
      name: 'a sheet whose compressed data is garbage',
      bytes: () =>
        buildZip(minimalWorkbookParts(sheetXml('<row r="1"><c r="A1"><v>1</v></c></row>')), {
          corruptData: 'xl/worksheets/sheet1.xml',
        }),
      code: 'SOURCE_XLSX_CORRUPT',
      message: /damaged workbook \(part xl\/worksheets\/sheet1\.xml\)/,
    },
    {
      name: 'a sheet that inflates to more than its declared size',
      bytes: () =>
        buildZip(
          minimalWorkbookParts(sheetXml('<row r="1"><c r="A1"><v>1</v></c></row>')).map((part) =>
            part.name === 'xl/worksheets/sheet1.xml' ? { ...part, declaredSize: 10 } : part,
          ),
        ),
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
    [
      ['Email', 'Email', 'Email'],
      ['Email', 'Email_2', 'Email_3'],
    ],
    [
      ['A', 'A', 'A_2'],
      ['A', 'A_3', 'A_2'],
    ],
    [
      ['', 'B', ''],
      ['column1', 'B', 'column3'],
    ],
  ])("makes %j unique as %j (the CSV reader's naming)", (headers, expected) => {
    expect(nameColumns(headers).names).toEqual(expected);
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

  it.each([
    ['A', 1],
    ['Z', 26],
    ['AA', 27],
    ['c12', 3],
    ['XFD1048576', 16_384],
    ['12', 0],
  ])('columnOfRef(%j) is %d', (ref, column) => {
    expect(columnOfRef(ref)).toBe(column);
    if (column > 0) expect(columnLetters(column)).toBe(ref.replace(/\d+$/, '').toUpperCase());
  });

  it.each([
    [14, [], true],
    [22, [], true],
    [47, [], true],
    [57, [], true],
    [2, [], false],
    [49, [], false],
    [164, [[164, 'yyyy-mm-dd']], true],
    [14, [[14, '0.00']], false],
  ] as Array<[number, Array<[number, string]>, boolean]>)(
    'number format %d (custom %j) shows a date: %s',
    (id, custom, expected) => {
      expect(isDateFormatId(id, new Map(custom))).toBe(expected);
    },
  );

  it('packs shared strings and gives each back, growing past its first reservation', () => {
    const table = new SharedStringTable(16, 16);
    const texts = Array.from({ length: 3000 }, (_, n) =>
      n % 3 === 0 ? `ascii ${n}` : n % 3 === 1 ? `çé ${n} 東京 😀` : '',
    );
    for (const text of texts) table.add(text);
    expect(table.size).toBe(3000);
    expect(texts.every((text, n) => table.get(n) === text)).toBe(true);
    expect([table.get(-1), table.get(3000), table.get(1.5), table.get(Number.NaN)]).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
  });

  it('decodes parts split inside a character, and UTF-16 parts with a BOM', async () => {
    const utf8 = Buffer.from('<t>café 東京</t>', 'utf8');
    const split = utf8.indexOf(0xa9);
    const texts: string[] = [];
    for await (const text of xmlText(chunksOf([utf8.subarray(0, split), utf8.subarray(split)]))) texts.push(text);
    expect(texts.join('')).toBe('<t>café 東京</t>');
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from('<t>é</t>', 'utf16le')]);
    const decoded: string[] = [];
    for await (const text of xmlText(chunksOf([utf16.subarray(0, 3), utf16.subarray(3)]))) decoded.push(text);
    expect(decoded.join('')).toBe('<t>é</t>');
  });
});
