/**
 * The worker queue: pg-boss's queue in the state store's PostgreSQL, with its retries and its
 * dead-letter queue, and what pg-boss 10 does not do by itself: noticing, before a job expires,
 * that the worker running it has died (see reapAbandoned).
 *
 * `pg-boss` is an optional peer dependency, loaded when a queue is first opened: nothing else in
 * crm-ferry loads it.
 */
import type PgBoss from 'pg-boss';
import { FerryError } from '../errors/index.ts';
import { describeStoreUrl } from '../journal/index.ts';
import { lazyModule } from '../util/index.ts';
import { checkJobSpec, type JobSpec } from './job.ts';

const pgBoss = lazyModule<typeof PgBoss>('pg-boss');

/** The schema pg-boss keeps its tables in, beside crm-ferry's own (crm_ferry). */
export const QUEUE_SCHEMA = 'crm_ferry_queue';
/** The queue's name when none is given. Its dead letters go to `<name>-dead`. */
export const DEFAULT_QUEUE = 'crm-ferry';

/**
 * How long a job may stay active before pg-boss itself calls it failed: a backstop only. A dead
 * worker's job is found far sooner through its advisory lock; a live one may run for hours.
 */
const EXPIRE_SECONDS = 23 * 60 * 60;

export interface QueueOptions {
  /** The state store, `postgresql://user@host:port/database`. */
  url: string;
  /** The queue's name: workers take jobs from one queue. @default "crm-ferry" */
  queue?: string;
  /** Whether this process runs pg-boss's upkeep (expiring, archiving): a worker does, `enqueue` does not. @default false */
  upkeep?: boolean;
}

export interface RetryOptions {
  /** How many times a failed job is tried again before it goes to the dead-letter queue. @default 3 */
  retries?: number;
  /** Seconds before the first retry; each next one waits about twice as long. 0: at once, every time. @default 60 */
  retryDelaySeconds?: number;
}

/** A job a worker has taken: its id, what it is, and which attempt this is (0 the first). */
export interface TakenJob {
  id: string;
  /** The job's data, checked; or why it cannot be run. */
  spec: JobSpec | FerryError;
  attempt: number;
}

/** One job as `enqueue --list` shows it. */
export interface JobListing {
  id: string;
  queue: string;
  state: string;
  attempt: number;
  createdOn: Date;
  /** The job's data (a JobSpec, as stored). */
  data: unknown;
  /** What the last attempt left: the failure's message, the exit code. */
  output: unknown;
}

function checkQueueName(name: string): string {
  if (!/^[a-z0-9][a-z0-9_-]{0,44}$/.test(name))
    throw new FerryError('USAGE', `the queue name ${JSON.stringify(name)} is not a plain lower-case name`, {
      hint: 'Use lower-case letters, digits, hyphens and underscores (the default is crm-ferry).',
    });
  return name;
}

function loadPgBoss(): typeof PgBoss {
  try {
    return pgBoss();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'MODULE_NOT_FOUND') throw error;
    throw new FerryError('CONFIG_MISSING', 'workers and enqueue need the package pg-boss, which is not installed', {
      cause: error,
      hint: 'Install it beside crm-ferry: npm install pg-boss@~10.4.2 pg',
    });
  }
}

export class JobQueue {
  /** The dead-letter queue: where a job goes when its last retry has failed. */
  readonly deadLetter: string;

  private constructor(
    private readonly boss: PgBoss,
    /** The queue's name. */
    readonly name: string,
  ) {
    this.deadLetter = `${name}-dead`;
  }

  /** Connects, creates pg-boss's schema (or migrates it) and the queue with its dead-letter queue. */
  static async open(options: QueueOptions): Promise<JobQueue> {
    const name = checkQueueName(options.queue ?? DEFAULT_QUEUE);
    const where = describeStoreUrl(options.url);
    const Boss = loadPgBoss();
    const boss = new Boss({
      connectionString: options.url,
      schema: QUEUE_SCHEMA,
      application_name: 'crm-ferry',
      max: 4,
      supervise: options.upkeep ?? false,
      schedule: false,
    });
    // pg-boss reports a lost connection or a failed upkeep as an event: a worker's next query
    // (a fetch, a completion) says so in its own words; unheard, the event would end the process.
    boss.on('error', () => undefined);
    const queue = new JobQueue(boss, name);
    try {
      await boss.start();
      await boss.createQueue(queue.deadLetter, { name: queue.deadLetter });
      await boss.createQueue(name, { name, deadLetter: queue.deadLetter, expireInSeconds: EXPIRE_SECONDS });
    } catch (error) {
      await boss.stop({ graceful: false, wait: true }).catch(() => undefined);
      throw new FerryError(
        'JOURNAL_STORE',
        `cannot open the job queue in the state store at ${where}: ${(error as Error).message}`,
        {
          cause: error,
          hint: 'Check the address given to --state-store (or CRM_FERRY_STATE_STORE) and that the server runs.',
        },
      );
    }
    return queue;
  }

