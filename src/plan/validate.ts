/**
 * Validation: maps every row of a mapping's input (or of each step of a plan, in run order)
 * without writing, checks keys, match values, links, names and (with the account at hand)
 * lookups as the importer does, and writes the rejects and warnings files with a report. The
 * steps themselves are loaded and read by prepare-step.ts.
 */
import { basename, dirname, extname, join, resolve } from 'node:path';
import { FerryError, type ErrorCode } from '../errors/index.ts';
import {
  assertWritableTarget,
  type AttachmentUse,
  type CompiledMapping,
  countWarnings,
  emptyWarningCounts,
  type MappedRecord,
  type NameResolver,
  offlineResolver,
  reasonText,
  type RecordProblem,
  type RejectedRow,
  type RejectsLine,
  RejectsWriter,
  removeStaleRejects,
  type RowWarning,
  type StaleRejects,
  type TransformRegistry,
  type WarningCounts,
} from '../mapping/index.ts';
import { IdSet, isV1LiveInput, makeFolders } from '../util/index.ts';
import { linkedSteps, ReferenceBook } from './references.ts';
import { RowChecks } from './row-checks.ts';
import { createMatcher, judgeMatch, type MatchValue, type RecordFinder } from './matching.ts';
import { narrowNotCarried, type NotCarried } from './columns-not-carried.ts';
import { findAttachments } from './find-attachments.ts';
import { joinProblems, recordToSend, rejectedRow, type TakeFiles } from './record-to-send.ts';
import { assertConstantNames, openStepItems, type PreparedStep, prepareRun } from './prepare-step.ts';

/** One reason rows were rejected, with how often. */
export interface RejectReason {
  code: ErrorCode;
  field: string;
  count: number;
  /** The message of the first row with this reason, and its row as a spreadsheet numbers it. */
  example: string;
  firstRow: number;
  /** The service refused these rows when they were sent: what only it knows, which validate cannot check beforehand. */
  byService?: boolean;
}

/** What validating one step (or the single mapping) found. */
export interface StepReport {
  step: string;
  mappingFile: string;
  inputFile: string;
  rowsRead: number;
  ok: number;
  skipped: number;
  rejected: number;
  /** Most frequent first. */
  reasons: RejectReason[];
  /** The rejects file written, or null when every row was fine. */
  rejectsFile: string | null;
  /** The target rejects file when nothing was written: whether a file of an earlier run was removed. */
  staleRejects: StaleRejects;
  /** Warnings of the valid rows by code: what their records would go without or carry as typed. */
  warnings: WarningCounts;
  /** The warnings, one line each with the row's values (the rejects file's columns), or null when there are none. */
  warningsFile: string | null;
  /** Source columns no field reads that hold values, with how many rows have one. */
  notCarried: NotCarried[];
}

export interface ValidateReport {
  steps: StepReport[];
  /** Whether names were checked against an account. */
  online: boolean;
  /** True when stopped by the signal before the end. */
  interrupted: boolean;
}

/** Options shared by both forms of validation. */
export interface ValidateCommonOptions {
  /** Resolves names; the offline resolver (the default) checks none. @default offlineResolver */
  resolver?: NameResolver & { online?: boolean };
  /**
   * Reads the account (`--online`): rows of a mapping with `match:` are looked up as the importer
   * looks them up, so that `onMatch: reject` and a value several records share are rejected here
   * too. Without it no lookup is made. @default none
   */
  service?: RecordFinder;
  signal?: AbortSignal;
  /** The transforms the mappings may name: the built-in ones and the caller's (transformRegistry). @default TRANSFORMS */
  transforms?: TransformRegistry;
}

export interface ValidateMappingOptions extends ValidateCommonOptions {
  mappingFile: string;
  inputFile: string;
  /** @default rejects.csv beside the input */
  rejectsFile?: string;
}

