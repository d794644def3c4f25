import { EXIT, exitCodeFor } from '../errors/index.ts';
import { fixInInput, fixInRejectsFile } from './rejects-hint.ts';
import {
  type ChecklistItem,
  type ImportEvent,
  type ImportSummary,
  KIND_WORDS,
  type RollbackSummary,
  type SetupPlan,
  type SetupReport,
} from '../load/index.ts';
import { IMPORT_COUNTS as COUNTS } from '../report/index.ts';
import { WARNING_CODES, type WarningCounts } from '../mapping/index.ts';
import { notCarriedLines, type NotCarried, type RejectReason } from '../plan/index.ts';
import { describeWaits, ProgressLine } from './progress-line.ts';
import { shownPath as shown } from './report-flag.ts';
import { formatCount } from '../util/index.ts';

/**
 * What a step's records go without or carry in another form, and the columns no field reads:
 * lines shared by the summaries of run and validate, so that both say it the same way.
 */
export function warningAndColumnLines(
  warnings: WarningCounts,
  notCarried: readonly NotCarried[],
  indent = '  ',
  file: string | null = null,
): string[] {
  const lines: string[] = [];
  const codes = WARNING_CODES.filter((code) => warnings[code] > 0);
  if (codes.length > 0) {
    lines.push(`${indent}warnings:${file === null ? '' : `  -> ${file}`}`);
    for (const code of codes) lines.push(`${indent}  ${String(warnings[code]).padStart(7)}  ${code}`);
  }
  lines.push(...notCarriedLines(notCarried, indent));
  return lines;
}

/** Top reasons shown per step; the rejects file has them all. */
const TOP_REASONS = 10;

/**
 * A step's rejected rows by reason, the most frequent first, each with its count, code and the
 * first row's reason in the data owner's words: shared by the summaries of run and validate.
 */
export function reasonLines(reasons: readonly RejectReason[], indent = '  '): string[] {
  if (reasons.length === 0) return [];
  const lines = [
    reasons.length > TOP_REASONS ? `${indent}top reasons (${TOP_REASONS} of ${reasons.length}):` : `${indent}reasons:`,
  ];
  const width = Math.max(...reasons.map((r) => String(r.count).length));
  for (const reason of reasons.slice(0, TOP_REASONS)) {
    lines.push(
      `${indent}  ${String(reason.count).padStart(width)}  ${reason.code}: ${reason.example} (first at row ${reason.firstRow})`,
    );
  }
  if (reasons.some((reason) => reason.byService))
    lines.push(
      `${indent}  (${reasons
        .filter((r) => r.byService)
        .map((r) => r.code)
        .join(', ')}: refused by the service when sent, which only it could tell; validate checks everything else)`,
    );
  return lines;
}

function plural(count: number, word: string): string {
  return `${formatCount(count)} ${word}${count === 1 ? '' : 's'}`;
}

function seconds(ms: number): string {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const minutes = Math.floor(ms / 60_000);
  return minutes < 60
    ? `${minutes} min ${Math.round((ms % 60_000) / 1000)} s`
    : `${Math.floor(minutes / 60)} h ${minutes % 60} min`;
}

/** What a run's requests go to (or a dry run's would): the account's names, once a run; the set-up's creates; the rows. */
function requestParts(names: number, setup: number, all: number, namesRead = 'once'): string {
  const rows = all - names - setup;
  return `${names} to read the account's names ${namesRead}, ${setup > 0 ? `${setup} for the set-up, ` : ''}${formatCount(rows)} for the rows`;
}

/** Records written by a run: what requests per record are counted against. */
function written(summary: ImportSummary): number {
  return summary.steps.reduce((sum, s) => sum + s.created + s.updated + s.deleted, 0);
}

/** The checklist as lines for a person: what to make in the account by hand, and why. */
function formatChecklist(checklist: readonly ChecklistItem[]): string {
  if (checklist.length === 0) return '';
  const lines = checklist.map(
    (item) =>
      `  [ ] ${KIND_WORDS[item.kind]} \`${item.name}\`${item.scope ? ` (${item.scope})` : ''}: named by ${item.rows} row${item.rows === 1 ? '' : 's'} of ${item.steps.join(', ')}`,
  );
  return `The account lacks ${checklist.length} thing${checklist.length === 1 ? '' : 's'} the interface cannot create; make ${checklist.length === 1 ? 'it' : 'them'} in the service before the run, or the rows that name ${checklist.length === 1 ? 'it' : 'them'} are rejected:\n${lines.join('\n')}\n`;
}

