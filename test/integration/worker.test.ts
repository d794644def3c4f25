import { type ChildProcessWithoutNullStreams, spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { postgresTests } from '../helpers/postgres-tests.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * Workers against a real PostgreSQL (the machine's, or a private cluster the helper starts) and a
 * sandbox: a worker killed mid-job leaves the job to another, in another folder, which finishes it
 * with every row in the account once; a job that always fails ends in the dead-letter queue, saying
 * why; and no token reaches the database.
 */
const CLI = resolve(import.meta.dirname, '../../bin/crm-ferry.js');
const ROWS = 300;
/** A token variable's value that must never reach the database. */
const TOKEN_VARIABLE = 'ACME_CRM_TOKEN';

/**
 * The job's words after `run` when a second worker must find the first one's run: each worker's
 * own copy of the plan (in its working folder), and the run's state in the store, known by its key.
 */
const resumableRun = (key: string): string[] => ['plan.yaml', '--state-key', key];

const { withPostgres: withDatabase } = postgresTests();
let box: TestSandbox;
const dir = mkdtempSync(join(tmpdir(), 'ferry-worker-'));

beforeAll(async () => {
  // Each write takes 40 ms, so that the run is still going when the first worker is killed.
  box = await startTestSandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 40, latencyJitterMs: 0 } });
}, 120_000);

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** The test with the database's address (a worker's run takes a while), or a skip that says why. */
const withPostgres = (name: string, test: (url: string) => Promise<void>): void => withDatabase(name, test, 120_000);

/** A working folder of a worker's own, holding the plan of ROWS people (as each machine would have it). */
function workerFolder(name: string, domain = 'worker.example', rows = ROWS): string {
  const folder = join(dir, name);
  mkdirSync(folder);
  writeFileSync(
    join(folder, 'people.yaml'),
    [
      'version: 1',
      'name: people',
      'entity: party',
      'source: { format: csv }',
      'key: "{{email}}"',
      'fields:',
      '  - { to: type, value: person }',
      '  - { to: lastName, value: { column: last_name } }',
      '  - { to: email, type: Work, value: { column: email } }',
      '',
    ].join('\n'),
  );
  const lines = Array.from({ length: rows }, (_, i) => `Person${i},person${i}@${domain}`);
  writeFileSync(join(folder, 'people.csv'), `last_name,email\n${lines.join('\n')}\n`);
  writeFileSync(
    join(folder, 'plan.yaml'),
    'version: 1\nsteps:\n  - { name: people, mapping: people.yaml, input: people.csv }\n',
  );
  return folder;
}

interface WorkerProcess {
  child: ChildProcessWithoutNullStreams;
  /** Resolves once `times` lines of its standard output (so far or to come) match, with the last of them. */
  line(pattern: RegExp, times?: number): Promise<string>;
  /** The lines of its standard output so far that match. */
  lines(pattern: RegExp): string[];
  output(): string;
  exited: Promise<number | null>;
}