export interface ValidatePlanOptions extends ValidateCommonOptions {
  planFile: string;
  /** Folder of the `<step>.rejects.csv` files. @default the plan file's folder */
  rejectsDir?: string;
}
/** One rejects row for a record with several problems: the first decides code and field. */
function rejectionOf(mapped: MappedRecord, problems: readonly RecordProblem[]): RejectedRow {
  return rejectedRow(mapped, joinProblems(problems));
}

/** Validate looks for a note's files without reading them. */
async function lookForFiles(uses: readonly AttachmentUse[]): ReturnType<TakeFiles> {
  const { warnings, problem } = await findAttachments(uses);
  return { warnings, problem };
}

/** Rows rejected by reason (code and field), the most frequent first, each with its first row's reason as an example. */
export class ReasonCounter {
  readonly #reasons = new Map<string, RejectReason>();

  /** Counts each of the row's reasons (a row with two problems has two). */
  add(rejected: RejectedRow): void {
    const { also = [], ...first } = rejected;
    const byService = rejected.status !== undefined;
    for (const one of [first, ...also]) {
      const id = `${one.code}\u0000${one.field}\u0000${byService}`;
      const reason = this.#reasons.get(id);
      if (reason) reason.count += 1;
      else
        this.#reasons.set(id, {
          code: one.code,
          field: one.field,
          count: 1,
          example: reasonText({ ...one, values: rejected.values }),
          firstRow: rejected.location.row,
          ...(byService ? { byService } : {}),
        });
    }
  }

  sorted(): RejectReason[] {
    return [...this.#reasons.values()].sort((a, b) => b.count - a.count || a.firstRow - b.firstRow);
  }
}
/** Rows waiting for their lookup in the account before they count as valid, at most this many at once. */
const LOOKUPS_AHEAD = 500;

