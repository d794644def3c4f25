/**
 * A run's state in PostgreSQL, for runs that move between machines (issue: "Past one machine"):
 * the schema crm-ferry creates and migrates itself, the journal's lines (durable at commit, in the
 * order they were appended), and the run lock as a session advisory lock, which the server releases
 * when the holder's connection dies: no stale lock to clear by hand.
 *
 * `pg` is an optional peer dependency, loaded when a store is first opened: a run keeping its
 * state in a folder (the default) never loads it.
 */
import type * as Pg from 'pg';
import { FerryError } from '../errors/index.ts';
import { lazyModule } from '../util/index.ts';

const pg = lazyModule<typeof Pg>('pg');

/** The schema version this crm-ferry writes and reads. A store of a later version is refused. */
export const STORE_SCHEMA_VERSION = 1;

/** Each version's statements, in order: `MIGRATIONS[n - 1]` takes a store from version n - 1 to n. */
const MIGRATIONS: ReadonlyArray<(schema: string) => string[]> = [
  (schema) => [
    `CREATE TABLE ${schema}.journal_lines (
       state_key text NOT NULL,
       step text NOT NULL,
       seq bigint GENERATED ALWAYS AS IDENTITY,
       line jsonb NOT NULL,
       PRIMARY KEY (state_key, step, seq)
     )`,
  ],
];

/** Where a store is, for messages: the host, port and database, never the user's password. */
export function describeStoreUrl(url: string): string {
  try {
    const parsed = new URL(url);
    return `postgresql://${parsed.hostname}${parsed.port ? `:${parsed.port}` : ''}${parsed.pathname}`;
  } catch {
    return 'the PostgreSQL state store (its address does not parse)';
  }
}

export interface PostgresStoreOptions {
  /** `postgresql://user@host:port/database`. */
  url: string;
  /** The schema crm-ferry keeps its tables in. @default "crm_ferry" */
  schema?: string;
}

/** A schema name as SQL takes it: letters, digits and underscores, quoted. */
function schemaIdentifier(name: string): string {
  if (!/^[a-z_][a-z0-9_]{0,62}$/.test(name)) {
    throw new FerryError(
      'CONFIG_INVALID',
      `the state store's schema name ${JSON.stringify(name)} is not a plain lower-case identifier`,
      {
        hint: 'Use lower-case letters, digits and underscores (the default is crm_ferry).',
      },
    );
  }
  return `"${name}"`;
}

/** A held run lock; `release` gives it back (a dead connection gives it back too). */
export interface StoreRunLock {
  release(): Promise<void>;
  /**
   * Settles when the lock's connection dies: the lock is then no longer held, and another
   * process may take the run; a run holding it must stop writing.
   */
  lost: Promise<Error>;
}

/** The key of a run's advisory lock: a 64-bit hash of the state key, computed by the server. */
const LOCK_KEY = `hashtextextended('crm-ferry:run:' || $1, 0)`;

export class PostgresStore {
  private constructor(
    private readonly pool: Pg.Pool,
    private readonly schema: string,
    private readonly where: string,
    /** The store's schema version once opened (migrated to this crm-ferry's). */
    readonly version: number,
  ) {}

