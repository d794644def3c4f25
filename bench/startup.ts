// How long crm-ferry takes to start: `--help` and `--version` against a bare `node -e 0` in the
// same run, and the first output of a command that reads a file. Not a test; run it with
// `npm run bench -- startup [--runs N]`. Uses the compiled dist/ (run `npm run build` first, as
// `npm ci` does); says so when it finds none.
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({ options: { runs: { type: 'string' } }, strict: false });
const runs = Number(values.runs ?? 10);
const root = fileURLToPath(new URL('..', import.meta.url));
const bin = `${root}bin/crm-ferry.js`;
if (!existsSync(`${root}dist/.build-stamp`))
  console.log('dist/ is missing: these are the figures of the tsx fallback (run `npm run build`).');

/** Median wall time and peak RSS of a command, over `runs` runs. */
function measure(label: string, args: string[]): { label: string; medianMs: number; rssMb: number } {
  const times: number[] = [];
  const rss: number[] = [];
  for (let i = 0; i < runs; i += 1) {
    const result = spawnSync('/usr/bin/time', ['-f', '%e %M', process.execPath, ...args], {
      cwd: root,
      encoding: 'utf8',
    });
    const [seconds, kb] = (result.stderr.trim().split('\n').pop() ?? '0 0').split(' ').map(Number) as [number, number];
    times.push(seconds * 1000);
    rss.push(kb / 1024);
  }
  times.sort((a, b) => a - b);
  return { label, medianMs: Math.round(times[Math.floor(times.length / 2)] ?? 0), rssMb: Math.round(Math.max(...rss)) };
}

const results = [
  measure('node -e 0', ['-e', '0']),
  measure('crm-ferry --help', [bin, '--help']),
  measure('crm-ferry --version', [bin, '--version']),
  measure('crm-ferry validate --help', [bin, 'validate', '--help']),
  measure('crm-ferry export --help', [bin, 'export', '--help']),
  measure('crm-ferry completion (one word)', [bin, '--get-yargs-completions', 'crm-ferry', 'insp']),
  measure('crm-ferry inspect samples/contacts.csv', [bin, 'inspect', 'samples/contacts.csv']),
];
for (const r of results) console.log(JSON.stringify({ bench: 'startup', ...r }));
for (const r of results)
  console.log(`${r.label.padEnd(40)} ${String(r.medianMs).padStart(5)} ms  ${String(r.rssMb).padStart(4)} MB`);
