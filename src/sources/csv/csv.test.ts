import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import iconv from 'iconv-lite';
import { afterAll, describe, expect, it } from 'vitest';
import { FerryError } from '../../errors/index.ts';
import type { ErrorCode } from '../../errors/index.ts';
import { CSV_CHUNK_SIZE, readCsv } from './csv.ts';
import type { CsvDetection, CsvReadOptions } from './csv.ts';
import { SOURCE_BATCHES, sourceBatches } from '../types.ts';
import type { SourceItem, SourceWarning } from '../types.ts';

const SAMPLES = resolve(dirname(fileURLToPath(import.meta.url)), '../../../samples');
const dir = mkdtempSync(join(tmpdir(), 'ferry-csv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

let counter = 0;
function fileWith(content: string | Buffer, name = `f${++counter}.csv`): string {
  const path = join(dir, name);
  writeFileSync(path, content);
  return path;
}

interface ReadResult {
  items: SourceItem[];
  warnings: SourceWarning[];
  detection: CsvDetection | undefined;
}

async function read(path: string, options: CsvReadOptions = {}): Promise<ReadResult> {
  const warnings: SourceWarning[] = [];
  let detection: CsvDetection | undefined;
  const items: SourceItem[] = [];
  for await (const item of readCsv(path, {
    ...options,
    onWarning: (w) => warnings.push(w),
    onDetected: (d) => (detection = d),
  })) {
    items.push(item);
  }
  return { items, warnings, detection };
}

function rows(items: SourceItem[]): Array<Record<string, unknown>> {
  return items.map((item) => {
    if (item.kind !== 'row') throw new Error(`expected a row, got ${item.error.code}: ${item.error.message}`);
    return item.values;
  });
}

/** Asserts the code and location of a FerryError thrown by reading the whole file. */
async function expectThrown(
  path: string,
  options: CsvReadOptions,
  code: ErrorCode,
  location: Record<string, unknown> = {},
): Promise<FerryError> {
  let caught: unknown;
  try {
    await read(path, options);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(FerryError);
  const error = caught as FerryError;
  expect(error.code).toBe(code);
  expect(error.location).toMatchObject(location);
  return error;
}

describe('readCsv: rows and locations', () => {
  it('names values by the header and numbers rows as a person counts them', async () => {
    const path = fileWith('name,note\r\nAnn,"two\r\nlines"\r\n\r\nBob,x\r\n');
    const { items, warnings } = await read(path);
    expect(items).toEqual([
      {
        kind: 'row',
        source: path.split('/').pop(),
        row: 1,
        values: { name: 'Ann', note: 'two\r\nlines' },
        location: { file: path, row: 2, line: 2 },
      },
      {
        kind: 'row',
        source: path.split('/').pop(),
        row: 2,
        values: { name: 'Bob', note: 'x' },
        location: { file: path, row: 4, line: 5 },
      },
    ]);
    expect(warnings.map((w) => [w.code, w.location.row, w.location.line])).toEqual([['EMPTY_ROWS_SKIPPED', 3, 4]]);
  });

  it('skips trailing empty lines without a warning', async () => {
    const { items, warnings } = await read(fileWith('a\n1\n\n\n\n'));
    expect(rows(items)).toEqual([{ a: '1' }]);
    expect(warnings).toEqual([]);
  });

  it('drops empty fields left by a trailing delimiter', async () => {
    expect(rows((await read(fileWith('a,b\n1,2,\n3,4,,\n'))).items)).toEqual([
      { a: '1', b: '2' },
      { a: '3', b: '4' },
    ]);
  });

  it('reads the header from row N and counts the rows above it', async () => {
    const { items, detection } = await read(fileWith('Export of 2024-01-01\n\nid;name\n7;Ann\n'), { headerRow: 3 });
    expect(detection?.columns).toEqual(['id', 'name']);
    expect(items[0]).toMatchObject({ row: 1, values: { id: '7', name: 'Ann' }, location: { row: 4, line: 4 } });
  });

  it('names columns column1.. without a header row', async () => {
    const { items, detection } = await read(fileWith('1,Ann\n2,Bob\n'), { headerRow: 'none' });
    expect(detection?.columns).toEqual(['column1', 'column2']);
    expect(items.map((i) => [i.location.row, i.kind === 'row' ? i.values : null])).toEqual([
      [1, { column1: '1', column2: 'Ann' }],
      [2, { column1: '2', column2: 'Bob' }],
    ]);
  });

  it('renames blank and repeated headers with warnings', async () => {
    const { items, warnings } = await read(fileWith('Email,,Email, Name \n1,2,3,4\n'));
    expect(rows(items)).toEqual([{ Email: '1', column2: '2', Email_2: '3', Name: '4' }]);
    expect(warnings.map((w) => w.code)).toEqual(['HEADER_BLANK', 'HEADER_RENAMED']);
  });

  it('uses the delimiter given over the sniffed one', async () => {
    const path = fileWith('a;b;c,d\n1;2;3,4\n');
    expect(rows((await read(path)).items)).toEqual([{ a: '1', b: '2', 'c,d': '3,4' }]);
    expect(rows((await read(path, { delimiter: ',' })).items)).toEqual([{ 'a;b;c': '1;2;3', d: '4' }]);
  });

  it.each([
    ['tab', 'a\tb\n1\t2\n'],
    ['pipe', 'a|b\n1|2\n'],
    ['semicolon with commas in quotes', 'a;b\n"1,5";"2,5"\n'],
  ])('sniffs %s', async (_name, text) => {
    const { items, detection } = await read(fileWith(text));
    expect(detection?.delimiterBasis).toBe('sniffed');
    expect(Object.keys(rows(items)[0] ?? {})).toEqual(['a', 'b']);
  });
});

describe('readCsv: batches', () => {
  it('gives the same items a chunk at a time, in order, malformed records in place', async () => {
    // Several chunks' worth, with a broken record in the middle.
    const lines = ['id,name'];
    for (let i = 1; i <= 6000; i++) lines.push(i === 3000 ? `${i},"unclosed,x` : `${i},name ${i} ${'x'.repeat(40)}`);
    const path = fileWith(`${lines.join('\n')}\n`);
    const items: SourceItem[] = [];
    for await (const item of readCsv(path)) items.push(item);
    const source = readCsv(path);
    const batches = sourceBatches(source);
    expect(batches).toBeTypeOf('function');
    const batched: SourceItem[] = [];
    let count = 0;
    for await (const batch of (batches as NonNullable<typeof batches>)()) {
      count += 1;
      batched.push(...batch);
    }
    expect(count).toBeGreaterThan(1);
    expect(batched).toEqual(items);
    expect(items.some((item) => item.kind === 'error')).toBe(true);
    expect(typeof source[SOURCE_BATCHES]).toBe('function');
  });
});

describe('readCsv: malformed records', () => {
  // Each input gets exactly these items; errors carry the code, the row (header = 1) and the line the record starts on.
  const cases: Array<[string, string, Array<['row', number, number] | [ErrorCode, number, number]>]> = [
    [
      'too many fields',
      'a,b\n1,2\n3,4,5\n6,7\n',
      [
        ['row', 2, 2],
        ['SOURCE_COLUMN_COUNT', 3, 3],
        ['row', 4, 4],
      ],
    ],
    [
      'too few fields',
      'a,b\n1\n2,3\n',
      [
        ['SOURCE_COLUMN_COUNT', 2, 2],
        ['row', 3, 3],
      ],
    ],
    [
      'bad closing quote',
      'a,b\n1,"x"y\n2,3\n',
      [
        ['SOURCE_MALFORMED_RECORD', 2, 2],
        ['row', 3, 3],
      ],
    ],
    [
      'unclosed quote mid-file',
      'a,b\n1,2\n3,"oops\n4,5\n6,7\n',
      [
        ['row', 2, 2],
        ['SOURCE_MALFORMED_RECORD', 3, 3],
        ['row', 4, 4],
        ['row', 5, 5],
      ],
    ],
    [
      'stray quote closed by a later quote',
      'a,b\n1,2\n3,"oops\n4,5\n6,"x"\n7,8\n',
      [
        ['row', 2, 2],
        ['SOURCE_MALFORMED_RECORD', 3, 3],
        ['row', 4, 4],
        ['row', 5, 5],
        ['row', 6, 6],
      ],
    ],
    [
      'unclosed quote on the last line',
      'a,b\n1,2\n3,"oops',
      [
        ['row', 2, 2],
        ['SOURCE_MALFORMED_RECORD', 3, 3],
      ],
    ],
    [
      'multi-line record with a wrong count',
      'a,b\n"x\ny",2,3\n4,5\n',
      [
        ['SOURCE_COLUMN_COUNT', 2, 2],
        ['row', 3, 4],
      ],
    ],
    [
      'error after a multi-line record',
      'a,b\n"x\ny",2\n3\n',
      [
        ['row', 2, 2],
        ['SOURCE_COLUMN_COUNT', 3, 4],
      ],
    ],
  ];
  it.each(cases)('%s', async (_name, text, expected) => {
    const { items } = await read(fileWith(text));
    expect(items.map((i) => [i.kind === 'row' ? 'row' : i.error.code, i.location.row, i.location.line])).toEqual(
      expected,
    );
    // Error locations on the FerryError match the item's.
    for (const item of items) {
      if (item.kind === 'error')
        expect(item.error.location).toMatchObject({ row: item.location.row, line: item.location.line });
    }
    // SourceRow.row counts everything yielded, errors included.
    expect(items.map((i) => i.row)).toEqual(items.map((_, k) => k + 1));
  });

  it('keeps the raw text of a rejected record for the rejects file', async () => {
    const { items } = await read(fileWith('a,b\n3,4,5\n'));
    expect(items[0]).toMatchObject({ kind: 'error', raw: '3,4,5' });
  });

  it('rejects a field over the size limit with SOURCE_FIELD_TOO_LARGE and goes on', async () => {
    const { items } = await read(fileWith(`a,b\n1,${'x'.repeat(100)}\n2,ok\n`), { maxFieldSize: 50 });
    expect(items.map((i) => (i.kind === 'row' ? i.values : i.error.code))).toEqual([
      'SOURCE_FIELD_TOO_LARGE',
      { a: '2', b: 'ok' },
    ]);
    expect(items[0]?.kind === 'error' && items[0].error.message).toContain('limit of 50 characters');
  });

  it('throws the first malformed record when onMalformed is stop', async () => {
    await expectThrown(fileWith('a,b\n1,2\n3\n'), { onMalformed: 'stop' }, 'SOURCE_COLUMN_COUNT', { row: 3, line: 3 });
  });
});

describe('readCsv: encodings', () => {
  const text = 'name;city\r\nZoë;Zürich\r\n';
  const expected = [{ name: 'Zoë', city: 'Zürich' }];

  it.each([
    ['UTF-8 with BOM', Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from(text)]), 'utf-8', 'bom'],
    ['UTF-8 without BOM', Buffer.from(text), 'utf-8', 'valid-utf8'],
    [
      'UTF-16 LE with BOM',
      Buffer.concat([Buffer.from([0xff, 0xfe]), iconv.encode(text, 'utf-16le')]),
      'utf-16le',
      'bom',
    ],
    [
      'UTF-16 BE with BOM',
      Buffer.concat([Buffer.from([0xfe, 0xff]), iconv.encode(text, 'utf-16be')]),
      'utf-16be',
      'bom',
    ],
    ['UTF-16 LE without BOM', iconv.encode(text, 'utf-16le'), 'utf-16le', 'utf16-pattern'],
    ['Windows-1252', iconv.encode(text, 'win1252'), 'windows-1252', 'invalid-utf8'],
  ])('%s', async (_name, bytes, encoding, basis) => {
    const { items, detection } = await read(fileWith(bytes));
    expect(rows(items)).toEqual(expected);
    expect(detection).toMatchObject({ encoding, encodingBasis: basis });
  });

  it('does not keep the BOM in the first column name', async () => {
    const { detection } = await read(
      fileWith(Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('id,name\n1,x\n')])),
    );
    expect(detection?.columns).toEqual(['id', 'name']);
    expect(detection?.bom).toBe(true);
  });

  it('decodes the Windows-1252 sample: euro sign, curly quotes, accents', async () => {
    const { items, detection, warnings } = await read(join(SAMPLES, 'contacts-win1252.csv'));
    expect(detection).toMatchObject({ encoding: 'windows-1252', delimiter: ';' });
    expect(warnings.map((w) => w.code)).toEqual(['ENCODING_GUESSED']);
    const values = rows(items);
    expect(values).toHaveLength(30);
    expect(values[1]).toMatchObject({
      first_name: 'François',
      notes: 'Met at the “Salon du Cuir” – asked for a quote of €4,500.',
    });
    expect(values[2]).toMatchObject({ last_name: 'Ødegård' });
    expect(values[0]).toMatchObject({ tags: 'customer;vip', notes: 'Prefers email.\nSpeaks English and German.' });
  });

  it('reads both samples to the same rows', async () => {
    const utf8 = rows((await read(join(SAMPLES, 'contacts.csv'))).items);
    const win = rows((await read(join(SAMPLES, 'contacts-win1252.csv'))).items);
    expect(utf8).toHaveLength(30);
    expect(win).toEqual(utf8);
    expect(utf8[3]).toMatchObject({ phone: '0034 91 123 45 67', notes: 'He said "call me after 3pm".' });
  });

  it('takes the encoding option over detection', async () => {
    const { items, detection } = await read(fileWith(iconv.encode('a\nçé\n', 'latin1')), { encoding: 'latin1' });
    expect(rows(items)).toEqual([{ a: 'çé' }]);
    expect(detection?.encodingBasis).toBe('option');
  });

  it('decodes UTF-8 characters cut by the read chunks', async () => {
    // Fill the first chunk so that the two-byte é straddles the cut.
    const filler = 'x'.repeat(CSV_CHUNK_SIZE - 10);
    const path = fileWith(`a,b\n1,${filler}\n2,é€\n`);
    const values = rows((await read(path)).items);
    expect(values[1]).toEqual({ a: '2', b: 'é€' });
  });

  it('switches to Windows-1252 when non-UTF-8 bytes follow a plain ASCII start', async () => {
    const ascii = `a,b\n${'1,plain ascii text\n'.repeat(16000)}`;
    const path = fileWith(Buffer.concat([Buffer.from(ascii), iconv.encode('2,Müller €\n', 'win1252')]));
    const { items, warnings, detection } = await read(path);
    expect(items).toHaveLength(16001);
    expect(rows(items.slice(-1))).toEqual([{ a: '2', b: 'Müller €' }]);
    expect(warnings.map((w) => w.code)).toEqual(['ENCODING_GUESSED']);
    expect(warnings[0]?.message).toContain(`byte ${Buffer.byteLength(ascii) + 3}`);
    expect(detection?.encoding).toBe('windows-1252');
  });

  it('stops with SOURCE_ENCODING when UTF-8 text is followed by bytes that are not UTF-8', async () => {
    const start = `a,b\n1,Zoë\n${'1,plain ascii text\n'.repeat(16000)}`;
    const path = fileWith(Buffer.concat([Buffer.from(start), iconv.encode('2,Müller\n', 'win1252')]));
    const error = await expectThrown(path, {}, 'SOURCE_ENCODING', { file: path });
    expect(error.message).toContain(`byte ${Buffer.byteLength(start) + 3}`);
    expect(error.hint).toContain('--encoding');
  });

  it('stops with SOURCE_ENCODING when utf-8 is forced on Windows-1252 bytes', async () => {
    await expectThrown(fileWith(iconv.encode('a\nMüller\n', 'win1252')), { encoding: 'utf-8' }, 'SOURCE_ENCODING');
  });

  it('rejects an encoding name it does not know', async () => {
    await expectThrown(fileWith('a\n1\n'), { encoding: 'klingon-8' }, 'CONFIG_INVALID');
  });
});