  /** Puts a job in the queue (checked first) and hands back its id. */
  async send(spec: JobSpec, retry: RetryOptions = {}): Promise<string> {
    const checked = checkJobSpec(spec);
    const retryDelay = retry.retryDelaySeconds ?? 60;
    const id = await this.boss.send(this.name, checked as unknown as object, {
      retryLimit: retry.retries ?? 3,
      retryDelay,
      retryBackoff: retryDelay > 0,
      expireInSeconds: EXPIRE_SECONDS,
    });
    if (id === null) throw new FerryError('INTERNAL', 'pg-boss took the job but gave no id for it');
    return id;
  }

  /** Takes up to `count` jobs that are due: each is now active, this process's to run. */
  async take(count: number): Promise<TakenJob[]> {
    const jobs = await this.boss.fetch<unknown>(this.name, { batchSize: count, includeMetadata: true });
    return jobs.map((job) => {
      let spec: JobSpec | FerryError;
      try {
        spec = checkJobSpec(job.data);
      } catch (error) {
        spec = error instanceof FerryError ? error : new FerryError('USAGE', String(error));
      }
      return { id: job.id, spec, attempt: job.retryCount };
    });
  }

  /**
   * Whether a taken job is still this attempt's, and active: between taking a job and locking it, a
   * reaper may have taken it back (and another worker taken it again).
   */
  async stillOurs(job: Pick<TakenJob, 'id' | 'attempt'>): Promise<boolean> {
    const { rows } = await this.sql(
      `SELECT 1 FROM ${QUEUE_SCHEMA}.job WHERE name = $1 AND id = $2 AND state = 'active' AND retry_count = $3`,
      [this.name, job.id, job.attempt],
    );
    return rows.length === 1;
  }

  async complete(id: string, output: object): Promise<void> {
    await this.boss.complete(this.name, id, output);
  }

  /** Fails the job: pg-boss retries it after its delay, or, its retries spent, sends it to the dead-letter queue. */
  async fail(id: string, output: { message: string } & Record<string, unknown>): Promise<void> {
    await this.boss.fail(this.name, id, output);
  }

  /**
   * Puts an interrupted job back in the queue, due at once, without spending one of its retries:
   * a worker that was told to stop is no fault of the job's. As pg-boss's own `retry` does for a
   * failed job, its retry limit grows by one, since taking it again counts an attempt.
   */
  async putBack(id: string, output: object): Promise<void> {
    await this.sql(
      `UPDATE ${QUEUE_SCHEMA}.job SET state = 'retry', start_after = now(), retry_limit = retry_limit + 1, output = $3::jsonb
       WHERE name = $1 AND id = $2 AND state = 'active'`,
      [this.name, id, JSON.stringify(output)],
    );
  }

  /**
   * The active jobs of this queue, started more than `graceSeconds` ago: those a reaper looks at.
   * The grace leaves a worker the moment between taking a job and locking it.
   */
  async activeJobs(graceSeconds: number): Promise<Array<{ id: string; attempt: number }>> {
    const { rows } = await this.sql(
      `SELECT id, retry_count FROM ${QUEUE_SCHEMA}.job
       WHERE name = $1 AND state = 'active' AND started_on < now() - $2 * interval '1 second'`,
      [this.name, graceSeconds],
    );
    return rows.map((row: { id: string; retry_count: number }) => ({ id: row.id, attempt: row.retry_count }));
  }

  /** The jobs of the queue and of its dead-letter queue, newest first (completed ones too, until pg-boss archives them). */
  async list(limit = 100): Promise<JobListing[]> {
    const { rows } = await this.sql(
      `SELECT id, name, state, retry_count, created_on, data, output FROM ${QUEUE_SCHEMA}.job
       WHERE name = $1 OR name = $2 ORDER BY created_on DESC LIMIT $3`,
      [this.name, this.deadLetter, limit],
    );
    return rows.map(
      (row: {
        id: string;
        name: string;
        state: string;
        retry_count: number;
        created_on: Date;
        data: unknown;
        output: unknown;
      }) => ({
        id: row.id,
        queue: row.name,
        state: row.state,
        attempt: row.retry_count,
        createdOn: row.created_on,
        data: row.data,
        output: row.output,
      }),
    );
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, wait: true });
  }

  private sql(text: string, values: unknown[]): Promise<{ rows: any[] }> {
    return this.boss.getDb().executeSql(text, values);
  }
}
