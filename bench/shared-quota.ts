// One quota per account (issue 42): the combined rate of N `crm-ferry import` processes writing to
// one account of a sandbox limited to --limit requests a second, sharing the account's budget
// through the PostgreSQL state store. Not a test; run it with `npm run bench -- shared-quota
// [--limit 40] [--processes 1,2,4] [--seconds 10] [--alone]`. Each N gets a sandbox and a state
// store database of its own; every process imports its own organisations (one request a row),
// enough for about --seconds at the limit. The rate is counted in the sandbox's whole one-second
// windows while every process was sending (from the sandbox's request log); 429s over the whole
// run. --alone runs the same without the store, each process pacing itself, for contrast.
// Needs a PostgreSQL server (CRM_FERRY_TEST_POSTGRES, default postgresql://postgres@127.0.0.1:5432/postgres,
// or the server binaries for a private cluster). Prints one JSON line per run and one for people.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { testDatabase } from '../test/helpers/postgres.ts';
import { fleetFigures, loggedAnswers, runFleet } from '../test/helpers/quota-fleet.ts';
import { startSandboxProcess } from '../test/helpers/sandbox-process.ts';

const { values } = parseArgs({
  options: {
    limit: { type: 'string' },
    processes: { type: 'string' },
    seconds: { type: 'string' },
    alone: { type: 'boolean' },
  },
  strict: false,
});
const limit = Number(values.limit ?? 40);
const counts = String(values.processes ?? '1,2,4')
  .split(',')
  .map(Number);
const seconds = Number(values.seconds ?? 10);
const TOKEN = 'bench-shared-quota-token';
const dir = mkdtempSync(join(tmpdir(), 'crm-ferry-bench-quota-'));

async function measure(processes: number, shared: boolean): Promise<void> {
  const database = shared ? await testDatabase() : null;
  if (database !== null && 'why' in database) {
    console.error(`no PostgreSQL: ${database.why}`);
    process.exit(1);
  }
  const name = `${shared ? 'shared' : 'alone'}-${processes}`;
  const sandbox = await startSandboxProcess(join(dir, `${name}.sandbox.json`), TOKEN, {
    extra: ['--rate-limit', `${limit}/s`, '--log'],
  });
  try {
    const runs = await runFleet({
      dir: join(dir, name),
      baseUrl: sandbox.url,
      token: TOKEN,
      processes,
      rows: Math.ceil((limit * seconds) / processes),
      ...(database ? { stateStore: database.url } : {}),
    });
    sandbox.child.kill('SIGTERM');
    await sandbox.exited;
    const failed = runs.filter((run) => run.code !== 0);
    const figures = fleetFigures(runs, loggedAnswers(sandbox.stderr()), limit);
    console.log(
      JSON.stringify({
        bench: 'shared-quota',
        store: shared ? 'postgresql' : 'none',
        processes,
        limitPerSecond: limit,
        ...figures,
        failed: failed.length,
      }),
    );
    console.log(
      `${processes} process${processes === 1 ? '' : 'es'}, ${shared ? 'budget shared in PostgreSQL' : 'each alone'}: ${figures.perSecond.toFixed(1)} requests/s over ${figures.seconds} s of whole windows = ${(figures.share * 100).toFixed(1)} % of ${limit}/s; busiest window ${figures.busiestWindow}; ${figures.rateLimited} x 429${failed.length > 0 ? `; ${failed.length} failed: ${failed[0]?.stderr.slice(-400)}` : ''}`,
    );
  } finally {
    if (sandbox.child.exitCode === null && sandbox.child.signalCode === null) sandbox.child.kill('SIGKILL');
    if (database) await database.drop();
  }
}

try {
  for (const processes of counts) {
    await measure(processes, true);
    if (values.alone) await measure(processes, false);
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
