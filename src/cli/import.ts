import { createInterface } from 'node:readline/promises';
import { accountOf, type CrmClient } from '../client/index.ts';
import { defaultStateDir, printableLines } from '../util/index.ts';
import { EXIT, FerryError } from '../errors/index.ts';
import type { AccountIdentity } from '../journal/index.ts';
import { describeRunSource } from '../plan/index.ts';
import type { ImportEvent, ImportOptionsInput } from '../load/index.ts';
import { refuseArguments, type CliIo, type Command, type OptionSpec, type ParsedArgs } from './command.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';
import {
  formatImportSummary,
  formatRollbackSummary,
  formatSetupPlan,
  formatSetupReport,
  ImportProgress,
  importExitCode,
} from './import-report.ts';
import {
  DEFAULT_GIVE_UP_AFTER_MS,
  inputPath,
  parseDuration,
  parseSince,
  path,
  stateKeyFlag,
  stateStoreOf,
  type V1Flags,
  v1Format,
  v1LiveOf,
  wholeNumber,
} from './flags.ts';
import { version } from './version.ts';
import { recordUsage, reportFlag, reportPath, shownPath, writeCommandReport } from './report-flag.ts';

export interface ImportCommandOptions {
  run: ImportOptionsInput;
  json: boolean;
  yes: boolean;
  /** The transport's settings for the run: a pool of `concurrency` connections, the outage budget. */
  transport: { connections: number; giveUpAfterMs: number };
  /** Live v1 sources: the format to ask for (--v1-format) and the `lastmodified` filter (--since). */
  v1: V1Flags;
  /** The plan or mapping file: the state's key in a store, unless --state-key names it. */
  anchor: string;
}

/** Builds the run's options from the flags of `import` (one mapping) or `run` (a plan). */
export function toImportCommandOptions(args: ParsedArgs, cwd: string, kind: 'mapping' | 'plan'): ImportCommandOptions {
  const v = args.values;
  const retry = v['retry-rejects'];
  // `run --retry-rejects plan.yaml`: the word after the flag was read as its file.
  if (typeof retry === 'string' && /\.ya?ml$/i.test(retry) && args.positionals.length === 0) {
    throw new FerryError(
      'USAGE',
      `--retry-rejects takes a rejects file, got ${JSON.stringify(retry)}; put the plan before it (\`crm-ferry run PLAN --retry-rejects\`), or give --retry-rejects=FILE`,
    );
  }
  let source: ImportOptionsInput['source'];
  let anchor: string;
  if (kind === 'plan') {
    if (args.positionals.length !== 1)
      throw new FerryError(
        'USAGE',
        `run takes one PLAN file, got ${args.positionals.length === 0 ? 'none' : args.positionals.map((p) => JSON.stringify(p)).join(' ')}`,
      );
    anchor = path(args.positionals[0], cwd) as string;
    source = { kind: 'plan', planFile: anchor };
  } else {
    if (args.positionals.length > 0)
      throw new FerryError(
        'USAGE',
        `import takes no positional arguments (got ${args.positionals.map((p) => JSON.stringify(p)).join(' ')}); for a plan use \`crm-ferry run PLAN\``,
      );
    const mapping = path(v.mapping, cwd);
    const input = inputPath(v.input, cwd);
    if (mapping === undefined || input === undefined)
      throw new FerryError('USAGE', 'import needs --mapping M and --input F');
    anchor = mapping;
    source = { kind: 'mapping', mappingFile: mapping, inputFile: input };
  }
  if (v['delete-missing'] && v.since !== undefined)
    throw new FerryError(
      'USAGE',
      '--delete-missing does not go with --since: a read of what changed cannot tell which records are gone',
    );
  if (v['delete-missing'] && v.limit !== undefined)
    throw new FerryError(
      'USAGE',
      '--delete-missing does not go with --limit: a partial read cannot tell which rows are gone',
    );
  if (v.fresh && v.reconcile)
    throw new FerryError(
      'USAGE',
      '--fresh starts a new state, in which --reconcile finds nothing to look up: give one',
      {
        hint: 'After JOURNAL_CORRUPT, run with --reconcile alone; to adopt records the account had before any run, use `match:` in the mapping.',
      },
    );
  if (retry !== undefined && v.full)
    throw new FerryError('USAGE', '--retry-rejects and --full ask for opposite things; give one');
  const run: ImportOptionsInput = {
    source,
    stateDir: path(v['state-dir'], cwd) ?? defaultStateDir(anchor, cwd),
    dryRun: Boolean(v['dry-run']),
    fresh: Boolean(v.fresh),
    full: Boolean(v.full),
    deleteMissing: Boolean(v['delete-missing']),
    retryRejects: retry !== undefined,
    retryFile: typeof retry === 'string' && retry !== '' ? (path(retry, cwd) as string) : null,
    strict: Boolean(v.strict),
    reconcile: Boolean(v.reconcile),
  };
  const concurrency = wholeNumber(v.concurrency, 'concurrency', 1, 64);
  if (concurrency !== undefined) run.concurrency = concurrency;
  const limit = wholeNumber(v.limit, 'limit', 1, Number.MAX_SAFE_INTEGER);
  if (limit !== undefined) run.limit = limit;
  const transport = {
    connections: concurrency ?? 8,
    giveUpAfterMs: parseDuration(v['give-up-after'], 'give-up-after') ?? DEFAULT_GIVE_UP_AFTER_MS,
  };
  return {
    run,
    json: Boolean(v.json),
    yes: Boolean(v.yes),
    transport,
    v1: { format: v1Format(v['v1-format']), since: parseSince(v.since) },
    anchor,
  };
}

