import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { describeStoreUrl, PostgresStore, STORE_SCHEMA_VERSION } from '../../src/journal/postgres-store.ts';
import { postgresTests } from '../helpers/postgres-tests.ts';

/**
 * The PostgreSQL state store against a real server (the machine's, or a private cluster the
 * helper starts): its schema made and migrated by crm-ferry, a later version's refused, the
 * run lock given back when its holder's connection dies.
 */
const { withPostgres } = postgresTests();

describe('the PostgreSQL state store', () => {
  withPostgres('creates its schema at the first open, and opens it again as it is', async (url) => {
    const first = await PostgresStore.open({ url, schema: 'store_a' });
    expect(first.version).toBe(STORE_SCHEMA_VERSION);
    await first.close();
    const again = await PostgresStore.open({ url, schema: 'store_a' });
    expect(again.version).toBe(STORE_SCHEMA_VERSION);
    await again.close();
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    const versions = await client.query('SELECT version FROM store_a.store_version');
    await client.end();
    expect(versions.rows).toEqual([{ version: STORE_SCHEMA_VERSION }]);
  });

  withPostgres('takes a store of an earlier version to this one, keeping what it holds', async (url) => {
    const first = await PostgresStore.open({ url, schema: 'store_m' });
    await first.query(`INSERT INTO ${first.table('states')} (state_key) VALUES ('kept')`);
    await first.close();
    // As a store of version 1 is: without the shared quota's table.
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('DROP TABLE store_m.quota_windows');
    await client.query('UPDATE store_m.store_version SET version = 1');
    const again = await PostgresStore.open({ url, schema: 'store_m' });
    expect(again.version).toBe(STORE_SCHEMA_VERSION);
    await again.close();
    const version = await client.query('SELECT version FROM store_m.store_version');
    const kept = await client.query('SELECT state_key FROM store_m.states');
    const quota = await client.query('SELECT count(*)::int AS n FROM store_m.quota_windows');
    await client.end();
    expect(version.rows).toEqual([{ version: STORE_SCHEMA_VERSION }]);
    expect(kept.rows).toEqual([{ state_key: 'kept' }]);
    expect(quota.rows).toEqual([{ n: 0 }]);
  });

  withPostgres('two processes opening a new store at once migrate it once', async (url) => {
    const stores = await Promise.all([1, 2, 3].map(() => PostgresStore.open({ url, schema: 'store_b' })));
    for (const store of stores) expect(store.version).toBe(STORE_SCHEMA_VERSION);
    await Promise.all(stores.map((store) => store.close()));
  });

  withPostgres('refuses a store a later crm-ferry made, and changes nothing in it', async (url) => {
    const client = new pg.Client({ connectionString: url });
    await client.connect();
    await client.query('CREATE SCHEMA store_c');
    await client.query('CREATE TABLE store_c.store_version (version integer NOT NULL)');
    await client.query('INSERT INTO store_c.store_version VALUES ($1)', [STORE_SCHEMA_VERSION + 1]);
    const error = await PostgresStore.open({ url, schema: 'store_c' }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'JOURNAL_STORE' });
    expect((error as Error).message).toContain(
      `its schema is version ${STORE_SCHEMA_VERSION + 1}; this crm-ferry knows versions up to ${STORE_SCHEMA_VERSION}`,
    );
    const tables = await client.query(
      "SELECT table_name FROM information_schema.tables WHERE table_schema = 'store_c'",
    );
    await client.end();
    expect(tables.rows).toEqual([{ table_name: 'store_version' }]);
  });

  withPostgres(
    'holds a run lock against another process, and gives it back when the holder ends or its connection dies',
    async (url) => {
      const one = await PostgresStore.open({ url, schema: 'store_e' });
      const two = await PostgresStore.open({ url, schema: 'store_e' });
      try {
        const lock = await one.lockRun('plan@account');
        await expect(two.lockRun('plan@account')).rejects.toMatchObject({
          code: 'JOURNAL_LOCKED',
          message: expect.stringMatching(/another crm-ferry process runs "plan@account" .*\(server process \d+/),
        });
        // Another run's lock is its own.
        await (await two.lockRun('other@account')).release();
        await lock.release();
        const taken = await two.lockRun('plan@account');
        // The holder's connection dies (its process killed): the server gives the lock back.
        const admin = new pg.Client({ connectionString: url });
        await admin.connect();
        await admin.query(
          "SELECT pg_terminate_backend(l.pid) FROM pg_locks l WHERE l.locktype = 'advisory' AND l.granted AND l.pid <> pg_backend_pid() AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())",
        );
        await admin.end();
        expect((await taken.lost).message).toMatch(/terminat/);
        const again = await one.lockRun('plan@account');
        await again.release();
        await taken.release().catch(() => undefined);
      } finally {
        await one.close();
        await two.close();
      }
    },
  );

  it('names a store by its host and database, never its password', () => {
    expect(describeStoreUrl('postgresql://ferry:s3cret-pass@db.example.com:6543/state')).toBe(
      'postgresql://db.example.com:6543/state',
    );
    expect(describeStoreUrl('not a url')).not.toContain('not a url');
  });
});
