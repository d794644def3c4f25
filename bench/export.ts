// Export speed and memory: 100,000 parties from the sandbox (in a child process, no rate limit)
// to CSV and to XLSX. Not a test; run it with
// `npm run bench -- export [--rows N] [--runs N] [--latency MS] [--no-writers]`.
// `--latency MS` has the sandbox wait that long before each answer, as a service across a network
// does (0, the default, leaves the export's own CPU as the whole difference).
// Each run is a fresh process that sets the export against a bare pager (undici, JSON.parse and
// the Link header) reading the same pages, side by side: wall time and CPU over the pager's. Also
// the share of the wall time spent writing, and the peak RSS of `crm-ferry export` as a person
// runs it (from dist/) and of the library through tsx; formats take turns; then the medians.
import { fork, type ChildProcess } from 'node:child_process';
import { rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool, type Dispatcher } from 'undici';
import { CrmClient } from '../src/client/index.ts';
import { z } from 'zod';
import { embedFor, normaliseExportOptions, openWriter, runExport, type Cell } from '../src/export/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { addParty } from '../test/helpers/records.ts';
import { ensureBuilt, formatCount, spawnTsx, timedNode } from './harness.ts';

const TOKEN = 'bench-export-token-0123';
const { values } = parseArgs({
  options: {
    rows: { type: 'string' },
    runs: { type: 'string' },
    memory: { type: 'string' },
    serve: { type: 'string' },
    child: { type: 'string' },
    url: { type: 'string' },
    writer: { type: 'string' },
    latency: { type: 'string' },
    'no-writers': { type: 'boolean' },
  },
  strict: false,
});

/** Rows of the shape a party export has: text, a number, a date, a timestamp, a yes/no. */
function sampleRow(i: number): Cell[] {
  return [
    i,
    'person',
    `First${i} Last${i}`,
    `First${i}`,
    `Last${i}`,
    'Buyer',
    `p${i}@example.org`,
    '+44 20 7123 4567',
    'London',
    'United Kingdom',
    'customer;vip',
    'Alex Admin',
    { date: '2021-06-01' },
    { timestamp: '2026-11-24T03:30:34Z' },
    i % 2 === 0,
  ];
}
const SAMPLE_HEADER = [
  'id',
  'type',
  'name',
  'firstName',
  'lastName',
  'jobTitle',
  'email',
  'phone',
  'city',
  'country',
  'tags',
  'owner',
  'Customer since',
  'createdAt',
  'VIP',
];

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
    const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
      filename: out,
      useSharedStrings: false,
      useStyles: true,
    });
    const sheet = workbook.addWorksheet('Export', { views: [{ state: 'frozen', ySplit: 1 }] });
    sheet.columns = SAMPLE_HEADER.map((header) => ({ header, key: header, width: 16 }));
    sheet.getRow(1).font = { bold: true };
    sheet.autoFilter = { from: 'A1', to: { row: rows + 1, column: SAMPLE_HEADER.length } };
    for (let i = 0; i < rows; i += 1) {
      const cells = sampleRow(i).map((c) =>
        c !== null && typeof c === 'object' ? new Date('date' in c ? `${c.date}T00:00:00Z` : c.timestamp) : c,
      );
      sheet.addRow(cells).commit();
    }
    sheet.commit();
    await workbook.commit();
  }
  const seconds = (performance.now() - started) / 1000;
  clearInterval(sampler);
  const bytes = statSync(out).size;
  rmSync(out, { force: true });
  console.log(
    JSON.stringify({
      writer: which,
      rows,
      seconds,
      peakRssMb: Math.round(Math.max(peak, process.memoryUsage().rss) / 2 ** 20),
      bytes,
    }),
  );
}

async function serve(rows: number, latencyMs: number): Promise<void> {
  // Without latency no fault hook at all: it would add an awaited hook to every request.
  const faults =
    latencyMs > 0 ? { faults: { errorRate: 0, latencyMs, latencyJitterMs: 0, dropAfterWriteRate: 0 } } : {};
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', tokens: [TOKEN], ...faults });
  for (let i = 0; i < rows; i += 1) {
    addParty(
      sandbox.store,
      i % 3 === 0
        ? {
            type: 'organisation',
            firstName: null,
            lastName: null,
            name: `Company ${i}`,
            about: `Customer since ${2000 + (i % 20)}`,
          }
        : {
            firstName: `First${i}`,
            lastName: `Last${i}`,
            jobTitle: 'Buyer',
            emailAddresses: [{ id: 2_000_000 + i, type: 'Work', address: `first${i}@example.org` }],
            phoneNumbers: [{ id: 3_000_000 + i, type: 'Work', number: `+44 20 7${String(i).padStart(6, '0')}` }],
          },
    );
  }
  process.send?.({ url: sandbox.url });
  process.on('message', () => void sandbox.close().then(() => process.exit(0)));
}

