// Export speed and memory: 100,000 parties from the sandbox (in a child process, no rate limit)
// to CSV and to XLSX. Not a test; run it with `npm run bench -- export [--rows N] [--runs N]`.
// Prints records/s, the share of the wall time spent writing (measured inside the export, and
// as how much longer the export takes than reading the same pages), and the exporting process's
// peak RSS, each run in a fresh process, formats taking turns; then the medians.
import { fork, type ChildProcess } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CrmClient } from '../src/client/index.ts';
import { z } from 'zod';
import { embedFor, normaliseExportOptions, openWriter, runExport, type Cell } from '../src/export/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { addParty } from '../test/helpers/records.ts';
import { formatCount, spawnTsx } from './harness.ts';

const TOKEN = 'bench-export-token-0123';
const { values } = parseArgs({ options: { rows: { type: 'string' }, runs: { type: 'string' }, memory: { type: 'string' }, serve: { type: 'string' }, child: { type: 'string' }, url: { type: 'string' }, writer: { type: 'string' } }, strict: false });

/** Rows of the shape a party export has: text, a number, a date, a timestamp, a yes/no. */
function sampleRow(i: number): Cell[] {
  return [i, 'person', `First${i} Last${i}`, `First${i}`, `Last${i}`, 'Buyer', `p${i}@example.org`, '+44 20 7123 4567', 'London', 'United Kingdom', 'customer;vip', 'Alex Admin', { date: '2021-06-01' }, { timestamp: '2026-11-24T03:30:34Z' }, i % 2 === 0];
}
const SAMPLE_HEADER = ['id', 'type', 'name', 'firstName', 'lastName', 'jobTitle', 'email', 'phone', 'city', 'country', 'tags', 'owner', 'Customer since', 'createdAt', 'VIP'];

