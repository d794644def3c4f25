// The importer against the sandbox: how close it comes to a bare concurrent POST loop, how many
// requests a record costs, and how much of a rate limit it uses. Not a test; run it with
// `npm run bench -- import [--rows N] [--concurrency N] [--latency MS] [--quota-seconds S]
// [--runs N] [--burn] [--only speed|quota]`. `--burn` runs a CPU-bound process (a busy loop)
// beside both the importer and the bare loop, as another program on the same machine would.
//
// Speed: the sandbox runs in a child process with 20 ms added to every answer (a service far
// away) and no rate limit, one sandbox for every run, warmed up by the loop first. The importer
// writes a plan (organisations, then people linked to them with tags and custom fields) with
// `--concurrency` requests under way; then the same people bodies, read back from the
// importer's journal, are POSTed by a bare undici loop at the same concurrency. The figure is
// the importer's records/s over the loop's; beside it, the CPU each spent a person on its main
// thread and the sandbox's CPU a person while each wrote (from /proc, on Linux).
// Quota: a sandbox allowing 10 requests a second in 20-second windows, then one allowing 40 a
// second in one-second windows (`--rate-limit 40/s`); the importer runs for a few windows, and
// the requests answered in full windows are set against what they allowed.
// The importer's client is built as `crm-ferry run --concurrency N` builds it (the same flags
// to options, the same connect()), so that the pool it gets is the command's.
import { spawn, type ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { parseArgs } from 'node:util';
import { Pool } from 'undici';
import { connect } from '../src/client/connect.ts';
import type { CrmClient } from '../src/client/index.ts';
import { toImportCommandOptions } from '../src/cli/import.ts';
import { readJournal } from '../src/journal/index.ts';
import { runImport } from '../src/load/index.ts';
import { BENCH_TOKEN as TOKEN, type ServedSandbox, serveSandbox as serve, writePlan } from './import-setup.ts';

await main();

async function bareLoop(
  url: string,
  bodies: unknown[],
  concurrency: number,
): Promise<{ rate: number; busyMsPerRecord: number }> {
  const pool = new Pool(url, { connections: concurrency });
  let next = 0;
  const started = performance.now();
  const elu = performance.eventLoopUtilization();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < bodies.length) {
        const body = JSON.stringify({ party: bodies[next++] });
        const answer = await pool.request({
          path: '/api/v2/parties',
          method: 'POST',
          headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
          body,
        });
        await answer.body.text();
        if (answer.statusCode !== 201) throw new Error(`bare loop: ${answer.statusCode}`);
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  const busyMsPerRecord = performance.eventLoopUtilization(elu).active / bodies.length;
  await pool.close();
  return { rate: bodies.length / seconds, busyMsPerRecord };
}

/**
 * People shaped as the plan's (an organisation, the VIP custom field, tags) but not its, written
 * by the loop before anything is timed, so that the sandbox has compiled the paths both will take.
 */
async function warmUp(url: string, count: number, concurrency: number): Promise<void> {
  const pool = new Pool(url, { connections: 1 });
  const headers = { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' };
  try {
    const listed = await pool.request({
      path: '/api/v2/parties/fields/definitions?perPage=100',
      method: 'GET',
      headers,
    });
    const definitions = (await listed.body.json()) as { definitions?: Array<{ id: number; name: string }> };
    const vip = definitions.definitions?.find((d) => d.name === 'VIP')?.id;
    const made = await pool.request({
      path: '/api/v2/parties',
      method: 'POST',
      headers,
      body: JSON.stringify({ party: { type: 'organisation', name: 'Warm-up Org' } }),
    });
    const organisation = ((await made.body.json()) as { party?: { id: number } }).party?.id;
    if (vip === undefined || organisation === undefined)
      throw new Error(
        `warm-up: the sandbox answered ${listed.statusCode} for its field definitions (no VIP field?) and ${made.statusCode} for an organisation`,
      );
    const bodies = Array.from({ length: count }, (_, i) => ({
      type: 'person',
      firstName: `Warm${i}`,
      lastName: 'Up',
      emailAddresses: [{ type: 'Work', address: `w${i}@bench.example` }],
      organisation: { id: organisation },
      fields: [{ definition: vip, value: i % 2 === 0 }],
      tags: i % 3 === 0 ? [{ name: 'vip' }, { name: 'customer' }] : [{ name: 'lead' }],
    }));
    await bareLoop(url, bodies, concurrency);
  } finally {
    await pool.close();
  }
}

/** A client as `crm-ferry run PLAN --concurrency N` makes it, logging each request when asked. */
async function commandClient(
  url: string,
  plan: string,
  concurrency: number,
  log?: (line: string) => void,
): Promise<CrmClient> {
  const { transport } = toImportCommandOptions(
    { values: { concurrency: String(concurrency) }, positionals: [plan] },
    process.cwd(),
    'plan',
  );
  const { client } = await connect({ token: TOKEN, baseUrl: url, env: {}, transport, ...(log ? { log } : {}) });
  return client;
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      rows: { type: 'string' },
      concurrency: { type: 'string' },
      latency: { type: 'string' },
      'quota-seconds': { type: 'string' },
      runs: { type: 'string' },
      only: { type: 'string' },
      burn: { type: 'boolean' },
    },
    strict: false,
  });
  const people = Number(values.rows ?? 2000);
  const concurrency = Number(values.concurrency ?? 16);
  const latencyMs = Number(values.latency ?? 20);
  const quotaSeconds = Number(values['quota-seconds'] ?? 70);
  const runs = Number(values.runs ?? 1);
  const work = join(tmpdir(), `crm-ferry-bench-import-${process.pid}`);
  // Another program using a whole core the while: the importer's CPU is then taken from the
  // sandbox, or from it, and the loop's the same.
  const burner: ChildProcess | null = values.burn
    ? spawn(process.execPath, ['-e', 'for (;;) {}'], { stdio: 'ignore' })
    : null;
  try {
    // `--only speed` or `--only quota`: one half, for repeated runs on a busy machine.
    if (values.only !== 'quota') {
      const ratios: number[] = [];
      // One sandbox for every run. A fresh one spends more than twice the CPU a write on its first
      // thousands of writes as it does once V8 has compiled its paths and sized its heap (0.75 ms
      // a person against 0.3 on this machine, over some 10,000 writes), and whichever of the two
      // went first would meet it cold. Warmed up by the loop first, it is the same for both.
      const server = await serve({ faults: { errorRate: 0, latencyMs, latencyJitterMs: 0, dropAfterWriteRate: 0 } });
      try {
        await warmUp(server.url, Math.max(10_000, people * 5), concurrency);
        for (let run = 0; run < runs; run += 1) ratios.push(await speed(run, server));
      } finally {
        await server.stop();
      }
      if (runs > 1) {
        const sorted = [...ratios].sort((a, b) => a - b);
        console.log(
          JSON.stringify({
            bench: 'import-speed-runs',
            runs,
            burn: burner !== null,
            ratios,
            medianRatio: sorted[Math.floor(runs / 2)],
          }),
        );
      }
    }
    if (values.only !== 'speed') await quota();
  } finally {
    burner?.kill();
    rmSync(work, { recursive: true, force: true });
  }

  async function speed(run: number, server: ServedSandbox): Promise<number> {
    const plan = writePlan(join(work, `speed-${run}`), people, Math.max(1, Math.floor(people / 40)));
    const client = await commandClient(server.url, plan, concurrency);
    const stateDir = join(work, `speed-${run}`, '.crm-ferry');
    const started = performance.now();
    const cpuBefore = process.cpuUsage();
    const eluBefore = performance.eventLoopUtilization();
    let peopleStarted = 0;
    let peopleEnded = 0;
    let sandboxCpuAtStart = 0;
    const summary = await runImport(
      { source: { kind: 'plan', planFile: plan }, stateDir, concurrency },
      {
        client,
        account: { baseUrl: server.url, account: server.url },
        onEvent: (event) => {
          if (event.type === 'row' && event.step === 'people') {
            if (peopleStarted === 0) {
              peopleStarted = performance.now();
              sandboxCpuAtStart = server.cpuMs();
            }
            peopleEnded = performance.now();
          }
        },
      },
    );
    const sandboxCpuAtEnd = server.cpuMs();
    const elapsed = (performance.now() - started) / 1000;
    const cpu = process.cpuUsage(cpuBefore);
    // The main thread's busy time: the importer's own work, without the threads that write and fsync.
    const busyMs = performance.eventLoopUtilization(eluBefore).active;
    const cpuShare = (cpu.user + cpu.system) / 1e6 / elapsed;
    await client.close();
    const written = summary.steps.reduce((sum, s) => sum + s.created, 0);
    const peopleStep = summary.steps.find((s) => s.step === 'people');
    const importerRate = (peopleStep?.created ?? 0) / ((peopleEnded - peopleStarted) / 1000);
    const bodies: unknown[] = [];
    for await (const entry of readJournal(join(stateDir, 'journal', 'people.jsonl')))
      if (entry.t === 'intent' && entry.body) bodies.push(entry.body);
    const sandboxCpuBeforeLoop = server.cpuMs();
    const { rate: loopRate, busyMsPerRecord: loopMsPerRecord } = await bareLoop(server.url, bodies, concurrency);
    const sandboxCpuLoop = server.cpuMs() - sandboxCpuBeforeLoop;
    const perRecord = (summary.requests - summary.requestsForNames) / written;
    console.log(
      JSON.stringify({
        bench: 'import-speed',
        people,
        concurrency,
        latencyMs,
        burn: burner !== null,
        loadavg: loadavg()[0]?.toFixed(2),
        importerRecordsPerSecond: Math.round(importerRate),
        bareLoopRecordsPerSecond: Math.round(loopRate),
        ratio: Number((importerRate / loopRate).toFixed(3)),
        requestsPerRecord: Number(perRecord.toFixed(3)),
        wholeRunSeconds: Number(elapsed.toFixed(1)),
        importerCpuShare: Number(cpuShare.toFixed(2)),
        mainThreadMsPerRecord: Number((busyMs / written).toFixed(3)),
        bareLoopMainThreadMsPerRecord: Number(loopMsPerRecord.toFixed(3)),
        // The sandbox's CPU a person while the importer wrote them, and while the loop did.
        sandboxMsPerRecord: Number(((sandboxCpuAtEnd - sandboxCpuAtStart) / (peopleStep?.created ?? 1)).toFixed(3)),
        sandboxMsPerRecordUnderLoop: Number((sandboxCpuLoop / bodies.length).toFixed(3)),
      }),
    );
    console.log(
      `importer ${importerRate.toFixed(0)} records/s vs bare POST loop ${loopRate.toFixed(0)}/s: ratio ${(importerRate / loopRate).toFixed(2)} (target >= 0.9); ${perRecord.toFixed(3)} requests per record (target <= 1.02)`,
    );
    return importerRate / loopRate;
  }

  async function quota(): Promise<void> {
    // Share of a rate limit used.
    for (const [limit, windowSeconds, seconds] of [
      [200, 20, quotaSeconds],
      [40, 1, Math.min(quotaSeconds, 30)],
    ] as const) {
      const limited = await serve({ rateLimit: { limit, windowSeconds } });
      const quotaPlan = writePlan(join(work, `quota-${windowSeconds}`), 100_000, 100);
      const times: number[] = [];
      let rejected429 = 0;
      const quotaClient = await commandClient(limited.url, quotaPlan, 8, (line) => {
        if (line.endsWith('-> 429')) rejected429 += 1;
        else if (/-> \d{3}$/.test(line)) times.push(Date.now());
      });
      const stop = new AbortController();
      const timer = setTimeout(() => stop.abort(), seconds * 1000);
      await runImport(
        {
          source: { kind: 'plan', planFile: quotaPlan },
          stateDir: join(work, `quota-${windowSeconds}`, '.crm-ferry'),
          concurrency: 8,
        },
        { client: quotaClient, account: { baseUrl: limited.url, account: limited.url }, signal: stop.signal },
      );
      clearTimeout(timer);
      await quotaClient.close();
      await limited.stop();
      // The service's windows (whole multiples of their length), from the second (the first holds
      // the reads of names and starts part-way) to the last whole one. An answer is counted in the
      // window it arrived in: a request answered just after a turn may belong to the window before,
      // which moves a request or two at the ends of the span, not more.
      const length = windowSeconds * 1000;
      const from = (Math.floor((times[0] ?? 0) / length) + 1) * length;
      const to = Math.floor((times.at(-1) ?? 0) / length) * length;
      const windows = Math.max(0, (to - from) / length);
      const steady = times.filter((t) => t >= from && t < to).length;
      const share = windows > 0 ? steady / (windows * limit) : 0;
      console.log(
        JSON.stringify({
          bench: 'import-quota',
          limitPerWindow: limit,
          windowSeconds,
          windows,
          answered: steady,
          share: Number(share.toFixed(3)),
          answered429: rejected429,
        }),
      );
      console.log(
        `quota ${limit} per ${windowSeconds} s: ${steady} requests answered in ${windows} full windows: ${(share * 100).toFixed(1)}% used (target >= 97%), ${rejected429} answered 429`,
      );
    }
  }
}
