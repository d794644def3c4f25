// The importer's own CPU against a bare loop's: `crm-ferry run` of a plan (organisations, then
// people linked to them with tags and a custom field) into a sandbox in a process of its own, and
// a bare undici loop (bench/bare-post.mjs) POSTing the same bodies at the same concurrency, each a
// process of its own, start-up included, timed by /usr/bin/time (user + system seconds). Not a test.
// `npm run bench -- import-cpu [--rows 2000] [--concurrency 16] [--latency 0] [--runs 3]
//  [--compare DIR] [--cpu-prof DIR]`
// The command runs from the compiled dist/ as `crm-ferry` does (built first when older than src/).
// `--compare DIR` also runs another compiled tree (a build of the code before a change, with its
// package.json one folder up), taking turns with this one so that a busier moment of the shared
// machine falls on both; `--cpu-prof DIR` writes this build's CPU profiles there.
// Each turn runs every program twice, with `--rows` people and with three times as many: the
// difference is the CPU of the extra rows alone, start-up and warm-up left out (per record).
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readJournal } from '../src/journal/index.ts';
import { ensureBuilt, timedNode } from './harness.ts';
import { BENCH_TOKEN, serveSandbox, type ServedSandbox, writePlan } from './import-setup.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({
  options: {
    rows: { type: 'string' },
    concurrency: { type: 'string' },
    latency: { type: 'string' },
    runs: { type: 'string' },
    compare: { type: 'string' },
    'cpu-prof': { type: 'string' },
  },
  strict: false,
});
const people = Number(values.rows ?? 2000);
const concurrency = Number(values.concurrency ?? 16);
const latencyMs = Number(values.latency ?? 0);
const runs = Number(values.runs ?? 3);

/** The bodies the importer sent, with their paths, from its journals, for the bare loop. */
async function sentBodies(stateDir: string): Promise<Array<{ path: string; json: unknown }>> {
  const bodies: Array<{ path: string; json: unknown }> = [];
  for (const step of ['organisations', 'people']) {
    for await (const entry of readJournal(join(stateDir, 'journal', `${step}.jsonl`)))
      if (entry.t === 'intent' && entry.body) bodies.push({ path: '/api/v2/parties', json: { party: entry.body } });
  }
  return bodies;
}

const organisationsFor = (rows: number): number => Math.max(1, Math.floor(rows / 40));

/** The command line that runs `crm-ferry` from dist/ (null) or from another compiled tree. */
function cliOf(dist: string | null): string[] {
  if (dist === null) return [join(root, 'bin', 'crm-ferry.js')];
  // The bundle, as bin/crm-ferry.js runs it, when the other tree has one: dist/cli/ is the same
  // code as some two hundred modules, which cost 0.3 s more to load (a build from before the bundle).
  const bundled = join(dist, 'bundle', 'main.js');
  const main = existsSync(bundled) ? bundled : join(dist, 'cli', 'main.js');
  return [
    '--input-type=module',
    '-e',
    `const { main } = await import(${JSON.stringify(main)}); process.exitCode = await main(process.argv.slice(1));`,
  ];
}

/** CPU seconds of one `crm-ferry run` of `rows` people; the bodies it sent are left in `dir`/bodies.json. */
async function importerCpu(
  server: ServedSandbox,
  dist: string | null,
  dir: string,
  rows: number,
  profile: string[],
): Promise<number> {
  const plan = writePlan(dir, rows, organisationsFor(rows));
  const stateDir = join(dir, '.crm-ferry');
  const timed = timedNode(
    [...profile, ...cliOf(dist), 'run', plan, '--concurrency', String(concurrency), '--state-dir', stateDir],
    { CRM_FERRY_TOKEN: BENCH_TOKEN, CRM_FERRY_BASE_URL: server.url },
  );
  const bodies = await sentBodies(stateDir);
  if (bodies.length !== rows + organisationsFor(rows))
    throw new Error(`the importer's journals hold ${bodies.length} bodies`);
  writeFileSync(join(dir, 'bodies.json'), JSON.stringify(bodies));
  return timed.cpuSeconds;
}

function bareCpu(server: ServedSandbox, dir: string): number {
  return timedNode([
    join(root, 'bench', 'bare-post.mjs'),
    server.url,
    BENCH_TOKEN,
    join(dir, 'bodies.json'),
    String(concurrency),
  ]).cpuSeconds;
}

