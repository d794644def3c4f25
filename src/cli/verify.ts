import { EXIT, FerryError } from '../errors/index.ts';
import { describeRunSource } from '../plan/index.ts';
import type { VerifyEvent, VerifyNotCarried, VerifyOptionsInput, VerifySummary } from '../verify/index.ts';
import type { Command, ParsedArgs } from './command.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';
import { accountOf } from '../client/index.ts';
import {
  DEFAULT_GIVE_UP_AFTER_MS,
  inputPath,
  path,
  stateKeyFlag,
  stateStoreOf,
  v1Format,
  v1LiveOf,
  wholeNumber,
} from './flags.ts';
import { recordUsage, relativePath, reportFlag, reportPath, shownPath, writeCommandReport } from './report-flag.ts';
import { notListedText, VERIFY_COUNTS, verifyOutcome } from '../report/index.ts';
import { version } from './version.ts';
import { defaultStateDir, formatCount } from '../util/index.ts';

/** Builds verify's options from its flags: a PLAN, or --mapping and --input, and the state folder rules of `run` and `import`. */
export function toVerifyOptions(args: ParsedArgs, cwd: string): VerifyOptionsInput {
  const v = args.values;
  const mapping = path(v.mapping, cwd);
  const input = inputPath(v.input, cwd);
  let source: VerifyOptionsInput['source'];
  let anchor: string;
  if (args.positionals.length > 0) {
    if (args.positionals.length > 1)
      throw new FerryError(
        'USAGE',
        `verify takes one PLAN file, got ${args.positionals.map((p) => JSON.stringify(p)).join(' ')}`,
      );
    if (mapping !== undefined || input !== undefined)
      throw new FerryError('USAGE', 'give verify a PLAN or --mapping M --input F, not both');
    anchor = path(args.positionals[0], cwd) as string;
    source = { kind: 'plan', planFile: anchor };
  } else {
    if (mapping === undefined || input === undefined)
      throw new FerryError('USAGE', 'verify needs the PLAN of the run, or --mapping M and --input F');
    anchor = mapping;
    source = { kind: 'mapping', mappingFile: mapping, inputFile: input };
  }
  const options: VerifyOptionsInput = {
    source,
    stateDir: path(v['state-dir'], cwd) ?? defaultStateDir(anchor, cwd),
    differencesFile: path(v.differences, cwd) ?? null,
  };
  const concurrency = wholeNumber(v.concurrency, 'concurrency', 1, 64);
  if (concurrency !== undefined) options.concurrency = concurrency;
  return options;
}

/** What verify says before it reads the records: how many requests that takes. */
export function formatVerifyPlan(event: Extract<VerifyEvent, { type: 'plan' }>): string {
  const records = event.steps.reduce((sum, s) => sum + s.records, 0);
  const perStep = event.steps.map((s) => `${s.step} ${formatCount(s.records)}`).join(', ');
  return `Reading ${formatCount(records)} records of the account (${perStep}): ${formatCount(event.requests)} requests, after ${event.requestsForNames} to read the account's names and ${event.requestsForAdded} to list what was created since the first run.\n`;
}

/** Rows and values not carried listed in the summary; the not-carried file has them all. */
export const NOT_CARRIED_SHOWN = 20;

export function formatVerifySummary(summary: VerifySummary, cwd: string, strict = false): string {
  const lines: string[] = [];
  for (const step of summary.steps) {
    lines.push(`Step ${step.step}: ${shownPath(step.inputFile, cwd)} with ${shownPath(step.mappingFile, cwd)}`);
    for (const [key, label] of VERIFY_COUNTS) {
      const value = step[key] as number;
      if (value === 0 && (key === 'skipped' || key === 'notCompared' || key === 'rejected' || key === 'dropped'))
        continue;
      lines.push(`  ${label.padEnd(30)}${String(value).padStart(9)}`);
    }
    lines.push('');
  }
  if (!summary.matches)
    lines.push(
      `Differences: ${formatCount(summary.differences.length)}  -> ${shownPath(summary.differencesFile, cwd)}`,
    );
  if (summary.notCarried.length > 0) {
    lines.push(
      `Not carried, by decision: ${formatCount(summary.notCarried.length)}  -> ${shownPath(summary.notCarriedFile, cwd)}`,
    );
    for (const item of summary.notCarried.slice(0, NOT_CARRIED_SHOWN)) lines.push(`  ${notCarriedLine(item)}`);
    if (summary.notCarried.length > NOT_CARRIED_SHOWN)
      lines.push(`  ... and ${formatCount(summary.notCarried.length - NOT_CARRIED_SHOWN)} more in the file.`);
  }
  for (const item of summary.notListed) lines.push(notListedText(item));
  lines.push(
    `Requests: ${formatCount(summary.requests)} (${summary.requestsForNames} to read the account's names, ${formatCount(summary.requests - summary.requestsForNames)} for the records); elapsed ${(summary.elapsedMs / 1000).toFixed(1)} s.`,
  );
  lines.push(verifyOutcome(summary, strict));
  return `${lines.join('\n')}\n`;
}