/**
 * Asks before --fresh sets the state aside. The question goes to standard error, so that it is
 * seen when standard output is redirected. Ctrl-D (no answer) is a no; Ctrl-C at the question
 * (the terminal is in raw mode, so no SIGINT comes) or a signal stops the command.
 */
async function confirmFresh(stateDir: string, io: CliIo, yes: boolean): Promise<'yes' | 'no' | 'interrupted'> {
  if (yes) return 'yes';
  const stdin = process.stdin;
  if (io.stderr !== process.stderr || !stdin.isTTY || !process.stderr.isTTY) {
    throw new FerryError(
      'USAGE',
      '--fresh starts over and sets the earlier state aside; add --yes to confirm it in a script',
    );
  }
  const rl = createInterface({ input: stdin, output: process.stderr });
  const stop = new AbortController();
  let ctrlC = false;
  rl.on('SIGINT', () => {
    ctrlC = true;
    stop.abort();
  });
  const onSignal = (): void => stop.abort();
  io.signal.addEventListener('abort', onSignal, { once: true });
  try {
    const answer = await rl.question(
      `Start over? The state in ${stateDir} is moved aside (records already written stay in the account). [y/N] `,
      { signal: stop.signal },
    );
    return /^y(es)?$/i.test(answer.trim()) ? 'yes' : 'no';
  } catch (error) {
    if (!(error instanceof Error && error.name === 'AbortError')) throw error;
    // Ctrl-D leaves the cursor after the question.
    if (!ctrlC) process.stderr.write('\n');
    return ctrlC || io.signal.aborted ? 'interrupted' : 'no';
  } finally {
    io.signal.removeEventListener('abort', onSignal);
    rl.close();
  }
}

async function withClient<T>(
  args: ParsedArgs,
  io: CliIo,
  work: (client: CrmClient, account: AccountIdentity) => Promise<T>,
  transport?: ImportCommandOptions['transport'],
): Promise<T> {
  const { client, session } = await connectWith(args, io, transport);
  try {
    return await work(client, accountOf(client, session?.subdomain));
  } finally {
    await client.close();
  }
}

