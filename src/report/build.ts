import type { ImportEvent, ImportSummary, RollbackSummary, StepCounts, StepSummary } from '../load/index.ts';
import { reasonText } from '../mapping/index.ts';
import type { VerifySummary } from '../verify/index.ts';
import type { ReportNotCarried, ReasonExample, ReasonGroup, ReportCount, ReportInput, ReportStep } from './html.ts';
import type { UsageSample } from './quota-usage.ts';
import { formatCount } from '../util/index.ts';

/** Examples kept per reason. */
export const EXAMPLES_PER_REASON = 3;

/** What every report says about where it comes from; the rest comes from the command's summary. */
export interface ReportContext {
  version: string;
  plan: string;
  account: string;
  usage: UsageSample[];
  finishedAt?: Date;
  /** Paths as the person reads them (relative to where the command ran). */
  shown?: (path: string) => string;
}

/**
 * Counts the rows of a run by reason as its events go by: rejects (with the code and message the
 * rejects file has), and warnings where the events carry them; a few rows of each as examples.
 */
export class ReasonTally {
  readonly #groups = new Map<string, ReasonGroup>();

  add(step: string, kind: ReasonGroup['kind'], code: string, example: ReasonExample): void {
    const id = `${step}\u0000${kind}\u0000${code}`;
    let group = this.#groups.get(id);
    if (!group) {
      group = { step, kind, code, count: 0, examples: [] };
      this.#groups.set(id, group);
    }
    group.count += 1;
    if (group.examples.length < EXAMPLES_PER_REASON) group.examples.push(example);
  }

  /** Feed it the importer's events (`onEvent`). */
  onImportEvent = (event: ImportEvent): void => {
    if (event.type !== 'row') return;
    if (event.action === 'rejected')
      this.add(event.step, 'rejected', event.code ?? 'UNKNOWN', {
        row: event.row,
        key: event.key,
        field: '',
        message: event.reason ?? event.message ?? '',
      });
    // Warnings travel on row events where the importer attaches them.
    for (const w of event.warnings ?? [])
      this.add(event.step, 'warning', w.code, {
        row: event.row,
        key: event.key,
        field: w.field,
        message: reasonText(w),
      });
  };

