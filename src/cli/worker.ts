import { EXIT, FerryError } from '../errors/index.ts';
import type { JobListing, JobSpec } from '../fleet/index.ts';
import { printable } from '../util/index.ts';
import { refuseArguments, type CliIo, type Command, type OptionSpec, type ParsedArgs } from './command.ts';
import { connectionFlags, connectionOptions } from './connection-flags.ts';
import { parseDuration, wholeNumber } from './flags.ts';

const QUEUE_GROUP = 'Queue:';

/** The flags both commands take: where the queue is, and which one. */
const queueFlags: OptionSpec = {
  'state-store': {
    ...(connectionFlags['state-store'] as OptionSpec[string]),
    describe: 'the PostgreSQL state store that holds the queue, postgresql://USER@HOST/DB (CRM_FERRY_STATE_STORE)',
    group: QUEUE_GROUP,
  },
  queue: {
    type: 'string',
    value: 'NAME',
    describe: 'the queue (default crm-ferry; at most 45 characters); failed jobs end in NAME-dead',
    group: QUEUE_GROUP,
  },
};

/** The store's address, from --state-store or CRM_FERRY_STATE_STORE: the one thing the queue needs. */
function queueStoreOf(args: ParsedArgs, io: CliIo, command: string): string {
  const url = connectionOptions(args, io.env).stateStore;
  if (url === undefined)
    throw new FerryError('USAGE', `${command} needs the state store that holds the queue`, {
      hint: 'Give --state-store postgresql://USER@HOST/DB, or set CRM_FERRY_STATE_STORE.',
    });
  return url;
}

function queueName(args: ParsedArgs): { queue?: string } {
  const queue = args.values.queue;
  return typeof queue === 'string' ? { queue } : {};
}

export const workerCommand: Command = {
  name: 'worker',
  usage: `Usage: crm-ferry worker --state-store URL [--jobs N] [--drain] [options]

Takes jobs (a plan's run, an import, an export, a backup) from the queue in the PostgreSQL state
store and runs each in this process, one line as each starts and ends. A job names its
credentials, never holds them: --token-env VAR is read from this worker's environment, --profile
NAME from its stored logins. A job's plan and files are read from this worker's folder.`,
  epilog: `A worker that is killed leaves its job to the next worker that looks (on its start, and every
--reap-every), which resumes the run where it stopped, from the state store. SIGTERM or Ctrl-C stops
the worker: its running jobs are interrupted and go back to the queue, without spending a retry.

Exit code 0 the queue was drained (--drain), 2 bad usage, 130 interrupted, 143 stopped by SIGTERM.
A job's failure is the queue's business (retried, then in the dead-letter queue), not the worker's.`,
  options: {
    ...queueFlags,
    jobs: { type: 'string', value: 'N', describe: 'run up to N jobs at once (default 1)' },
    drain: {
      type: 'boolean',
      describe: 'stop once no job is due and none runs, instead of waiting for more (a CI runner)',
    },
    'reap-every': {
      type: 'string',
      value: 'DURATION',
      describe: 'how often to look for jobs whose worker died, e.g. 30s (default 30s)',
    },
    poll: {
      type: 'string',
      value: 'DURATION',
      describe: 'how often to look for new jobs while the queue is empty, e.g. 2s (default 2s)',
    },
  },
  async run(args, io) {
    refuseArguments('worker', args);
    const stateStore = queueStoreOf(args, io, 'worker');
    const jobs = wholeNumber(args.values.jobs, 'jobs', 1, 64) ?? 1;
    const reapEvery = parseDuration(args.values['reap-every'], 'reap-every') ?? 30_000;
    const poll = parseDuration(args.values.poll, 'poll') ?? 2000;
    const runCommandLine = io.runCommandLine;
    if (runCommandLine === undefined)
      throw new FerryError('INTERNAL', 'the worker was started without a way to run command lines');
    const { runWorker } = await import('../fleet/index.ts');
    await runWorker(
      {
        stateStore,
        ...queueName(args),
        jobs,
        reapEverySeconds: reapEvery / 1000,
        pollSeconds: poll / 1000,
        drain: args.values.drain === true,
        env: io.env,
        cwd: io.cwd,
        signal: io.signal,
        stdout: io.stdout,
        stderr: io.stderr,
      },
      { runCommandLine: (argv, jobIo) => runCommandLine(argv, jobIo) },
    );
    return io.signal.aborted ? EXIT.INTERRUPTED : EXIT.OK;
  },
};