/** A set-up's plan, told before anything is written: what it creates (or found), and the checklist. */
export function formatSetupPlan(plan: SetupPlan): string {
  const lines: string[] = [];
  if (plan.create.length === 0) {
    // One line when there is nothing to do; formatSetupReport adds none after it.
    lines.push(
      plan.present === 0
        ? 'Set-up: nothing to create: the plan and its rows name no pipeline, milestone, activity type or track definition.'
        : `Set-up: nothing to create: the account has the ${plural(plan.present, 'name')} the plan and its rows use.`,
    );
  } else {
    lines.push(
      `Set-up: ${plural(plan.create.length, 'thing')} to create${plan.present > 0 ? ` (${plan.present} found already)` : ''}:`,
    );
    for (const item of plan.create) {
      const where = item.kind === 'milestone' && item.pipeline ? ` in pipeline ${item.pipeline}` : '';
      lines.push(
        `  ${KIND_WORDS[item.kind]} \`${item.name}\`${where} (${item.origin === 'plan' ? 'listed in the plan' : 'named by the rows'})`,
      );
    }
  }
  return `${lines.join('\n')}\n${formatChecklist(plan.checklist)}`;
}

/**
 * What a set-up did, after it; nothing when it had nothing to do (formatSetupPlan said so in its
 * one line). Items an interrupted set-up had made and this one found are reported as created.
 */
export function formatSetupReport(report: SetupReport): string {
  if (report.dryRun)
    return report.create.length === 0
      ? ''
      : `Set-up (dry run): ${plural(report.create.length, 'thing')} would be created; nothing was.\n`;
  if (report.created.length === 0) return '';
  return `Set-up: created ${report.created.map((c) => `${KIND_WORDS[c.kind]} \`${c.name}\` (id ${c.id})`).join(', ')}.\n`;
}

/**
 * What to do about rejected rows. Every run takes the rows the journal holds as rejected again
 * (they have no record to be unchanged against), so the same command, run again once the input
 * or the mapping is fixed, writes them; --retry-rejects only narrows a run to them.
 */
function rejectedHint(rejected: number, retryRejects: boolean): string {
  const fix = `${plural(rejected, 'row')} rejected: ${fixInInput(rejected)}`;
  return `${retryRejects ? fix : `${fix}: rejected rows are taken again, rows already written cost no request (add --retry-rejects to take only the rejected rows)`}; ${fixInRejectsFile(rejected)}.`;
}

/**
 * The end of a run (or a dry run) as a person reads it: counts per step, requests, time, and where
 * the results are.
 * @param liveReads the requests that read live v1 inputs (a live account read through the dry run
 *   is read again by the run, at the same cost). @default 0
 * @param namesRead how often the account's names were read: `once a run` for a summary that joins
 *   several runs (a restore), each of which reads them. @default 'once'
 */
export function formatImportSummary(summary: ImportSummary, cwd: string, liveReads = 0, namesRead = 'once'): string {
  const lines: string[] = [];
  const dry = summary.dryRun;
  lines.push(
    dry
      ? `Dry run: nothing was written to the account.`
      : `Run ${summary.run} (state: ${shown(summary.stateDir, cwd)})`,
  );
  if (summary.setup) lines.push(formatSetupReport(summary.setup).trimEnd());
  for (const step of summary.steps) {
    lines.push('', `Step ${step.step}: ${shown(step.inputFile, cwd)} with ${shown(step.mappingFile, cwd)}`);
    for (const [key, label] of COUNTS) {
      const value = step[key];
      if (value === 0 && !['rowsRead', 'created', 'rejected'].includes(key)) continue;
      const label2 =
        dry && (key === 'created' || key === 'updated') ? `to ${key === 'created' ? 'create' : 'update'}` : label;
      const file = key === 'rejected' && step.rejectsFile ? `  -> ${shown(step.rejectsFile, cwd)}` : '';
      lines.push(`  ${label2.padEnd(16)}${String(value).padStart(9)}${file}`);
    }
    if (step.successFile) lines.push(`  ${'results'.padEnd(16)}${''.padStart(9)}  -> ${shown(step.successFile, cwd)}`);
    if (step.missing > 0)
      lines.push(
        `  (${plural(step.missing, 'record')} of earlier runs no longer in the input: kept, listed in the results as missing; --delete-missing deletes them)`,
      );
    // Each row's warnings are in its line of the results file.
    lines.push(...warningAndColumnLines(step.warnings, step.notCarried));
    lines.push(...reasonLines(step.reasons));
  }
  lines.push('');
  if (summary.reconciled.applied + summary.reconciled.notApplied > 0) {
    lines.push(
      `Unconfirmed writes of an earlier run: ${summary.reconciled.applied} found applied, ${summary.reconciled.notApplied} not applied (sent again where still needed).`,
    );
  }
  if (dry) {
    lines.push(
      `Requests needed: ${formatCount(dry.requests)} (${requestParts(dry.requestsForNames, dry.requestsForSetup, dry.requests)}).`,
    );
    if (dry.limitPerHour !== null && dry.estimatedSeconds !== null) {
      lines.push(
        `At the account's limit of ${formatCount(dry.limitPerHour)} requests per hour that takes about ${seconds(dry.estimatedSeconds * 1000)}.`,
      );
    } else {
      lines.push('The service did not say its rate limit; the time depends on it.');
    }
    if (dry.lookUpValues > dry.lookUps) {
      // The run holds look-ups back as the dry run does, until 50 wait or no more can come in time;
      // rows that wait for another step's records come in as those are written, a few at a time.
      lines.push(
        `Of those, ${plural(dry.lookUps, 'request')} look up ${plural(dry.lookUpValues, 'value')} of match: in the account, up to 50 a request, as the run will; a step whose rows wait for another step's records may need a few more.`,
      );
    }
    if (liveReads > 0)
      lines.push(
        `Reading the old account (v1) took ${plural(liveReads, 'request')} besides, at the old account's own rate limit; the run reads it again.`,
      );
    for (const sample of dry.samples)
      lines.push(
        '',
        `Sample ${sample.action} (step ${sample.step}, key ${sample.key}):`,
        JSON.stringify(sample.body, null, 2),
      );
    return `${lines.join('\n')}\n`;
  }
  const count = written(summary);
  const writing = summary.requests - summary.requestsForNames - summary.requestsForSetup;
  const perRecord = count > 0 ? `, ${(writing / count).toFixed(2)} per record written` : '';
  lines.push(
    `Requests: ${formatCount(summary.requests)} (${requestParts(summary.requestsForNames, summary.requestsForSetup, summary.requests, namesRead)}${perRecord}); elapsed ${seconds(summary.elapsedMs)}.`,
  );
  if (liveReads > 0) lines.push(`Reading the old account (v1): ${plural(liveReads, 'request')}.`);
  const rejected = summary.steps.reduce((sum, s) => sum + s.rejected, 0);
  if (summary.stopped) {
    // Running the same command again helps when the service was the trouble, not when the input or the disk was.
    lines.push(
      exitCodeFor(summary.stopped) === EXIT.SERVICE
        ? 'Stopped before the end. Nothing is lost: run the same command again to go on where it stopped.'
        : 'Stopped before the end: fix what the error below says, then run the same command again (what was written so far is kept, and not written twice).',
    );
  } else if (summary.interrupted) lines.push('Interrupted. Run the same command again to go on where it stopped.');
  else if (rejected > 0) lines.push(rejectedHint(rejected, summary.retryRejects));
  else if (summary.limited)
    lines.push(
      'Sample done: the first rows of each step are in the account (--limit). Run the same command without --limit for the rest.',
    );
  else if (summary.retryRejects) lines.push('Done: the rows earlier runs rejected are in the account.');
  else lines.push('Done: every row is in the account.');
  return `${lines.join('\n')}\n`;
}

