import { EXIT, FerryError } from '../errors/index.ts';
import type { VerifyEvent, VerifyOptionsInput, VerifySummary } from '../verify/index.ts';
import type { Command, ParsedArgs } from './command.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';
import { accountOf, DEFAULT_GIVE_UP_AFTER_MS, defaultStateDir, inputPath, path, v1Format, v1LiveOf, wholeNumber } from './import.ts';
import { recordUsage, reportFlag, reportPath, shownPath, writeCommandReport } from './report-flag.ts';
import { notListedText, VERIFY_COUNTS } from '../report/index.ts';
import { version } from './version.ts';

/** Builds verify's options from its flags: a PLAN, or --mapping and --input, and the state folder rules of `run` and `import`. */
export function toVerifyOptions(args: ParsedArgs, cwd: string): VerifyOptionsInput {
  const v = args.values;
  const mapping = path(v.mapping, cwd);
  const input = inputPath(v.input, cwd);
  let source: VerifyOptionsInput['source'];
  let anchor: string;
  if (args.positionals.length > 0) {
    if (args.positionals.length > 1) throw new FerryError('USAGE', `verify takes one PLAN file, got ${args.positionals.map((p) => JSON.stringify(p)).join(' ')}`);
    if (mapping !== undefined || input !== undefined) throw new FerryError('USAGE', 'give verify a PLAN or --mapping M --input F, not both');
    anchor = path(args.positionals[0], cwd) as string;
    source = { kind: 'plan', planFile: anchor };
  } else {
    if (mapping === undefined || input === undefined) throw new FerryError('USAGE', 'verify needs the PLAN of the run, or --mapping M and --input F');
    anchor = mapping;
    source = { kind: 'mapping', mappingFile: mapping, inputFile: input };
  }
  const options: VerifyOptionsInput = { source, stateDir: path(v['state-dir'], cwd) ?? defaultStateDir(anchor, cwd), differencesFile: path(v.differences, cwd) ?? null };
  const concurrency = wholeNumber(v.concurrency, 'concurrency', 1, 64);
  if (concurrency !== undefined) options.concurrency = concurrency;
  return options;
}


/** What verify says before it reads the records: how many requests that takes. */
export function formatVerifyPlan(event: Extract<VerifyEvent, { type: 'plan' }>): string {
  const records = event.steps.reduce((sum, s) => sum + s.records, 0);
  const perStep = event.steps.map((s) => `${s.step} ${s.records.toLocaleString('en-GB')}`).join(', ');
  return `Reading ${records.toLocaleString('en-GB')} records of the account (${perStep}): ${event.requests.toLocaleString('en-GB')} requests, after ${event.requestsForNames} to read the account's names and ${event.requestsForAdded} to list what was created since the first run.\n`;
}

/** The closing line: whether the account holds what the source holds. */
export function verifyOutcome(summary: VerifySummary): string {
  if (summary.matches) return 'The account holds what the source holds.';
  const n = summary.differences.length;
  return `The account differs from the source: ${n.toLocaleString('en-GB')} difference${n === 1 ? '' : 's'}, each in the differences file.`;
}

