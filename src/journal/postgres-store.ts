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
export const STORE_SCHEMA_VERSION = 2;

/**
 * Each version's statements, in order: `MIGRATIONS[n - 1]` takes a store from version n - 1 to n.
 *
 * - `states`: one row per state, known by its key (the plan's identity and account, or
 *   --state-key); a state set aside by --fresh keeps its rows under a key of its own.
 * - `state_files`: the state's small files as the folder holds them (state.json, steps.json,
 *   rollbacks.json, results/...), each written whole, in parts of a few megabytes.
 * - `journal_groups`: each journal (by its file name in the folder), one row per group of lines the run made durable
 *   together: the lines exactly as the folder's journal holds them, and where the journal ends
 *   after them (lines, bytes and the chained CRC-32 of the folder's seal), so that a folder can
 *   take what it lacks and check what it has.
 * - `quota_windows` (version 2): each account's rate-limit windows and the requests handed out in
 *   each, shared by the processes writing to the account (postgres-quota.ts).
 */
const MIGRATIONS: ReadonlyArray<(schema: string) => string[]> = [
  (schema) => [
    `CREATE TABLE ${schema}.states (
       state_key text PRIMARY KEY,
       created timestamptz NOT NULL DEFAULT now()
     )`,
    `CREATE TABLE ${schema}.state_files (
       state_key text NOT NULL REFERENCES ${schema}.states ON UPDATE CASCADE,
       name text NOT NULL,
       part integer NOT NULL,
       content bytea NOT NULL,
       updated timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (state_key, name, part)
     )`,
    `CREATE TABLE ${schema}.journal_groups (
       state_key text NOT NULL REFERENCES ${schema}.states ON UPDATE CASCADE,
       journal text NOT NULL,
       start_line bigint NOT NULL,
       end_line bigint NOT NULL,
       end_bytes bigint NOT NULL,
       end_crc text NOT NULL,
       content bytea NOT NULL,
       written timestamptz NOT NULL DEFAULT now(),
       PRIMARY KEY (state_key, journal, end_line),
       UNIQUE (state_key, journal, start_line)
     )`,
  ],
  (schema) => [
    `CREATE TABLE ${schema}.quota_windows (
       account text NOT NULL,
       window_end bigint NOT NULL,
       quota integer NOT NULL,
       used integer NOT NULL,
       limit_per_hour integer NOT NULL,
       PRIMARY KEY (account, window_end)
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
  /** Connections at most. @default 4 */
  connections?: number;
  /** The longest a connection or a statement may take before it fails (JOURNAL_STORE). @default none */
  timeoutMs?: number;
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

/**
 * What a statement gave back: its rows and how many it touched. Said here rather than as pg's
 * own type, so that a program using crm-ferry's types without pg installed (an optional peer)
 * still type-checks.
 */
export interface StoreRows<R> {
  rows: R[];
  rowCount: number | null;
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
    checkStoreUrl(options.url);
    const schema = schemaIdentifier(options.schema ?? 'crm_ferry');
    const where = describeStoreUrl(options.url);
    const pool = new (pg().Pool)({
      connectionString: options.url,
      max: options.connections ?? 4,
      ...(options.timeoutMs ? { connectionTimeoutMillis: options.timeoutMs, query_timeout: options.timeoutMs } : {}),
      // A command that forgets to close its store does not stay alive for the pool's sake.
      allowExitOnIdle: true,
    });
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
      throw storeError(where, error);
    }
  }

  /** The schema-qualified name of one of the store's tables. */
  table(name: 'states' | 'state_files' | 'journal_groups' | 'quota_windows'): string {
    return `${this.schema}.${name}`;
  }

  /** Where the store is, for messages (never a password). */
  get address(): string {
    return this.where;
  }

  /** Runs a statement on a connection of the pool; a failure is JOURNAL_STORE, saying where. */
  async query<R extends object = Record<string, unknown>>(text: string, values: unknown[] = []): Promise<StoreRows<R>> {
    try {
      return await this.pool.query<R & Pg.QueryResultRow>(text, values);
    } catch (error) {
      throw storeError(this.where, error);
    }
  }

  /** Runs `work` in one transaction on one connection: all of it is kept, or none. */
  async transaction<T>(work: (query: PostgresStore['query']) => Promise<T>): Promise<T> {
    const client = await this.pool.connect().catch((error: unknown) => {
      throw storeError(this.where, error);
    });
    try {
      await client.query('BEGIN');
      const result = await work(async <R extends object>(text: string, values: unknown[] = []) => {
        try {
          return (await client.query<R & Pg.QueryResultRow>(text, values)) as StoreRows<R>;
        } catch (error) {
          throw storeError(this.where, error);
        }
      });
      await client.query('COMMIT');
      return result;
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error instanceof FerryError ? error : storeError(this.where, error);
    } finally {
      client.release();
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

/** A failure of the store, said with where it is (never its password) and what to do. */
function storeError(where: string, error: unknown): FerryError {
  if (error instanceof FerryError) return error;
  return new FerryError('JOURNAL_STORE', `the state store at ${where}: ${(error as Error).message}`, {
    cause: error,
    hint: "Check that the store's server runs and can be reached, then run the same command again: a run goes on from what the store holds.",
  });
}

/** A store's address must be a postgresql:// URL; what was given is not repeated (it may hold a password). */
function checkStoreUrl(url: string): void {
  let protocol = '';
  try {
    protocol = new URL(url).protocol;
  } catch {}
  if (protocol !== 'postgresql:' && protocol !== 'postgres:')
    throw new FerryError('CONFIG_INVALID', 'the state store address is not a postgresql:// URL', {
      hint: 'Give --state-store (or CRM_FERRY_STATE_STORE) as postgresql://USER@HOST:PORT/DATABASE.',
    });
}