/**
 * Time left, once every step's rows are counted: the rows still to read at the slower of the pace
 * so far and the account's rate limit (requests per row as so far). Empty when it cannot be told.
 */
function timeLeft(event: Extract<ImportEvent, { type: 'progress' }>, done: number): string {
  let left = 0;
  for (const s of event.steps) {
    if (s.total === null) return '';
    left += Math.max(0, s.total - s.rowsRead);
  }
  if (left === 0 || done === 0) return '';
  const perRow = Math.max(1, event.requests / done);
  const observed = event.elapsedMs / 1000 / done;
  const budget = event.governor.limitPerHour ? (perRow * 3600) / event.governor.limitPerHour : 0;
  return `, about ${seconds(left * Math.max(observed, budget) * 1000)} left`;
}

/** Exit code of an import: 0 all written, 3 with rejects, 4 service trouble (state kept), 130 interrupted. */
export function importExitCode(summary: ImportSummary): number {
  if (summary.stopped) return exitCodeFor(summary.stopped);
  if (summary.interrupted) return EXIT.INTERRUPTED;
  return summary.steps.some((s) => s.rejected > 0) ? EXIT.ROWS_REJECTED : EXIT.OK;
}

/**
 * Shows a run as it goes: one line rewritten in place on a terminal, a plain line now and then
 * otherwise (cron, CI), or every event as a JSON line with `json`.
 */
