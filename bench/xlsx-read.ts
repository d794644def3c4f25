/**
 * XLSX reader benchmark (not a test): writes a 200,000-row workbook with exceljs's streaming
 * writer into bench/.data/ (once; reused after), then reads it with readXlsx and reports rows/s
 * and peak RSS. The file uses shared strings, as Excel writes them, so the shared-strings table
 * (held in memory for the whole read) is part of what is measured.
 *
 *   npm run bench -- xlsx-read      (or: npx tsx bench/xlsx-read.ts [--rows 200000])
 *
 * The workbook is written, and each measurement made, in a child process of its own, so that
 * one phase's memory does not count against the next. The read is measured twice: with Node's
 * default heap sizing (the figure the 300 MB target is about) and with --max-old-space-size=256.
 * Children run with --expose-gc: half-way through the read a full collection is forced and the
 * memory still in use is recorded (`liveMbAtHalf`: JavaScript heap plus buffers), which is what
 * the reader really holds (mostly the packed shared-strings table) as opposed to garbage not
 * yet collected.
 */
import { existsSync, statSync } from 'node:fs';
import { mkdir, rename } from 'node:fs/promises';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import ExcelJS from 'exceljs';
import { BENCH_DATA_DIR, CONTACT_COLUMNS, generateContacts } from './generate.ts';
import { spawnTsx } from './harness.ts';
import { readXlsx } from '../src/sources/xlsx/xlsx.ts';

const TARGET_RSS_MB = 300;
const CAPPED_HEAP_FLAG = '--max-old-space-size=256';

const { values: args } = parseArgs({
  options: {
    rows: { type: 'string', default: '200000' },
    'write-only': { type: 'boolean', default: false },
    'measure-only': { type: 'boolean', default: false },
  },
});
const rows = Number(args.rows);
const script = fileURLToPath(import.meta.url);
const file = join(BENCH_DATA_DIR, `contacts-${rows}.xlsx`);

async function writeWorkbook(count: number): Promise<void> {
  const partial = `${file}.partial`;
  const writer = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: partial, useSharedStrings: true, useStyles: true });
  const sheet = writer.addWorksheet('Contacts');
  sheet.columns = [...CONTACT_COLUMNS.map((name) => ({ header: name, key: name })), { header: 'score', key: 'score' }];
  let n = 0;
  for (const fields of generateContacts(count, 7)) {
    n++;
    const record: Record<string, unknown> = {};
    CONTACT_COLUMNS.forEach((name, index) => {
      record[name] = fields[index];
    });
    // Typed cells as a real export has them: a number, a date, and a text id.
    record['created_on'] = new Date(`${fields[14] ?? '2020-01-01'}T00:00:00Z`);
    record['score'] = (n % 1000) / 10;
    const row = sheet.addRow(record);
    row.getCell('created_on').numFmt = 'yyyy-mm-dd';
    row.commit();
  }
  sheet.commit();
  await writer.commit();
  await rename(partial, file);
}

interface Measurement {
  rows: number;
  seconds: number;
  rowsPerSecond: number;
  peakRssMb: number;
  liveMbAtHalf: number | null;
}

const MB = 1024 * 1024;

/** Heap and buffers still reachable after a full collection; null without --expose-gc. */
function liveMemoryMb(): number | null {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) return null;
  gc();
  const usage = process.memoryUsage();
  return Math.round((usage.heapUsed + usage.arrayBuffers) / MB);
}

async function measure(): Promise<Measurement> {
  let count = 0;
  let peakSampled = process.memoryUsage().rss;
  let liveMbAtHalf: number | null = null;
  const started = performance.now();
  for await (const item of readXlsx(file, { sheet: 'Contacts' })) {
    if (item.kind !== 'row') throw new Error(`unexpected row error: ${item.error.message}`);
    count++;
    if (count % 5000 === 0) peakSampled = Math.max(peakSampled, process.memoryUsage().rss);
    if (count === Math.floor(rows / 2)) liveMbAtHalf = liveMemoryMb();
  }
  const seconds = (performance.now() - started) / 1000;
  const peakRss = Math.max(peakSampled, process.resourceUsage().maxRSS * 1024);
  return {
    rows: count,
    seconds: Math.round(seconds * 10) / 10,
    rowsPerSecond: Math.round(count / seconds),
    peakRssMb: Math.round(peakRss / MB),
    liveMbAtHalf,
  };
}

function runChild(flags: string[], extra: string[]): string {
  return spawnTsx(script, ['--rows', String(rows), ...extra], flags);
}

async function main(): Promise<void> {
  if (args['write-only']) {
    await writeWorkbook(rows);
    return;
  }
  if (args['measure-only']) {
    console.log(JSON.stringify(await measure()));
    return;
  }
  if (!existsSync(file)) {
    await mkdir(BENCH_DATA_DIR, { recursive: true });
    console.log(`writing ${file} ...`);
    runChild([], ['--write-only']);
  }
  const fileMb = Math.round((statSync(file).size / 1024 / 1024) * 10) / 10;
  const byDefault = JSON.parse(runChild(['--expose-gc'], ['--measure-only'])) as Measurement;
  const capped = JSON.parse(runChild(['--expose-gc', CAPPED_HEAP_FLAG], ['--measure-only'])) as Measurement;
  console.log(
    JSON.stringify({ fileMb, targetPeakRssMb: TARGET_RSS_MB, defaultHeap: byDefault, [CAPPED_HEAP_FLAG]: capped }),
  );
  for (const result of [byDefault, capped]) {
    if (result.rows !== rows) throw new Error(`read ${result.rows} rows, wrote ${rows}`);
  }
  // The target holds under Node's default settings, since that is how users run the CLI.
  for (const [label, result] of [
    ['default heap sizing', byDefault],
    [CAPPED_HEAP_FLAG, capped],
  ] as const) {
    if (result.peakRssMb > TARGET_RSS_MB) {
      console.log(`FAIL: with ${label} the peak RSS (${result.peakRssMb} MB) is over the ${TARGET_RSS_MB} MB target`);
      process.exitCode = 1;
    }
  }
}

await main();
