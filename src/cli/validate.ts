import { isAbsolute, resolve } from 'node:path';
import { bundledValidateDir, isV1LiveInput, printableLines } from '../util/index.ts';
import { EXIT, FerryError } from '../errors/index.ts';
import type { RecordService } from '../client/index.ts';
import { type NameResolver, totalWarnings } from '../mapping/index.ts';
import type { StepReport, ValidateReport } from '../plan/index.ts';
import type { CliIo, Command, ParsedArgs } from './command.ts';
import { fixInInput, fixInRejectsFile } from './rejects-hint.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';
import { reasonLines, warningAndColumnLines } from './import-report.ts';
import { shownPath } from './report-flag.ts';

/** What the flags ask for: one mapping over one input, or a whole plan. */
export type ValidateCommandOptions =
  | { kind: 'mapping'; mapping: string; input: string; rejects: string | undefined; online: boolean; json: boolean }
  | { kind: 'plan'; plan: string; rejectsDir: string | undefined; online: boolean; json: boolean };

const USAGE_HINT =
  'Usage: crm-ferry validate --mapping M --input F [--rejects FILE] | --plan P [--rejects-dir DIR] [--online]';

function usage(message: string): never {
  throw new FerryError('USAGE', message, { hint: USAGE_HINT });
}

/** Builds the options from the flags; every mistake is a USAGE error. */
export function toValidateOptions(args: ParsedArgs, cwd: string): ValidateCommandOptions {
  const v = args.values;
  const text = (name: string): string | undefined => {
    const value = v[name];
    if (value === undefined) return undefined;
    if (typeof value !== 'string' || value === '') usage(`--${name} needs a value`);
    return isAbsolute(value) ? value : resolve(cwd, value);
  };
  if (args.positionals.length > 0)
    usage(`validate takes no positional arguments, got ${args.positionals.map((p) => JSON.stringify(p)).join(' ')}`);
  const online = Boolean(v.online);
  const json = Boolean(v.json);
  const plan = text('plan');
  const mapping = text('mapping');
  if (plan !== undefined) {
    for (const flag of ['mapping', 'input', 'rejects'])
      if (v[flag] !== undefined)
        usage(`--${flag} does not go with --plan: the plan names each step's mapping and input`);
    return { kind: 'plan', plan, rejectsDir: text('rejects-dir'), online, json };
  }
  if (mapping === undefined) usage('give --mapping and --input, or --plan');
  // A live legacy account is an address; reading it is refused further on with what to do instead.
  const input = typeof v.input === 'string' && isV1LiveInput(v.input) ? v.input : text('input');
  if (input === undefined) usage('--mapping needs --input: the file to validate');
  if (v['rejects-dir'] !== undefined) usage('--rejects-dir goes with --plan; with --mapping use --rejects FILE');
  return { kind: 'mapping', mapping, input, rejects: text('rejects'), online, json };
}

function pad(text: string, width: number): string {
  return text.length >= width ? text : text + ' '.repeat(width - text.length);
}

function formatStep(step: StepReport, show: (path: string) => string, lines: string[]): void {
  const count = (label: string, value: number, extra = ''): void => {
    lines.push(`  ${pad(label, 10)}${String(value).padStart(8)}${extra}`);
  };
  count('rows read', step.rowsRead);
  count('ok', step.ok);
  count('skipped', step.skipped);
  count('rejected', step.rejected, step.rejectsFile ? `  -> ${show(step.rejectsFile)}` : '');
  if (step.staleRejects === 'removed')
    lines.push('  (removed the rejects file of an earlier run: its rows are fine now)');
  if (step.staleRejects === 'kept-not-ours')
    lines.push("  (a file with the rejects file's name exists and was not written by crm-ferry; left as it is)");
  lines.push(
    ...warningAndColumnLines(
      step.warnings,
      step.notCarried,
      '  ',
      step.warningsFile === null ? null : show(step.warningsFile),
    ),
  );
  lines.push(...reasonLines(step.reasons));
}

/** The summary as a person reads it. */
export function formatValidateReport(report: ValidateReport, options: { plan?: string; cwd: string }): string {
  const show = (path: string): string => shownPath(path, options.cwd);
  const lines: string[] = [];
  const names = report.online ? 'names checked against the account' : 'offline: names not checked (use --online)';
  if (options.plan !== undefined) {
    lines.push(
      `Plan ${show(options.plan)}: ${report.steps.length} step${report.steps.length === 1 ? '' : 's'} run, ${names}`,
    );
    for (const step of report.steps) {
      lines.push('');
      lines.push(`Step ${step.step}: ${show(step.inputFile)} with ${show(step.mappingFile)}`);
      formatStep(step, show, lines);
    }
  } else {
    const [step] = report.steps;
    if (step) {
      lines.push(`Validated ${show(step.inputFile)} with ${show(step.mappingFile)} (${names})`);
      formatStep(step, show, lines);
    }
  }
  const rejected = report.steps.reduce((sum, s) => sum + s.rejected, 0);
  lines.push('');
  if (report.interrupted)
    lines.push('Interrupted: the counts are partial and no rejects file was written for the step that was running.');
  else
    lines.push(
      rejected === 0
        ? 'All rows are valid.'
        : `${rejected} row${rejected === 1 ? ' was' : 's were'} rejected: ${fixInInput(rejected)}; ${fixInRejectsFile(rejected)}.`,
    );
  const warned = report.steps.reduce((sum, s) => sum + totalWarnings(s.warnings), 0);
  if (!report.interrupted && warned > 0)
    lines.push(
      `${warned} warning${warned === 1 ? '' : 's'}: values left out or kept as typed, links not made, rows merged; each is in the warnings file with its row.`,
    );
  return `${lines.join('\n')}\n`;
}

