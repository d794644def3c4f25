// Throughput of the sandbox, one workload at a time, fired at a fixed concurrency over keep-alive
// connections. Not a test; run it with `npm run bench -- sandbox-throughput [--duration S]
// [--concurrency N] [--workloads a,b] [--in-process]`. Workloads:
//   reads            GET /parties/{id} with 10% POST /parties (200 parties stored)
//   creates          POST /parties, state in memory
//   durable-creates  POST /parties with --data: each 201 waits for its change to be synced (group commit)
//   list-10k         GET /parties?perPage=100 with 10,000 parties stored
//   list-300k        the same with 300,000 parties stored
//   pages-300k       GET /parties?perPage=100&page=N, N at random over all 3,000 pages
//   filter-10k       POST /parties/filters/results?perPage=100 (name contains), 10,000 parties
//   filter-300k      the same with 300,000 parties
//
// The sandbox runs in a child process by default, so the load generator has an event loop of its
// own and the figure is the server's, not the server's minus the client's share of one thread.
// Both processes still share the machine's cores, as they would on a developer's laptop.
// The same workload on the small and the large store (list-10k and list-300k, filter-10k and
// filter-300k) is measured in turns of one second, both servers running, so that the two figures
// see the same moments of a machine shared with other work and can be compared.
// Prints one JSON line per workload (for the bench runner and the docs) and one line for people.
import { fork, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { seededRandom, startSandbox, type RunningSandbox } from '../src/sandbox/index.ts';
import { addParty } from '../test/helpers/records.ts';
const SERVER_FLAG = '--serve-sandbox';
const BENCH_TOKEN = 'bench-token-0123456789';

interface ServerHandle {
  url: string;
  rssBytes(): Promise<number>;
  stop(): Promise<void>;
}

type ServerMessage = { kind: 'ready'; url: string } | { kind: 'rss'; bytes: number };

interface ServerSetup {
  /** Parties put straight into the store before listening. */
  parties: number;
  /** Data file, for durable writes; null keeps the state in memory. */
  dataFile: string | null;
}

async function startBenchSandbox(setup: ServerSetup): Promise<RunningSandbox> {
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', tokens: [BENCH_TOKEN], dataFile: setup.dataFile });
  for (let i = 0; i < setup.parties; i += 1) {
    addParty(
      sandbox.store,
      i % 2 === 0
        ? { lastName: `Person ${i}` }
        : { type: 'organisation', firstName: null, lastName: null, name: `Company ${i}` },
    );
  }
  sandbox.store.forgetChanges();
  return sandbox;
}

/** The child side: start the sandbox, report the address, answer memory questions, stop on request. */
async function serveInChild(): Promise<void> {
  const setup = JSON.parse(process.argv[process.argv.indexOf(SERVER_FLAG) + 1] as string) as ServerSetup;
  const sandbox = await startBenchSandbox(setup);
  const send = (message: ServerMessage): void => void process.send?.(message);
  process.on('message', (message: { kind: string }) => {
    if (message.kind === 'rss') send({ kind: 'rss', bytes: process.memoryUsage().rss });
    if (message.kind === 'stop') void sandbox.close().then(() => process.exit(0));
  });
  send({ kind: 'ready', url: sandbox.url });
}

async function startChildServer(setup: ServerSetup): Promise<ServerHandle> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [SERVER_FLAG, JSON.stringify(setup)], {
    stdio: 'inherit',
    execArgv: ['--import', 'tsx', '--max-old-space-size=4096'],
  });
  const next = (kind: ServerMessage['kind']): Promise<ServerMessage> =>
    new Promise((resolve, reject) => {
      const onMessage = (message: ServerMessage): void => {
        if (message.kind !== kind) return;
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve(message);
      };
      const onExit = (code: number | null): void => reject(new Error(`the sandbox process exited early (${code})`));
      child.on('message', onMessage);
      child.once('exit', onExit);
    });
  const ready = await next('ready');
  if (ready.kind !== 'ready') throw new Error('unexpected message from the sandbox process');
  return {
    url: ready.url,
    rssBytes: async () => {
      const reply = next('rss');
      child.send({ kind: 'rss' });
      const message = await reply;
      return message.kind === 'rss' ? message.bytes : Number.NaN;
    },
    stop: () =>
      new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.send({ kind: 'stop' });
      }),
  };
}

async function startInProcessServer(setup: ServerSetup): Promise<ServerHandle> {
  const sandbox = await startBenchSandbox(setup);
  return { url: sandbox.url, rssBytes: async () => process.memoryUsage().rss, stop: () => sandbox.close() };
}

function percentile(sorted: Float64Array, share: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1));
  return sorted[index] as number;
}

const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

interface Request {
  method: 'GET' | 'POST';
  path: string;
  body?: string;
  expect: number;
}

interface Workload {
  name: string;
  describe: string;
  parties: number;
  durable?: boolean;
  /** Parties created through the interface first, to read back (reads). */
  created?: number;
  next(ids: number[], random: () => number, n: number): Request;
}

