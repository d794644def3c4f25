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
import { normaliseExportOptions, runExport } from '../src/export/index.ts';
import { startSandbox } from '../src/sandbox/index.ts';
import { addParty } from '../test/helpers/records.ts';
import { formatCount, spawnTsx } from './harness.ts';

const TOKEN = 'bench-export-token-0123';
const { values } = parseArgs({ options: { rows: { type: 'string' }, serve: { type: 'string' }, child: { type: 'string' }, url: { type: 'string' } }, strict: false });

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
}

if (typeof values.serve === 'string') await serve(Number(values.serve));
else if (typeof values.child === 'string') await child(values.child, String(values.url));
else await main();