async function executeImport(options: ImportCommandOptions, args: ParsedArgs, io: CliIo): Promise<number> {
  if (options.run.fresh) {
    const answer = await confirmFresh(options.run.stateDir, io, options.yes);
    if (answer !== 'yes') {
      io.stderr.write('Nothing done.\n');
      return answer === 'interrupted' ? EXIT.INTERRUPTED : EXIT.OK;
    }
  }
  const tty = !options.json && io.stderr === process.stderr && Boolean(process.stderr.isTTY);
  const progress = new ImportProgress(
    options.json ? io.stdout : io.stderr,
    options.json ? 'json' : tty ? 'tty' : 'lines',
  );
  const reportFile = reportPath(args, io.cwd);
  const tally = reportFile ? new (await import('../report/index.ts')).ReasonTally() : null;
  const onEvent = tally
    ? (event: ImportEvent): void => (tally.onImportEvent(event), progress.onEvent(event))
    : progress.onEvent;
  const { runImport } = await import('../load/index.ts');
  const { summary, liveReads, report } = await withClient(
    args,
    io,
    async (client, account) => {
      const usage = reportFile ? await recordUsage(client) : null;
      const v1Live = await v1LiveOf(client, args, io, options.v1, options.transport);
      try {
        const stateStore = stateStoreOf(args, io.env, account, options.anchor);
        const summary = await runImport(
          { ...options.run, stateStore },
          {
            client,
            account,
            signal: io.signal,
            onEvent,
            progressEveryMs: tty || options.json ? 1000 : 30_000,
            v1Live,
          },
        );
        return {
          summary,
          liveReads: v1Live.reads,
          report: usage ? { usage: usage.stop(), account: account.account } : null,
        };
      } finally {
        await v1Live.close();
      }
    },
    options.transport,
  );
  progress.finish();
  if (!options.json) io.stdout.write(printableLines(formatImportSummary(summary, io.cwd, liveReads)));
  if (reportFile && report && tally) {
    const { importReport } = await import('../report/index.ts');
    const source = options.run.source;
    const plan = describeRunSource(source, (path) => shownPath(path, io.cwd));
    const outcome = formatImportSummary(summary, io.cwd, liveReads).trimEnd().split('\n').at(-1) ?? '';
    const input = importReport(summary, {
      command: source.kind === 'plan' ? 'run' : 'import',
      version: version(),
      plan,
      account: report.account,
      usage: report.usage,
      outcome,
      reasons: tally.groups(),
      shown: (p) => shownPath(p, io.cwd),
    });
    await writeCommandReport(reportFile, input, options.json ? io.stderr : io.stdout, io.cwd);
  }
  // The summary says how far it got; the error (printed and mapped to its exit code in one
  // place, like every other) says why it stopped.
  if (summary.stopped) throw summary.stopped;
  return importExitCode(summary);
}

const RUN_FLAGS: OptionSpec = {
  'state-dir': {
    type: 'string',
    value: 'DIR',
    describe:
      'journal, lock and results (default: .crm-ferry beside the mapping or plan; for a ready-made one, .crm-ferry/NAME in the current folder)',
  },
  ...stateKeyFlag,
  concurrency: {
    type: 'string',
    value: 'N',
    describe: 'requests under way at once, 1 to 64, each with its connection (default 8)',
  },
  'give-up-after': {
    type: 'string',
    value: 'TIME',
    describe:
      'the longest the run waits for the service at a time (an outage, a rate-limit pause, one answer of a live v1 source), e.g. 30m, 90s, 2h (default 1h5m)',
  },
  limit: { type: 'string', value: 'N', describe: 'only the first N rows of each step: a sample migration' },
  'dry-run': { type: 'boolean', describe: 'map, resolve names, count the requests and the time; write nothing' },
  full: { type: 'boolean', describe: 'write every row again, even those unchanged since the last run' },
  'delete-missing': {
    type: 'boolean',
    describe: 'delete the records of rows no longer in the input (listed otherwise)',
  },
  'retry-rejects': {
    type: 'string',
    optionalValue: true,
    value: 'FILE',
    describe:
      "only the rows earlier runs rejected, from the fixed input (a plain run takes them again too); with FILE, from a rejects file fixed and fed back (validate's or a run's; in a plan, <step>.rejects.csv is that step's)",
  },
  strict: {
    type: 'boolean',
    describe:
      "with a plan's setup: stop before any write (exit 2) when the account lacks custom fields, task categories, users, teams, project stages or lost reasons the rows name",
  },
  fresh: { type: 'boolean', describe: 'start over; the earlier state is moved aside (asks; --yes in scripts)' },
  reconcile: {
    type: 'boolean',
    describe:
      'look up in the account every row the journal does not know before creating it (after JOURNAL_CORRUPT: a journal cut short or replaced)',
  },
  yes: { type: 'boolean', describe: "answer yes to --fresh's question" },
  json: { type: 'boolean', describe: 'one JSON event per line on stdout' },
  'v1-format': {
    type: 'string',
    value: 'F',
    describe: 'live v1 input (v1+https://HOST, token in CRM_FERRY_V1_TOKEN): ask for xml (default) or json',
  },
  since: {
    type: 'string',
    value: 'TIME',
    describe:
      "live v1 input: only records changed after TIME (2024-05-01, 2024-05-01T12:00:00Z), by the list's lastmodified",
  },
  ...reportFlag,
  ...connectionFlags,
};

