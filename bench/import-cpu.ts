// The importer's own CPU against a bare loop's: `crm-ferry run` of a plan (organisations, then
// people linked to them with tags and a custom field) into a sandbox in a process of its own, and
// a bare undici loop (bench/bare-post.mjs) POSTing the same bodies at the same concurrency, each a
// process of its own, start-up included, timed by /usr/bin/time (user + system seconds). Not a test.
// `npm run bench -- import-cpu [--rows 2000] [--concurrency 16] [--latency 0] [--runs 3]
//  [--dist DIR] [--cpu-prof DIR]`
// The command runs from the compiled dist/ as `crm-ferry` does (built first when older than src/);
// `--dist DIR` runs another compiled tree instead (a build of the code before a change), and
// `--cpu-prof DIR` writes the importer's CPU profile there.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { readJournal } from '../src/journal/index.ts';
import { BENCH_TOKEN, processCpuSeconds, serveSandbox, writePlan } from './import-setup.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const { values } = parseArgs({ options: { rows: { type: 'string' }, concurrency: { type: 'string' }, latency: { type: 'string' }, runs: { type: 'string' }, dist: { type: 'string' }, 'cpu-prof': { type: 'string' } }, strict: false });
const people = Number(values.rows ?? 2000);
const concurrency = Number(values.concurrency ?? 16);
const latencyMs = Number(values.latency ?? 0);
const runs = Number(values.runs ?? 3);

interface Timed {
  wallSeconds: number;
  cpuSeconds: number;
  peakRssMb: number;
}