function startWorker(url: string, cwd: string, extra: string[]): WorkerProcess {
  const child = spawn(process.execPath, [CLI, 'worker', '--state-store', url, ...extra], {
    cwd,
    env: { ...process.env, [TOKEN_VARIABLE]: box.token, CRM_FERRY_TOKEN: '', CRM_FERRY_STATE_STORE: '' },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let output = '';
  const printed: string[] = [];
  const matching = (pattern: RegExp): string[] => printed.filter((line) => pattern.test(line));
  const waiting = new Set<() => void>();
  child.stderr.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  createInterface({ input: child.stdout }).on('line', (line) => {
    output += `${line}\n`;
    printed.push(line);
    for (const check of [...waiting]) check();
  });
  const exited = new Promise<number | null>((done) => child.once('close', done));
  return {
    child,
    output: () => output,
    lines: matching,
    exited,
    line: (pattern, times = 1) =>
      new Promise((found, failed) => {
        const check = (): void => {
          const lines = matching(pattern);
          if (lines.length < times) return;
          waiting.delete(check);
          found(lines.at(-1) as string);
        };
        waiting.add(check);
        check();
        void exited.then((code) => {
          if (waiting.delete(check)) failed(new Error(`the worker exited (${code}) first:\n${output}`));
        });
      }),
  };
}

/** Resolves once the sandbox holds `count` people: the moment to kill a worker in the middle of its run. */
function peopleReach(count: number): Promise<void> {
  const parties = box.store.parties;
  const insert = parties.insert.bind(parties);
  return new Promise((reached) => {
    let made = 0;
    parties.insert = (record) => {
      const created = insert(record);
      made += 1;
      if (made === count) {
        parties.insert = insert;
        reached();
      }
      return created;
    };
  });
}

/** `promise`, or, past a generous limit, an error showing what the workers printed (a guard, not a wait). */
async function guarded<T>(promise: Promise<T>, what: string, workers: WorkerProcess[]): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const limit = new Promise<never>((_, failed) => {
    timer = setTimeout(
      () => failed(new Error(`${what}: not within 60 s\n${workers.map((w) => w.output()).join('\n---\n')}`)),
      60_000,
    );
  });
  try {
    return await Promise.race([promise, limit]);
  } finally {
    clearTimeout(timer);
  }
}

async function query<T extends pg.QueryResultRow>(url: string, text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

/** How many people of the account have each address of `domain`. */
function peopleOf(domain: string): Map<string, number> {
  const counted = new Map<string, number>();
  for (const party of box.store.parties.values())
    for (const { address } of party.emailAddresses)
      if (address.endsWith(`@${domain}`)) counted.set(address, (counted.get(address) ?? 0) + 1);
  return counted;
}

/** Every row of the plan once in the account: none twice, none missing. */
function expectEveryRowOnce(domain: string, rows = ROWS): void {
  const counted = peopleOf(domain);
  expect([...counted].filter(([, n]) => n > 1)).toEqual([]);
  expect(counted.size).toBe(rows);
  for (let i = 0; i < rows; i += 1) expect(counted.get(`person${i}@${domain}`)).toBe(1);
}

async function enqueue(url: string, args: string[]): Promise<string> {
  const result = await runCli(['enqueue', '--state-store', url, ...args], { env: {} });
  expect(result.stderr).toBe('');
  expect(result.code).toBe(0);
  const id = result.stdout.trim();
  expect(id).toMatch(/^[0-9a-f-]{36}$/);
  return id;
}

describe('crm-ferry worker', () => {
  withPostgres(
    'a worker killed mid-job leaves it to another, in another folder, which writes every row once',
    async (url) => {
      const first = workerFolder('machine-a');
      const second = workerFolder('machine-b');
      const id = await enqueue(url, [
        '--queue',
        'kill-test',
        '--token-env',
        TOKEN_VARIABLE,
        '--base-url',
        box.url,
        '--retry-delay',
        '0',
        '--',
        'run',
        ...resumableRun('kill-test'),
        '--concurrency',
        '2',
      ]);
      const before = box.store.parties.size;
      const midway = peopleReach(60);
      const a = startWorker(url, first, ['--queue', 'kill-test']);
      await guarded(a.line(new RegExp(`^job ${id} started: run .*\\(attempt 1\\)$`)), 'A started', [a]);
      await guarded(midway, 'A wrote 60 people', [a]);
      a.child.kill('SIGKILL');
      await a.exited;
      const written = box.store.parties.size - before;
      expect(written).toBeGreaterThanOrEqual(60);
      expect(written).toBeLessThan(ROWS);

      // The second worker finds the job abandoned (its lock is free once the first one's
      // connection is gone), and pg-boss hands it out again at once.
      const b = startWorker(url, second, ['--queue', 'kill-test', '--reap-every', '1s']);
      await guarded(b.line(new RegExp(`^job ${id} started: run .*\\(attempt 2\\)$`)), 'B started', [a, b]);
      await guarded(b.line(new RegExp(`^job ${id} completed$`)), 'B completed', [a, b]);
      b.child.kill('SIGTERM');
      expect(await b.exited).toBe(143);
      expect(b.output()).toMatch(/^worker stopped: 1 completed, 0 failed, 0 interrupted, 1 taken back/m);

      expectEveryRowOnce('worker.example');

      const [job] = await query<{ state: string; retry_count: number; output: unknown }>(
        url,
        'SELECT state, retry_count, output FROM crm_ferry_queue.job WHERE id = $1',
        [id],
      );
      expect(job).toMatchObject({ state: 'completed', retry_count: 1, output: { exitCode: 0 } });
    },
  );

  withPostgres(
    'a worker stopped by SIGTERM puts its job back without spending a retry; the next one finishes it',
    async (url) => {
      const id = await enqueue(url, [
        '--queue',
        'stop-test',
        '--token-env',
        TOKEN_VARIABLE,
        '--base-url',
        box.url,
        '--retries',
        '0',
        '--',
        'run',
        ...resumableRun('stop-test'),
        '--concurrency',
        '2',
      ]);
      const midway = peopleReach(40);
      const c = startWorker(url, workerFolder('machine-c', 'stop.example'), ['--queue', 'stop-test']);
      await guarded(c.line(new RegExp(`^job ${id} started: run .*\\(attempt 1\\)$`)), 'C started', [c]);
      await guarded(midway, 'C wrote 40 people', [c]);
      c.child.kill('SIGTERM');
      expect(await c.exited).toBe(143);
      expect(c.output()).toMatch(new RegExp(`^job ${id} interrupted: back to the queue$`, 'm'));
      expect(peopleOf('stop.example').size).toBeLessThan(ROWS);
      const [waiting] = await query<{ state: string; retry_count: number; retry_limit: number }>(
        url,
        'SELECT state, retry_count, retry_limit FROM crm_ferry_queue.job WHERE id = $1',
        [id],
      );
      expect(waiting).toEqual({ state: 'retry', retry_count: 0, retry_limit: 1 });

      // With no retry to spend (--retries 0), only a put-back without cost lets the next worker take it.
      const d = startWorker(url, workerFolder('machine-d', 'stop.example'), ['--queue', 'stop-test', '--drain']);
      expect(await d.exited).toBe(0);
      expect(d.output()).toMatch(new RegExp(`^job ${id} completed$`, 'm'));
      expectEveryRowOnce('stop.example');
    },
  );

  withPostgres(
    'runs --jobs N at once, and a worker never takes back the jobs another live worker runs',
    async (url) => {
      // Four jobs of 80 rows, one request at a time: each runs over 3 s, longer than the reaper's
      // grace (2 s) and its period (1 s), so the second worker looks at the first one's jobs.
      const ids: string[] = [];
      for (let n = 0; n < 4; n += 1) {
        const folder = workerFolder(`shared-many-${n}`, `many${n}.example`, 80);
        ids.push(
          await enqueue(url, [
            '--queue',
            'many-test',
            '--token-env',
            TOKEN_VARIABLE,
            '--base-url',
            box.url,
            '--',
            'run',
            join(folder, 'plan.yaml'),
            // Four plans named alike, for one account: in the store, four states by their keys.
            '--state-key',
            `many-${n}`,
            '--concurrency',
            '1',
          ]),
        );
      }
      const x = startWorker(url, workerFolder('machine-x', 'unused.example'), [
        '--queue',
        'many-test',
        '--jobs',
        '3',
        '--reap-every',
        '1s',
      ]);
      await guarded(x.line(/^job \S+ started: /, 3), 'X started three jobs', [x]);
      expect(x.lines(/^job \S+ completed$/)).toEqual([]);
      const y = startWorker(url, workerFolder('machine-y', 'unused.example'), [
        '--queue',
        'many-test',
        '--jobs',
        '3',
        '--reap-every',
        '1s',
      ]);
      const completed = /^job \S+ completed$/;
      const all = async (): Promise<void> => {
        for (;;) {
          const done = x.lines(completed).length + y.lines(completed).length;
          if (done === 4) return;
          await Promise.race([
            x.line(completed, x.lines(completed).length + 1),
            y.line(completed, y.lines(completed).length + 1),
          ]);
        }
      };
      await guarded(all(), 'four jobs completed', [x, y]);
      x.child.kill('SIGTERM');
      y.child.kill('SIGTERM');
      expect(await x.exited).toBe(143);
      expect(await y.exited).toBe(143);
      expect(`${x.output()}${y.output()}`).not.toMatch(/abandoned/);
      for (const id of ids) {
        const starts = [...x.lines(/ started: /), ...y.lines(/ started: /)].filter((line) => line.includes(id));
        expect(starts, id).toHaveLength(1);
      }
      expect(y.lines(/ started: /)).toHaveLength(1);
      const jobs = await query<{ state: string }>(
        url,
        `SELECT state FROM crm_ferry_queue.job WHERE name = 'many-test'`,
      );
      expect(jobs).toEqual([
        { state: 'completed' },
        { state: 'completed' },
        { state: 'completed' },
        { state: 'completed' },
      ]);
      for (let n = 0; n < 4; n += 1) expectEveryRowOnce(`many${n}.example`, 80);
    },
  );

  withPostgres('a job that fails every time ends in the dead-letter queue, saying why', async (url) => {
    const folder = workerFolder('machine-e', 'unused.example');
    const id = await enqueue(url, [
      '--queue',
      'dead-test',
      '--token-env',
      TOKEN_VARIABLE,
      '--base-url',
      box.url,
      '--retries',
      '2',
      '--retry-delay',
      '0',
      '--',
      'run',
      'no-such-plan.yaml',
    ]);
    const worker = startWorker(url, folder, ['--queue', 'dead-test', '--drain']);
    expect(await worker.exited).toBe(0);
    expect(worker.output().match(new RegExp(`^job ${id} failed \\(exit code 2\\)`, 'gm'))).toHaveLength(3);

    const [job] = await query<{ state: string; retry_count: number }>(
      url,
      'SELECT state, retry_count FROM crm_ferry_queue.job WHERE id = $1',
      [id],
    );
    expect(job).toEqual({ state: 'failed', retry_count: 2 });
    const dead = await query<{ data: { command: string; args: string[] }; output: { message: string } }>(
      url,
      `SELECT data, output FROM crm_ferry_queue.job WHERE name = 'dead-test-dead'`,
    );
    expect(dead).toHaveLength(1);
    expect(dead[0]?.data).toMatchObject({ command: 'run', args: ['no-such-plan.yaml'], tokenEnv: TOKEN_VARIABLE });
    expect(dead[0]?.output.message).toMatch(
      /^error \[PLAN_INVALID\] at .*no-such-plan\.yaml: the plan file .* does not exist/,
    );

    const listed = await runCli(['enqueue', '--state-store', url, '--queue', 'dead-test', '--list'], { env: {} });
    expect(listed.stdout).toMatch(/ dead .* run no-such-plan\.yaml {2}error \[PLAN_INVALID\]/);
    expect(listed.stdout).toContain(`${id}  failed`);
  });

  withPostgres('keeps every token out of the database: a job names the variable, never its value', async (url) => {
    const refused = await runCli(['enqueue', '--state-store', url, '--', 'run', 'plan.yaml', '--token', box.token], {
      env: {},
    });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("a job's arguments may not hold --token");
    expect(refused.stderr).not.toContain(box.token);

    // Every row of every table in the store, after the runs above: the queue's jobs (live and
    // dead), their outputs, and the runs' state.
    const tables = await query<{ schema: string; name: string }>(
      url,
      `SELECT table_schema AS schema, table_name AS name FROM information_schema.tables
       WHERE table_type = 'BASE TABLE' AND table_schema NOT IN ('pg_catalog', 'information_schema')`,
    );
    const names = tables.map((table) => `${table.schema}.${table.name}`);
    expect(names).toContain('crm_ferry_queue.job');
    let rows = 0;
    for (const table of tables) {
      const found = await query<{ row: string }>(url, `SELECT t::text AS row FROM "${table.schema}"."${table.name}" t`);
      rows += found.length;
      for (const { row } of found) expect(row).not.toContain(box.token);
    }
    const jobs = await query<{ data: string }>(url, 'SELECT data::text AS data FROM crm_ferry_queue.job');
    expect(jobs.length).toBeGreaterThanOrEqual(3);
    for (const job of jobs) expect(job.data).toContain(TOKEN_VARIABLE);
    expect(rows).toBeGreaterThan(jobs.length);
  });
});
