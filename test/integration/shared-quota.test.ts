import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { postgresTests } from '../helpers/postgres-tests.ts';
import { fleetFigures, loggedAnswers, runFleet } from '../helpers/quota-fleet.ts';
import { startSandboxProcess } from '../helpers/sandbox-process.ts';

/**
 * One quota per account (issue 42): two `crm-ferry import` processes, each its own input and state
 * folder, write to one account of a sandbox limited to 40 requests a second. Sharing the budget
 * through the PostgreSQL state store they get no 429 and use at least 90 % of the limit while both
 * run; each pacing itself alone, they are answered 429.
 */
const TOKEN = 'shared-quota-test-token';
const LIMIT = 40;
const dir = mkdtempSync(join(tmpdir(), 'ferry-shared-quota-'));
const { withPostgres } = postgresTests();

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Two processes of `rows` rows each against a new rate-limited sandbox; its log read once it has stopped. */
async function twoTogether(name: string, stateStore: string | undefined, rows: number) {
  const sandbox = await startSandboxProcess(join(dir, `${name}.sandbox.json`), TOKEN, {
    extra: ['--rate-limit', `${LIMIT}/s`, '--log'],
  });
  try {
    const processes = await runFleet({
      dir: join(dir, name),
      baseUrl: sandbox.url,
      token: TOKEN,
      processes: 2,
      rows,
      ...(stateStore ? { stateStore } : {}),
    });
    sandbox.child.kill('SIGTERM');
    await sandbox.exited;
    return { processes, answers: loggedAnswers(sandbox.stderr()), origin: new URL(sandbox.url).origin };
  } finally {
    if (sandbox.child.exitCode === null && sandbox.child.signalCode === null) sandbox.child.kill('SIGKILL');
  }
}

describe('one quota per account, shared through the state store', () => {
  withPostgres(
    'two processes writing to one account at 40/s: no 429, and at least 90 % of the limit used while both run',
    async (url) => {
      const { processes, answers, origin } = await twoTogether('shared', url, 240);
      for (const run of processes) {
        expect(run.stderr).not.toMatch(/error|-> 429/);
        expect(run.code, run.stderr).toBe(0);
        expect(run.stdout).toMatch(/Done: every row is in the account\./);
      }
      const figures = fleetFigures(processes, answers, LIMIT);
      console.log(
        `shared: ${figures.requests} requests in the ${figures.seconds} s of whole windows while both ran: ${figures.perSecond.toFixed(1)}/s, ${(figures.share * 100).toFixed(1)} % of ${LIMIT}/s; ${figures.rateLimited} x 429`,
      );
      expect(figures.rateLimited).toBe(0);
      // Both really ran together: most of their requests in the shared time.
      expect(figures.seconds).toBeGreaterThan(4);
      expect(figures.share).toBeGreaterThanOrEqual(0.9);
      // Never above the limit in any of the sandbox's windows, counted as it counts them (on arrival).
      expect(figures.busiestWindow).toBeLessThanOrEqual(LIMIT);
      // The budget was kept in the store, under the account's address, never a token.
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      try {
        const rows = await client.query<{ account: string }>('SELECT DISTINCT account FROM crm_ferry.quota_windows');
        expect(rows.rows.map((row) => row.account)).toEqual([origin]);
        const text = await client.query<{ t: string }>(
          "SELECT string_agg(account, ',') AS t FROM crm_ferry.quota_windows",
        );
        expect(text.rows[0]?.t ?? '').not.toContain(TOKEN);
      } finally {
        await client.end();
      }
    },
    120_000,
  );

  it('the same two processes without the store each pace alone, and are answered 429', async () => {
    const { processes, answers } = await twoTogether('alone', undefined, 160);
    for (const run of processes) expect(run.code, run.stderr).toBe(0);
    const figures = fleetFigures(processes, answers, LIMIT);
    console.log(`alone: ${figures.perSecond.toFixed(1)}/s while both ran; ${figures.rateLimited} x 429`);
    expect(figures.rateLimited).toBeGreaterThan(0);
  }, 120_000);
});
