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
 * Runs the benchmark script `scriptUrl` again as `--child MODE --file FILE` in a fresh process
 * and returns the JSON line it prints last.
 */
export function runChild<T>(scriptUrl: string, mode: string, file: string): T {
  const script = fileURLToPath(scriptUrl);
  const result = spawnSync(process.execPath, ['--import', 'tsx', script, '--child', mode, '--file', file], { encoding: 'utf8' });
  if (result.status !== 0) throw new Error(`${mode} run failed:\n${result.stderr}`);
  const line = result.stdout.trim().split('\n').pop() ?? '';
  return JSON.parse(line) as T;
}

/** 1234567.8 -> "1,234,568". */
export function formatCount(n: number): string {
  return Math.round(n).toLocaleString('en-US');
}