const createBody = (n: number): string =>
  JSON.stringify({ party: { type: 'person', firstName: 'Bench', lastName: `Person ${n}` } });
const create = (n: number): Request => ({ method: 'POST', path: '/api/v2/parties', body: createBody(n), expect: 201 });
const filterBody = JSON.stringify({
  filter: { conditions: [{ field: 'name', operator: 'contains', value: 'Company 1' }] },
});

const WORKLOADS: Workload[] = [
  {
    name: 'reads',
    describe: 'GET /api/v2/parties/{id}, 10% POST /api/v2/parties',
    parties: 0,
    created: 200,
    next: (ids, random, n) =>
      random() < 0.1
        ? create(n)
        : { method: 'GET', path: `/api/v2/parties/${ids[Math.floor(random() * ids.length)]}`, expect: 200 },
  },
  { name: 'creates', describe: 'POST /api/v2/parties, in memory', parties: 0, next: (_ids, _random, n) => create(n) },
  {
    name: 'durable-creates',
    describe: 'POST /api/v2/parties with --data (synced before the 201)',
    parties: 0,
    durable: true,
    next: (_ids, _random, n) => create(n),
  },
  {
    name: 'list-10k',
    describe: 'GET /api/v2/parties?perPage=100, 10,000 parties',
    parties: 10_000,
    next: () => ({ method: 'GET', path: '/api/v2/parties?perPage=100', expect: 200 }),
  },
  {
    name: 'list-300k',
    describe: 'GET /api/v2/parties?perPage=100, 300,000 parties',
    parties: 300_000,
    next: () => ({ method: 'GET', path: '/api/v2/parties?perPage=100', expect: 200 }),
  },
  {
    name: 'pages-300k',
    describe: 'GET /api/v2/parties?perPage=100&page={random}, 300,000 parties',
    parties: 300_000,
    next: (_ids, random) => ({
      method: 'GET',
      path: `/api/v2/parties?perPage=100&page=${1 + Math.floor(random() * 3000)}`,
      expect: 200,
    }),
  },
  {
    name: 'filter-10k',
    describe: 'POST /api/v2/parties/filters/results?perPage=100 (name contains), 10,000 parties',
    parties: 10_000,
    next: () => ({
      method: 'POST',
      path: '/api/v2/parties/filters/results?perPage=100',
      body: filterBody,
      expect: 200,
    }),
  },
  {
    name: 'filter-300k',
    describe: 'POST /api/v2/parties/filters/results?perPage=100 (name contains), 300,000 parties',
    parties: 300_000,
    next: () => ({
      method: 'POST',
      path: '/api/v2/parties/filters/results?perPage=100',
      body: filterBody,
      expect: 200,
    }),
  },
];

interface MeasureOptions {
  durationMs: number;
  warmupMs: number;
  concurrency: number;
  inProcess: boolean;
}

/** A workload's server, pool and request stream, driven in slices. */
interface Session {
  workload: Workload;
  drive(ms: number, record: boolean): Promise<{ latencies: number[]; unexpected: number; elapsedMs: number }>;
  rssBytes(): Promise<number>;
  close(): Promise<void>;
}

async function openSession(workload: Workload, options: MeasureOptions): Promise<Session> {
  const { concurrency } = options;
  const dir = workload.durable ? await mkdtemp(join(tmpdir(), 'ferry-bench-')) : null;
  const setup: ServerSetup = { parties: workload.parties, dataFile: dir ? join(dir, 'state.json') : null };
  const server = options.inProcess ? await startInProcessServer(setup) : await startChildServer(setup);
  const pool = new Pool(server.url, { connections: concurrency, pipelining: 1 });
  const headers = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
  const close = async (): Promise<void> => {
    await pool.close();
    await server.stop();
    if (dir) await rm(dir, { recursive: true, force: true });
  };
  try {
    const ids: number[] = [];
    for (let i = 0; i < (workload.created ?? 0); i += 1) {
      const answer = await pool.request({ method: 'POST', path: '/api/v2/parties', headers, body: createBody(i) });
      const body = (await answer.body.json()) as { party: { id: number } };
      ids.push(body.party.id);
    }
    const random = seededRandom(7);
    let n = 0;
    const drive = async (ms: number, record: boolean) => {
      const latencies: number[] = [];
      let unexpected = 0;
      const deadline = performance.now() + ms;
      const loop = async (): Promise<void> => {
        while (performance.now() < deadline) {
          n += 1;
          const next = workload.next(ids, random, n);
          const started = performance.now();
          const answer = await pool.request({ method: next.method, path: next.path, headers, body: next.body ?? null });
          await answer.body.dump();
          if (record) latencies.push(performance.now() - started);
          if (answer.statusCode !== next.expect) unexpected += 1;
        }
      };
      const began = performance.now();
      await Promise.all(Array.from({ length: concurrency }, loop));
      return { latencies, unexpected, elapsedMs: performance.now() - began };
    };
    return { workload, drive, rssBytes: () => server.rssBytes(), close };
  } catch (error) {
    await close();
    throw error;
  }
}

