import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { readXlsx } from '../sources/xlsx/xlsx.ts';
import { openXlsxParts } from '../sources/xlsx/xlsx-container.ts';
import { openWriter, XLSX_MAX_TEXT } from './writers.ts';

/** Files whose writes fail once opened, as on a disk that fills up: the file exists, its bytes never arrive. */
const failing = vi.hoisted(() => ({ pattern: null as RegExp | null }));
vi.mock('node:fs', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs')>();
  const createWriteStream: typeof fs.createWriteStream = (path, options) => {
    const stream = fs.createWriteStream(path, options);
    if (failing.pattern?.test(String(path))) {
      const full = (): Error => Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      stream._write = (_chunk, _encoding, callback) => callback(full());
      stream._writev = (_chunks, callback) => callback(full());
    }
    return stream;
  };
  return { ...fs, default: { ...fs, createWriteStream }, createWriteStream };
});

const dir = mkdtempSync(join(tmpdir(), 'ferry-writers-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const options = { plain: false, raw: false, stdout: process.stdout };

describe('the XLSX writer', () => {
  it('refuses a row past what a sheet holds, and leaves no file', async () => {
    const out = join(dir, 'big.xlsx');
    // 300 rows a sheet, the header included (the first 200 rows wait for the column widths: go past them).
    const writer = openWriter('xlsx', out, ['id'], { ...options, xlsxMaxRows: 300 });
    let error: unknown = null;
    try {
      for (let i = 0; i < 400; i += 1) await writer.write([i], {});
    } catch (e) {
      error = e;
      await writer.abort();
    }
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).code).toBe('EXPORT_WRITE');
    expect((error as FerryError).message).toMatch(/an XLSX sheet holds at most 300 rows \(the header included\)/);
    expect((error as FerryError).hint).toMatch(/CSV or JSON Lines/);
    expect(existsSync(out)).toBe(false);
    expect(readdirSync(dir)).toEqual([]);
  });

  it('holds exactly as many rows as the limit', async () => {
    const out = join(dir, 'full.xlsx');
    const writer = openWriter('xlsx', out, ['id'], { ...options, xlsxMaxRows: 300 });
    for (let i = 0; i < 299; i += 1) await writer.write([i], {});
    await writer.commit();
    let rows = 0;
    for await (const item of readXlsx(out)) if (item.kind === 'row') rows += 1;
    expect(rows).toBe(299);
  });
});

async function partText(file: string, name: string): Promise<string> {
  const parts = await openXlsxParts(file);
  try {
    const chunks: Buffer[] = [];
    for await (const chunk of parts.read(name)) chunks.push(chunk);
    return Buffer.concat(chunks).toString('utf8');
  } finally {
    parts.close();
  }
}

/** The order of the children of styleSheet (CT_Stylesheet in ECMA-376 part 1). */
const STYLESHEET_ORDER = [
  'numFmts',
  'fonts',
  'fills',
  'borders',
  'cellStyleXfs',
  'cellXfs',
  'cellStyles',
  'dxfs',
  'tableStyles',
  'colors',
  'extLst',
];

describe('the XLSX styles part', () => {
  it('holds the default cell style Excel writes ("Normal", builtinId 0, over cellStyleXfs 0), its lists counted and in schema order', async () => {
    const out = join(dir, 'styles.xlsx');
    const writer = openWriter('xlsx', out, ['id', 'when'], options);
    await writer.write([1, { timestamp: '2024-04-03T10:20:30Z' }], {});
    await writer.commit();
    const styles = await partText(out, 'xl/styles.xml');
    const lists = [...styles.matchAll(/<(\w+) count="(\d+)"[^>]*?(?:\/>|>([\s\S]*?)<\/\1>)/g)].map((m) => ({
      name: m[1] as string,
      count: Number(m[2]),
      body: m[3] ?? '',
    }));
    const names = lists.map((l) => l.name);
    expect(names).toEqual(STYLESHEET_ORDER.filter((n) => names.includes(n)));
    for (const required of ['fonts', 'fills', 'borders', 'cellStyleXfs', 'cellXfs', 'cellStyles'])
      expect(names).toContain(required);
    const of = (name: string) => lists.find((l) => l.name === name) as (typeof lists)[number];
    const item: Record<string, string> = {
      numFmts: 'numFmt',
      fonts: 'font',
      fills: 'fill',
      borders: 'border',
      cellStyleXfs: 'xf',
      cellXfs: 'xf',
      cellStyles: 'cellStyle',
      dxfs: 'dxf',
    };
    for (const list of lists)
      if (item[list.name])
        expect(list.body.match(new RegExp(`<${item[list.name]}[ >/]`, 'g'))?.length ?? 0, list.name).toBe(list.count);
    expect(of('cellStyles').body).toMatch(/<cellStyle name="Normal" xfId="0" builtinId="0"\/>/);
    // Every cell format points at a font, fill, border and cell style that exist.
    for (const xf of of('cellXfs').body.match(/<xf [^>]*>/g) ?? []) {
      for (const [attribute, list] of [
        ['fontId', 'fonts'],
        ['fillId', 'fills'],
        ['borderId', 'borders'],
        ['xfId', 'cellStyleXfs'],
      ] as const) {
        expect(Number(new RegExp(`${attribute}="(\\d+)"`).exec(xf)?.[1]), `${xf} ${attribute}`).toBeLessThan(
          of(list).count,
        );
      }
    }
  });
});