/**
 * The floor: a bare undici loop that asks for each page of parties (the export's embeds, 100 a
 * page), parses its JSON, follows the `Link` header and counts the records. No client, no checks,
 * no writing: what any program reading the same pages must spend.
 */
async function barePager(url: string): Promise<{ seconds: number; records: number; cpuMs: number }> {
  const origin = new URL(url).origin;
  const pool = new Pool(origin, { connections: 1 });
  const cpu = process.cpuUsage();
  const started = performance.now();
  let records = 0;
  let path: string | null = `/api/v2/parties?embed=${embedFor('parties').join(',')}&perPage=100`;
  while (path !== null) {
    const answer: Dispatcher.ResponseData = await pool.request({
      path,
      method: 'GET',
      headers: { authorization: `Bearer ${TOKEN}`, accept: 'application/json' },
    });
    const body = (await answer.body.json()) as { parties: unknown[] };
    records += body.parties.length;
    const link: unknown = answer.headers.link;
    const next: string | undefined = typeof link === 'string' ? /<([^>]*)>;\s*rel="next"/.exec(link)?.[1] : undefined;
    path = next === undefined ? null : new URL(next, origin).pathname + new URL(next, origin).search;
  }
  const seconds = (performance.now() - started) / 1000;
  const used = process.cpuUsage(cpu);
  await pool.close();
  return { seconds, records, cpuMs: (used.user + used.system) / 1000 };
}

/** Reads every party page (the export's embeds) through the client and throws the records away. */
async function readAll(client: CrmClient): Promise<{ seconds: number; records: number; cpuMs: number }> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  let records = 0;
  for await (const record of client.paginate(
    '/parties',
    'parties',
    z.custom<object>((v) => typeof v === 'object' && v !== null),
    { query: { embed: embedFor('parties').join(',') } },
  ))
    if (record) records += 1;
  const used = process.cpuUsage(cpu);
  return { seconds: (performance.now() - started) / 1000, records, cpuMs: (used.user + used.system) / 1000 };
}

interface Timed {
  seconds: number;
  cpuMs: number;
}

interface ChildResult {
  format: string;
  records: number;
  /** The first export in the process (after the warm-up reads), and the bare pager just before and after it. */
  export: Timed & { writingSeconds: number; fileWaitSeconds: number };
  bareBefore: Timed;
  bareAfter: Timed;
  /** The client's paginate alone, without writing. */
  clientRead: Timed;
  /** A second export in the same process, and the bare pager after it. */
  warm: Timed & { writingSeconds: number };
  bareLast: Timed;
  bytes: number;
  load: number;
}

async function timed<T extends { records: number }>(run: () => Promise<T>): Promise<T & Timed> {
  const cpu = process.cpuUsage();
  const started = performance.now();
  const result = await run();
  const used = process.cpuUsage(cpu);
  return { ...result, seconds: (performance.now() - started) / 1000, cpuMs: (used.user + used.system) / 1000 };
}

/**
 * In one process, side by side: a warm-up (the client's read and the bare pager's, so that
 * neither pays alone for compiling the HTTP code and the sandbox's first pages), then the bare
 * pager, an export, the bare pager, the client's read, a second export, the bare pager. Each
 * export is set against the mean of the bare pager's runs on either side of it, so that a
 * moment when the shared machine is busier falls on both. Prints one JSON line.
 */
async function child(format: string, url: string): Promise<void> {
  const out = join(tmpdir(), `crm-ferry-bench-export-${process.pid}.${format}`);
  const client = new CrmClient({ baseUrl: url, auth: TOKEN });
  const options = normaliseExportOptions({ entity: 'parties', out, cwd: tmpdir() });
  const exportOnce = async () => {
    const summary = await runExport(options, { client, account: { baseUrl: url, account: url } });
    return {
      records: summary.records,
      writingSeconds: summary.writingMs / 1000,
      fileWaitSeconds: summary.fileWaitMs / 1000,
    };
  };
  await readAll(client);
  await barePager(url);
  const bareBefore = await barePager(url);
  const first = await timed(exportOnce);
  const bareAfter = await barePager(url);
  const clientRead = await readAll(client);
  const warm = await timed(exportOnce);
  const bareLast = await barePager(url);
  const bytes = statSync(out).size;
  rmSync(out, { force: true });
  await client.close();
  for (const read of [bareBefore, bareAfter, clientRead, warm, bareLast])
    if (read.records !== first.records) throw new Error(`read ${read.records} records, exported ${first.records}`);
  const pick = (t: Timed): Timed => ({ seconds: t.seconds, cpuMs: t.cpuMs });
  const result: ChildResult = {
    format,
    records: first.records,
    export: { ...pick(first), writingSeconds: first.writingSeconds, fileWaitSeconds: first.fileWaitSeconds },
    bareBefore: pick(bareBefore),
    bareAfter: pick(bareAfter),
    clientRead: pick(clientRead),
    warm: { ...pick(warm), writingSeconds: warm.writingSeconds },
    bareLast: pick(bareLast),
    bytes,
    load: loadavg()[0] ?? 0,
  };
  console.log(JSON.stringify(result));
}

