// Runs every benchmark, one after the other, each in a child process of its own so that one
// benchmark's memory does not count against the next. Not part of `npm test`.
// Usage: npm run bench [-- NAME ...] [--OPTION VALUE ...]   (names: see BENCHES; options from the
// first one on go to every benchmark run, e.g. `npm run bench -- mapping --runs 5`)
import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const BENCHES = [
  'sandbox-throughput',
  'sandbox-account-size',
  'sandbox-chaos',
  'sandbox-attachments',
  'csv-read',
  'xlsx-read',
  'v1-read',
  'v1-live',
  'v1-live-page',
  'mapping',
  'import',
  'import-cpu',
  'import-scale',
  'import-match',
  'import-chaos',
  'import-unattended',
  'journal',
  'state-store',
  'shared-quota',
  'export',
  'backup',
  'startup',
] as const;

const args = process.argv.slice(2);
const firstOption = args.findIndex((arg) => arg.startsWith('-'));
const wanted = firstOption < 0 ? args : args.slice(0, firstOption);
const options = firstOption < 0 ? [] : args.slice(firstOption);
const unknown = wanted.filter((name) => !(BENCHES as readonly string[]).includes(name));
if (unknown.length > 0) {
  console.error(`unknown benchmark(s): ${unknown.join(', ')}; known: ${BENCHES.join(', ')}`);
  process.exit(2);
}
// The chaos runs take minutes and the attachments run writes 2 GiB: only when named.
const selected =
  wanted.length > 0
    ? wanted
    : BENCHES.filter(
        (name) => name !== 'sandbox-chaos' && name !== 'sandbox-attachments' && name !== 'import-unattended',
      );
let failed = 0;
for (const name of selected) {
  const script = fileURLToPath(new URL(`./${name}.ts`, import.meta.url));
  console.log(`\n== ${name}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', '--expose-gc', script, ...options], {
    stdio: 'inherit',
  });
  if (result.status !== 0) {
    failed += 1;
    console.error(`${name} exited with ${result.status ?? result.signal}`);
  }
}
process.exit(failed > 0 ? 1 : 0);