const RUN_EPILOG = `Running the same command again goes on where a run stopped, and syncs a changed file: unchanged
rows cost no request, changed rows are updated, new rows created.

A run goes on by itself through a service that fails, drops answers, limits the rate, restarts
or expires the login; a write whose answer was lost is looked up before anything is sent again.

Exit code 0 when every row was written, 3 with rejects (see the rejects file), 4 when the
service was out of reach for longer than --give-up-after or refused the run (run again to go
on), 2 for bad usage or input, 130 when interrupted (143 when stopped by SIGTERM).`;

export const importCommand: Command = {
  name: 'import',
  usage: `Usage: crm-ferry import --mapping M --input F [options] [connection]

Maps every row of F with M and writes it into the account.`,
  epilog: RUN_EPILOG,
  options: {
    mapping: { type: 'string', value: 'M', describe: 'the mapping file', group: 'Input:' },
    input: {
      type: 'string',
      value: 'F',
      describe: 'the file to import, or v1+https://HOST to read a live legacy account',
      group: 'Input:',
    },
    ...RUN_FLAGS,
  },
  async run(args, io) {
    return executeImport(toImportCommandOptions(args, io.cwd, 'mapping'), args, io);
  },
};

export const runCommand: Command = {
  name: 'run',
  usage: `Usage: crm-ferry run PLAN [options] [connection]

Writes every step of the plan; a row starts as soon as the records it links to exist.`,
  epilog: RUN_EPILOG,
  options: RUN_FLAGS,
  async run(args, io) {
    return executeImport(toImportCommandOptions(args, io.cwd, 'plan'), args, io);
  },
};