/**
 * The memory the library's export takes in a process that only exports, through tsx. Prints its
 * peak RSS, sampled every 20 ms. (The command's own is measured from dist/ by main.)
 */
async function memoryChild(format: string, url: string): Promise<void> {
  const out = join(tmpdir(), `crm-ferry-bench-export-${process.pid}.${format}`);
  const client = new CrmClient({ baseUrl: url, auth: TOKEN });
  let peak = process.memoryUsage().rss;
  const sampler = setInterval(() => (peak = Math.max(peak, process.memoryUsage().rss)), 20);
  const summary = await runExport(normaliseExportOptions({ entity: 'parties', out, cwd: tmpdir() }), {
    client,
    account: { baseUrl: url, account: url },
  });
  clearInterval(sampler);
  peak = Math.max(peak, process.memoryUsage().rss);
  rmSync(out, { force: true });
  await client.close();
  console.log(JSON.stringify({ format, records: summary.records, peakRssMb: Math.round(peak / 2 ** 20) }));
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const percent = (share: number): string => `${(share * 100).toFixed(1)}%`;

/** The first export's wall time over the bare pager's (the mean of its runs either side). */
const overBare = (r: ChildResult): number => r.export.seconds / ((r.bareBefore.seconds + r.bareAfter.seconds) / 2);
/** The second export's, against the runs either side of it. */
const warmOverBare = (r: ChildResult): number => r.warm.seconds / ((r.bareAfter.seconds + r.bareLast.seconds) / 2);
/** The same for CPU time of this process. */
const cpuOverBare = (r: ChildResult): number => r.export.cpuMs / ((r.bareBefore.cpuMs + r.bareAfter.cpuMs) / 2);

async function main(): Promise<void> {
  const rows = Number(values.rows ?? 100_000);
  const runs = Number(values.runs ?? 3);
  const latencyMs = Number(values.latency ?? 0);
  const server: ChildProcess = fork(
    fileURLToPath(import.meta.url),
    ['--serve', String(rows), '--latency', String(latencyMs)],
    { stdio: 'inherit', execArgv: ['--import', 'tsx', '--max-old-space-size=4096'] },
  );
  const url = await new Promise<string>((resolve, reject) => {
    server.once('message', (m: { url: string }) => resolve(m.url));
    server.once('exit', (code) => reject(new Error(`sandbox exited (${code})`)));
  });
  const results: Record<string, ChildResult[]> = { csv: [], xlsx: [] };
  const memory: Record<string, number> = {};
  const memoryTsx: Record<string, number> = {};
  try {
    ensureBuilt();
    for (const format of ['csv', 'xlsx']) {
      const line =
        spawnTsx(import.meta.url, ['--memory', format, '--url', url])
          .trim()
          .split('\n')
          .pop() ?? '{}';
      const r = JSON.parse(line) as { records: number; peakRssMb: number };
      memoryTsx[format] = r.peakRssMb;
      // As a person runs it: `crm-ferry export` from the compiled dist/.
      const out = join(tmpdir(), `crm-ferry-bench-export-command.${format}`);
      const command = timedNode(
        [fileURLToPath(new URL('../bin/crm-ferry.js', import.meta.url)), 'export', 'parties', '--out', out],
        { CRM_FERRY_TOKEN: TOKEN, CRM_FERRY_BASE_URL: url },
      );
      rmSync(out, { force: true });
      memory[format] = command.peakRssMb;
      console.log(
        `${format}: crm-ferry export of ${formatCount(r.records)} parties peaks at ${command.peakRssMb} MB RSS (${command.wallSeconds.toFixed(1)} s, ${command.cpuSeconds.toFixed(1)} s CPU, start-up included); the library through tsx at ${r.peakRssMb} MB`,
      );
    }
    // Formats take turns, so that a busier moment of the machine does not fall on one alone.
    for (let run = 0; run < runs; run += 1) {
      for (const format of ['csv', 'xlsx']) {
        const line =
          spawnTsx(import.meta.url, ['--child', format, '--url', url])
            .trim()
            .split('\n')
            .pop() ?? '{}';
        const r = JSON.parse(line) as ChildResult;
        results[format]?.push(r);
        console.log(
          `${format} run ${run + 1}: ${formatCount(r.records)} parties in ${r.export.seconds.toFixed(2)} s (${formatCount(r.records / r.export.seconds)}/s, CPU ${formatCount(r.export.cpuMs)} ms), writing ${percent(r.export.writingSeconds / r.export.seconds)}, waiting for the file ${r.export.fileWaitSeconds.toFixed(2)} s; ` +
            `bare pager ${r.bareBefore.seconds.toFixed(2)} s before and ${r.bareAfter.seconds.toFixed(2)} s after (CPU ${formatCount(r.bareBefore.cpuMs)} and ${formatCount(r.bareAfter.cpuMs)} ms): ${overBare(r).toFixed(2)} x the bare pager's wall time, ${cpuOverBare(r).toFixed(2)} x its CPU; ` +
            `the client's read alone ${r.clientRead.seconds.toFixed(2)} s; again in the same process ${r.warm.seconds.toFixed(2)} s (${warmOverBare(r).toFixed(2)} x, bare ${r.bareLast.seconds.toFixed(2)} s); ${formatCount(r.bytes / 1024)} KiB; load ${r.load.toFixed(2)}`,
        );
      }
    }
  } finally {
    server.send('stop');
  }
  for (const [format, list] of Object.entries(results)) {
    const seconds = median(list.map((r) => r.export.seconds));
    const summary = {
      bench: 'export',
      format,
      latencyMs,
      runs: list.length,
      records: list[0]?.records ?? 0,
      recordsPerSecond: Math.round((list[0]?.records ?? 0) / seconds),
      /** The export's wall time over the bare pager's, side by side in one process (target <= 1.25). */
      overBarePager: Number(median(list.map(overBare)).toFixed(3)),
      overBarePagerRuns: list.map((r) => Number(overBare(r).toFixed(3))),
      /** The same for the second export in the process, its code compiled. */
      warmOverBarePager: Number(median(list.map(warmOverBare)).toFixed(3)),
      /** The export's CPU time over the bare pager's (this process only; the sandbox is another). */
      cpuOverBarePager: Number(median(list.map(cpuOverBare)).toFixed(3)),
      /** The client's read without writing, over the bare pager's wall time. */
      clientReadOverBarePager: Number(
        median(list.map((r) => r.clientRead.seconds / ((r.bareAfter.seconds + r.bareLast.seconds) / 2))).toFixed(3),
      ),
      /** Time the main thread spent building rows and handing them to the file, over the export's wall time. */
      writingShare: Number(median(list.map((r) => r.export.writingSeconds / r.export.seconds)).toFixed(3)),
      /** Time spent waiting for the file (the disk; zlib's thread for XLSX), over the wall time. */
      fileWaitShare: Number(median(list.map((r) => r.export.fileWaitSeconds / r.export.seconds)).toFixed(3)),
      /** `crm-ferry export` from dist/, as a person runs it (target < 150 MB). */
      peakRssMb: memory[format],
      /** The library in a process through tsx, which adds about 40 MB of its own. */
      peakRssMbThroughTsx: memoryTsx[format],
      bytes: list[0]?.bytes ?? 0,
      loadavg: list.map((r) => r.load.toFixed(2)).join(' '),
    };
    console.log(JSON.stringify(summary));
  }
  if (values['no-writers'] === true) return;
  for (const writer of ['own', 'exceljs']) {
    const line =
      spawnTsx(import.meta.url, ['--writer', writer, '--rows', String(rows)])
        .trim()
        .split('\n')
        .pop() ?? '{}';
    const r = JSON.parse(line) as { writer: string; rows: number; seconds: number; peakRssMb: number; bytes: number };
    console.log(JSON.stringify({ bench: 'xlsx-writer', ...r, rowsPerSecond: Math.round(r.rows / r.seconds) }));
    console.log(
      `XLSX writer ${r.writer}: ${formatCount(r.rows)} rows in ${r.seconds.toFixed(1)} s (${formatCount(r.rows / r.seconds)}/s), peak RSS ${r.peakRssMb} MB, ${formatCount(r.bytes / 1024)} KiB`,
    );
  }
}

if (typeof values.writer === 'string') await compareWriter(values.writer, Number(values.rows ?? 100_000));
else if (typeof values.serve === 'string') await serve(Number(values.serve), Number(values.latency ?? 0));
else if (typeof values.child === 'string') await child(values.child, String(values.url));
else if (typeof values.memory === 'string') await memoryChild(values.memory, String(values.url));
else await main();