  /**
   * Connects, creates the schema when there is none and brings it to STORE_SCHEMA_VERSION, one
   * migration at a time in one transaction under an advisory lock (two processes opening a new
   * store at once migrate it once). A store a later crm-ferry made is refused, untouched.
   */
  static async open(options: PostgresStoreOptions): Promise<PostgresStore> {
    const schema = schemaIdentifier(options.schema ?? 'crm_ferry');
    const where = describeStoreUrl(options.url);
    const pool = new (pg().Pool)({ connectionString: options.url, max: 4 });
    // An idle client's error (the server restarted) is reported on its next use, not thrown here.
    pool.on('error', () => undefined);
    try {
      const client = await pool.connect().catch((error: unknown) => {
        throw new FerryError('JOURNAL_STORE', `cannot reach the state store at ${where}: ${(error as Error).message}`, {
          cause: error,
          hint: 'Check the address given to --state-store (or CRM_FERRY_STATE_STORE) and that the server runs.',
        });
      });
      let version: number;
      try {
        await client.query('BEGIN');
        await client.query(`SELECT pg_advisory_xact_lock(hashtextextended('crm-ferry:migrate', 0))`);
        await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
        await client.query(`CREATE TABLE IF NOT EXISTS ${schema}.store_version (version integer NOT NULL)`);
        const found = await client.query<{ version: number }>(`SELECT version FROM ${schema}.store_version`);
        version = found.rows[0]?.version ?? 0;
        if (version > STORE_SCHEMA_VERSION) {
          throw new FerryError(
            'JOURNAL_STORE',
            `the state store at ${where} was made by a later crm-ferry (its schema is version ${version}; this crm-ferry knows versions up to ${STORE_SCHEMA_VERSION}); nothing was changed`,
            {
              hint: 'Run the crm-ferry version that made it (or a later one) on this machine, or give another --state-store.',
            },
          );
        }
        for (let next = version + 1; next <= STORE_SCHEMA_VERSION; next += 1) {
          for (const statement of (MIGRATIONS[next - 1] as (schema: string) => string[])(schema))
            await client.query(statement);
        }
        if (version === 0)
          await client.query(`INSERT INTO ${schema}.store_version (version) VALUES ($1)`, [STORE_SCHEMA_VERSION]);
        else if (version < STORE_SCHEMA_VERSION)
          await client.query(`UPDATE ${schema}.store_version SET version = $1`, [STORE_SCHEMA_VERSION]);
        await client.query('COMMIT');
        version = STORE_SCHEMA_VERSION;
      } catch (error) {
        await client.query('ROLLBACK').catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
      return new PostgresStore(pool, schema, where, version);
    } catch (error) {
      await pool.end().catch(() => undefined);
      throw error;
    }
  }

  /** Appends a step's journal lines, durable when this resolves (one transaction: all or none). */
  async appendJournal(stateKey: string, step: string, lines: readonly object[]): Promise<void> {
    if (lines.length === 0) return;
    await this.pool.query(
      `INSERT INTO ${this.schema}.journal_lines (state_key, step, line) SELECT $1, $2, unnest($3::jsonb[])`,
      [stateKey, step, lines.map((line) => JSON.stringify(line))],
    );
  }

  /** A step's journal lines, in the order they were appended, a page at a time. */
  async *readJournal(stateKey: string, step: string, pageSize = 1000): AsyncGenerator<unknown> {
    let after = 0;
    for (;;) {
      const page = await this.pool.query<{ seq: string; line: unknown }>(
        `SELECT seq, line FROM ${this.schema}.journal_lines WHERE state_key = $1 AND step = $2 AND seq > $3 ORDER BY seq LIMIT $4`,
        [stateKey, step, after, pageSize],
      );
      for (const row of page.rows) yield row.line;
      if (page.rows.length < pageSize) return;
      after = Number((page.rows.at(-1) as { seq: string }).seq);
    }
  }

  /**
   * Takes the run lock of `stateKey` on a connection of its own, held until release or until the
   * connection dies (a killed process gives it back). Refused at once while another holds it.
   */
  async lockRun(stateKey: string): Promise<StoreRunLock> {
    const client = await this.pool.connect();
    let lose!: (error: Error) => void;
    const lost = new Promise<Error>((resolve) => (lose = resolve));
    // The connection's death is the lock's loss, told through `lost`, not thrown by the pool.
    client.on('error', (error: Error) => lose(error));
    try {
      const taken = await client.query<{ taken: boolean }>(`SELECT pg_try_advisory_lock(${LOCK_KEY}) AS taken`, [
        stateKey,
      ]);
      if (!taken.rows[0]?.taken) {
        const holder = await client.query<{ pid: number; client_addr: string | null }>(
          `WITH k AS (SELECT ${LOCK_KEY} AS key)
           SELECT l.pid, a.client_addr::text AS client_addr
             FROM k, pg_locks l LEFT JOIN pg_stat_activity a ON a.pid = l.pid
            WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
              AND l.classid::bigint = (k.key >> 32) & 4294967295 AND l.objid::bigint = k.key & 4294967295`,
          [stateKey],
        );
        const who = holder.rows[0];
        throw new FerryError(
          'JOURNAL_LOCKED',
          `another crm-ferry process runs ${JSON.stringify(stateKey)} with the state store at ${this.where}${who ? ` (server process ${who.pid}${who.client_addr ? `, connected from ${who.client_addr}` : ''})` : ''}`,
          {
            hint: 'Wait for it to end: the lock is given back when that process ends or loses its connection, on whatever machine it runs.',
          },
        );
      }
    } catch (error) {
      client.release();
      throw error;
    }
    let released = false;
    return {
      lost,
      release: async () => {
        if (released) return;
        released = true;
        try {
          await client.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`, [stateKey]);
        } finally {
          client.release();
        }
      },
    };
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}