function formatListing(job: JobListing, deadLetter: boolean): string {
  const data = job.data as Partial<JobSpec> | null;
  const what = data && typeof data.command === 'string' ? [data.command, ...(data.args ?? [])].join(' ') : '?';
  const output = job.output as { message?: unknown } | null;
  const why = typeof output?.message === 'string' ? `  ${output.message.split('\n')[0]}` : '';
  const state = deadLetter ? 'dead' : job.state;
  return printable(
    `${job.id}  ${state.padEnd(9)}  attempt ${job.attempt + 1}  ${job.createdOn.toISOString()}  ${what}${why}`,
  );
}

export const enqueueCommand: Command = {
  name: 'enqueue',
  usage: `Usage: crm-ferry enqueue --state-store URL [--token-env VAR | --profile NAME] [--base-url URL] -- COMMAND ARGS...
       crm-ferry enqueue --state-store URL --list

Puts a job in the queue of the PostgreSQL state store, for a worker (crm-ferry worker) to run,
and prints its id. COMMAND is run, import, export or backup, with its arguments as you would type
them (paths are read in the worker's folder). The job names its credentials and never holds them:
--token-env VAR is the variable each worker reads its token from, --profile NAME a stored login
of the worker's. --list shows the queue's jobs and its dead letters.`,
  epilog: `Examples:
  crm-ferry enqueue --token-env ACME_TOKEN -- run plans/acme.yaml --state-key acme
  crm-ferry enqueue --profile acme --retries 5 -- export parties --out acme.csv --since auto --state-key acme-parties

Exit code 0 queued (or listed), 2 bad usage or the store cannot be used.`,
  options: {
    ...queueFlags,
    'base-url': {
      type: 'string',
      value: 'URL',
      describe: "the service's address for this job (default: the worker's CRM_FERRY_BASE_URL)",
    },
    'token-env': {
      type: 'string',
      value: 'VAR',
      describe: "the environment variable of each worker that holds the job's token (its name goes in the queue)",
    },
    profile: {
      type: 'string',
      value: 'NAME',
      describe: "the worker's stored OAuth login the job uses (crm-ferry auth login --profile NAME)",
    },
    retries: {
      type: 'string',
      value: 'N',
      describe: 'retry a failed job N times before it goes to the dead-letter queue (default 3)',
    },
    'retry-delay': {
      type: 'string',
      value: 'SECONDS',
      describe: 'wait before the first retry, about twice as long before each next one; 0 at once (default 60)',
    },
    list: { type: 'boolean', describe: "list the queue's jobs, newest first, with their states and failures" },
  },
  async run(args, io) {
    const stateStore = queueStoreOf(args, io, 'enqueue');
    const v = args.values;
    const { JobQueue, checkJobSpec } = await import('../fleet/index.ts');
    if (v.list === true) {
      refuseArguments('enqueue --list', args);
      const queue = await JobQueue.open({ url: stateStore, ...queueName(args) });
      try {
        const jobs = await queue.list();
        if (jobs.length === 0) io.stdout.write(`No jobs in queue ${queue.name}.\n`);
        for (const job of jobs) io.stdout.write(`${formatListing(job, job.queue === queue.deadLetter)}\n`);
      } finally {
        await queue.close();
      }
      return EXIT.OK;
    }
    const [command, ...rest] = args.positionals;
    if (command === undefined)
      throw new FerryError('USAGE', 'enqueue needs the command of the job', {
        hint: 'Write it after --: crm-ferry enqueue --token-env VAR -- run PLAN.',
      });
    const spec = checkJobSpec({
      command,
      args: rest,
      ...(typeof v['base-url'] === 'string' ? { baseUrl: v['base-url'] } : {}),
      ...(typeof v.profile === 'string' ? { profile: v.profile } : {}),
      ...(typeof v['token-env'] === 'string' ? { tokenEnv: v['token-env'] } : {}),
    });
    const retries = wholeNumber(v.retries, 'retries', 0, 100);
    const retryDelaySeconds = wholeNumber(v['retry-delay'], 'retry-delay', 0, 86_400);
    const queue = await JobQueue.open({ url: stateStore, ...queueName(args) });
    try {
      const id = await queue.send(spec, {
        ...(retries === undefined ? {} : { retries }),
        ...(retryDelaySeconds === undefined ? {} : { retryDelaySeconds }),
      });
      io.stdout.write(`${id}\n`);
    } finally {
      await queue.close();
    }
    return EXIT.OK;
  },
};
