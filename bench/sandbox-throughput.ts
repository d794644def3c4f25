// Throughput of the sandbox for simple requests: reads of one party by id with a share of party
// creates, fired at a fixed concurrency over keep-alive connections. Not a test; run it with
// `npx tsx bench/sandbox-throughput.ts [--duration S] [--concurrency N] [--write-share F] [--in-process]`.
//
// The sandbox runs in a child process by default, so the load generator has an event loop of its
// own and the figure is the server's, not the server's minus the client's share of one thread.
// Both processes still share the machine's cores, as they would on a developer's laptop.
// Prints one JSON line (for the bench runner and the README) and one line for people.
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { seededRandom, startSandbox, type RunningSandbox } from '../src/sandbox/index.ts';

const SERVER_FLAG = '--serve-sandbox';
const BENCH_TOKEN = 'bench-token-0123456789';

interface ServerHandle {
  url: string;
  rssBytes(): Promise<number>;
  stop(): Promise<void>;
}

type ServerMessage = { kind: 'ready'; url: string } | { kind: 'rss'; bytes: number };

/** The child side: start the sandbox, report the address, answer memory questions, stop on request. */
async function serveInChild(): Promise<void> {
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', tokens: [BENCH_TOKEN] });
  const send = (message: ServerMessage): void => void process.send?.(message);
  process.on('message', (message: { kind: string }) => {
    if (message.kind === 'rss') send({ kind: 'rss', bytes: process.memoryUsage().rss });
    if (message.kind === 'stop') void sandbox.close().then(() => process.exit(0));
  });
  send({ kind: 'ready', url: sandbox.url });
}

async function startChildServer(): Promise<ServerHandle> {
  const child: ChildProcess = fork(fileURLToPath(import.meta.url), [SERVER_FLAG], { stdio: 'inherit' });
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

async function startInProcessServer(): Promise<ServerHandle> {
  const sandbox: RunningSandbox = await startSandbox({ port: 0, host: '127.0.0.1', tokens: [BENCH_TOKEN] });
  return { url: sandbox.url, rssBytes: async () => process.memoryUsage().rss, stop: () => sandbox.close() };
}

function percentile(sorted: Float64Array, share: number): number {
  if (sorted.length === 0) return Number.NaN;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil(share * sorted.length) - 1));
  return sorted[index] as number;
}

const round = (value: number, digits = 2): number => Number(value.toFixed(digits));

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      duration: { type: 'string', default: '10' },
      warmup: { type: 'string', default: '1' },
      concurrency: { type: 'string', default: '32' },
      'write-share': { type: 'string', default: '0.1' },
      parties: { type: 'string', default: '200' },
      'in-process': { type: 'boolean', default: false },
    },
  });
  const durationMs = Number(values.duration) * 1000;
  const warmupMs = Number(values.warmup) * 1000;
  const concurrency = Number(values.concurrency);
  const writeShare = Number(values['write-share']);
  const partyCount = Number(values.parties);
  if (![durationMs, warmupMs, concurrency, writeShare, partyCount].every(Number.isFinite) || concurrency < 1) {
    throw new Error('--duration, --warmup, --concurrency, --write-share and --parties take numbers');
  }

  const server = values['in-process'] ? await startInProcessServer() : await startChildServer();
  const pool = new Pool(server.url, { connections: concurrency, pipelining: 1 });
  const headers = { authorization: `Bearer ${BENCH_TOKEN}`, 'content-type': 'application/json' };
  const createBody = (n: number): string => JSON.stringify({ party: { type: 'person', firstName: 'Bench', lastName: `Person ${n}` } });

  try {
    // Seed parties to read; when the party routes are missing, fall back to a 404 read of a job.
    const ids: number[] = [];
    for (let i = 0; i < partyCount; i += 1) {
      const answer = await pool.request({ method: 'POST', path: '/api/v2/parties', headers, body: createBody(i) });
      const body = (await answer.body.json().catch(() => null)) as { party?: { id?: number } } | null;
      if (answer.statusCode !== 201 || typeof body?.party?.id !== 'number') break;
      ids.push(body.party.id);
    }
    const partiesWork = ids.length === partyCount && partyCount > 0;
    const random = seededRandom(7);
    let created = 0;
    const pick = (): { method: 'GET' | 'POST'; path: string; body?: string; expect: number } => {
      if (!partiesWork) return { method: 'GET', path: '/api/v2/jobs/00000000-0000-0000-0000-000000000000', expect: 404 };
      if (random() < writeShare) {
        created += 1;
        return { method: 'POST', path: '/api/v2/parties', body: createBody(partyCount + created), expect: 201 };
      }
      const id = ids[Math.floor(random() * ids.length)] as number;
      return { method: 'GET', path: `/api/v2/parties/${id}`, expect: 200 };
    };

    const run = async (ms: number, record: boolean) => {
      const latencies: number[] = [];
      let unexpected = 0;
      const deadline = performance.now() + ms;
      const loop = async (): Promise<void> => {
        while (performance.now() < deadline) {
          const next = pick();
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

    if (warmupMs > 0) await run(warmupMs, false);
    const load = loadavg()[0] ?? Number.NaN;
    const { latencies, unexpected, elapsedMs } = await run(durationMs, true);
    const sorted = Float64Array.from(latencies).sort();
    const rssBytes = await server.rssBytes();
    const result = {
      bench: 'sandbox-throughput',
      server: values['in-process'] ? 'in-process' : 'child-process',
      workload: partiesWork
        ? `GET /api/v2/parties/{id}, ${Math.round(writeShare * 100)}% POST /api/v2/parties`
        : 'GET /api/v2/jobs/{unknown} (404): the party routes were not available',
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
      `sandbox (${result.server}): ${result.requestsPerSecond} requests/s at concurrency ${concurrency}, ` +
        `p50 ${result.p50Ms} ms, p99 ${result.p99Ms} ms, server RSS ${result.serverRssMb} MB, ` +
        `${result.requests} requests in ${result.durationS} s (${result.workload}; load average ${result.loadAverage1m})`,
    );
    if (unexpected > 0) process.exitCode = 1;
  } finally {
    await pool.close();
    await server.stop();
  }
}

if (process.argv.includes(SERVER_FLAG)) await serveInChild();
else await main();