async function runStep(
  step: PreparedStep,
  compiled: CompiledMapping,
  book: ReferenceBook,
  resolver: NameResolver & { online?: boolean },
  signal: AbortSignal | undefined,
  service?: RecordFinder,
): Promise<StepReport & { interrupted: boolean }> {
  const report: StepReport & { interrupted: boolean } = {
    step: step.name,
    mappingFile: step.mappingFile,
    inputFile: step.inputFile,
    rowsRead: 0,
    ok: 0,
    skipped: 0,
    rejected: 0,
    reasons: [],
    rejectsFile: null,
    staleRejects: 'none',
    warnings: emptyWarningCounts(),
    warningsFile: null,
    notCarried: [],
    interrupted: false,
  };
  const opened = await openStepItems(step, compiled, signal);
  if (!opened) {
    report.interrupted = true;
    return report;
  }
  const { header } = opened;

  const reasons = new ReasonCounter();
  let writer: RejectsWriter | undefined;
  let warningsWriter: RejectsWriter | undefined;
  const warningsFile = warningsFileOf(step.rejectsFile);
  const reject = async (rejected: RejectedRow): Promise<void> => {
    writer ??= await RejectsWriter.open(step.rejectsFile, header);
    await writer.write(rejected);
    reasons.add(rejected);
    report.rejected += 1;
    if (rejected.key !== null && rejected.key !== '') book.addRejected(step.name, rejected.key);
  };
  const accept = async (mapped: MappedRecord): Promise<void> => {
    report.ok += 1;
    if (mapped.warnings === undefined || mapped.warnings.length === 0) return;
    countWarnings(report.warnings, mapped.warnings);
    warningsWriter ??= await RejectsWriter.open(warningsFile, header, { forPeople: true });
    for (const warning of mapped.warnings) await warningsWriter.write(warningRow(mapped, warning));
  };
  const checks = new RowChecks(step.name, step.mapping, book.linked.has(step.name));
  // With the account at hand, rows are looked up as the importer does; their answers are awaited
  // in the order of the rows, a few hundred behind the reading, so that lookups share queries.
  const matcher =
    service === undefined
      ? null
      : createMatcher(service, compiled.entity, step.mapping.match, resolver, step.mappingFile);
  const spec = step.mapping.match;
  const taken = new IdSet();
  const waiting: Array<{ mapped: MappedRecord; value: MatchValue; found: Promise<Array<Record<string, unknown>>> }> =
    [];
  const settleLookup = async (): Promise<void> => {
    const next = waiting.shift();
    if (next === undefined || spec === undefined) return;
    const outcome = judgeMatch(spec, next.value, await next.found, taken, step.mapping.onDuplicate);
    if (outcome.kind === 'conflict') {
      book.demote(step.name, next.mapped.key);
      await reject(rejectedRow(next.mapped, { field: 'match', code: 'API_CONFLICT', message: outcome.message }));
      return;
    }
    if (outcome.kind === 'found') taken.add(outcome.record.id as number);
    await accept(next.mapped);
  };
  try {
    for await (const item of opened.items) {
      if (signal?.aborted) {
        report.interrupted = true;
        break;
      }
      report.rowsRead += 1;
      const outcome = checks.check(item);
      if (outcome.kind === 'skipped') {
        report.skipped += 1;
        continue;
      }
      if (outcome.kind === 'folded' || outcome.kind === 'repeated') {
        // Folded into an earlier row of its record (onDuplicate), or that record named again:
        // a folded row's key links to that record.
        if (outcome.kind === 'folded') book.addAlias(step.name, outcome.key, outcome.into);
        report.ok += 1;
        continue;
      }
      if (outcome.kind === 'rejected') {
        // A duplicate's key stays the earlier row's: links look at valid keys first.
        await reject(outcome.rejected);
        continue;
      }
      const mapped = outcome.mapped;
      // Links, names and a note's files as the run takes them (a file not there is a NOT_CARRIED
      // warning, one that is no file a reject), looked up in the keys of the rows read so far.
      const sent = await recordToSend(mapped, { entity: compiled.entity, links: book, resolver, files: lookForFiles });
      if (sent.kind === 'problems') {
        await reject(rejectionOf(mapped, sent.problems));
        continue;
      }
      book.addValid(step.name, mapped.key);
      const value = matcher?.valueOf(mapped.record) ?? null;
      if (matcher === null || value === null) {
        await accept(mapped);
        continue;
      }
      waiting.push({ mapped, value, found: matcher.find(value) });
      // Handled when settled; until then a failure must not count as unhandled.
      waiting.at(-1)?.found.catch(() => undefined);
      if (waiting.length > LOOKUPS_AHEAD) await settleLookup();
    }
    while (waiting.length > 0 && !report.interrupted) await settleLookup();
  } catch (error) {
    await writer?.abort();
    await warningsWriter?.abort();
    if (signal?.aborted) {
      report.interrupted = true;
      return report;
    }
    throw error;
  }
  if (report.interrupted) {
    // A partial rejects file would look like the whole story.
    await writer?.abort();
    await warningsWriter?.abort();
    return report;
  }
  report.reasons = reasons.sorted();
  report.notCarried = opened.census.result();
  if (writer) {
    await writer.commit();
    report.rejectsFile = step.rejectsFile;
  } else {
    report.staleRejects = await removeStaleRejects(step.rejectsFile);
  }
  if (warningsWriter) {
    await warningsWriter.commit();
    report.warningsFile = warningsFile;
  } else await removeStaleRejects(warningsFile);
  return report;
}

/** The warnings file beside a rejects file: `rejects.csv` -> `warnings.csv`, `people.rejects.csv` -> `people.warnings.csv`. */
export function warningsFileOf(rejectsFile: string): string {
  const name = basename(rejectsFile);
  const stem = /rejects\.csv$/i.test(name) ? name.replace(/rejects\.csv$/i, '') : `${basename(name, extname(name))}.`;
  return join(dirname(rejectsFile), `${stem}warnings.csv`);
}

/** A warning as a line of the warnings file, which has the rejects file's columns. */
function warningRow(mapped: MappedRecord, warning: RowWarning): RejectsLine {
  return { row: mapped.row, location: mapped.location, key: mapped.key, ...warning, values: mapped.valuesOf() };
}

