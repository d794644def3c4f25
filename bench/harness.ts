/**
 * What the file-reading benchmarks share: the generated contacts file, one measured run per child
 * process (so that one mode's memory does not count against the next), and number formatting.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
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
  if (result.status !== 0) throw new Error(`${args.join(' ')} run failed (${result.status ?? result.signal}):\n${result.stderr}`);
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