export function formatVerifySummary(summary: VerifySummary, cwd: string): string {
  const lines: string[] = [];
  for (const step of summary.steps) {
    lines.push(`Step ${step.step}: ${shownPath(step.inputFile, cwd)} with ${shownPath(step.mappingFile, cwd)}`);
    for (const [key, label] of VERIFY_COUNTS) {
      const value = step[key] as number;
      if (value === 0 && (key === 'skipped' || key === 'notCompared')) continue;
      lines.push(`  ${label.padEnd(26)}${String(value).padStart(9)}`);
    }
    lines.push('');
  }
  if (!summary.matches) lines.push(`Differences: ${summary.differences.length.toLocaleString('en-GB')}  -> ${shownPath(summary.differencesFile, cwd)}`);
  for (const item of summary.notListed) lines.push(notListedText(item));
  lines.push(`Requests: ${summary.requests.toLocaleString('en-GB')} (${summary.requestsForNames} to read the account's names, ${(summary.requests - summary.requestsForNames).toLocaleString('en-GB')} for the records); elapsed ${(summary.elapsedMs / 1000).toFixed(1)} s.`);
  lines.push(verifyOutcome(summary));
  return `${lines.join('\n')}\n`;
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

Exit code 0 when the account matches the source, 3 when it differs (see the differences file),
4 when the service refused or could not be reached, 2 for bad usage or input, 130 interrupted (nothing
was written: run it again).`,
  options: {
    mapping: { type: 'string', value: 'M', describe: 'the mapping of an import (instead of a PLAN)', group: 'Input:' },
    input: { type: 'string', value: 'F', describe: 'the file of an import (instead of a PLAN), or v1+https://HOST', group: 'Input:' },
    'v1-format': { type: 'string', value: 'F', describe: 'live v1 input (token in CRM_FERRY_V1_TOKEN): ask for xml (default) or json' },
    'state-dir': { type: 'string', value: 'DIR', describe: 'the state folder of the run (default: as run finds it from the plan or mapping)' },
    differences: { type: 'string', value: 'FILE', describe: 'where the CSV of the differences goes (default: results/verify.differences.csv in the state folder)' },
    concurrency: { type: 'string', value: 'N', describe: 'requests under way at once, 1 to 64 (default 8)' },
    json: { type: 'boolean', describe: 'the plan and the summary as JSON lines on stdout' },
    ...reportFlag,
    ...connectionFlags,
  },
  async run(args, io) {
    const options = toVerifyOptions(args, io.cwd);
    const reportFile = reportPath(args, io.cwd);
    const json = Boolean(args.values.json);
    const onEvent = (event: VerifyEvent): void => {
      if (json) io.stdout.write(`${JSON.stringify(event.type === 'end' ? { type: 'end', summary: { ...event.summary, differences: event.summary.differences.length } } : event)}\n`);
      else if (event.type === 'plan') io.stderr.write(formatVerifyPlan(event));
    };
    const v1 = { format: v1Format(args.values['v1-format']), since: undefined };
    const { runVerify } = await import('../verify/index.ts');
    // Reads wait out an outage like an import does, on as many connections as requests under way.
    const { client, session } = await connectWith(args, io, { connections: options.concurrency ?? 8, giveUpAfterMs: DEFAULT_GIVE_UP_AFTER_MS });
    let summary: VerifySummary;
    let report: { usage: import('../report/index.ts').UsageSample[]; account: string } | null = null;
    try {
      const account = accountOf(client, session?.subdomain);
      const usage = reportFile ? await recordUsage(client) : null;
      // A live legacy input is read as the run read it (XML unless told), all of it.
      const v1Live = await v1LiveOf(client, args, io, v1);
      try {
        summary = await runVerify(options, { client, account, signal: io.signal, onEvent, v1Live });
      } finally {
        await v1Live.close();
      }
      if (usage) report = { usage: usage.stop(), account: account.account };
    } finally {
      await client.close();
    }
    if (!json) io.stdout.write(formatVerifySummary(summary, io.cwd));
    if (reportFile && report) {
      const { verifyReport } = await import('../report/index.ts');
      const source = options.source;
      const plan = source.kind === 'plan' ? shownPath(source.planFile, io.cwd) : `${shownPath(source.inputFile, io.cwd)} with ${shownPath(source.mappingFile, io.cwd)}`;
      const input = verifyReport(summary, { version: version(), plan, account: report.account, usage: report.usage, outcome: verifyOutcome(summary), shown: (p) => shownPath(p, io.cwd) });
      await writeCommandReport(reportFile, input, json ? io.stderr : io.stdout, io.cwd);
    }
    return summary.matches ? EXIT.OK : EXIT.ROWS_REJECTED;
  },
};