/**
 * Measures workloads side by side: every server is started first, then each gets the load in
 * turn, one slice of a second at a time, until each has had `durationMs`. Workloads meant to be
 * compared (a list page on a small and on a large store) then see the same moments of a shared
 * machine, so a neighbour's burst of work does not land on one of them only.
 */
async function measureTogether(workloads: Workload[], options: MeasureOptions): Promise<boolean> {
  const { durationMs, warmupMs, concurrency } = options;
  const sessions: Session[] = [];
  try {
    for (const workload of workloads) sessions.push(await openSession(workload, options));
    for (const session of sessions) if (warmupMs > 0) await session.drive(warmupMs, false);
    const loads: number[] = [];
    const totals = sessions.map(() => ({ latencies: [] as number[], unexpected: 0, elapsedMs: 0 }));
    const sliceMs = workloads.length > 1 ? Math.min(1000, durationMs) : durationMs;
    for (let done = 0; done < durationMs; done += sliceMs) {
      loads.push(loadavg()[0] ?? Number.NaN);
      for (const [i, session] of sessions.entries()) {
        const slice = await session.drive(Math.min(sliceMs, durationMs - done), true);
        const total = totals[i] as (typeof totals)[number];
        for (const latency of slice.latencies) total.latencies.push(latency);
        total.unexpected += slice.unexpected;
        total.elapsedMs += slice.elapsedMs;
      }
    }
    const load = loads.reduce((a, b) => a + b, 0) / loads.length;
    let ok = true;
    for (const [i, session] of sessions.entries()) {
      const { latencies, unexpected, elapsedMs } = totals[i] as (typeof totals)[number];
      const workload = session.workload;
      const sorted = Float64Array.from(latencies).sort();
      const rssBytes = await session.rssBytes();
      const result = {
        bench: 'sandbox-throughput',
        workload: workload.name,
        server: options.inProcess ? 'in-process' : 'child-process',
        describe: workload.describe,
        ...(sessions.length > 1
          ? { interleavedWith: sessions.filter((s) => s !== session).map((s) => s.workload.name) }
          : {}),
        concurrency,
        durationS: round(elapsedMs / 1000),
        requests: latencies.length,
        unexpectedStatuses: unexpected,
        requestsPerSecond: Math.round(latencies.length / (elapsedMs / 1000)),
        p50Ms: round(percentile(sorted, 0.5)),
        p99Ms: round(percentile(sorted, 0.99)),
        serverRssMb: round(rssBytes / 1024 / 1024, 1),
        loadAverage1m: round(load),
        node: process.version,
      };
      console.log(JSON.stringify(result));
      console.log(
        `${workload.name}: ${result.requestsPerSecond} requests/s at concurrency ${concurrency}, ` +
          `p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, server RSS ${result.serverRssMb} MB ` +
          `(${workload.describe}${sessions.length > 1 ? `; in turns with ${result.interleavedWith?.join(', ')}` : ''}; load average ${result.loadAverage1m})`,
      );
      ok = ok && unexpected === 0;
    }
    return ok;
  } finally {
    for (const session of sessions) await session.close();
  }
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '5' },
      warmup: { type: 'string', default: '1' },
      concurrency: { type: 'string', default: '32' },
      workloads: { type: 'string', default: WORKLOADS.map((w) => w.name).join(',') },
      'in-process': { type: 'boolean', default: false },
    },
  });
  const durationMs = Number(values.duration) * 1000;
  const warmupMs = Number(values.warmup) * 1000;
  const concurrency = Number(values.concurrency);
  if (![durationMs, warmupMs, concurrency].every(Number.isFinite) || concurrency < 1) {
    throw new Error('--duration, --warmup and --concurrency take numbers');
  }
  const names = values.workloads.split(',').map((name) => name.trim());
  const unknown = names.filter((name) => !WORKLOADS.some((w) => w.name === name));
  if (unknown.length > 0)
    throw new Error(`unknown workload(s) ${unknown.join(', ')}; known: ${WORKLOADS.map((w) => w.name).join(', ')}`);
  const options = { durationMs, warmupMs, concurrency, inProcess: values['in-process'] };
  let ok = true;
  // Workloads that differ only in the store's size are measured in turns, to be compared.
  const chosen = WORKLOADS.filter((w) => names.includes(w.name));
  const groups = new Map<string, Workload[]>();
  for (const workload of chosen) {
    const family = workload.name.replace(/-(10k|300k)$/, '');
    groups.set(family, [...(groups.get(family) ?? []), workload]);
  }
  for (const group of groups.values()) ok = (await measureTogether(group, options)) && ok;
  if (!ok) process.exitCode = 1;
}

if (process.argv.includes(SERVER_FLAG)) await serveInChild();
else await main();
