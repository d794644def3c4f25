/**
 * Whose job is whose, known to the server itself: a worker holds a session advisory lock on each
 * job it runs, on a connection of its own. The server gives the lock back when that connection
 * dies (the worker was killed, its machine went away), so a lock free on an active job means its
 * worker is gone. pg-boss 10 would only notice at the job's expiry, hours later for a long run.
 *
 * Two connections: `holder` holds this worker's locks; `prober` tries others' (a session's own
 * advisory lock is re-entrant, so trying on the holder would always succeed).
 */
import type * as Pg from 'pg';
import { FerryError } from '../errors/index.ts';
import { describeStoreUrl } from '../journal/index.ts';
import { lazyModule } from '../util/index.ts';

const pg = lazyModule<typeof Pg>('pg');

/** The key of a job's advisory lock: a 64-bit hash of its id, computed by the server. */
const LOCK_KEY = `hashtextextended('crm-ferry:job:' || $1, 0)`;

export class JobLocks {
  private constructor(
    private readonly holder: Pg.Client,
    private readonly prober: Pg.Client,
    private readonly state: { closing: boolean },
    /** Settles when the holder's connection is lost (not closed by `close`): this worker's locks are gone with it. */
    readonly lost: Promise<Error>,
  ) {}

  static async open(url: string): Promise<JobLocks> {
    const connect = async (): Promise<Pg.Client> => {
      const client = new (pg().Client)({ connectionString: url, application_name: 'crm-ferry worker' });
      try {
        await client.connect();
      } catch (error) {
        throw new FerryError(
          'JOURNAL_STORE',
          `cannot reach the state store at ${describeStoreUrl(url)}: ${(error as Error).message}`,
          {
            cause: error,
            hint: 'Check the address given to --state-store (or CRM_FERRY_STATE_STORE) and that the server runs.',
          },
        );
      }
      return client;
    };
    const holder = await connect();
    const prober = await connect().catch(async (error: unknown) => {
      await holder.end().catch(() => undefined);
      throw error;
    });
    prober.on('error', () => undefined);
    const state = { closing: false };
    const lost = new Promise<Error>((resolve) => {
      holder.on('error', resolve);
      holder.on('end', () => {
        if (!state.closing) resolve(new Error('the connection holding the job locks was closed'));
      });
    });
    return new JobLocks(holder, prober, state, lost);
  }

  /** The holder's queries, one after another: jobs running side by side (--jobs N) share its connection. */
  private queue: Promise<unknown> = Promise.resolve();

  private onHolder(text: string, id: string): Promise<void> {
    const next = this.queue.then(async () => {
      await this.holder.query(text, [id]);
    });
    this.queue = next.catch(() => undefined);
    return next;
  }

  /** Takes the lock of a job this worker is about to run (waiting while a reaper holds it a moment). */
  hold(id: string): Promise<void> {
    return this.onHolder(`SELECT pg_advisory_lock(${LOCK_KEY})`, id);
  }

  release(id: string): Promise<void> {
    return this.onHolder(`SELECT pg_advisory_unlock(${LOCK_KEY})`, id);
  }

  /**
   * Runs `then` while holding the lock of another worker's job, if nobody holds it (that worker is
   * gone): true when it ran. The lock is held through `then`, so the job's worker, should it be alive
   * after all and just taking it, waits, then finds the job no longer its own.
   */
  async ifAbandoned(id: string, then: () => Promise<void>): Promise<boolean> {
    const { rows } = await this.prober.query<{ free: boolean }>(`SELECT pg_try_advisory_lock(${LOCK_KEY}) AS free`, [
      id,
    ]);
    if (rows[0]?.free !== true) return false;
    try {
      await then();
    } finally {
      await this.prober.query(`SELECT pg_advisory_unlock(${LOCK_KEY})`, [id]);
    }
    return true;
  }

  async close(): Promise<void> {
    this.state.closing = true;
    await Promise.all([this.holder.end().catch(() => undefined), this.prober.end().catch(() => undefined)]);
  }
}