/** Runs a node process under /usr/bin/time; its wall and CPU seconds and peak RSS. */
function timedNode(args: string[], env: NodeJS.ProcessEnv = {}): Timed {
  const report = join(tmpdir(), `crm-ferry-bench-time-${process.pid}.txt`);
  const result = spawnSync('/usr/bin/time', ['-o', report, '-f', '%e %U %S %M', process.execPath, ...args], { cwd: root, env: { ...process.env, ...env }, encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${args.join(' ')} exited with ${result.status ?? result.signal}:\n${result.stdout}\n${result.stderr}`);
  const [wall, user, system, rssKb] = readFileSync(report, 'utf8').trim().split('\n').pop()!.split(' ').map(Number);
  rmSync(report, { force: true });
  return { wallSeconds: wall!, cpuSeconds: user! + system!, peakRssMb: Math.round(rssKb! / 1024) };
}

/** Whether dist/ was built after every source file changed (what bin/crm-ferry.js checks). */
function distIsFresh(): boolean {
  const stamp = join(root, 'dist', '.build-stamp');
  if (!existsSync(stamp)) return false;
  const built = statSync(stamp).mtimeMs;
  return readdirSync(join(root, 'src'), { recursive: true }).every((name) => !String(name).endsWith('.ts') || statSync(join(root, 'src', String(name))).mtimeMs <= built);
}

/** The bodies the importer sent, with their paths, from its journals, for the bare loop. */
async function sentBodies(stateDir: string): Promise<Array<{ path: string; json: unknown }>> {
  const bodies: Array<{ path: string; json: unknown }> = [];
  for (const step of ['organisations', 'people']) {
    for await (const entry of readJournal(join(stateDir, 'journal', `${step}.jsonl`))) if (entry.t === 'intent' && entry.body) bodies.push({ path: '/api/v2/parties', json: { party: entry.body } });
  }
  return bodies;
}

async function main(): Promise<void> {
  if (!existsSync('/usr/bin/time')) throw new Error('import-cpu times its processes with /usr/bin/time (GNU time), which is not installed');
  const dist = values.dist === undefined ? null : resolve(String(values.dist));
  if (dist === null && !distIsFresh()) {
    console.log('dist/ is older than src/: npm run build');
    const built = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  const work = join(tmpdir(), `crm-ferry-bench-import-cpu-${process.pid}`);
  const server = await serveSandbox(latencyMs > 0 ? { faults: { errorRate: 0, latencyMs, latencyJitterMs: 0, dropAfterWriteRate: 0 } } : {});
  const results: Array<{ importer: Timed; bare: Timed; sandboxImporter: number | null; sandboxBare: number | null; load: number }> = [];
  try {
    for (let run = 0; run < runs; run += 1) {
      const dir = join(work, `run-${run}`);
      const plan = writePlan(dir, people, Math.max(1, Math.floor(people / 40)));
      const stateDir = join(dir, '.crm-ferry');
      const profile = typeof values['cpu-prof'] === 'string' ? ['--cpu-prof', '--cpu-prof-dir', resolve(values['cpu-prof'])] : [];
      const cli = dist === null ? [join(root, 'bin', 'crm-ferry.js')] : ['--input-type=module', '-e', `const { main } = await import(${JSON.stringify(join(dist, 'cli', 'main.js'))}); process.exitCode = await main(process.argv.slice(1));`];
      const sandboxBefore = processCpuSeconds(server.pid);
      const importer = timedNode([...profile, ...cli, 'run', plan, '--concurrency', String(concurrency), '--state-dir', stateDir], { CRM_FERRY_TOKEN: BENCH_TOKEN, CRM_FERRY_BASE_URL: server.url });
      const sandboxMiddle = processCpuSeconds(server.pid);
      const bodies = await sentBodies(stateDir);
      if (bodies.length !== people + Math.max(1, Math.floor(people / 40))) throw new Error(`the importer's journals hold ${bodies.length} bodies`);
      const file = join(dir, 'bodies.json');
      writeFileSync(file, JSON.stringify(bodies));
      const bare = timedNode([join(root, 'bench', 'bare-post.mjs'), server.url, BENCH_TOKEN, file, String(concurrency)]);
      const sandboxAfter = processCpuSeconds(server.pid);
      const load = loadavg()[0] ?? 0;
      const sandbox = (a: number | null, b: number | null): number | null => (a === null || b === null ? null : Number((b - a).toFixed(2)));
      results.push({ importer, bare, sandboxImporter: sandbox(sandboxBefore, sandboxMiddle), sandboxBare: sandbox(sandboxMiddle, sandboxAfter), load });
      console.log(
        `run ${run + 1}: ${bodies.length} records; crm-ferry run ${importer.cpuSeconds.toFixed(2)} s CPU (${importer.wallSeconds.toFixed(2)} s, ${importer.peakRssMb} MB), bare loop ${bare.cpuSeconds.toFixed(2)} s CPU (${bare.wallSeconds.toFixed(2)} s, ${bare.peakRssMb} MB): ${(importer.cpuSeconds / bare.cpuSeconds).toFixed(2)} x; the sandbox ${results.at(-1)?.sandboxImporter ?? '?'} s and ${results.at(-1)?.sandboxBare ?? '?'} s; load ${load.toFixed(2)}`,
      );
      rmSync(dir, { recursive: true, force: true });
    }
  } finally {
    await server.stop();
    rmSync(work, { recursive: true, force: true });
  }
  const ratios = results.map((r) => r.importer.cpuSeconds / r.bare.cpuSeconds).sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      bench: 'import-cpu',
      people,
      concurrency,
      latencyMs,
      dist: dist ?? 'dist',
      importerCpuSeconds: results.map((r) => r.importer.cpuSeconds),
      bareCpuSeconds: results.map((r) => r.bare.cpuSeconds),
      cpuRatios: results.map((r) => Number((r.importer.cpuSeconds / r.bare.cpuSeconds).toFixed(2))),
      medianCpuRatio: Number((ratios[Math.floor(ratios.length / 2)] ?? 0).toFixed(2)),
      loadavg: results.map((r) => r.load.toFixed(2)).join(' '),
    }),
  );
}

await main();
