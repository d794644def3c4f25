// The crash test at length: a sandbox with a data file is killed with SIGKILL at random moments
// while writers create, update and upload as fast as they can, and restarted each time; every
// acknowledged write must come back and no id may be given twice. Not part of `npm test` (the
// suite runs 20 rounds in test/integration/sandbox/crash.test.ts).
// Usage: npm run bench -- sandbox-chaos [--rounds N] [--writers N] [--seed N]
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { runCrashRounds } from '../test/helpers/crash.ts';

const { values } = parseArgs({
  options: {
    rounds: { type: 'string', default: '200' },
    writers: { type: 'string', default: '16' },
    seed: { type: 'string', default: '7' },
  },
  strict: false,
});
const dir = await mkdtemp(join(tmpdir(), 'ferry-chaos-'));
try {
  const figures = await runCrashRounds({
    dir,
    rounds: Number(values.rounds),
    writers: Number(values.writers),
    killAfterMs: [20, 1500],
    seed: Number(values.seed),
  });
  console.log(JSON.stringify({ bench: 'sandbox-chaos', ...figures, problems: figures.problems.length }));
  for (const problem of figures.problems) console.error(problem);
  console.log(
    `${figures.rounds} kills: ${figures.acknowledged.creates} creates, ${figures.acknowledged.updates} updates, ` +
      `${figures.acknowledged.uploads} uploads acknowledged; ${figures.checked} checks, ${figures.problems.length} problems`,
  );
  process.exitCode = figures.problems.length > 0 ? 1 : 0;
} finally {
  await rm(dir, { recursive: true, force: true });
}