  groups(): ReasonGroup[] {
    return [...this.#groups.values()];
  }
}

/** The import summary's counts, in the order and words of the text summary. */
export const IMPORT_COUNTS: Array<[keyof StepCounts, string]> = [
  ['rowsRead', 'rows read'],
  ['created', 'created'],
  ['updated', 'updated'],
  ['unchanged', 'unchanged'],
  ['matched', 'matched'],
  ['deleted', 'deleted'],
  ['skipped', 'skipped'],
  ['repeated', 'same record again'],
  ['rejected', 'rejected'],
  ['missing', 'gone from input'],
  ['notReached', 'not reached'],
];

function counts<T extends object>(summary: T, list: ReadonlyArray<readonly [keyof T & string, string]>): ReportCount[] {
  return list.map(([key, label]) => ({ key, label, value: Number(summary[key] ?? 0) }));
}

/** The warnings by code that a step summary carries, when the importer counts them. */
function warningsOf(step: object): Record<string, number> | undefined {
  const warnings = (step as { warnings?: unknown }).warnings;
  if (warnings === null || typeof warnings !== 'object') return undefined;
  return Object.fromEntries(
    Object.entries(warnings as Record<string, unknown>).filter(([, n]) => typeof n === 'number'),
  ) as Record<string, number>;
}

function base(context: ReportContext) {
  return {
    version: context.version,
    plan: context.plan,
    account: context.account,
    usage: context.usage,
    finishedAt: context.finishedAt ?? new Date(),
  };
}

function sourceOf(step: { inputFile: string; mappingFile: string }, shown: (path: string) => string): string {
  return `${shown(step.inputFile)} with ${shown(step.mappingFile)}`;
}

/**
 * The report of `run` or `import`. `outcome` is the closing line of the text summary; the rejects
 * come by reason from a ReasonTally fed the run's events.
 */
export function importReport(
  summary: ImportSummary,
  context: ReportContext & { command: 'run' | 'import'; outcome: string; reasons: ReasonGroup[] },
): ReportInput {
  const shown = context.shown ?? ((p: string) => p);
  const steps: ReportStep[] = summary.steps.map((step) => {
    const reportStep: ReportStep = {
      name: step.step,
      source: sourceOf(step, shown),
      counts: counts<StepSummary>(step, IMPORT_COUNTS),
    };
    const warnings = warningsOf(step);
    if (warnings) reportStep.warnings = warnings;
    return reportStep;
  });
  const notCarried: ReportNotCarried[] = [];
  for (const step of summary.steps) {
    const rejects = step.rejectsFile ? shown(step.rejectsFile) : undefined;
    notCarried.push({
      step: step.step,
      what: 'rows rejected: not written',
      count: step.rejected,
      ...(rejects ? { where: rejects } : {}),
    });
    notCarried.push({ step: step.step, what: "rows left out by the mapping's skip condition", count: step.skipped });
    notCarried.push({ step: step.step, what: 'rows not reached: the run stopped before them', count: step.notReached });
    const success = step.successFile ? { where: shown(step.successFile) } : {};
    notCarried.push({
      step: step.step,
      what: 'records of rows no longer in the input: kept in the account, not updated',
      count: step.missing,
      ...success,
    });
    const warned = Object.values(warningsOf(step) ?? {}).reduce((sum, n) => sum + n, 0);
    notCarried.push({
      step: step.step,
      what: 'warnings on rows written with something left out or changed',
      count: warned,
      ...success,
    });
    // Columns no field of the mapping reads, though rows hold values there.
    for (const column of step.notCarried) {
      notCarried.push({
        step: step.step,
        what: `column "${column.column}": ${column.reason === undefined ? 'no field reads it' : `left out: ${column.reason}`}`,
        count: column.rows,
      });
    }
  }
  const rejected = summary.steps.reduce((sum, s) => sum + s.rejected, 0);
  const files = summary.steps.flatMap((s) => [
    ...(s.successFile ? [{ label: `${s.step}: results`, path: shown(s.successFile) }] : []),
    ...(s.rejectsFile ? [{ label: `${s.step}: rejects`, path: shown(s.rejectsFile) }] : []),
  ]);
  return {
    ...base(context),
    command: context.command,
    elapsedMs: summary.elapsedMs,
    requests: summary.requests,
    outcome: {
      text: summary.stopped
        ? `${context.outcome} (${summary.stopped.code}: ${summary.stopped.message})`
        : context.outcome,
      status: summary.stopped || summary.interrupted ? 'stopped' : rejected > 0 ? 'attention' : 'ok',
    },
    steps,
    reasons: context.reasons,
    notCarried,
    files,
  };
}

export const VERIFY_COUNTS: Array<[keyof VerifySummary['steps'][number] & string, string]> = [
  ['rows', 'rows in the source'],
  ['skipped', 'skipped by the mapping'],
  ['carried', 'in the account as in the file'],
  ['found', 'records found'],
  ['missing', 'missing'],
  ['extra', 'extra'],
  ['differing', 'differing'],
  ['unresolved', 'links unresolved'],
  ['notCompared', 'left alone (onMatch: skip)'],
  ['rejected', 'rows not carried'],
  ['dropped', 'values not carried'],
];

function plural(count: number, one: string, many = `${one}s`): string {
  return `${formatCount(count)} ${count === 1 ? one : many}`;
}

/**
 * The answer to "is my data there?", first on the page and last in the summary: how many rows are
 * in the account as in the file, what was not carried by decision (each with its reason), and the
 * differences. `strict`: what was not carried counts as a difference (`verify --strict`).
 */
export function verifyOutcome(
  summary: Pick<VerifySummary, 'steps' | 'differences' | 'notCarried'>,
  strict = false,
): string {
  const expected = summary.steps.reduce((sum, s) => sum + s.rows - s.skipped, 0);
  const carried = summary.steps.reduce((sum, s) => sum + s.carried, 0);
  const rejected = summary.steps.reduce((sum, s) => sum + s.rejected, 0);
  const dropped = summary.steps.reduce((sum, s) => sum + s.dropped, 0);
  const parts = [
    `${formatCount(carried)} of ${plural(expected, 'row')} ${carried === 1 ? 'is' : 'are'} in the account as in the file`,
  ];
  if (rejected > 0)
    parts.push(`${plural(rejected, 'row')} ${rejected === 1 ? 'was' : 'were'} not carried, each for the reason listed`);
  if (dropped > 0)
    parts.push(
      `${plural(dropped, 'value')} ${dropped === 1 ? 'was' : 'were'} left out of the records written, each for the reason listed`,
    );
  const alone = summary.steps.reduce((sum, s) => sum + s.notCompared, 0);
  if (alone > 0)
    parts.push(
      `${plural(alone, 'row')} found ${alone === 1 ? 'its record' : 'their records'} in the account and left ${alone === 1 ? 'it' : 'them'} as ${alone === 1 ? 'it was' : 'they were'} (onMatch: skip)`,
    );
  const n = summary.differences.length;
  const facts = `${parts.join('; ')}.`;
  if (n > 0)
    return `The account differs from the file: ${plural(n, 'difference')}, each in the differences file. ${facts}`;
  if (strict && rejected + dropped > 0) return `No difference, but --strict counts what was not carried: ${facts}`;
  return rejected + dropped > 0 ? `No difference: ${facts}` : `The account holds what the file holds: ${facts}`;
}

/**
 * What verify did not look at: notes or tasks past the cap of their listing, where one added by
 * hand is not seen. Said in these words by the summary and by the report.
 */
export function notListedText({ entity, listed }: VerifySummary['notListed'][number]): string {
  const kind = entity === 'entry' ? 'notes' : 'tasks';
  return `${entity === 'entry' ? 'Notes' : 'Tasks'} added by hand: looked for among the first ${formatCount(listed)} ${kind} the account lists, a request for every 100 the runs wrote and one more; the account holds more, and one added beyond them is not seen.`;
}

/**
 * The report of `verify`: its answer first (verifyOutcome), its counts, every difference (the page
 * lists the first DIFFERENCES_SHOWN), and the rows and values not carried with their reasons.
 */
export function verifyReport(
  summary: VerifySummary,
  context: ReportContext & { outcome: string; strict?: boolean },
): ReportInput {
  const shown = context.shown ?? ((p: string) => p);
  const attention = !summary.matches || (context.strict === true && summary.notCarried.length > 0);
  return {
    ...base(context),
    command: 'verify',
    elapsedMs: summary.elapsedMs,
    requests: summary.requests,
    outcome: { text: context.outcome, status: attention ? 'attention' : 'ok' },
    steps: summary.steps.map((step) => ({
      name: step.step,
      source: sourceOf(step, shown),
      counts: counts(step, VERIFY_COUNTS),
    })),
    reasons: [],
    notCarried: summary.steps.flatMap((step) => [
      {
        step: step.step,
        what: 'rows not carried: rejected by the runs, each for its reason',
        count: step.rejected,
        where: shown(summary.notCarriedFile),
      },
      {
        step: step.step,
        what: 'values left out of the records written, each for its reason',
        count: step.dropped,
        where: shown(summary.notCarriedFile),
      },
    ]),
    differences: summary.differences,
    differencesFile: shown(summary.differencesFile),
    notCarriedItems: summary.notCarried,
    notCarriedFile: shown(summary.notCarriedFile),
    notChecked: summary.notListed.map((item) => ({ what: item.entity, text: notListedText(item) })),
    files: [
      { label: 'differences', path: shown(summary.differencesFile) },
      { label: 'not carried, with reasons', path: shown(summary.notCarriedFile) },
    ],
  };
}

/** The report of `rollback`: records deleted and restored per step. */
export function rollbackReport(
  summary: RollbackSummary,
  context: ReportContext & { outcome: string; elapsedMs: number },
): ReportInput {
  return {
    ...base(context),
    command: 'rollback',
    elapsedMs: context.elapsedMs,
    requests: summary.requests,
    outcome: { text: context.outcome, status: summary.interrupted ? 'stopped' : 'ok' },
    steps: summary.steps.map((step) => ({
      name: step.step,
      source: null,
      counts: [
        { key: 'deleted', label: 'records deleted', value: step.deleted },
        { key: 'restored', label: 'records set back', value: step.restored },
      ],
    })),
    reasons: [],
    notCarried: [],
  };
}