/** One row or value not carried, as the summary lists it: where, and the reason in the data owner's words. */
export function notCarriedLine(item: VerifyNotCarried): string {
  const what = item.kind === 'rejected' ? 'row not carried' : 'value left out';
  // A row with several reasons says each on a line of its own.
  return `${item.step}, row ${item.row}${item.key === '' ? '' : ` (${item.key})`}: ${what}: ${item.reason.replaceAll('\n', '\n    ')}`;
}

export const verifyCommand: Command = {
  name: 'verify',
  usage: `Usage: crm-ferry verify PLAN [options] [connection]
   or: crm-ferry verify --mapping M --input F [options] [connection]

Reads the source again and the account's records (by the ids in the state's journal), and says per
step what is missing, extra, differs, or links nowhere. Writes nothing to the account.`,
  epilog: `The requests it needs are said before the records are read: one per 100 parties, projects or
opportunities (a filter by id), one per note or task. Looking for records added by hand since the
first run takes one per 100 of them, and for notes and tasks one per 100 of the account's, at most
one per 100 the runs wrote and one more.

Rows the runs rejected and values they left out (onInvalid: drop, links not made, owners unknown)
are not differences: they were not carried by decision, and are listed with their reasons in the
not-carried file beside the differences file, in the summary and in the report.

Exit code 0 when nothing differs (whatever was not carried), 3 when something differs (see the
differences file) or, with --strict, when something was not carried; 4 when the service refused or
could not be reached, 2 for bad usage or input, 130 interrupted (nothing was written: run it again).`,
  options: {
    mapping: { type: 'string', value: 'M', describe: 'the mapping of an import (instead of a PLAN)', group: 'Input:' },
    input: {
      type: 'string',
      value: 'F',
      describe: 'the file of an import (instead of a PLAN), or v1+https://HOST',
      group: 'Input:',
    },
    'v1-format': {
      type: 'string',
      value: 'F',
      describe: 'live v1 input (token in CRM_FERRY_V1_TOKEN): ask for xml (default) or json',
    },
    'state-dir': {
      type: 'string',
      value: 'DIR',
      describe: 'the state folder of the run (default: as run finds it from the plan or mapping)',
    },
    ...stateKeyFlag,
    differences: {
      type: 'string',
      value: 'FILE',
      describe: 'where the CSV of the differences goes (default: results/verify.differences.csv in the state folder)',
    },
    concurrency: { type: 'string', value: 'N', describe: 'requests under way at once, 1 to 64 (default 8)' },
    strict: {
      type: 'boolean',
      describe: 'rows and values not carried (rejected or left out by the runs) count as differences: exit 3',
    },
    json: { type: 'boolean', describe: 'the plan and the summary as JSON lines on stdout' },
    ...reportFlag,
    ...connectionFlags,
  },
  async run(args, io) {
    const options = toVerifyOptions(args, io.cwd);
    const reportFile = reportPath(args, io.cwd);
    const json = Boolean(args.values.json);
    const onEvent = (event: VerifyEvent): void => {
      if (json)
        io.stdout.write(
          `${JSON.stringify(event.type === 'end' ? { type: 'end', summary: { ...event.summary, differences: event.summary.differences.length, notCarried: event.summary.notCarried.length } } : event)}\n`,
        );
      else if (event.type === 'plan') io.stderr.write(formatVerifyPlan(event));
    };
    const v1 = { format: v1Format(args.values['v1-format']), since: undefined };
    const { runVerify } = await import('../verify/index.ts');
    // Reads wait out an outage like an import does, on as many connections as requests under way.
    const { client, session } = await connectWith(args, io, {
      connections: options.concurrency ?? 8,
      giveUpAfterMs: DEFAULT_GIVE_UP_AFTER_MS,
    });
    let summary: VerifySummary;
    let report: { usage: import('../report/index.ts').UsageSample[]; account: string } | null = null;
    try {
      const account = accountOf(client, session?.subdomain);
      const usage = reportFile ? await recordUsage(client) : null;
      // A live legacy input is read as the run read it (XML unless told), all of it.
      const v1Live = await v1LiveOf(client, args, io, v1);
      try {
        const { source } = options;
        const anchor =
          source.kind === 'plan' ? source.planFile : source.kind === 'mapping' ? source.mappingFile : undefined;
        const stateStore = stateStoreOf(args, io.env, account, anchor);
        summary = await runVerify({ ...options, stateStore }, { client, account, signal: io.signal, onEvent, v1Live });
      } finally {
        await v1Live.close();
      }
      if (usage) report = { usage: usage.stop(), account: account.account };
    } finally {
      await client.close();
    }
    const strict = Boolean(args.values.strict);
    if (!json) io.stdout.write(formatVerifySummary(summary, io.cwd, strict));
    if (reportFile && report) {
      const { verifyReport } = await import('../report/index.ts');
      const source = options.source;
      // The page names every file relative to where the command ran, as the person typed them.
      const shown = (p: string): string => relativePath(p, io.cwd);
      const plan = describeRunSource(source, shown);
      const input = verifyReport(summary, {
        version: version(),
        plan,
        account: report.account,
        usage: report.usage,
        outcome: verifyOutcome(summary, strict),
        strict,
        shown,
      });
      await writeCommandReport(reportFile, input, json ? io.stderr : io.stdout, io.cwd);
    }
    return summary.matches && !(strict && summary.notCarried.length > 0) ? EXIT.OK : EXIT.ROWS_REJECTED;
  },
};