describe('XLSX date-times', () => {
  it('are written in UTC (a spreadsheet cell holds no zone), whatever offset the value carried; dates stay the day', async () => {
    const out = join(dir, 'zone.xlsx');
    const writer = openWriter('xlsx', out, ['at', 'day'], options);
    await writer.write([{ timestamp: '2024-04-03T12:20:30+02:00' }, { date: '2024-04-03' }], {});
    await writer.commit();
    const rows: Array<Record<string, unknown>> = [];
    for await (const item of readXlsx(out)) if (item.kind === 'row') rows.push(item.values);
    // The reader takes a serial as UTC: what it reads is what a person sees in the cell.
    expect((rows[0]?.at as Date).toISOString()).toBe('2024-04-03T10:20:30.000Z');
    expect((rows[0]?.day as Date).toISOString()).toBe('2024-04-03T00:00:00.000Z');
  });
});

describe('a file that cannot be written', () => {
  it('fails with EXPORT_WRITE, and abort() returns (it waited for ever for a close that had happened)', async () => {
    const writer = openWriter('csv', join(dir, 'gone', 'x.csv'), ['id'], options);
    await writer.write([1], {});
    const error = await writer.commit().then(
      () => null,
      (e: unknown) => e,
    );
    expect((error as FerryError).code).toBe('EXPORT_WRITE');
    await writer.abort();
    expect(readdirSync(dir).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 5_000);
});

describe('the deleted ids beside an incremental export', () => {
  it('leave no temporary file when they cannot be written after the export is in place', async () => {
    const folder = mkdtempSync(join(dir, 'deleted-'));
    failing.pattern = /\.deleted\.csv\.\d+\.\d+\.tmp$/;
    try {
      const writer = openWriter('csv', join(folder, 'nightly.csv'), ['id'], options);
      await writer.write([1], {});
      await writer.deleted([{ id: 7, deletedAt: '2026-01-01T00:00:00Z' }]);
      const error = await writer.commit().then(
        () => null,
        (e: unknown) => e,
      );
      expect((error as FerryError).code).toBe('EXPORT_WRITE');
      expect((error as FerryError).message).toMatch(/nightly\.deleted\.csv: ENOSPC/);
      await writer.abort();
      expect(readdirSync(folder)).toEqual(['nightly.csv']);
    } finally {
      failing.pattern = null;
    }
  });
});

describe('XLSX texts longer than a cell holds', () => {
  it('are cut to 32,767 characters (never half a surrogate pair) and counted; CSV keeps them whole', async () => {
    const long = 'a'.repeat(40_000);
    // The 32,767th character is the first half of an emoji: the cut leaves the pair out whole.
    const split = `${'b'.repeat(XLSX_MAX_TEXT - 1)}🎉${'c'.repeat(10)}`;
    const out = join(dir, 'long.xlsx');
    const writer = openWriter('xlsx', out, ['id', 'text'], options);
    await writer.write([1, long], {});
    await writer.write([2, split], {});
    await writer.write([3, 'short'], {});
    await writer.commit();
    expect(writer.textsCut).toBe(2);
    const texts: unknown[] = [];
    for await (const item of readXlsx(out)) if (item.kind === 'row') texts.push(item.values.text);
    expect(texts).toEqual(['a'.repeat(XLSX_MAX_TEXT), 'b'.repeat(XLSX_MAX_TEXT - 1), 'short']);
    rmSync(out);

    const csv = openWriter('csv', join(dir, 'long.csv'), ['text'], options);
    await csv.write([long], {});
    await csv.commit();
    expect(csv.textsCut).toBe(0);
    expect(readFileSync(join(dir, 'long.csv'), 'utf8')).toContain(long);
    rmSync(join(dir, 'long.csv'));
  });
});

describe('XLSX texts XML cannot carry as they are', () => {
  it('come back whole through our reader (as through Excel): control characters, CR, lone surrogates, a literal _xHHHH_', async () => {
    const texts = [
      'a\u0001b\u0008c\u000Bd\u000Ce\u001Ff',
      'line 1\r\nline 2\rline 3',
      '_x0041_ is not A',
      '__x0041__x005F_',
      'lone \uD800 high, lone \uDC00 low',
      'pair 🎉 whole',
      'tab\tand\nnewline',
      'not\uFFFEchar',
      'x_x00 _x12345_ plain_x',
      '<&"\'>',
    ];
    const out = join(dir, 'escapes.xlsx');
    const writer = openWriter('xlsx', out, ['id', 'text\u0001'], options);
    for (const [i, text] of texts.entries()) await writer.write([i, text], {});
    await writer.commit();
    const back: unknown[] = [];
    for await (const item of readXlsx(out)) if (item.kind === 'row') back.push(item.values['text\u0001']);
    expect(back).toEqual(texts);
    rmSync(out);
  });
});
