import { spawn } from 'node:child_process';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { RateGovernor } from '../../src/client/governor.ts';
import { PostgresQuota, PostgresStore, type QuotaGrant, STORE_SCHEMA_VERSION } from '../../src/journal/index.ts';
import { postgresTests } from '../helpers/postgres-tests.ts';
import { FakeClock } from '../unit/client/fake-clock.ts';

/**
 * The account's rate budget in PostgreSQL (issue 42) against a real server: each slot of a window
 * handed out once however many processes claim at once, never more than the quota; a process
 * that dies holding a lease wastes at most that lease, and the next window is whole.
 */
const { withPostgres } = postgresTests();

/** Every slot of the grants, in order. */
function slotsOf(grants: QuotaGrant[]): number[] {
  return grants
    .flatMap((grant) => Array.from({ length: grant.count }, (_, i) => grant.first + i))
    .sort((a, b) => a - b);
}

const WINDOW = Date.parse('2026-01-01T00:00:01Z');

describe('the shared rate budget in PostgreSQL', () => {
  withPostgres(
    'hands out each slot of a window once under concurrent claims from three processes, never past the quota',
    async (url) => {
      const stores = await Promise.all([1, 2, 3].map(() => PostgresQuota.open({ url })));
      try {
        const claims = Array.from({ length: 90 }, (_, i) =>
          (stores[i % 3] as PostgresQuota).claim('https://acme.example.com', {
            windowEnd: WINDOW,
            quota: 100,
            count: 1 + (i % 3),
            floor: 0,
            limitPerHour: 144_000,
          }),
        );
        const grants = await Promise.all(claims);
        // 180 slots wanted, 100 in the window: each of 0..99 exactly once.
        expect(slotsOf(grants)).toEqual(Array.from({ length: 100 }, (_, i) => i));
        expect(grants.filter((grant) => grant.count === 0).length).toBeGreaterThan(0);
        // Another account's window is its own.
        const other = await (stores[0] as PostgresQuota).claim('https://other.example.com', {
          windowEnd: WINDOW,
          quota: 100,
          count: 2,
          floor: 0,
          limitPerHour: 144_000,
        });
        expect(other).toEqual({ first: 0, count: 2, quota: 100 });
      } finally {
        await Promise.all(stores.map((store) => store.close()));
      }
    },
  );

  withPostgres('starts at the floor the service counted, and keeps the largest quota any process saw', async (url) => {
    const store = await PostgresQuota.open({ url });
    try {
      const account = 'https://floor.example.com';
      expect(
        await store.claim(account, { windowEnd: WINDOW, quota: 10, count: 2, floor: 5, limitPerHour: 36_000 }),
      ).toEqual({
        first: 5,
        count: 2,
        quota: 10,
      });
      // A process that joined late and saw only part of the window learns the larger quota.
      expect(
        await store.claim(account, { windowEnd: WINDOW, quota: 3, count: 4, floor: 0, limitPerHour: 36_000 }),
      ).toEqual({
        first: 7,
        count: 3,
        quota: 10,
      });
      expect(
        await store.claim(account, { windowEnd: WINDOW, quota: 10, count: 1, floor: 0, limitPerHour: 36_000 }),
      ).toMatchObject({
        count: 0,
      });
    } finally {
      await store.close();
    }
  });

  withPostgres(
    'a process killed holding a lease wastes only that lease, and does not hold up the next window',
    async (url) => {
      const account = 'https://dies.example.com';
      const child = spawn(
        process.execPath,
        [
          '--import',
          'tsx',
          fileURLToPath(new URL('../helpers/quota-child.ts', import.meta.url)),
          url,
          account,
          String(WINDOW),
          '40',
          '4',
        ],
        { stdio: ['ignore', 'pipe', 'inherit'] },
      );
      const exited = new Promise((resolve) => child.once('exit', resolve));
      const line = await new Promise<string>((resolve, reject) => {
        createInterface({ input: child.stdout }).once('line', resolve);
        child.once('exit', (code) => reject(new Error(`the child ended (${code}) before claiming`)));
      });
      expect(JSON.parse(line)).toEqual({ first: 0, count: 4, quota: 40 });
      child.kill('SIGKILL');
      await exited;

      const store = await PostgresQuota.open({ url });
      try {
        // The rest of the window: 36 slots, after the dead process's 4.
        const rest = await Promise.all(
          Array.from({ length: 20 }, () =>
            store.claim(account, { windowEnd: WINDOW, quota: 40, count: 2, floor: 0, limitPerHour: 144_000 }),
          ),
        );
        expect(slotsOf(rest)).toEqual(Array.from({ length: 36 }, (_, i) => i + 4));
        // The next window owes it nothing: a governor that learns it sends its whole quota in it
        // (but the spare slot kept for a late request of the window before), never waiting past
        // the window's end. The store knows only the ended window: a request learns the new one.
        const clock = new FakeClock(WINDOW + 1000);
        const governor = new RateGovernor(clock, { shared: store.budgetFor(account) });
        const probe = await governor.acquire();
        governor.observe(
          {
            'x-ratelimit-limit': '144000',
            'x-ratelimit-remaining': '39',
            'x-ratelimit-reset': String((WINDOW + 2000) / 1000),
          },
          probe,
        );
        for (let i = 1; i < 39; i += 1) await governor.acquire();
        expect(clock.now()).toBeLessThan(WINDOW + 2000);
        expect(clock.sleeps.every((ms) => ms < 100)).toBe(true);
        // The 40th waits for the window after.
        await governor.acquire();
        expect(clock.now()).toBeGreaterThanOrEqual(WINDOW + 2000);
      } finally {
        await store.close();
      }
    },
  );

  withPostgres(
    "shares the store's schema: the state store opens (and migrates) it as usual after the budget made it",
    async (url) => {
      const quota = await PostgresQuota.open({ url, schema: 'shared_schema' });
      await quota.close();
      const store = await PostgresStore.open({ url, schema: 'shared_schema' });
      expect(store.version).toBe(STORE_SCHEMA_VERSION);
      await store.close();
      const again = await PostgresQuota.open({ url, schema: 'shared_schema' });
      await again.close();
    },
  );

  withPostgres('deletes the rows of long-ended windows', async (url) => {
    const store = await PostgresQuota.open({ url });
    const account = 'https://sweep.example.com';
    try {
      await store.claim(account, { windowEnd: WINDOW, quota: 40, count: 1, floor: 0, limitPerHour: 144_000 });
      await store.claim(account, {
        windowEnd: WINDOW + 11 * 60_000,
        quota: 40,
        count: 1,
        floor: 0,
        limitPerHour: 144_000,
      });
      const client = new pg.Client({ connectionString: url });
      await client.connect();
      const rows = await client.query<{ window_end: string }>(
        'SELECT window_end FROM crm_ferry.quota_windows WHERE account = $1',
        [account],
      );
      await client.end();
      expect(rows.rows.map((row) => Number(row.window_end))).toEqual([WINDOW + 11 * 60_000]);
    } finally {
      await store.close();
    }
  });

  it.each(['not-a-url', 'https://ferry:sekrit-pass@db.example.com/x'])(
    'refuses %j as a store address before connecting, without repeating it',
    async (url) => {
      const error = await PostgresQuota.open({ url }).catch((caught: unknown) => caught);
      expect(error).toMatchObject({
        code: 'CONFIG_INVALID',
        message: 'the state store address is not a postgresql:// URL',
      });
      expect(JSON.stringify(error)).not.toContain('sekrit');
    },
  );

  withPostgres('says which store could not be reached, without its password', async () => {
    const error = await PostgresQuota.open({ url: 'postgresql://ferry:sekrit-pass@127.0.0.1:1/nowhere' }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toMatchObject({ code: 'JOURNAL_STORE' });
    expect((error as Error).message).toContain('postgresql://127.0.0.1:1/nowhere');
    expect((error as Error).message).not.toContain('sekrit-pass');
  });
});