/** The account's names (as the plan's set-up would leave them), and its records for `match:` lookups, read through one connection. */
async function onlineResolver(
  args: ParsedArgs,
  io: CliIo,
  planFile: string | null,
): Promise<{ resolver: NameResolver; service: RecordService; close: () => Promise<void> }> {
  const { client } = await connectWith(args, io);
  try {
    // A plan's `setup:` runs before its rows: names it would create are no rejects, and its
    // checklist (what only a person can make) is told as `run` tells it.
    const { RecordService } = await import('../client/index.ts');
    const service = new RecordService(client, io.signal);
    if (planFile !== null) {
      const { plannedSetup } = await import('../load/index.ts');
      const setup = await plannedSetup(planFile, client, io.signal);
      if (setup) {
        const { formatSetupPlan } = await import('./import-report.ts');
        io.stderr.write(formatSetupPlan(setup.plan));
        return { resolver: setup.resolver, service, close: () => client.close() };
      }
    }
    const { readNames } = await import('../load/index.ts');
    return { resolver: (await readNames(client)).resolver, service, close: () => client.close() };
  } catch (error) {
    await client.close();
    throw error;
  }
}

function rejectsDirOf(dir: string | undefined): { rejectsDir?: string } {
  return dir === undefined ? {} : { rejectsDir: dir };
}

export const validateCommand: Command = {
  name: 'validate',
  usage: `Usage: crm-ferry validate --mapping M --input F [--rejects FILE] [--online] [connection]
       crm-ferry validate --plan P [--rejects-dir DIR] [--online] [connection]

Maps every row without writing anything to the service: checks the input's columns, every value,
duplicate keys, links between the steps of a plan (in the order the plan runs them) and, with
--online, the names of users, milestones, custom fields ... against the account. Names written
as constants in a mapping are checked before any row is read.

Rejected rows go to a CSV file (UTF-8 with BOM, for Excel) holding the input's columns plus _row,
_field, _code, _message and _raw. Without rejects no file is written, and a rejects file of an
earlier run is removed. A file of the same name that crm-ferry did not write is never replaced.
Warnings (values dropped or kept by onInvalid, links not made, rows merged by onDuplicate) go to
a warnings file beside it with the same columns; the summary counts them by code and names every
column no field reads that holds values.`,
  epilog: `Exit code 0 when every row is valid, 3 when some are rejected, 2 for a broken mapping, plan or
unreadable input, 4 when the service cannot be reached with --online.`,
  options: {
    mapping: { type: 'string', value: 'M', describe: 'the mapping file', group: 'One mapping:' },
    input: { type: 'string', value: 'F', describe: 'the file to validate', group: 'One mapping:' },
    rejects: {
      type: 'string',
      value: 'FILE',
      describe:
        'where rejected rows go (default: rejects.csv beside the input; when the input is that file, rejects.rejects.csv)',
      group: 'One mapping:',
    },
    plan: { type: 'string', value: 'P', describe: 'validate every step of a plan instead', group: 'A plan:' },
    'rejects-dir': {
      type: 'string',
      value: 'DIR',
      describe:
        "folder of the <step>.rejects.csv files (default: the plan's folder; for a ready-made plan, .crm-ferry/NAME/validate in the current folder)",
      group: 'A plan:',
    },
    online: { type: 'boolean', describe: 'also check names against the account (needs a connection)' },
    json: { type: 'boolean', describe: 'print the report as JSON' },
    ...connectionFlags,
  },
  async run(args, io) {
    const options = toValidateOptions(args, io.cwd);
    const { offlineResolver } = await import('../mapping/index.ts');
    const { validateMapping, validatePlan } = await import('../plan/index.ts');
    let resolver: NameResolver = offlineResolver;
    let service: RecordService | undefined;
    let close = async (): Promise<void> => undefined;
    if (options.online)
      ({ resolver, service, close } = await onlineResolver(args, io, options.kind === 'plan' ? options.plan : null));
    const online = service === undefined ? {} : { service };
    let report: ValidateReport;
    try {
      report =
        options.kind === 'plan'
          ? await validatePlan({
              planFile: options.plan,
              resolver,
              signal: io.signal,
              ...online,
              ...rejectsDirOf(options.rejectsDir ?? bundledValidateDir(options.plan, io.cwd)),
            })
          : await validateMapping({
              mappingFile: options.mapping,
              inputFile: options.input,
              resolver,
              signal: io.signal,
              ...online,
              ...(options.rejects ? { rejectsFile: options.rejects } : {}),
            });
    } finally {
      await close();
    }
    if (options.json) io.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
    else
      io.stdout.write(
        printableLines(
          formatValidateReport(report, options.kind === 'plan' ? { plan: options.plan, cwd: io.cwd } : { cwd: io.cwd }),
        ),
      );
    if (report.interrupted) return EXIT.INTERRUPTED;
    return report.steps.some((s) => s.rejected > 0) ? EXIT.ROWS_REJECTED : EXIT.OK;
  },
};
