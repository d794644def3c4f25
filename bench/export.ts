// Export speed and memory: 100,000 parties from the sandbox (in a child process, no rate limit)
// to CSV and to XLSX. Not a test; run it with `npm run bench -- export [--rows N]`.
// Prints records/s, the share of the wall time spent in the writer (the rest is waiting for the
// sandbox's pages), and the exporting process's peak RSS, each format in a fresh process.
import { fork, type ChildProcess } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { CrmClient } from '../src/client/index.ts';
import { normaliseExportOptions, openWriter, runExport, type Cell } from '../src/export/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { addParty } from '../test/helpers/records.ts';
import { formatCount, spawnTsx } from './harness.ts';

const TOKEN = 'bench-export-token-0123';
const { values } = parseArgs({ options: { rows: { type: 'string' }, serve: { type: 'string' }, child: { type: 'string' }, url: { type: 'string' }, writer: { type: 'string' } }, strict: false });

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
    addParty(sandbox.store, i % 3 === 0 ? { type: 'organisation', firstName: null, lastName: null, name: `Company ${i}`, about: `Customer since ${2000 + (i % 20)}` } : { firstName: `First${i}`, lastName: `Last${i}`, jobTitle: 'Buyer' });
  }
  process.send?.({ url: sandbox.url });
  process.on('message', () => void sandbox.close().then(() => process.exit(0)));
}

/** One export in this process; prints one JSON line. */
async function child(format: string, url: string): Promise<void> {
  const out = join(tmpdir(), `crm-ferry-bench-export-${process.pid}.${format}`);
  const client = new CrmClient({ baseUrl: url, auth: TOKEN });
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 50);
  // The writer's share of the time: the export, against reading the same pages (same embeds)
  // without writing anything, in the same process right after.
  const started = performance.now();
  const summary = await runExport(normaliseExportOptions({ entity: 'parties', out, cwd: tmpdir() }), { client, account: url });
  const withWriter = (performance.now() - started) / 1000;
  const readOnly = performance.now();
  let n = 0;
  for await (const record of client.paginate('/parties', 'parties', (await import('zod')).z.looseObject({}), { query: { embed: 'tags,fields,organisation' } })) if (record) n += 1;
  const readSeconds = (performance.now() - readOnly) / 1000;
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  const bytes = statSync(out).size;
  rmSync(out, { force: true });
  await client.close();
  console.log(JSON.stringify({ format, records: summary.records, read: n, seconds: withWriter, readSeconds, peakRssMb: Math.round(peak / 2 ** 20), bytes }));
}

async function main(): Promise<void> {
  const rows = Number(values.rows ?? 100_000);
  const server: ChildProcess = fork(fileURLToPath(import.meta.url), ['--serve', String(rows)], { stdio: 'inherit', execArgv: ['--import', 'tsx', '--max-old-space-size=4096'] });
  const url = await new Promise<string>((resolve, reject) => {
    server.once('message', (m: { url: string }) => resolve(m.url));
    server.once('exit', (code) => reject(new Error(`sandbox exited (${code})`)));
  });
  try {
    for (const format of ['csv', 'xlsx']) {
      const line = spawnTsx(import.meta.url, ['--child', format, '--url', url]).trim().split('\n').pop() ?? '{}';
      const r = JSON.parse(line) as { format: string; records: number; seconds: number; readSeconds: number; peakRssMb: number; bytes: number };
      const share = Math.max(0, (r.seconds - r.readSeconds) / r.seconds);
      console.log(JSON.stringify({ bench: 'export', ...r, recordsPerSecond: Math.round(r.records / r.seconds), writerShare: Number(share.toFixed(3)) }));
      console.log(`${r.format}: ${formatCount(r.records)} parties in ${r.seconds.toFixed(1)} s (${formatCount(r.records / r.seconds)}/s); reading the same pages alone ${r.readSeconds.toFixed(1)} s, so writing is ${(share * 100).toFixed(1)}% of the time; peak RSS ${r.peakRssMb} MB; ${formatCount(r.bytes / 1024)} KiB`);
    }
  } finally {
    server.send('stop');
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
else await main();
