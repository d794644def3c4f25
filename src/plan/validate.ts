import { readFile } from 'node:fs/promises';
import { basename, dirname, extname, join, resolve } from 'node:path';
import { FerryError, type ErrorCode, type ErrorLocation } from '../errors/index.ts';
import { assertWritableTarget, checkConstantNames, type CompiledMapping, compileMapping, countWarnings, emptyWarningCounts, loadMapping, mapFieldBatches, type MappedItem, type MappedRecord, type Mapping, mapRows, type NameResolver, offlineResolver, readsAsRejectsFile, type RecordProblem, REJECT_COLUMNS, type RejectedRow, type RejectsLine, RejectsWriter, removeStaleRejects, resolveRecord, type RowWarning, type SourceOptions, type StaleRejects, type WarningCounts } from '../mapping/index.ts';
import { type FieldRow, openSource, type OpenSourceOptions, sourceBatches, sourceFieldBatches, type SourceItem, statSource } from '../sources/index.ts';
import { isV1LiveInput, makeFolders } from '../util/index.ts';
import { parseV1LiveInput, type V1LiveConnection } from '../client/index.ts';
import { loadPlan, type Plan } from './load.ts';
import { mappingRefs, orderSteps, type StepRef } from './order.ts';
import { linkedSteps, recordDigest, ReferenceBook } from './references.ts';
import { createMatcher, judgeMatch, type RecordFinder } from './matching.ts';
import { ColumnCensus, type NotCarried } from './census.ts';
import { foldDuplicates, indexDuplicates, MatchValueCheck } from './duplicates.ts';
import { parseLocatedYaml, type LocatedYaml } from './yaml-location.ts';
import { findAttachments } from './find-attachments.ts';