export class ImportProgress {
  #started = Date.now();
  readonly #line: ProgressLine | null;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly mode: 'tty' | 'lines' | 'json',
  ) {
    // The importer sends its progress events as often as they are to be shown: every one is a line.
    this.#line = mode === 'json' ? null : new ProgressLine(out, mode);
  }

  onEvent = (event: ImportEvent): void => {
    if (this.mode === 'json') {
      const { type } = event;
      const payload =
        event.type === 'end'
          ? {
              type,
              summary: {
                ...event.summary,
                stopped: event.summary.stopped
                  ? { code: event.summary.stopped.code, message: event.summary.stopped.message }
                  : null,
              },
            }
          : event;
      this.out.write(`${JSON.stringify(payload)}\n`);
      return;
    }
    // Before any write, so that the checklist is read while there is time to act on it.
    if (event.type === 'setup') this.out.write(formatSetupPlan(event.plan));
    if (event.type === 'start' && !event.dryRun)
      this.out.write(`Writing ${event.steps.join(', ')} (state: ${event.stateDir})\n`);
    if (event.type !== 'progress') return;
    const done = event.steps.reduce((sum, s) => sum + s.created + s.updated + s.unchanged + s.matched, 0);
    const rejected = event.steps.reduce((sum, s) => sum + s.rejected, 0);
    const elapsed = (Date.now() - this.#started) / 1000;
    const rate = elapsed > 0 ? done / elapsed : 0;
    const g = event.governor;
    const left = g.remaining !== null ? `, ${formatCount(g.remaining)} requests left in the window` : '';
    const waiting = describeWaits(event.waits, Date.now());
    const paused =
      waiting !== ''
        ? `, ${waiting}`
        : g.pausedUntil !== null && g.pausedUntil > Date.now()
          ? `, paused by the rate limit for ${Math.ceil((g.pausedUntil - Date.now()) / 1000)} s`
          : '';
    const perStep = event.steps
      .map((s) => `${s.step} ${formatCount(s.rowsRead)}${s.total === null ? '' : `/${formatCount(s.total)}`}`)
      .join(' | ');
    const line = `${perStep} | ${done} done, ${rate.toFixed(1)} records/s, ${rejected} rejected${left}${paused}${timeLeft(event, done)}`;
    this.#line?.show(line);
  };

  /** Ends the line rewritten in place, before the summary. */
  finish(): void {
    this.#line?.finish();
  }
}

const TAG_LISTS: Record<RollbackSummary['tagsLeft'][number]['entity'], string> = {
  party: 'parties',
  kase: 'projects',
  opportunity: 'opportunities',
};

export function formatRollbackSummary(summary: RollbackSummary, dryRun: boolean): string {
  if (summary.runs.length === 0)
    return 'Nothing to roll back: no run in this state that was not rolled back already.\n';
  const lines = [
    `${dryRun ? 'Would roll back' : 'Rolled back'} run${summary.runs.length === 1 ? '' : 's'} ${summary.runs.join(', ')}:`,
  ];
  for (const step of summary.steps)
    lines.push(
      `  ${step.step.padEnd(20)} ${plural(step.deleted, 'record')} ${dryRun ? 'to delete' : 'deleted'}, ${step.restored} ${dryRun ? 'to restore' : 'restored'}`,
    );
  if (summary.alreadyGone > 0)
    lines.push(`${plural(summary.alreadyGone, 'record')} were already gone from the account.`);
  if (summary.notRestorable > 0)
    lines.push(
      `${plural(summary.notRestorable, 'record')} deleted by --delete-missing cannot be brought back; their last values are in the journal.`,
    );
  if (summary.tagsLeft.length > 0) {
    const lists = summary.tagsLeft.map((t) => `${t.names.join(', ')} (${TAG_LISTS[t.entity]})`).join('; ');
    lines.push(
      dryRun
        ? `Tags stay in the account: the interface has no request to delete a tag. The records to undo carry ${lists}.`
        : `Tags stay in the account: the interface has no request to delete a tag, only to take it off a record. No record carries these any more: ${lists}; remove them in the account's settings if they are not wanted.`,
    );
  }
  if (summary.kept.length > 0) {
    lines.push(
      `Left ${plural(summary.kept.length, 'record')} the journal says ${summary.runs.length === 1 ? 'the run' : 'the runs'} created, because the record in the account is not what ${summary.runs.length === 1 ? 'it' : 'they'} wrote (delete by hand what is meant to go):`,
    );
    for (const kept of summary.kept.slice(0, 20))
      lines.push(`  ${kept.step} ${JSON.stringify(kept.key)}: record ${kept.id}: ${kept.reason}`);
    if (summary.kept.length > 20) lines.push(`  and ${summary.kept.length - 20} more`);
  }
  for (const kept of summary.setupKept)
    lines.push(
      `Kept ${kept.kind} ${kept.id}, which the set-up created: ${kept.reason}; delete it in the account once nothing uses it.`,
    );
  if (summary.interrupted) lines.push('Interrupted: run the same command again to finish the rollback.');
  if (!dryRun) lines.push(`Requests: ${summary.requests}.`);
  return `${lines.join('\n')}\n`;
}