describe('readCsv: whole-file errors', () => {
  it.each([
    ['a missing file', () => join(dir, 'nope.csv'), {}, 'SOURCE_NOT_FOUND'],
    [
      'a folder',
      () => {
        const path = join(dir, 'folder.csv');
        mkdirSync(path, { recursive: true });
        return path;
      },
      {},
      'SOURCE_UNREADABLE',
    ],
    [
      'binary data',
      () => fileWith(Buffer.from([1, 2, 0, 0, 0, 7, 0, 0, 9, 0, 0, 0, 3, 0, 0, 0, 5])),
      {},
      'SOURCE_FORMAT_UNKNOWN',
    ],
    ['an empty file', () => fileWith(''), {}, 'SOURCE_HEADER'],
    ['a header row past the end', () => fileWith('a\n1\n'), { headerRow: 5 }, 'SOURCE_HEADER'],
    ['an empty header row', () => fileWith('\na,b\n1,2\n'), {}, 'SOURCE_HEADER'],
    ['a bad delimiter option', () => fileWith('a\n'), { delimiter: '::' }, 'CONFIG_INVALID'],
  ] as Array<[string, () => string, CsvReadOptions, ErrorCode]>)(
    'throws for %s',
    async (_name, make, options, code) => {
      const path = make();
      const error = await expectThrown(path, options, code);
      if (code.startsWith('SOURCE_')) expect(error.location?.file).toBe(path);
      if (code.startsWith('SOURCE_')) expect(error.hint).toBeTruthy();
    },
  );

  it('suggests the next row when the header row is empty', async () => {
    const error = await expectThrown(fileWith('\na,b\n'), {}, 'SOURCE_HEADER', { row: 1, line: 1 });
    expect(error.hint).toContain('--header-row 2');
  });

  it('stops when the signal is aborted', async () => {
    const controller = new AbortController();
    controller.abort();
    await expect(read(fileWith('a\n1\n'), { signal: controller.signal })).rejects.toThrow(/abort/i);
  });
});