/** One reason rows were rejected, with how often. */
export interface RejectReason {
  code: ErrorCode;
  field: string;
  count: number;
  /** The message of the first row with this reason, and its row as a spreadsheet numbers it. */
  example: string;
  firstRow: number;
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

/** A mapping loaded for a run, with what the run needs to know beside it. */
export interface PreparedStep {
  name: string;
  mappingFile: string;
  inputFile: string;
  rejectsFile: string;
  mapping: Mapping;
  yaml: LocatedYaml;
  refs: StepRef[];
  source: SourceOptions;
  /** The input is a rejects file (fixed, and fed back): read as the CSV it is, every row taken. */
  fromRejects?: boolean;
  /** How a live v1 input (`v1+https://HOST`, or `source: {format: v1-api}`) is reached; set by the command that connects. */
  live?: V1LiveConnection;
}

/**
 * A step whose source is `format: v1-api` reads the live account its input names
 * (`v1+https://HOST`), or, with no input, the source's `baseUrl`; a file as its input is a mistake.
 */
function liveInputOf(step: PreparedStep): void {
  const where = step.name === '' ? 'the mapping' : `step ${step.name}`;
  if (step.source.format !== 'v1-api' || isV1LiveInput(step.inputFile)) {
    if (step.inputFile === '') throw new FerryError('PLAN_INVALID', `${where} has no input`, { hint: 'Give the step an input: a file, or v1+https://HOST for a live legacy account.' });
    return;
  }
  if (step.inputFile !== '') {
    throw new FerryError('USAGE', `${where} reads a live v1 account (source format v1-api), but its input is the file ${step.inputFile}`, {
      hint: 'Give the input as v1+https://HOST, leave it out (then the source\'s baseUrl is read), or drop format: v1-api to read the file.',
    });
  }
  if (step.source.baseUrl === undefined) {
    throw new FerryError('PLAN_INVALID', `${where} reads a live v1 account (source format v1-api), but names neither an input nor a baseUrl`, { hint: 'Add baseUrl: https://OLD-ACCOUNT.example.com to the source, or input: v1+https://OLD-ACCOUNT.example.com to the step.' });
  }
  step.inputFile = `v1+${step.source.baseUrl}`;
}

/**
 * Gives the steps that read a live v1 account the connection to it, and checks each address now
 * (its token, the transport rule), before a row of any step is read or written.
 */
export function connectLiveSteps(steps: PreparedStep[], live: V1LiveConnection | undefined): void {
  for (const step of steps) {
    if (!readsLive(step)) continue;
    if (!live) {
      throw new FerryError('CONFIG_MISSING', `${step.name === '' ? 'the input' : `step ${step.name}`} reads a live v1 account, and this caller gave no connection to it`, {
        hint: 'Read it with crm-ferry import, run or verify (the old account\'s token in CRM_FERRY_V1_TOKEN).',
      });
    }
    step.live = live;
    live.readerFor(parseV1LiveInput(isV1LiveInput(step.inputFile) ? step.inputFile : `v1+${step.source.baseUrl ?? ''}`).baseUrl);
  }
}

/** Whether a step reads a live v1 account rather than a file. */
export function readsLive(step: Pick<PreparedStep, 'inputFile' | 'source'>): boolean {
  return isV1LiveInput(step.inputFile) || step.source.format === 'v1-api';
}

function located(yaml: LocatedYaml, yamlPath: string, path: Array<string | number>): ErrorLocation {
  const location: ErrorLocation = { file: yaml.file, yamlPath };
  const line = yaml.lineOf(path);
  if (line !== undefined) location.line = line;
  return location;
}

/** `fields[3].definition` -> ['fields', 3, 'definition'] */
function pathOf(yamlPath: string): Array<string | number> {
  return yamlPath.split(/\.|\[|\]/).filter((part) => part !== '').map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

async function prepareStep(
  name: string,
  mappingFile: string,
  inputFile: string,
  rejectsFile: string,
  sourceOverride: SourceOptions | undefined,
  planTimeZone: string | undefined,
): Promise<PreparedStep> {
  let mapping = await loadMapping(mappingFile);
  // Read again for line numbers and to see whether the mapping names a time zone itself (the
  // schema's default hides that).
  const yaml = parseLocatedYaml((await readFile(mappingFile, 'utf8')).replace(/^\uFEFF/, ''), mappingFile, 'MAPPING_INVALID');
  const raw = yaml.value as Record<string, unknown> | null;
  if (planTimeZone !== undefined && (raw === null || typeof raw !== 'object' || !('timeZone' in raw))) {
    mapping = { ...mapping, timeZone: planTimeZone };
  }
  const refs = mappingRefs(mapping, mappingFile).map((ref) => ({
    ...ref,
    location: located(yaml, ref.location.yamlPath ?? '', pathOf(ref.location.yamlPath ?? '')),
  }));
  const step: PreparedStep = { name, mappingFile, inputFile, rejectsFile, mapping, yaml, refs, source: { ...(mapping.source ?? {}), ...(sourceOverride ?? {}) } };
  liveInputOf(step);
  if (!readsLive(step) && (await readsAsRejectsFile(inputFile))) readAsRejects(step, inputFile);
  return step;
}

/**
 * Makes a step read `file`, a rejects file: its encoding and delimiter are found as for any file
 * (a spreadsheet may have saved it with `;`), not taken from the mapping's `source:`, which
 * describes the original input; its own columns at the end (`_row`, `_code`, ...) are not read.
 */
function readAsRejects(step: PreparedStep, file: string): void {
  step.inputFile = file;
  step.source = {};
  step.fromRejects = true;
}

/**
 * `--retry-rejects FILE`: the rows of a fixed rejects file (validate's, or a run's) go in place of
 * the input of the step they were rejected from: the one-mapping import's step, or in a plan the
 * step the file is named after (`<step>.rejects.csv`, as validate --plan and a run name them).
 */
export async function retryFromRejects(steps: PreparedStep[], file: string): Promise<void> {
  if (!(await readsAsRejectsFile(file))) {
    await statSource(file);
    throw new FerryError('USAGE', `--retry-rejects takes a rejects file crm-ferry wrote (its last columns are ${REJECT_COLUMNS.join(', ')}); ${file} is not one`, {
      location: { file },
      hint: 'Give the rejects file of validate or of a run, fixed; to take the rejected rows from the fixed input instead, give --retry-rejects alone.',
    });
  }
  const named = basename(file).replace(/(\.dry-run)?\.rejects\.csv$/i, '');
  const step = steps.length === 1 ? steps[0] : steps.find((s) => s.name === named);
  if (!step) {
    throw new FerryError('USAGE', `--retry-rejects: ${basename(file)} names no step of the plan; a step's rejects file is <step>.rejects.csv (${steps.map((s) => `${s.name}.rejects.csv`).join(', ')})`, { location: { file } });
  }
  readAsRejects(step, file);
}

/** Names the mapping writes as constants must exist before a single row is read. */
export function assertConstantNames(step: PreparedStep, resolver: NameResolver): void {
  const problems = checkConstantNames(step.mapping, resolver);
  const first = problems[0];
  if (!first) return;
  const location = located(step.yaml, first.yamlPath, pathOf(first.yamlPath));
  const message =
    problems.length === 1
      ? first.message
      : `the mapping names ${problems.length} things the account does not have:\n${problems
          .map((p) => {
            const line = step.yaml.lineOf(pathOf(p.yamlPath));
            return `  ${line === undefined ? '' : `line ${line}, `}${p.yamlPath}: ${p.message}`;
          })
          .join('\n')}`;
  throw new FerryError('MAPPING_UNKNOWN_NAME', message, {
    location,
    hint: 'Names written in the mapping are the same for every row, so nothing was read; fix the mapping (or the account) and run again.',
  });
}

/**
 * Yields `first` (already read) and then the rest of `rest`; stopping early (an error further on,
 * Ctrl-C) closes `rest`, and with it the file it reads.
 */
async function* prepend<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncGenerator<T> {
  if (first.done) return;
  let exhausted = false;
  try {
    yield first.value;
    for (;;) {
      const next = await rest.next();
      if (next.done) {
        exhausted = true;
        return;
      }
      yield next.value;
    }
  } finally {
    if (!exhausted) await rest.return?.(undefined);
  }
}

/** One rejects row for a record with several problems: the first decides code and field. */
function rejectionOf(mapped: MappedRecord, problems: readonly RecordProblem[]): RejectedRow {
  const [first] = problems as [RecordProblem];
  const message = problems.length === 1 ? first.message : problems.map((p) => `${p.field}: ${p.message}`).join('; ');
  return { kind: 'rejected', row: mapped.row, location: mapped.location, key: mapped.key, field: first.field, code: first.code, message, values: mapped.valuesOf() };
}

class ReasonCounter {
  readonly #reasons = new Map<string, RejectReason>();

  add(rejected: RejectedRow): void {
    const id = `${rejected.code}\u0000${rejected.field}`;
    const reason = this.#reasons.get(id);
    if (reason) reason.count += 1;
    else this.#reasons.set(id, { code: rejected.code, field: rejected.field, count: 1, example: rejected.message, firstRow: rejected.location.row });
  }

  sorted(): RejectReason[] {
    return [...this.#reasons.values()].sort((a, b) => b.count - a.count || a.firstRow - b.firstRow);
  }
}

/** A step's rows as the mapping turns them into records (a record gives back its row's values for rejects: valuesOf). */
export interface OpenedStep {
  /** The input's columns, plus for v1 exports every column the mapping reads. */
  header: string[];
  items: AsyncIterableIterator<MappedItem>;
  /** Columns no field reads, with the rows that hold a value in them; complete once `items` is read to the end. */
  census: ColumnCensus;
}

/** Hands the source's items on, counting the values of unread columns on the way. */
async function* counted(items: AsyncIterable<SourceItem>, census: ColumnCensus): AsyncGenerator<SourceItem> {
  for await (const item of items) {
    if (item.kind === 'row') census.countValues(item.values);
    yield item;
  }
}

/** The same for batches of rows given as fields. */
async function* countedBatches<Batch extends ReadonlyArray<{ kind: string }>>(batches: AsyncGenerator<Batch>, census: ColumnCensus): AsyncGenerator<Batch> {
  for await (const batch of batches) {
    for (const item of batch) if (item.kind === 'fields') census.countFields((item as unknown as FieldRow).fields, (item as unknown as FieldRow).header);
    yield batch;
  }
}

/** Opens, checks and maps one reading of a step's input; see openStepItems. */
async function openMapped(step: PreparedStep, compiled: CompiledMapping, signal: AbortSignal | undefined, census: ColumnCensus | null): Promise<(Omit<OpenedStep, 'census'> & { census: ColumnCensus | null }) | null> {
  let detected: string[] | undefined;
  const options: OpenSourceOptions = { ...step.source, onMalformed: 'report', onDetected: (d) => (detected ??= d.columns), v1Live: step.live };
  if (signal) options.signal = signal;
  let items: AsyncIterableIterator<MappedItem>;
  let header: string[];
  let legacy = false;
  try {
    const opened = await openSource(step.inputFile, options);
    legacy = opened.format === 'v1-xml' || opened.format === 'v1-json' || opened.format === 'v1-api';
    const fieldBatches = sourceFieldBatches(opened.items);
    if (fieldBatches) {
      // Rows by position (CSV): read the first batch for the header, then map them all a batch at a time.
      const batches = fieldBatches();
      const first = await batches.next();
      const firstRow = first.done ? undefined : first.value.find((item) => item.kind === 'fields');
      header = detected ?? (firstRow ? [...firstRow.header] : []);
      const all = prepend(first, batches);
      items = mapFieldBatches(census === null ? all : countedBatches(all, census), compiled);
    } else {
      const iterator = opened.items[Symbol.asyncIterator]();
      const first = await iterator.next();
      // Other readers say their columns only through the rows' keys.
      header = detected ?? (!first.done && first.value.kind === 'row' ? Object.keys(first.value.values) : []);
      const all = prepend(first, iterator);
      items = mapRows(census === null ? all : counted(all, census), compiled);
    }
  } catch (error) {
    if (!signal?.aborted) throw error;
    return null;
  }
  if (legacy) {
    // v1 records carry the columns of what they hold (an organisation has no firstName, the
    // first person may have no second phone): the first record is no header to check against.
    // The rejects file gets every column the mapping reads as well.
    header = [...new Set([...header, ...compiled.columns])];
  } else {
    try {
      compiled.checkColumns(header);
    } catch (error) {
      await items.return?.(undefined);
      throw error;
    }
  }
  return { header, items, census };
}

/**
 * Opens a step's input, checks its columns against the mapping and maps its rows. Returns null
 * when the signal stopped it while opening. Under `onDuplicate: first` or `merge` the input is
 * read once beforehand to find the rows that name one record, which are then folded together
 * (see duplicates.ts); the importer and validate both read a step through here, so they agree.
 */
export async function openStepItems(step: PreparedStep, compiled: CompiledMapping, signal: AbortSignal | undefined): Promise<OpenedStep | null> {
  const census = new ColumnCensus(compiled);
  const policy = step.mapping.onDuplicate;
  if (policy === 'reject') {
    const opened = await openMapped(step, compiled, signal, census);
    return opened && { ...opened, census };
  }
  // The reading beforehand only finds the duplicates; the columns are counted in the second.
  const first = await openMapped(step, compiled, signal, null);
  if (!first) return null;
  const index = await indexDuplicates(first.items, step.mapping.match);
  const opened = await openMapped(step, compiled, signal, census);
  if (!opened) return null;
  return { header: opened.header, items: foldDuplicates(opened.items, index, policy), census };
}

/**
 * How many rows (and unreadable records) a step's input holds, counted by a read of its own
 * (CSV a batch at a time, without mapping): the total a progress display shows.
 */
export async function countStepItems(step: PreparedStep, signal?: AbortSignal): Promise<number> {
  const options: OpenSourceOptions = { ...step.source, onMalformed: 'report', v1Live: step.live };
  if (signal) options.signal = signal;
  const opened = await openSource(step.inputFile, options);
  const batches = sourceFieldBatches(opened.items) ?? sourceBatches(opened.items);
  let count = 0;
  if (batches) for await (const batch of batches()) count += batch.length;
  else for await (const _item of opened.items) count += 1;
  return count;
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
    warningsWriter ??= await RejectsWriter.open(warningsFile, header);
    for (const warning of mapped.warnings) await warningsWriter.write(warningRow(mapped, warning));
  };
  const matches = new MatchValueCheck(step.mapping.match);
  // With the account at hand, rows are looked up as the importer does; their answers are awaited
  // in the order of the rows, a few hundred behind the reading, so that lookups share queries.
  const matcher = service === undefined ? null : createMatcher(service, compiled.entity, step.mapping.match, resolver, step.mappingFile);
  const spec = step.mapping.match;
  const taken = new Set<number>();
  const waiting: Array<{ mapped: MappedRecord; value: string; found: Promise<Array<Record<string, unknown>>> }> = [];
  const settleLookup = async (): Promise<void> => {
    const next = waiting.shift();
    if (next === undefined || spec === undefined) return;
    const outcome = judgeMatch(spec, next.value, await next.found, taken);
    if (outcome.kind === 'conflict') {
      book.demote(step.name, next.mapped.key);
      const rejected: RejectedRow = { kind: 'rejected', row: next.mapped.row, location: next.mapped.location, key: next.mapped.key, field: 'match', code: 'API_CONFLICT', message: outcome.message, values: next.mapped.valuesOf() };
      await reject(rejected);
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
      if (item.kind === 'skipped') {
        if (item.folded) {
          // Folded into an earlier row of its record (onDuplicate): its key links to that record.
          book.addAlias(step.name, item.folded.key, item.folded.into);
          report.ok += 1;
        } else report.skipped += 1;
        continue;
      }
      if (item.kind === 'rejected') {
        await reject(item);
        continue;
      }
      const digest = book.linked.has(step.name) ? recordDigest(item) : undefined;
      const duplicate = book.checkKey(step.name, item.key, digest);
      if (duplicate === 'repeat') {
        // The record of an earlier row, named again: nothing more to check.
        report.ok += 1;
        continue;
      }
      // The same order of checks as the importer's: key, match value, links, names.
      const sameRecord = duplicate ?? matches.check(item);
      const problems: RecordProblem[] = sameRecord ? [sameRecord] : [...book.linkRecord(item), ...resolveRecord(item, resolver)];
      // A note's files, as the run finds them: one not there is a NOT_CARRIED warning, one that is no file a reject.
      if (problems.length === 0 && item.attachments.length > 0) {
        const files = await findAttachments(item.attachments);
        if (files.problem) problems.push({ field: 'attachment', code: 'SOURCE_UNREADABLE', message: files.problem });
        else if (files.warnings.length > 0) (item.warnings ??= []).push(...files.warnings);
      }
      if (problems.length > 0) {
        // Recording a duplicate's key as rejected is harmless: links look at valid keys first.
        await reject(rejectionOf(item, problems));
        continue;
      }
      book.addValid(step.name, item.key, digest);
      const value = matcher?.valueOf(item.record) ?? null;
      if (matcher === null || value === null) {
        await accept(item);
        continue;
      }
      waiting.push({ mapped: item, value, found: matcher.find(value) });
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
  return { row: mapped.row, location: mapped.location, key: mapped.key, field: warning.field, code: warning.code, message: warning.value === undefined ? warning.message : `${warning.message} (value: ${warning.value})`, values: mapped.valuesOf() };
}

function assertNotInput(rejectsFile: string, inputFile: string): void {
  if (resolve(rejectsFile) === resolve(inputFile)) {
    throw new FerryError('USAGE', `the rejects file ${rejectsFile} is the input itself; choose another name`, { location: { file: rejectsFile } });
  }
  const warningsFile = warningsFileOf(rejectsFile);
  if (resolve(warningsFile) === resolve(inputFile)) {
    throw new FerryError('USAGE', `the warnings file ${warningsFile} (beside the rejects file ${basename(rejectsFile)}) is the input itself; choose another rejects file name`, { location: { file: warningsFile } });
  }
}

function singleStepName(mappingFile: string, mapping: Mapping): string {
  return mapping.name ?? basename(mappingFile, extname(mappingFile));
}

/**
 * Loads one mapping for a run over one input, as a step named after the mapping. A mapping with
 * `ref:` links needs a plan: MAPPING_REFERENCE.
 */
export async function prepareSingleStep(mappingFile: string, inputFile: string, rejectsFile = join(dirname(isV1LiveInput(inputFile) ? mappingFile : inputFile), 'rejects.csv')): Promise<PreparedStep> {
  const step = await prepareStep('', mappingFile, inputFile, rejectsFile, undefined, undefined);
  step.name = singleStepName(mappingFile, step.mapping);
  const firstRef = step.refs[0];
  if (firstRef) {
    throw new FerryError('MAPPING_REFERENCE', `the mapping links to step \`${firstRef.step}\` with \`ref\`, which only a plan can provide`, {
      location: firstRef.location,
      hint: 'Use the plan that holds both steps (`crm-ferry run PLAN`, `crm-ferry validate --plan PLAN`), or link by id or name instead of ref.',
    });
  }
  return step;
}

/**
 * Maps every row of one input through one mapping without writing to the service: checks the
 * header, the rows, duplicate keys and (with an online resolver) names, and writes the rejects
 * file when some rows fail. A mapping with `ref:` links needs a plan: MAPPING_REFERENCE.
 */
export async function validateMapping(options: ValidateMappingOptions): Promise<ValidateReport> {
  const resolver = options.resolver ?? offlineResolver;
  let rejectsFile = options.rejectsFile ?? join(dirname(isV1LiveInput(options.inputFile) ? options.mappingFile : options.inputFile), 'rejects.csv');
  // Validating a rejects file again (after fixing it) must not write over the file being read.
  if (options.rejectsFile === undefined && resolve(rejectsFile) === resolve(options.inputFile)) {
    rejectsFile = join(dirname(options.inputFile), `${basename(options.inputFile, extname(options.inputFile))}.rejects.csv`);
  }
  assertNotInput(rejectsFile, options.inputFile);
  const step = await prepareSingleStep(options.mappingFile, options.inputFile, rejectsFile);
  assertConstantNames(step, resolver);
  await assertWritableTarget(rejectsFile);
  await assertWritableTarget(warningsFileOf(rejectsFile));
  const compiled = await compileMapping(step.mapping, { file: step.mappingFile });
  const report = await runStep(step, compiled, new ReferenceBook(), resolver, options.signal, options.service);
  const { interrupted, ...stepReport } = report;
  return { steps: [stepReport], online: (resolver as { online?: boolean }).online !== false, interrupted };
}

/** Loads a plan and its mappings, in run order; every problem is found before any row is read. */
export async function preparePlan(planFile: string, rejectsDir?: string): Promise<{ plan: Plan; steps: PreparedStep[] }> {
  const plan = await loadPlan(planFile);
  const dir = rejectsDir ?? dirname(planFile);
  const prepared: PreparedStep[] = [];
  for (const step of plan.steps) {
    prepared.push(await prepareStep(step.name, step.mappingFile, step.inputFile, join(dir, `${step.name}.rejects.csv`), step.source, plan.timeZone));
  }
  return { plan, steps: orderSteps(prepared) };
}

/**
 * Validates every step of a plan in run order, checking links between steps against the keys of
 * the rows earlier steps produced. One rejects file per step with rejects, `<step>.rejects.csv`.
 */
export async function validatePlan(options: ValidatePlanOptions): Promise<ValidateReport> {
  const resolver = options.resolver ?? offlineResolver;
  const { steps } = await preparePlan(options.planFile, options.rejectsDir);
  if (options.rejectsDir !== undefined) {
    await makeFolders(options.rejectsDir, { mode: 0o777, what: 'the rejects folder', hint: 'Give --rejects-dir an ordinary folder, e.g. ./rejects.' });
  }
  for (const step of steps) assertConstantNames(step, resolver);
  for (const step of steps) {
    assertNotInput(step.rejectsFile, step.inputFile);
    await assertWritableTarget(step.rejectsFile);
    await assertWritableTarget(warningsFileOf(step.rejectsFile));
  }
  const compiled: CompiledMapping[] = [];
  for (const step of steps) compiled.push(await compileMapping(step.mapping, { file: step.mappingFile }));
  const book = new ReferenceBook(linkedSteps(steps));
  const reports: StepReport[] = [];
  for (const [index, step] of steps.entries()) {
    const { interrupted, ...report } = await runStep(step, compiled[index] as CompiledMapping, book, resolver, options.signal, options.service);
    reports.push(report);
    if (interrupted) return { steps: reports, online: resolver.online !== false, interrupted: true };
  }
  return { steps: reports, online: resolver.online !== false, interrupted: false };
}