const median = (list: number[]): number => [...list].sort((a, b) => a - b)[Math.floor(list.length / 2)] ?? 0;
const round = (n: number, digits = 2): number => Number(n.toFixed(digits));

interface Turn {
  /** CPU seconds at `people` rows and at three times as many. */
  small: number;
  large: number;
}

async function main(): Promise<void> {
  ensureBuilt();
  const compare = typeof values.compare === 'string' ? resolve(values.compare) : null;
  const profile =
    typeof values['cpu-prof'] === 'string' ? ['--cpu-prof', '--cpu-prof-dir', resolve(values['cpu-prof'])] : [];
  const work = join(tmpdir(), `crm-ferry-bench-import-cpu-${process.pid}`);
  const server = await serveSandbox(
    latencyMs > 0 ? { faults: { errorRate: 0, latencyMs, latencyJitterMs: 0, dropAfterWriteRate: 0 } } : {},
  );
  const turns: Record<'importer' | 'compared' | 'bare', Turn[]> = { importer: [], compared: [], bare: [] };
  const loads: number[] = [];
  const large = people * 3;
  try {
    for (let run = 0; run < runs; run += 1) {
      const dir = (name: string, rows: number): string => join(work, `${run}-${name}-${rows}`);
      const importer: Turn = {
        small: await importerCpu(server, null, dir('importer', people), people, profile),
        large: await importerCpu(server, null, dir('importer', large), large, profile),
      };
      const compared: Turn | null =
        compare === null
          ? null
          : {
              small: await importerCpu(server, compare, dir('compared', people), people, []),
              large: await importerCpu(server, compare, dir('compared', large), large, []),
            };
      const bare: Turn = {
        small: bareCpu(server, dir('importer', people)),
        large: bareCpu(server, dir('importer', large)),
      };
      turns.importer.push(importer);
      if (compared) turns.compared.push(compared);
      turns.bare.push(bare);
      loads.push(loadavg()[0] ?? 0);
      rmSync(work, { recursive: true, force: true });
      const perRecordMs = (t: Turn): string => ((1000 * (t.large - t.small)) / (large - people)).toFixed(3);
      console.log(
        `run ${run + 1}: ${people + organisationsFor(people)} records: crm-ferry run ${importer.small.toFixed(2)} s CPU${compared ? ` (compared build ${compared.small.toFixed(2)} s)` : ''}, bare loop ${bare.small.toFixed(2)} s: ${(importer.small / bare.small).toFixed(2)} x; ` +
          `${large + organisationsFor(large)} records: ${importer.large.toFixed(2)} s${compared ? ` (${compared.large.toFixed(2)} s)` : ''} against ${bare.large.toFixed(2)} s; each record past the first ${people}: ${perRecordMs(importer)} ms${compared ? ` (${perRecordMs(compared)} ms)` : ''} against ${perRecordMs(bare)} ms; load ${loads.at(-1)?.toFixed(2)}`,
      );
    }
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const summary = (list: Turn[]) =>
    list.length === 0
      ? null
      : {
          cpuSeconds: list.map((t) => round(t.small)),
          cpuSecondsLarge: list.map((t) => round(t.large)),
          medianCpuSeconds: round(median(list.map((t) => t.small))),
          medianMsPerRecord: round(median(list.map((t) => (1000 * (t.large - t.small)) / (large - people))), 3),
        };
  const importer = summary(turns.importer);
  const bare = summary(turns.bare);
  const compared = summary(turns.compared);
  console.log(
    JSON.stringify({
      bench: 'import-cpu',
      people,
      concurrency,
      latencyMs,
      importer,
      ...(compared ? { compared: { dist: compare, ...compared } } : {}),
      bare,
      /** Whole processes, start-up included, at `people` rows (target <= 1.5). */
      medianCpuRatio: round(median(turns.importer.map((t, i) => t.small / (turns.bare[i]?.small ?? 1)))),
      ...(compared
        ? { comparedMedianCpuRatio: round(median(turns.compared.map((t, i) => t.small / (turns.bare[i]?.small ?? 1)))) }
        : {}),
      /** The extra rows alone: CPU a record once running. */
      perRecordRatio: round((importer?.medianMsPerRecord ?? 0) / (bare?.medianMsPerRecord ?? 1)),
      ...(compared
        ? { comparedPerRecordRatio: round((compared.medianMsPerRecord ?? 0) / (bare?.medianMsPerRecord ?? 1)) }
        : {}),
      loadavg: loads.map((l) => l.toFixed(2)).join(' '),
    }),
  );
}

await main();
