/**
 * A worker: takes jobs from the queue in the state store and runs each as the command line it
 * holds, in this process, with the job's credentials resolved from this worker's environment.
 * A job it runs is locked in the store (job-locks.ts); on start and every `reapEverySeconds` it
 * fails, through pg-boss, the active jobs whose lock is free: their worker died, and pg-boss's
 * retry gives them to the next worker, which resumes the run from the state store.
 */
import { FerryError } from '../errors/index.ts';
import { describeStoreUrl } from '../journal/index.ts';
import { describeJob, jobArguments, jobEnvironment, jobOutcome, withoutSecrets } from './job.ts';
import { JobLocks } from './job-locks.ts';
import { JobOutput } from './job-output.ts';
import { JobQueue, type TakenJob } from './queue.ts';

/** What a job's command line gets: the shape of the command line's own `main(argv, io)`. */
export interface JobIo {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  env: NodeJS.ProcessEnv;
  cwd: string;
  signal: AbortSignal;
}

export interface WorkerOptions {
  /** The state store, `postgresql://user@host:port/database`: the queue is there, and each job's state. */
  stateStore: string;
  /** The queue to take jobs from. @default "crm-ferry" */
  queue?: string;
  /** How many jobs run at once. @default 1 */
  jobs?: number;
  /** Seconds between two looks for jobs whose worker died. @default 30 */
  reapEverySeconds?: number;
  /** Seconds between two looks for new jobs while the queue is empty. @default 2 */
  pollSeconds?: number;
  /** Stop once no job is due and none is running, instead of waiting for more (a CI runner). @default false */
  drain?: boolean;
  /** The worker's own environment: each job's credentials are resolved from it. */
  env: NodeJS.ProcessEnv;
  /** The folder jobs run in: their plans' and files' paths are read from it. */
  cwd: string;
  /** Aborted to stop: running jobs are interrupted and go back to the queue. */
  signal: AbortSignal;
  /** The worker's own lines (a job started, ended) and the jobs' standard output. */
  stdout: NodeJS.WritableStream;
  /** The jobs' standard error. */
  stderr: NodeJS.WritableStream;
}

export interface WorkerDeps {
  /** Runs one command line (crm-ferry's `main`) and resolves with its exit code. */
  runCommandLine(argv: string[], io: JobIo): Promise<number>;
}

export interface WorkerSummary {
  completed: number;
  failed: number;
  interrupted: number;
  /** Jobs of dead workers this one handed back to the queue. */
  reaped: number;
}

/** A job found active with its lock free this long after its start is taken for abandoned. */
const REAP_GRACE_SECONDS = 2;

function positive(name: string, value: number, min: number): number {
  if (!Number.isFinite(value) || value < min)
    throw new FerryError('USAGE', `${name} takes a number from ${min}, got ${value}`, {
      hint: `Give ${name} a number of at least ${min}.`,
    });
  return value;
}

/** Resolves after `ms`, or at once when `signal` aborts or `wake` is called. */
function pause(ms: number, signal: AbortSignal): { done: Promise<void>; wake(): void } {
  let wake = (): void => undefined;
  const done = new Promise<void>((resolve) => {
    const timer = setTimeout(finish, ms);
    function finish(): void {
      clearTimeout(timer);
      signal.removeEventListener('abort', finish);
      resolve();
    }
    signal.addEventListener('abort', finish, { once: true });
    wake = finish;
  });
  return { done, wake };
}

