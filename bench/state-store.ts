// What keeping the state in PostgreSQL costs an import: `crm-ferry run` of a plan (organisations,
// then people linked to them) into a sandbox, with the state in a folder alone and with
// `--state-store`, each a process of its own timed by /usr/bin/time; then the same plan again from
// an empty folder (a new machine), which takes the journal from the store and writes nothing.
// Reports requests per record (the store must add none), CPU and wall seconds, and what the store
// holds per row. Not a test.
// `npm run bench -- state-store [--rows 2000] [--concurrency 8] [--runs 3] [--store URL]`
// --store: a PostgreSQL server (trust or a password in the URL); the benchmark makes a database of
// its own there and drops it after. Default: postgresql://postgres@127.0.0.1:5432/postgres.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import pg from 'pg';
import { ensureBuilt, type Timed, timedNode } from './harness.ts';
import { BENCH_TOKEN, serveSandbox, writePlan } from './import-setup.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    rows: { type: 'string' },
    concurrency: { type: 'string' },
    runs: { type: 'string' },
    store: { type: 'string' },
  },
  strict: false,
});
const people = Number(values.rows ?? 2000);
const organisations = Math.max(1, Math.floor(people / 40));
const concurrency = Number(values.concurrency ?? 8);
const runs = Number(values.runs ?? 3);
const server = (values.store as string | undefined) ?? 'postgresql://postgres@127.0.0.1:5432/postgres';

const name = `ferry_bench_${process.pid}`;
const admin = new pg.Client({ connectionString: server });
await admin.connect();
await admin.query(`CREATE DATABASE ${name}`);
const storeUrl = Object.assign(new URL(server), { pathname: `/${name}` }).toString();

/** The requests a run reports (`Requests: N (...)`). */
function requestsOf(timed: Timed): number {
  const match = /Requests: ([\d,]+)/.exec(timed.stdout);
  if (!match) throw new Error(`no request count in:\n${timed.stdout}`);
  return Number((match[1] as string).replace(/,/g, ''));
}

ensureBuilt();
const records = people + organisations;
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)] as number;
const rows: Array<{ what: string; requests: number[]; cpu: number[]; wall: number[] }> = [
  { what: 'folder', requests: [], cpu: [], wall: [] },
  { what: 'store', requests: [], cpu: [], wall: [] },
  { what: 'store, again from an empty folder', requests: [], cpu: [], wall: [] },
];
let storeBytes = 0;
let storeGroups = 0;
try {
  for (let run = 0; run < runs; run += 1) {
    for (const [index, mode] of (['folder', 'store'] as const).entries()) {
      // A sandbox of its own each time: every run creates every record.
      const sandbox = await serveSandbox({});
      const dir = mkdtempSync(join(tmpdir(), 'ferry-bench-store-'));
      try {
        const plan = writePlan(dir, people, organisations);
        const env = { CRM_FERRY_TOKEN: BENCH_TOKEN, CRM_FERRY_BASE_URL: sandbox.url };
        const store = mode === 'store' ? ['--state-store', storeUrl, '--state-key', `bench-${run}`] : [];
        const cli = [join(root, 'bin', 'crm-ferry.js'), 'run', plan, '--concurrency', String(concurrency)];
        const first = timedNode([...cli, '--state-dir', join(dir, 'one'), ...store], env);
        const row = rows[index] as (typeof rows)[number];
        row.requests.push(requestsOf(first));
        row.cpu.push(first.cpuSeconds);
        row.wall.push(first.wallSeconds);
        if (mode === 'store') {
          const again = timedNode([...cli, '--state-dir', join(dir, 'two'), ...store], env);
          const next = rows[2] as (typeof rows)[number];
          next.requests.push(requestsOf(again));
          next.cpu.push(again.cpuSeconds);
          next.wall.push(again.wallSeconds);
          const db = new pg.Client({ connectionString: storeUrl });
          await db.connect();
          const held = await db.query<{ bytes: string; groups: string }>(
            `SELECT sum(pg_column_size(g.*))::bigint AS bytes, count(*)::bigint AS groups
               FROM crm_ferry.journal_groups g WHERE state_key = $1`,
            [`bench-${run}`],
          );
          await db.end();
          storeBytes = Number(held.rows[0]?.bytes ?? 0);
          storeGroups = Number(held.rows[0]?.groups ?? 0);
        }
      } finally {
        await sandbox.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    }
  }
} finally {
  await admin.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
  await admin.end();
}

console.log(
  `${people.toLocaleString('en')} people and ${organisations} organisations, --concurrency ${concurrency}, median of ${runs} runs; load ${loadavg()
    .slice(0, 2)
    .map((l) => l.toFixed(1))
    .join(', ')}`,
);
console.log('| state | requests per record | CPU s | wall s |');
console.log('|---|---|---|---|');
for (const row of rows)
  console.log(
    `| ${row.what} | ${(median(row.requests) / records).toFixed(3)} | ${median(row.cpu).toFixed(2)} | ${median(row.wall).toFixed(2)} |`,
  );
console.log(
  `The store held ${storeGroups} journal groups, ${Math.round(storeBytes / records)} bytes a record (rows as written, with their intents and outcomes).`,
);
