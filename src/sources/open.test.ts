import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import iconv from 'iconv-lite';
import { afterAll, describe, expect, it } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { detectFormat, openSource } from './open.ts';
import type { SourceItem, SourceWarning } from './types.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-open-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function fileWith(name: string, content: string | Buffer): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

const OLE2 = Buffer.from([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1, 0, 0, 0, 0]);

describe('detectFormat', () => {
  const cases: Array<[string, string, string | Buffer, string]> = [
    ['a workbook', 'book.xlsx', Buffer.from('PK\x03\x04rest of the zip', 'latin1'), 'xlsx'],
    ['a workbook named .csv', 'book.csv', Buffer.from('PK\x03\x04rest of the zip', 'latin1'), 'xlsx'],
    ['a CSV named .xlsx', 'contacts.xlsx', 'name,email\nAnn,ann@example.com\n', 'csv'],
    ['a CSV', 'contacts.csv', 'name,email\n', 'csv'],
    ['a CSV whose header starts with [', 'odd.csv', '[id],name\n1,x\n', 'csv'],
    ['an empty file', 'empty.csv', '', 'csv'],
    ['XML', 'parties.xml', '<?xml version="1.0"?>\n<parties size="1"></parties>', 'v1-xml'],
    ['XML with a BOM and blank lines', 'parties.xml', '\ufeff\n\n<parties></parties>', 'v1-xml'],
    [
      'UTF-16 XML',
      'parties.xml',
      Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode('<parties/>', 'utf-16le')]),
      'v1-xml',
    ],
    ['a JSON object', 'export.json', '{"parties": []}', 'v1-json'],
    ['a JSON array', 'export.dat', '[ {"id": "1"} ]', 'v1-json'],
  ];
  it.each(cases)('%s', async (_name, fileName, content, format) => {
    expect((await detectFormat(fileWith(fileName, content))).format).toBe(format);
  });

  const failures: Array<[string, string, string | Buffer, string]> = [
    ['a password-protected workbook', 'locked.xlsx', OLE2, 'SOURCE_XLSX_ENCRYPTED'],
    ['an old .xls workbook', 'old.xls', OLE2, 'SOURCE_FORMAT_UNKNOWN'],
    ['a web page named .xls', 'report.xls', '<!DOCTYPE html><html><table></table></html>', 'SOURCE_FORMAT_UNKNOWN'],
    ['a missing file', 'missing.csv', '', 'SOURCE_NOT_FOUND'],
  ];
  it.each(failures)('rejects %s', async (_name, fileName, content, code) => {
    const path = code === 'SOURCE_NOT_FOUND' ? join(dir, fileName) : fileWith(fileName, content);
    const error = await detectFormat(path).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).code).toBe(code);
    expect((error as FerryError).location?.file).toBe(path);
    expect((error as FerryError).hint).toBeTruthy();
  });
});

describe('openSource', () => {
  it('reads a CSV renamed .xlsx as CSV and says so', async () => {
    const warnings: SourceWarning[] = [];
    const opened = await openSource(fileWith('renamed.xlsx', 'name;city\nAnn;Oslo\n'), {
      onWarning: (w) => warnings.push(w),
    });
    const items: SourceItem[] = [];
    for await (const item of opened.items) items.push(item);
    expect(opened.format).toBe('csv');
    expect(items).toMatchObject([{ kind: 'row', values: { name: 'Ann', city: 'Oslo' } }]);
    expect(warnings.map((w) => w.code)).toEqual(['OTHER']);
    expect(warnings[0]?.message).toContain('.xlsx');
  });

  it('passes CSV options on to the CSV reader', async () => {
    const opened = await openSource(fileWith('opts.csv', 'x\n1,2\n3,4\n'), { headerRow: 2, delimiter: ',' });
    const items: SourceItem[] = [];
    for await (const item of opened.items) items.push(item);
    expect(items).toMatchObject([{ kind: 'row', values: { '1': '3', '2': '4' } }]);
  });

  it.each([
    [
      'a sheet for a CSV',
      'sheet.csv',
      'name\nAnn\n',
      { sheet: 2 },
      /sheet 2 was given, but this file is read as csv .*no sheets/,
    ],
    [
      'a delimiter for a legacy XML export',
      'parties.xml',
      '<parties><person><id>1</id></person></parties>',
      { delimiter: ';' },
      /delimiter ";" was given, but this file is read as v1-xml/,
    ],
    [
      'an encoding for a legacy JSON export',
      'parties.json',
      '{"parties":[]}',
      { encoding: 'latin1' },
      /encoding "latin1" was given, but this file is read as v1-json/,
    ],
    [
      'a legacy record kind for a CSV',
      'rec.csv',
      'name\nAnn\n',
      { record: 'person' as const },
      /record "person" was given, but this file is read as csv .*no legacy records/,
    ],
  ])('refuses %s before reading it (USAGE, with the file)', async (_what, name, content, options, message) => {
    const error = await openSource(fileWith(name, content), options).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).code).toBe('USAGE');
    expect((error as FerryError).message).toMatch(message);
    expect((error as FerryError).location?.file).toContain(name);
  });

  it('takes a given format without looking at the file', async () => {
    const opened = await openSource(fileWith('data.bin', 'PK\x03\x04'), { format: 'csv' });
    expect(opened.format).toBe('csv');
    expect(opened.reason).toBe('given');
  });
});
