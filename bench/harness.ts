/**
 * What the file-reading benchmarks share: the generated contacts file, one measured run per child
 * process (so that one mode's memory does not count against the next), and number formatting.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { BENCH_DATA_DIR, generateContacts, writeContactsCsv } from './generate.ts';

/** The contacts CSV of `rows` rows in bench/.data/, generated (deterministically) on first use. */
export async function contactsCsv(rows: number): Promise<string> {
  const file = resolve(BENCH_DATA_DIR, `contacts-${rows}.csv`);
  if (!existsSync(file)) {
    process.stdout.write(`generating ${file} ...\n`);
    await writeContactsCsv(file, generateContacts(rows, 1));
  }
  return file;
}

/**
 * Runs a benchmark script in a fresh process through tsx, with `nodeFlags` for node itself
 * (`--expose-gc`, a heap cap), and returns what it printed. What it wrote to stderr is passed on;
 * a failed run throws with it.
 */
export function spawnTsx(scriptUrl: string, args: string[], nodeFlags: string[] = []): string {
  const script = scriptUrl.startsWith('file:') ? fileURLToPath(scriptUrl) : scriptUrl;
  const result = spawnSync(process.execPath, [...nodeFlags, '--import', 'tsx', script, ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
    encoding: 'utf8',
  });
  if (result.status !== 0)
    throw new Error(`${args.join(' ')} run failed (${result.status ?? result.signal}):\n${result.stderr}`);
  if (result.stderr) process.stderr.write(result.stderr);
  return result.stdout;
}

/**
 * Runs the benchmark script `scriptUrl` again as `--child MODE --file FILE` in a fresh process
 * and returns the JSON line it prints last.
 */
export function runChild<T>(scriptUrl: string, mode: string, file: string): T {
  const line = spawnTsx(scriptUrl, ['--child', mode, '--file', file]).trim().split('\n').pop() ?? '';
  return JSON.parse(line) as T;
}

/** 1234567.8 -> "1,234,568". */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}

const root = fileURLToPath(new URL('..', import.meta.url));

/** Wall and CPU seconds (user + system) of a process, and its peak RSS. */
export interface Timed {
  wallSeconds: number;
  cpuSeconds: number;
  peakRssMb: number;
  /** What the process printed on standard output. */
  stdout: string;
}

/**
 * Runs node with `args` (from the project's folder) under /usr/bin/time (GNU time), and returns
 * its wall and CPU seconds and peak RSS; a failed run throws with what it printed.
 */
export function timedNode(args: string[], env: NodeJS.ProcessEnv = {}): Timed {
  if (!existsSync('/usr/bin/time'))
    throw new Error('this benchmark times its processes with /usr/bin/time (GNU time), which is not installed');
  const report = join(tmpdir(), `crm-ferry-bench-time-${process.pid}.txt`);
  const result = spawnSync('/usr/bin/time', ['-o', report, '-f', '%e %U %S %M', process.execPath, ...args], {
    cwd: root,
    env: { ...process.env, ...env },
    encoding: 'utf8',
  });
  if (result.status !== 0)
    throw new Error(
      `${args.join(' ')} exited with ${result.status ?? result.signal}:\n${result.stdout}\n${result.stderr}`,
    );
  const [wall, user, system, rssKb] = (readFileSync(report, 'utf8').trim().split('\n').pop() ?? '')
    .split(' ')
    .map(Number);
  rmSync(report, { force: true });
  return {
    wallSeconds: wall ?? 0,
    cpuSeconds: (user ?? 0) + (system ?? 0),
    peakRssMb: Math.round((rssKb ?? 0) / 1024),
    stdout: result.stdout,
  };
}

/**
 * Builds dist/ when it is older than a source file, so that a benchmark of the command runs what
 * `crm-ferry` runs (bin/crm-ferry.js takes dist/ when it is fresh, and tsx otherwise).
 */
export function ensureBuilt(): void {
  const stamp = join(root, 'dist', '.build-stamp');
  const built = existsSync(stamp) ? statSync(stamp).mtimeMs : 0;
  const fresh =
    built > 0 &&
    readdirSync(join(root, 'src'), { recursive: true }).every(
      (name) => !String(name).endsWith('.ts') || statSync(join(root, 'src', String(name))).mtimeMs <= built,
    );
  if (fresh) return;
  console.log('dist/ is older than src/: npm run build');
  const result = spawnSync('npm', ['run', 'build'], { cwd: root, stdio: 'inherit' });
  if (result.status !== 0) throw new Error('npm run build failed');
}
