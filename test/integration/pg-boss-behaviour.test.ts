import pg from 'pg';
import { describe, expect } from 'vitest';
import { JobQueue, QUEUE_SCHEMA } from '../../src/fleet/index.ts';
import { postgresTests } from '../helpers/postgres-tests.ts';

/**
 * What crm-ferry's queue takes from pg-boss 10 beyond its documented calls, pinned: the job table
 * it reads and writes itself (the reaper's look at active jobs, the put-back of an interrupted job,
 * `enqueue --list`), that taking a job again counts an attempt, and that a job's last failure leaves
 * a copy with its reason in the dead-letter queue. A pg-boss that changes any of it fails here,
 * not in a worker.
 */
const { withPostgres } = postgresTests();

async function jobRow(url: string, id: string): Promise<Record<string, unknown> | undefined> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query(
      `SELECT name, state, retry_count, retry_limit, started_on IS NOT NULL AS started, output FROM ${QUEUE_SCHEMA}.job WHERE id = $1`,
      [id],
    );
    return rows[0];
  } finally {
    await client.end();
  }
}

describe('the parts of pg-boss 10 the queue relies on', () => {
  withPostgres(
    'an interrupted job put back costs no retry; its last failure goes to the dead-letter queue',
    async (url) => {
      const queue = await JobQueue.open({ url, queue: 'pinned' });
      try {
        const id = await queue.send({ command: 'run', args: ['plan.yaml'] }, { retries: 0, retryDelaySeconds: 0 });
        expect(await jobRow(url, id)).toMatchObject({
          name: 'pinned',
          state: 'created',
          retry_count: 0,
          retry_limit: 0,
        });

        const [first] = await queue.take(5);
        expect(first).toMatchObject({ id, attempt: 0, spec: { command: 'run', args: ['plan.yaml'] } });
        expect(await queue.stillOurs({ id, attempt: 0 })).toBe(true);
        expect(await queue.activeJobs(0)).toEqual([{ id, attempt: 0 }]);

        await queue.putBack(id, { message: 'interrupted' });
        expect(await jobRow(url, id)).toMatchObject({ state: 'retry', retry_count: 0, retry_limit: 1, started: true });
        expect(await queue.stillOurs({ id, attempt: 0 })).toBe(false);

        // Taken again: one attempt more, and the attempt before is no longer the job's.
        const [second] = await queue.take(5);
        expect(second).toMatchObject({ id, attempt: 1 });
        expect(await queue.stillOurs({ id, attempt: 0 })).toBe(false);
        expect(await queue.stillOurs({ id, attempt: 1 })).toBe(true);

        await queue.fail(id, { message: 'error [PLAN_INVALID]: no plan', exitCode: 2 });
        expect(await jobRow(url, id)).toMatchObject({
          state: 'failed',
          output: { message: 'error [PLAN_INVALID]: no plan' },
        });
        expect(await queue.take(5)).toEqual([]);
        const listed = await queue.list();
        expect(listed.map((job) => [job.queue, job.state])).toEqual(
          expect.arrayContaining([
            ['pinned', 'failed'],
            ['pinned-dead', 'created'],
          ]),
        );
        const dead = listed.find((job) => job.queue === queue.deadLetter);
        expect(dead?.data).toEqual({ command: 'run', args: ['plan.yaml'] });
        expect(dead?.output).toMatchObject({ message: 'error [PLAN_INVALID]: no plan' });
      } finally {
        await queue.close();
      }
    },
  );

  withPostgres('a job whose data is not a job is handed out as the reason it cannot run', async (url) => {
    const queue = await JobQueue.open({ url, queue: 'odd' });
    try {
      // Written by something else than enqueue, which would refuse it.
      const Boss = (await import('pg-boss')).default;
      const boss = new Boss({ connectionString: url, schema: QUEUE_SCHEMA, supervise: false, schedule: false });
      await boss.start();
      await boss.send('odd', { command: 'run', args: ['p.yaml', '--token', 'abc'] });
      await boss.stop({ graceful: false });
      const [job] = await queue.take(1);
      expect(job?.spec).toBeInstanceOf(Error);
      expect((job?.spec as Error).message).toMatch(/may not hold --token/);
    } finally {
      await queue.close();
    }
  });
});