export const rollbackCommand: Command = {
  name: 'rollback',
  usage: `Usage: crm-ferry rollback [PLAN_OR_MAPPING] [--state-dir DIR] [--all] [--dry-run] [connection]

Deletes the records the last run created (people before their organisations) and sets fields it
updated back to their earlier values. Run it again to go one run further back; an interrupted
rollback is finished by running it again.`,
  options: {
    'state-dir': {
      type: 'string',
      value: 'DIR',
      describe: 'the state folder, as given to run or import (default: as run finds it from the plan or mapping named)',
    },
    ...stateKeyFlag,
    all: { type: 'boolean', describe: 'undo every run kept in the state' },
    'dry-run': { type: 'boolean', describe: 'say what would be done, do nothing' },
    concurrency: { type: 'string', value: 'N', describe: 'requests under way at once, 1 to 64 (default 8)' },
    ...reportFlag,
    ...connectionFlags,
  },
  async run(args, io) {
    const v = args.values;
    if (args.positionals.length > 1) throw new FerryError('USAGE', 'rollback takes at most one PLAN or mapping file');
    const named = path(args.positionals[0], io.cwd);
    const given = path(v['state-dir'], io.cwd);
    // As with `run`: --state-dir, when given, names the state; the plan or mapping only says where
    // its default folder is.
    const stateDir = given ?? (named !== undefined ? defaultStateDir(named, io.cwd) : undefined);
    if (stateDir === undefined)
      throw new FerryError('USAGE', 'rollback needs the PLAN (or mapping) of the run, or --state-dir DIR');
    const dryRun = Boolean(v['dry-run']);
    const concurrency = wholeNumber(v.concurrency, 'concurrency', 1, 64);
    const reportFile = reportPath(args, io.cwd);
    const { runRollback } = await import('../load/index.ts');
    const started = Date.now();
    const { summary, report } = await withClient(
      args,
      io,
      async (client, account) => {
        const usage = reportFile ? await recordUsage(client) : null;
        const summary = await runRollback(
          {
            stateDir,
            stateStore: stateStoreOf(args, io.env, account, named),
            all: Boolean(v.all),
            dryRun,
            ...(concurrency !== undefined ? { concurrency } : {}),
          },
          { client, account, signal: io.signal },
        );
        return { summary, report: usage ? { usage: usage.stop(), account: account.account } : null };
      },
      { connections: concurrency ?? 8, giveUpAfterMs: DEFAULT_GIVE_UP_AFTER_MS },
    );
    const text = formatRollbackSummary(summary, dryRun);
    io.stdout.write(printableLines(text));
    if (reportFile && report) {
      const { rollbackReport } = await import('../report/index.ts');
      const outcome = text
        .trimEnd()
        .split('\n')
        .filter((line) => !line.startsWith('Requests:'))
        .join(' ');
      const input = rollbackReport(summary, {
        version: version(),
        plan: shownPath(stateDir, io.cwd),
        account: report.account,
        usage: report.usage,
        outcome,
        elapsedMs: Date.now() - started,
      });
      await writeCommandReport(reportFile, input, io.stdout, io.cwd);
    }
    return summary.interrupted ? EXIT.INTERRUPTED : EXIT.OK;
  },
};

export const setupCommand: Command = {
  name: 'setup',
  usage: `Usage: crm-ferry setup PLAN [--strict] [--dry-run] [--state-dir DIR] [connection]

Creates what the plan's rows need and the account lacks (pipelines, milestones, activity types,
track definitions; the plan's \`setup:\` lists, plus every name the mapped rows use), once: a name
the account has is left alone. Lists first what the interface cannot create (custom fields, task
categories, users, teams, project stages, lost reasons). \`run\` does the same first when the plan has \`setup:\`; \`rollback\`
removes what it created.`,
  epilog: `Exit code 0 when done, 2 for bad usage or input (and under --strict when the checklist is not
empty: nothing is created then), 4 when the service refused or could not be reached.`,
  options: {
    'state-dir': {
      type: 'string',
      value: 'DIR',
      describe: 'journal of what was created (default: the state folder `run` uses for the plan)',
    },
    ...stateKeyFlag,
    strict: {
      type: 'boolean',
      describe: 'stop before any write (exit 2) when the checklist of what the interface cannot create is not empty',
    },
    'dry-run': { type: 'boolean', describe: 'say what would be created, create nothing' },
    ...connectionFlags,
  },
  async run(args, io) {
    refuseArguments('setup', args, ['PLAN']);
    const planFile = path(args.positionals[0], io.cwd);
    if (planFile === undefined) throw new FerryError('USAGE', 'setup needs the PLAN file');
    const v = args.values;
    const { runSetup } = await import('../load/index.ts');
    const report = await withClient(args, io, (client, account) =>
      runSetup(
        {
          planFile,
          stateDir: path(v['state-dir'], io.cwd) ?? defaultStateDir(planFile, io.cwd),
          stateStore: stateStoreOf(args, io.env, account, planFile),
          dryRun: Boolean(v['dry-run']),
          strict: Boolean(v.strict),
        },
        { client, account, signal: io.signal, onPlan: (plan) => io.stderr.write(formatSetupPlan(plan)) },
      ),
    );
    io.stdout.write(formatSetupReport(report));
    return EXIT.OK;
  },
};