/** The XLSX writers alone, without the service: this project's against exceljs's streaming writer. */
async function compareWriter(which: string, rows: number): Promise<void> {
  const out = join(tmpdir(), `crm-ferry-bench-writer-${process.pid}.xlsx`);
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const started = performance.now();
  if (which === 'own') {
    const writer = openWriter('xlsx', out, SAMPLE_HEADER, { plain: false, raw: false, stdout: process.stdout });
    for (let i = 0; i < rows; i += 1) await writer.write(sampleRow(i), {});
    await writer.commit();
  } else {
    const { default: ExcelJS } = await import('exceljs');
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({ filename: out, useSharedStrings: false, useStyles: true });
    const sheet = workbook.addWorksheet('Export', { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.columns = SAMPLE_HEADER.map((header) => ({ header, key: header, width: 16 }));
    sheet.getRow(1).font = { bold: true };
    sheet.autoFilter = { from: 'A1', to: { row: rows + 1, column: SAMPLE_HEADER.length } };
    for (let i = 0; i < rows; i += 1) {
      const cells = sampleRow(i).map((c) => (c !== null && typeof c === 'object' ? new Date('date' in c ? `${c.date}T00:00:00Z` : c.timestamp) : c));
      sheet.addRow(cells).commit();
    }
    sheet.commit();
    await workbook.commit();
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const bytes = statSync(out).size;
  rmSync(out, { force: true });
  console.log(JSON.stringify({ writer: which, rows, seconds, peakRssMb: Math.round(Math.max(peak, process.memoryUsage().rss) / 2 ** 20), bytes }));
}

async function serve(rows: number): Promise<void> {
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', tokens: [TOKEN] });
  for (let i = 0; i < rows; i += 1) {
    addParty(
      sandbox.store,
      i % 3 === 0
        ? { type: 'organisation', firstName: null, lastName: null, name: `Company ${i}`, about: `Customer since ${2000 + (i % 20)}` }
        : { firstName: `First${i}`, lastName: `Last${i}`, jobTitle: 'Buyer', emailAddresses: [{ id: 2_000_000 + i, type: 'Work', address: `first${i}@example.org` }], phoneNumbers: [{ id: 3_000_000 + i, type: 'Work', number: `+44 20 7${String(i).padStart(6, '0')}` }] },
    );
  }
  process.send?.({ url: sandbox.url });
  process.on('message', () => void sandbox.close().then(() => process.exit(0)));
}

/** Reads every party page (the export's embeds) and throws the records away; seconds taken. */
async function readAll(client: CrmClient): Promise<{ seconds: number; records: number }> {
  const started = performance.now();
  let records = 0;
  for await (const record of client.paginate('/parties', 'parties', z.custom<object>((v) => typeof v === 'object' && v !== null), { query: { embed: embedFor('parties').join(',') } })) if (record) records += 1;
  return { seconds: (performance.now() - started) / 1000, records };
}

interface ChildResult {
  format: string;
  records: number;
  seconds: number;
  writingSeconds: number;
  fileWaitSeconds: number;
  readBefore: number;
  readAfter: number;
  /** A second export in the same process, its code compiled by then. */
  warmSeconds: number;
  warmWritingSeconds: number;
  bytes: number;
}

/**
 * One export in this process, between two reads of the same pages without writing, then a second
 * export; prints one JSON line. The read before also warms up the client and the sandbox, so that
 * the export does not pay for the first requests' compiling alone (it did when it ran first:
 * 0.3-0.4 s of its time); the second export shows what is left once the writer's code is compiled.
 */
async function child(format: string, url: string): Promise<void> {
  const out = join(tmpdir(), `crm-ferry-bench-export-${process.pid}.${format}`);
  const client = new CrmClient({ baseUrl: url, auth: TOKEN });
  const options = normaliseExportOptions({ entity: 'parties', out, cwd: tmpdir() });
  const before = await readAll(client);
  let started = performance.now();
  const summary = await runExport(options, { client, account: url });
  const seconds = (performance.now() - started) / 1000;
  const after = await readAll(client);
  started = performance.now();
  const warm = await runExport(options, { client, account: url });
  const warmSeconds = (performance.now() - started) / 1000;
  const bytes = statSync(out).size;
  rmSync(out, { force: true });
  await client.close();
  if (before.records !== summary.records || after.records !== summary.records) throw new Error(`read ${before.records} and ${after.records} records, exported ${summary.records}`);
  const result: ChildResult = {
    format,
    records: summary.records,
    seconds,
    writingSeconds: summary.writingMs / 1000,
    fileWaitSeconds: summary.fileWaitMs / 1000,
    readBefore: before.seconds,
    readAfter: after.seconds,
    warmSeconds,
    warmWritingSeconds: warm.writingMs / 1000,
    bytes,
  };
  console.log(JSON.stringify(result));
}

/**
 * The memory an export takes, as a person runs it: a process that only exports. Prints its peak
 * RSS, sampled every 20 ms.
 */
async function memoryChild(format: string, url: string): Promise<void> {
  const out = join(tmpdir(), `crm-ferry-bench-export-${process.pid}.${format}`);
  const client = new CrmClient({ baseUrl: url, auth: TOKEN });
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const summary = await runExport(normaliseExportOptions({ entity: 'parties', out, cwd: tmpdir() }), { client, account: url });
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  rmSync(out, { force: true });
  await client.close();
  console.log(JSON.stringify({ format, records: summary.records, peakRssMb: Math.round(peak / 2 ** 20) }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] as number) : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;

/**
 * The share of the export's time it took beyond reading the same pages without writing. The
 * read after the export is the comparison: the one before runs cold (the client's code not yet
 * compiled) and is slower.
 */
const overReading = (r: ChildResult): number => Math.max(0, r.seconds - r.readAfter) / r.seconds;

async function main(): Promise<void> {
  const rows = Number(values.rows ?? 100_000);
  const runs = Number(values.runs ?? 3);
  const server: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve', String(rows)], { stdio: 'inherit', execArgv: ['--import', 'tsx', '--max-old-space-size=4096'] });
  const url = await new Promise<string>((resolve, reject) => {
    server.once('message', (m: { url: string }) => resolve(m.url));
    server.once('exit', (code) => reject(new Error(`sandbox exited (${code})`)));
  });
  const results: Record<string, ChildResult[]> = { csv: [], xlsx: [] };
  const memory: Record<string, number> = {};
  try {
    for (const format of ['csv', 'xlsx']) {
      const line = spawnTsx(import.meta.url, ['--memory', format, '--url', url]).trim().split('\n').pop() ?? '{}';
      const r = JSON.parse(line) as { records: number; peakRssMb: number };
      memory[format] = r.peakRssMb;
      console.log(`${format}: a process that only exports ${formatCount(r.records)} parties peaks at ${r.peakRssMb} MB RSS`);
    }
    // Formats take turns, so that a busier moment of the machine does not fall on one alone.
    for (let run = 0; run < runs; run += 1) {
      for (const format of ['csv', 'xlsx']) {
        const line = spawnTsx(import.meta.url, ['--child', format, '--url', url]).trim().split('\n').pop() ?? '{}';
        const r = JSON.parse(line) as ChildResult;
        results[format]?.push(r);
        console.log(
          `${format} run ${run + 1}: ${formatCount(r.records)} parties in ${r.seconds.toFixed(2)} s (${formatCount(r.records / r.seconds)}/s), of which writing ${r.writingSeconds.toFixed(2)} s (${percent(r.writingSeconds / r.seconds)}) and waiting for the file ${r.fileWaitSeconds.toFixed(2)} s; reading alone ${r.readBefore.toFixed(2)} s before (cold) and ${r.readAfter.toFixed(2)} s after, so the export took ${percent(overReading(r))} longer than reading; again in the same process ${r.warmSeconds.toFixed(2)} s, writing ${percent(r.warmWritingSeconds / r.warmSeconds)}; ${formatCount(r.bytes / 1024)} KiB; load ${loadavg()[0]?.toFixed(2)}`,
        );
      }
    }
  } finally {
    server.send('stop');
  }
  for (const [format, list] of Object.entries(results)) {
    const seconds = median(list.map((r) => r.seconds));
    const summary = {
      bench: 'export',
      format,
      runs: list.length,
      records: list[0]?.records ?? 0,
      recordsPerSecond: Math.round((list[0]?.records ?? 0) / seconds),
      /** Time the main thread spent building rows and handing them to the file, over the export's wall time. */
      writingShare: Number(median(list.map((r) => r.writingSeconds / r.seconds)).toFixed(3)),
      writingShareBest: Number(Math.min(...list.map((r) => r.writingSeconds / r.seconds)).toFixed(3)),
      /** Time spent waiting for the file (the disk; zlib's thread for XLSX), over the wall time. */
      fileWaitShare: Number(median(list.map((r) => r.fileWaitSeconds / r.seconds)).toFixed(3)),
      /** How much longer the export took than reading the same pages (warm) without writing. */
      overReading: Number(median(list.map(overReading)).toFixed(3)),
      bestRecordsPerSecond: Math.round(Math.max(...list.map((r) => r.records / r.seconds))),
      /** The second export in the same process: the writer's code compiled. */
      warmRecordsPerSecond: Math.round((list[0]?.records ?? 0) / median(list.map((r) => r.warmSeconds))),
      warmWritingShare: Number(median(list.map((r) => r.warmWritingSeconds / r.warmSeconds)).toFixed(3)),
      warmOverReading: Number(median(list.map((r) => Math.max(0, r.warmSeconds - r.readAfter) / r.warmSeconds)).toFixed(3)),
      peakRssMb: memory[format],
      bytes: list[0]?.bytes ?? 0,
      loadavg: loadavg().map((n) => n.toFixed(2)).join(' '),
    };
    console.log(JSON.stringify(summary));
  }
  for (const writer of ['own', 'exceljs']) {
    const line = spawnTsx(import.meta.url, ['--writer', writer, '--rows', String(rows)]).trim().split('\n').pop() ?? '{}';
    const r = JSON.parse(line) as { writer: string; rows: number; seconds: number; peakRssMb: number; bytes: number };
    console.log(JSON.stringify({ bench: 'xlsx-writer', ...r, rowsPerSecond: Math.round(r.rows / r.seconds) }));
    console.log(`XLSX writer ${r.writer}: ${formatCount(r.rows)} rows in ${r.seconds.toFixed(1)} s (${formatCount(r.rows / r.seconds)}/s), peak RSS ${r.peakRssMb} MB, ${formatCount(r.bytes / 1024)} KiB`);
  }
}

if (typeof values.writer === 'string') await compareWriter(values.writer, Number(values.rows ?? 100_000));
else if (typeof values.serve === 'string') await serve(Number(values.serve));
else if (typeof values.child === 'string') await child(values.child, String(values.url));
else if (typeof values.memory === 'string') await memoryChild(values.memory, String(values.url));
else await main();