function assertNotInput(rejectsFile: string, inputFile: string): void {
  if (resolve(rejectsFile) === resolve(inputFile)) {
    throw new FerryError('USAGE', `the rejects file ${rejectsFile} is the input itself; choose another name`, {
      location: { file: rejectsFile },
    });
  }
  const warningsFile = warningsFileOf(rejectsFile);
  if (resolve(warningsFile) === resolve(inputFile)) {
    throw new FerryError(
      'USAGE',
      `the warnings file ${warningsFile} (beside the rejects file ${basename(rejectsFile)}) is the input itself; choose another rejects file name`,
      { location: { file: warningsFile } },
    );
  }
}

/**
 * Maps every row of one input through one mapping without writing to the service: checks the
 * header, the rows, duplicate keys and (with an online resolver) names, and writes the rejects
 * file when some rows fail. A mapping with `ref:` links needs a plan: MAPPING_REFERENCE.
 */
export async function validateMapping(options: ValidateMappingOptions): Promise<ValidateReport> {
  const resolver = options.resolver ?? offlineResolver;
  let rejectsFile =
    options.rejectsFile ??
    join(dirname(isV1LiveInput(options.inputFile) ? options.mappingFile : options.inputFile), 'rejects.csv');
  // Validating a rejects file again (after fixing it) must not write over the file being read.
  if (options.rejectsFile === undefined && resolve(rejectsFile) === resolve(options.inputFile)) {
    rejectsFile = join(
      dirname(options.inputFile),
      `${basename(options.inputFile, extname(options.inputFile))}.rejects.csv`,
    );
  }
  assertNotInput(rejectsFile, options.inputFile);
  const { steps, compiled } = await prepareRun(
    { kind: 'mapping', mappingFile: options.mappingFile, inputFile: options.inputFile },
    { rejectsFile, transforms: options.transforms },
  );
  const step = steps[0] as PreparedStep;
  assertConstantNames(step, resolver);
  await assertWritableTarget(rejectsFile);
  await assertWritableTarget(warningsFileOf(rejectsFile));
  const report = await runStep(
    step,
    compiled[0] as CompiledMapping,
    new ReferenceBook(),
    resolver,
    options.signal,
    options.service,
  );
  const { interrupted, ...stepReport } = report;
  return { steps: [stepReport], online: (resolver as { online?: boolean }).online !== false, interrupted };
}

/**
 * Validates every step of a plan in run order, checking links between steps against the keys of
 * the rows earlier steps produced. One rejects file per step with rejects, `<step>.rejects.csv`.
 */
export async function validatePlan(options: ValidatePlanOptions): Promise<ValidateReport> {
  const resolver = options.resolver ?? offlineResolver;
  const { steps, compiled } = await prepareRun(
    { kind: 'plan', planFile: options.planFile },
    { rejectsDir: options.rejectsDir, transforms: options.transforms },
  );
  if (options.rejectsDir !== undefined) {
    await makeFolders(options.rejectsDir, {
      mode: 0o700,
      what: 'the rejects folder',
      hint: 'Give --rejects-dir an ordinary folder, e.g. ./rejects.',
    });
  }
  for (const step of steps) assertConstantNames(step, resolver);
  for (const step of steps) {
    assertNotInput(step.rejectsFile, step.inputFile);
    await assertWritableTarget(step.rejectsFile);
    await assertWritableTarget(warningsFileOf(step.rejectsFile));
  }
  const book = new ReferenceBook(linkedSteps(steps));
  const reports: StepReport[] = [];
  for (const [index, step] of steps.entries()) {
    const { interrupted, ...report } = await runStep(
      step,
      compiled[index] as CompiledMapping,
      book,
      resolver,
      options.signal,
      options.service,
    );
    reports.push(report);
    if (interrupted) return { steps: reports, online: resolver.online !== false, interrupted: true };
  }
  narrowNotCarried(reports, compiled);
  return { steps: reports, online: resolver.online !== false, interrupted: false };
}