export async function runWorker(options: WorkerOptions, deps: WorkerDeps): Promise<WorkerSummary> {
  const slots = Math.floor(positive('--jobs', options.jobs ?? 1, 1));
  const reapEvery = positive('--reap-every', options.reapEverySeconds ?? 30, 0.1) * 1000;
  const poll = positive('--poll', options.pollSeconds ?? 2, 0.1) * 1000;
  const say = (line: string): void => {
    options.stdout.write(`${line}\n`);
  };
  const summary: WorkerSummary = { completed: 0, failed: 0, interrupted: 0, reaped: 0 };
  const queue = await JobQueue.open({
    url: options.stateStore,
    upkeep: true,
    ...(options.queue ? { queue: options.queue } : {}),
  });
  let locks: JobLocks;
  try {
    locks = await JobLocks.open(options.stateStore);
  } catch (error) {
    await queue.close();
    throw error;
  }
  // Losing the connection that holds the locks loses the locks: another worker may take these
  // jobs any moment, so this one stops them (their runs' own locks keep the two apart meanwhile).
  const stop = new AbortController();
  const onAbort = (): void => stop.abort();
  options.signal.addEventListener('abort', onAbort, { once: true });
  if (options.signal.aborted) stop.abort();
  let lostLocks: Error | null = null;
  void locks.lost.then((error) => {
    lostLocks = error;
    stop.abort();
  });

  const reap = async (): Promise<void> => {
    for (const job of await queue.activeJobs(REAP_GRACE_SECONDS)) {
      await locks.ifAbandoned(job.id, async () => {
        // Looked at again under the lock: the job may have ended, or been taken again, meanwhile.
        if (!(await queue.stillOurs(job))) return;
        await queue.fail(job.id, { message: 'the worker running this job stopped answering (its lock was free)' });
        summary.reaped += 1;
        say(`job ${job.id} abandoned by its worker (its lock was free): failed, for pg-boss to retry`);
      });
    }
  };
  let reaping: Promise<void> = Promise.resolve();
  const reapNow = (): void => {
    reaping = reaping.then(reap).catch((error: unknown) => {
      say(`could not look for abandoned jobs: ${(error as Error).message}`);
    });
  };

  const running = new Set<Promise<void>>();
  let wakeUp = (): void => undefined;

  const runJob = async (job: TakenJob): Promise<void> => {
    await locks.hold(job.id);
    try {
      if (!(await queue.stillOurs(job))) {
        say(`job ${job.id} was taken back before it started: left to the queue`);
        return;
      }
      if (job.spec instanceof FerryError) {
        summary.failed += 1;
        say(`job ${job.id} failed: ${job.spec.message}`);
        await queue.fail(job.id, { message: job.spec.message });
        return;
      }
      const spec = job.spec;
      if (stop.signal.aborted) {
        // Taken as the worker was told to stop: not begun, so handed straight back.
        await queue.putBack(job.id, { message: 'interrupted: the worker was stopped' });
        summary.interrupted += 1;
        say(`job ${job.id} interrupted: back to the queue`);
        return;
      }
      let resolved: ReturnType<typeof jobEnvironment>;
      try {
        resolved = jobEnvironment(spec, options.env);
      } catch (error) {
        const message = (error as Error).message;
        summary.failed += 1;
        say(`job ${job.id} failed: ${message}`);
        await queue.fail(job.id, { message });
        return;
      }
      const tag = `[job ${job.id.slice(0, 8)}]`;
      const stdout = new JobOutput(options.stdout, tag, resolved.secrets);
      const stderr = new JobOutput(options.stderr, tag, resolved.secrets);
      say(`job ${job.id} started: ${describeJob(spec)} (attempt ${job.attempt + 1})`);
      const controller = new AbortController();
      const interrupt = (): void => controller.abort();
      stop.signal.addEventListener('abort', interrupt, { once: true });
      if (stop.signal.aborted) controller.abort();
      let exitCode: number;
      try {
        exitCode = await deps.runCommandLine(jobArguments(spec, options.stateStore), {
          stdout,
          stderr,
          env: resolved.env,
          cwd: options.cwd,
          signal: controller.signal,
        });
      } catch (error) {
        stderr.write(`internal error: ${(error as Error).message}\n`);
        exitCode = 1;
      } finally {
        stop.signal.removeEventListener('abort', interrupt);
        stdout.flush();
        stderr.flush();
      }
      const outcome = jobOutcome(spec.command, exitCode);
      if (outcome === 'completed' || outcome === 'completed-with-rejects') {
        await queue.complete(job.id, { exitCode, rejects: outcome === 'completed-with-rejects' });
        summary.completed += 1;
        say(`job ${job.id} completed${outcome === 'completed-with-rejects' ? ' (some rows were rejected)' : ''}`);
      } else if (outcome === 'interrupted') {
        await queue.putBack(job.id, { message: 'interrupted: the worker was stopped', exitCode });
        summary.interrupted += 1;
        say(`job ${job.id} interrupted: back to the queue`);
      } else {
        const message = withoutSecrets(stderr.reason() || `exit code ${exitCode}`, resolved.secrets);
        await queue.fail(job.id, { message, exitCode });
        summary.failed += 1;
        say(`job ${job.id} failed (exit code ${exitCode}): ${message.split('\n')[0]}`);
      }
    } finally {
      await locks.release(job.id).catch(() => undefined);
    }
  };

  const start = (job: TakenJob): void => {
    const task: Promise<void> = runJob(job)
      .catch((error: unknown) => {
        say(`job ${job.id}: ${(error as Error).message}`);
      })
      .finally(() => {
        running.delete(task);
        wakeUp();
      });
    running.add(task);
  };

  say(`worker taking jobs from queue ${queue.name} in ${describeStoreUrl(options.stateStore)}, ${slots} at a time`);
  const reaper = setInterval(reapNow, reapEvery);
  try {
    reapNow();
    await reaping;
    while (!stop.signal.aborted) {
      const free = slots - running.size;
      const taken = free > 0 ? await queue.take(free) : [];
      for (const job of taken) start(job);
      if (taken.length === 0 && running.size === 0 && options.drain) break;
      if (taken.length === free && free > 0) continue;
      // Nothing due, or every slot busy: until a job ends, the next look, or a stop.
      const wait = pause(poll, stop.signal);
      wakeUp = wait.wake;
      await wait.done;
      wakeUp = () => undefined;
    }
    await Promise.all(running);
  } finally {
    clearInterval(reaper);
    options.signal.removeEventListener('abort', onAbort);
    await reaping;
    await Promise.all(running);
    await locks.close();
    await queue.close();
  }
  if (lostLocks !== null)
    throw new FerryError(
      'JOURNAL_STORE',
      `the worker lost its connection to the state store: ${(lostLocks as Error).message}`,
      {
        hint: 'Its jobs went back to the queue (or will, once another worker finds them). Start the worker again.',
      },
    );
  say(
    `worker stopped: ${summary.completed} completed, ${summary.failed} failed, ${summary.interrupted} interrupted, ${summary.reaped} taken back from dead workers`,
  );
  return summary;
}
