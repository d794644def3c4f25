/**
 * A step made ready to be read, and the reading of its rows, shared by the importer and validate
 * so that both see the same rows: loads a mapping (or a plan's mappings, in run order) as
 * prepared steps, points a step at a live v1 account or at a fixed rejects file, checks the
 * names the mapping writes as constants, and opens a step's input mapped into records (folding
 * duplicates, counting unread columns) or counts its rows. validate.ts checks the rows it reads.
 */
import { readFile } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { stringify as stringifyYaml } from 'yaml';
import { z } from 'zod';
import { FerryError, type ErrorLocation } from '../errors/index.ts';
import {
  checkConstantNames,
  type CompiledMapping,
  compileMapping,
  loadMapping,
  parseMapping,
  mapFieldBatches,
  type MappedItem,
  type Mapping,
  mapRows,
  matchProblems,
  type NameResolver,
  readsAsRejectsFile,
  REJECT_COLUMNS,
  type SourceOptions,
  type TransformRegistry,
} from '../mapping/index.ts';
import {
  type FieldRow,
  openSource,
  type OpenSourceOptions,
  readGivenRows,
  type RowReader,
  sourceBatches,
  sourceFieldBatches,
  type SourceItem,
  statSource,
} from '../sources/index.ts';
import { isV1LiveInput, type LocatedYaml, parseLocatedYaml, parseV1LiveInput } from '../util/index.ts';
import type { V1LiveConnection } from '../client/index.ts';
import { loadPlan, type Plan, type PlanStep } from './load.ts';
import { mappingRefs, orderSteps, type StepRef } from './order.ts';
import { ColumnCensus } from './columns-not-carried.ts';
import { foldDuplicates, indexDuplicates } from './duplicates.ts';
import { checkLiveList } from './live-list.ts';

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
  /** The folder where the reads of a live step spool what they fetch (in the run's state folder); set by the importer. */
  spool?: string;
  /** The transforms its mapping may name, when the caller brought its own (transformRegistry). @default TRANSFORMS */
  transforms?: TransformRegistry;
  /** Rows the caller hands in, read in place of a file (`inputFile` then only names them). */
  rows?: RowReader;
}

/** The steps' mappings compiled, in the steps' order, with the transforms each was loaded with. */
export async function compileSteps(steps: readonly PreparedStep[]): Promise<CompiledMapping[]> {
  const compiled: CompiledMapping[] = [];
  for (const step of steps)
    compiled.push(await compileMapping(step.mapping, { file: step.mappingFile, transforms: step.transforms }));
  return compiled;
}

/**
 * A step whose source is `format: v1-api` reads the live account its input names
 * (`v1+https://HOST`), or, with no input, the source's `baseUrl`; a file as its input is a mistake.
 */
function liveInputOf(step: PreparedStep): void {
  const where = step.name === '' ? 'the mapping' : `step ${step.name}`;
  if (step.source.format !== 'v1-api' || isV1LiveInput(step.inputFile)) {
    if (step.inputFile === '')
      throw new FerryError('PLAN_INVALID', `${where} has no input`, {
        hint: 'Give the step an input: a file, or v1+https://HOST for a live legacy account.',
      });
    return;
  }
  if (step.inputFile !== '') {
    throw new FerryError(
      'USAGE',
      `${where} reads a live v1 account (source format v1-api), but its input is the file ${step.inputFile}`,
      {
        hint: "Give the input as v1+https://HOST, leave it out (then the source's baseUrl is read), or drop format: v1-api to read the file.",
      },
    );
  }
  if (step.source.baseUrl === undefined) {
    throw new FerryError(
      'PLAN_INVALID',
      `${where} reads a live v1 account (source format v1-api), but names neither an input nor a baseUrl`,
      {
        hint: 'Add baseUrl: https://OLD-ACCOUNT.example.com to the source, or input: v1+https://OLD-ACCOUNT.example.com to the step.',
      },
    );
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
      throw new FerryError(
        'CONFIG_MISSING',
        `${step.name === '' ? 'the input' : `step ${step.name}`} reads a live v1 account, and this caller gave no connection to it`,
        {
          hint: "Read it with crm-ferry import, run or verify (the old account's token in CRM_FERRY_V1_TOKEN).",
        },
      );
    }
    step.live = live;
    live.readerFor(
      parseV1LiveInput(isV1LiveInput(step.inputFile) ? step.inputFile : `v1+${step.source.baseUrl ?? ''}`).baseUrl,
    );
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
  return yamlPath
    .split(/\.|\[|\]/)
    .filter((part) => part !== '')
    .map((part) => (/^\d+$/.test(part) ? Number(part) : part));
}

/** What preparing one step takes; a plan step gives its own source options, time zone and place in the plan. */
interface StepToPrepare {
  name: string;
  mappingFile: string;
  inputFile: string;
  rejectsFile: string;
  /** The plan step's `source:`, over the mapping's own. */
  source?: SourceOptions | undefined;
  /** The plan's `timeZone`, for a mapping that names none itself. */
  timeZone?: string | undefined;
  /** Where the step is in the plan file, for errors about the step; absent for a single mapping. */
  planLocation?: ErrorLocation | undefined;
  /** The transforms the mapping may name, when the caller brought its own (transformRegistry). @default TRANSFORMS */
  transforms?: TransformRegistry | undefined;
  /** The mapping as a value, checked as a file's would be; `mappingFile` then only names it. */
  mapping?: Mapping | undefined;
  /** Rows the caller hands in, read in place of a file. */
  rows?: RowReader | undefined;
}

async function prepareStep(options: StepToPrepare): Promise<PreparedStep> {
  const {
    name,
    mappingFile,
    inputFile,
    rejectsFile,
    source: sourceOverride,
    timeZone: planTimeZone,
    planLocation,
    transforms,
  } = options;
  // A mapping given as a value is checked as its YAML text would be, so that its errors say the
  // same things (its place by `yamlPath`; the lines are those of the value written as YAML).
  const text = options.mapping === undefined ? undefined : stringifyYaml(options.mapping);
  let mapping =
    text === undefined
      ? await loadMapping(mappingFile, { transforms })
      : parseMapping(text, mappingFile, { transforms });
  // Read again for line numbers and to see whether the mapping names a time zone itself (the
  // schema's default hides that).
  const yaml = parseLocatedYaml(
    text ?? (await readFile(mappingFile, 'utf8')).replace(/^\uFEFF/, ''),
    mappingFile,
    'MAPPING_INVALID',
  );
  const raw = yaml.value as Record<string, unknown> | null;
  if (planTimeZone !== undefined && (raw === null || typeof raw !== 'object' || !('timeZone' in raw))) {
    mapping = { ...mapping, timeZone: planTimeZone };
  }
  const refs = mappingRefs(mapping, mappingFile).map((ref) => ({
    ...ref,
    location: located(yaml, ref.location.yamlPath ?? '', pathOf(ref.location.yamlPath ?? '')),
  }));
  const step: PreparedStep = {
    name,
    mappingFile,
    inputFile,
    rejectsFile,
    mapping,
    yaml,
    refs,
    source: { ...(mapping.source ?? {}), ...(sourceOverride ?? {}) },
  };
  if (transforms) step.transforms = transforms;
  if (options.rows) {
    step.rows = options.rows;
    return step;
  }
  liveInputOf(step);
  if (readsLive(step)) {
    await checkLiveList({
      inputFile: step.inputFile,
      mappingFile,
      mapping,
      transforms,
      record: step.source.record,
      ...(planLocation === undefined
        ? {
            label: 'this import',
            code: 'CONFIG_INVALID',
            location: located(yaml, 'source.record', ['source', 'record']),
          }
        : { label: `step ${name}`, code: 'PLAN_INVALID', location: planLocation }),
    });
  } else if (await readsAsRejectsFile(inputFile)) {
    readAsRejects(step, inputFile);
  }
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
    throw new FerryError(
      'USAGE',
      `--retry-rejects takes a rejects file crm-ferry wrote (its last columns are ${REJECT_COLUMNS.join(', ')}); ${file} is not one`,
      {
        location: { file },
        hint: 'Give the rejects file of validate or of a run, fixed; to take the rejected rows from the fixed input instead, give --retry-rejects alone.',
      },
    );
  }
  const named = basename(file).replace(/(\.dry-run)?\.rejects\.csv$/i, '');
  const step = steps.length === 1 ? steps[0] : steps.find((s) => s.name === named);
  if (!step) {
    throw new FerryError(
      'USAGE',
      `--retry-rejects: ${basename(file)} names no step of the plan; a step's rejects file is <step>.rejects.csv (${steps.map((s) => `${s.name}.rejects.csv`).join(', ')})`,
      { location: { file } },
    );
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
async function* countedBatches<Batch extends ReadonlyArray<{ kind: string }>>(
  batches: AsyncGenerator<Batch>,
  census: ColumnCensus,
): AsyncGenerator<Batch> {
  for await (const batch of batches) {
    for (const item of batch)
      if (item.kind === 'fields')
        census.countFields((item as unknown as FieldRow).fields, (item as unknown as FieldRow).header);
    yield batch;
  }
}

/** Opens, checks and maps one reading of a step's input; see openStepItems. */
async function openMapped(
  step: PreparedStep,
  compiled: CompiledMapping,
  signal: AbortSignal | undefined,
  census: ColumnCensus | null,
): Promise<(Omit<OpenedStep, 'census'> & { census: ColumnCensus | null }) | null> {
  let detected: string[] | undefined;
  const options: OpenSourceOptions = {
    ...step.source,
    onMalformed: 'report',
    onDetected: (d) => (detected ??= d.columns),
    v1Live: step.live,
    v1Spool: step.spool,
  };
  if (signal) options.signal = signal;
  let items: AsyncIterableIterator<MappedItem>;
  let header: string[];
  let legacy = false;
  try {
    // Rows a caller hands in carry the columns each row has, as a legacy export's records do.
    const opened = step.rows
      ? { items: readGivenRows(step.inputFile, step.rows, signal), varyingColumns: true }
      : await openSource(step.inputFile, options);
    legacy = opened.varyingColumns;
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
export async function openStepItems(
  step: PreparedStep,
  compiled: CompiledMapping,
  signal: AbortSignal | undefined,
): Promise<OpenedStep | null> {
  const census = new ColumnCensus(compiled);
  const policy = step.mapping.onDuplicate;
  // Under `separate` only rows of one key name one record, and the key checks reject them as they come.
  if (policy === 'reject' || policy === 'separate') {
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
 * (CSV a batch at a time, without mapping): the total a progress display shows. A live step is
 * counted only from a spool that holds its whole list (after a plan's set-up read it); otherwise
 * this throws USAGE rather than read the old account a second time.
 */
export async function countStepItems(step: PreparedStep, signal?: AbortSignal): Promise<number> {
  // A live account is counted from a spool holding its whole list, never by reading it again.
  const options: OpenSourceOptions = {
    ...step.source,
    onMalformed: 'report',
    v1Live: step.live,
    v1Spool: step.spool,
    v1SpoolOnly: true,
  };
  if (signal) options.signal = signal;
  const opened = step.rows
    ? { items: readGivenRows(step.inputFile, step.rows, signal) }
    : await openSource(step.inputFile, options);
  const batches = sourceFieldBatches(opened.items) ?? sourceBatches(opened.items);
  let count = 0;
  if (batches) for await (const batch of batches()) count += batch.length;
  else for await (const _item of opened.items) count += 1;
  return count;
}

function singleStepName(mappingFile: string, mapping: Mapping): string {
  return mapping.name ?? basename(mappingFile, extname(mappingFile));
}

/**
 * Loads one mapping for a run over one input, as a step named after the mapping. A mapping with
 * `ref:` links needs a plan: MAPPING_REFERENCE.
 */
export async function prepareSingleStep(
  mappingFile: string,
  inputFile: string,
  rejectsFile = join(dirname(isV1LiveInput(inputFile) ? mappingFile : inputFile), 'rejects.csv'),
  transforms?: TransformRegistry,
): Promise<PreparedStep> {
  const step = await prepareStep({ name: '', mappingFile, inputFile, rejectsFile, transforms });
  step.name = singleStepName(mappingFile, step.mapping);
  const firstRef = step.refs[0];
  if (firstRef) {
    throw new FerryError(
      'MAPPING_REFERENCE',
      `the mapping links to step \`${firstRef.step}\` with \`ref\`, which only a plan can provide`,
      {
        location: firstRef.location,
        hint: 'Use the plan that holds both steps (`crm-ferry run PLAN`, `crm-ferry validate --plan PLAN`), or link by id or name instead of ref.',
      },
    );
  }
  return step;
}

/**
 * The step with the plan's `match` and `onDuplicate` in place of the mapping's, checked as the
 * mapping's would be (a project matched `within: organisation` is refused, with the plan's place).
 */
function withPlanMatch(step: PreparedStep, planStep: PlanStep): PreparedStep {
  if (planStep.match === undefined && planStep.onDuplicate === undefined) return step;
  const match = planStep.match ?? step.mapping.match;
  const [problem] = match ? matchProblems(step.mapping.entity, match) : [];
  if (problem) {
    const at = ['match', ...problem.path].join('.');
    throw new FerryError(
      'PLAN_INVALID',
      `step ${planStep.name}: ${at}: ${problem.message} (for the ${step.mapping.entity} records of ${basename(step.mappingFile)})`,
      {
        location: { ...planStep.location, yamlPath: `steps[${planStep.index}].match` },
      },
    );
  }
  return {
    ...step,
    mapping: {
      ...step.mapping,
      ...(planStep.match ? { match: planStep.match } : {}),
      ...(planStep.onDuplicate ? { onDuplicate: planStep.onDuplicate } : {}),
    },
  };
}

/** Loads a plan and its mappings, in run order; every problem is found before any row is read. */
export async function preparePlan(
  planFile: string,
  rejectsDir?: string,
  transforms?: TransformRegistry,
): Promise<{ plan: Plan; steps: PreparedStep[] }> {
  const plan = await loadPlan(planFile);
  const dir = rejectsDir ?? dirname(planFile);
  const prepared: PreparedStep[] = [];
  for (const step of plan.steps) {
    const ready = await prepareStep({
      name: step.name,
      mappingFile: step.mappingFile,
      inputFile: step.inputFile,
      rejectsFile: join(dir, `${step.name}.rejects.csv`),
      source: step.source,
      timeZone: plan.timeZone,
      planLocation: step.location,
      transforms,
    });
    prepared.push(withPlanMatch(ready, step));
  }
  return { plan, steps: orderSteps(prepared) };
}

/**
 * What a command runs over: one mapping and its input, a plan, or rows the caller hands in (another
 * system's API, a database) with a mapping file or a mapping value.
 */
export type RunSource =
  | { kind: 'mapping'; mappingFile: string; inputFile: string }
  | { kind: 'plan'; planFile: string }
  | RowsSource;

/** Rows from anywhere: `read` gives them again each time it is called; the mapping's key makes each row's stable key. */
export interface RowsSource {
  kind: 'rows';
  /** Names the rows in messages, results and the state (the step's name). */
  name: string;
  /** A mapping file, or the mapping as a value (checked as a file's would be). */
  mapping: string | Mapping;
  read: RowReader;
}

/** A RunSource as options take it (import, verify): checked once, named in errors by its place. */
export const runSourceSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('mapping'), mappingFile: z.string().min(1), inputFile: z.string().min(1) }),
  z.object({ kind: z.literal('plan'), planFile: z.string().min(1) }),
  z.object({
    kind: z.literal('rows'),
    name: z.string().min(1),
    mapping: z.union([
      z.string().min(1),
      z.custom<Mapping>((value) => value !== null && typeof value === 'object' && !Array.isArray(value), {
        message: 'a mapping file or a mapping value',
      }),
    ]),
    read: z.custom<RowReader>((value) => typeof value === 'function', {
      message: 'a function that reads the rows (an async iterable of objects)',
    }),
  }),
]);

/** A run's source as a summary names it: the plan, or the input with its mapping (`shown` makes a path readable). */
export function describeRunSource(source: RunSource, shown: (path: string) => string): string {
  if (source.kind === 'plan') return shown(source.planFile);
  if (source.kind === 'mapping') return `${shown(source.inputFile)} with ${shown(source.mappingFile)}`;
  return `the rows of ${source.name} with ${typeof source.mapping === 'string' ? shown(source.mapping) : 'a mapping value'}`;
}

/** One step over rows a caller hands in. */
async function prepareRowsStep(
  source: RowsSource,
  rejectsFile: string | undefined,
  transforms: TransformRegistry | undefined,
): Promise<PreparedStep> {
  const value = typeof source.mapping === 'string' ? undefined : source.mapping;
  const mappingFile = typeof source.mapping === 'string' ? source.mapping : `the mapping of ${source.name}`;
  const step = await prepareStep({
    name: source.name,
    mappingFile,
    inputFile: source.name,
    rejectsFile: rejectsFile ?? `${source.name}.rejects.csv`,
    transforms,
    mapping: value,
    rows: source.read,
  });
  const firstRef = step.refs[0];
  if (firstRef) {
    throw new FerryError(
      'MAPPING_REFERENCE',
      `the mapping links to step \`${firstRef.step}\` with \`ref\`, which only a plan can provide`,
      { location: firstRef.location, hint: 'Link by id or name instead of ref.' },
    );
  }
  return step;
}

/** The steps of a run, ready to be read: what import, run, the dry run, validate and verify all start from. */
export interface PreparedRun {
  /** The plan (its `setup:`, its file); null for one mapping over one input. */
  plan: Plan | null;
  /** In run order. */
  steps: PreparedStep[];
  /** Each step's mapping, compiled, in the same order as `steps`. */
  compiled: CompiledMapping[];
}

export interface PrepareRunOptions {
  /** One mapping: where its rejects go. @default rejects.csv beside the input (beside the mapping for a live input) */
  rejectsFile?: string | undefined;
  /** A plan: the folder of its `<step>.rejects.csv` files. @default the plan file's folder */
  rejectsDir?: string | undefined;
  /** `--retry-rejects FILE`: a fixed rejects file read in place of its step's input. @default null */
  retryFile?: string | null | undefined;
  /**
   * Steps that read a live v1 account are connected through this (and refused without one). A
   * caller that reads no live account (validate) leaves it out: such a step is then refused when
   * it is read. @default not connected
   */
  live?: { connection: V1LiveConnection | undefined } | undefined;
  /** Something to check once the plan is loaded, before any step is compiled (a flag that needs a plan's `setup:`). */
  checkPlan?: ((plan: Plan | null) => void) | undefined;
  /** The transforms the mappings may name, when the caller brought its own (transformRegistry). @default TRANSFORMS */
  transforms?: TransformRegistry | undefined;
}

/**
 * Every step's input file is there and readable. Checked before the account is asked anything
 * and before the state folder is made: exit 2 says nothing was done, and a missing file is what
 * needs saying, not a state another account left in the folder. A live legacy input is read from
 * its account, so it is checked when it is read.
 */
export async function checkStepInputs(steps: readonly PreparedStep[]): Promise<void> {
  for (const step of steps) {
    if (readsLive(step) || step.rows) continue;
    try {
      await statSource(step.inputFile);
    } catch (error) {
      if (!(error instanceof FerryError) || step.name === '') throw error;
      throw new FerryError(error.code, `step ${step.name}: ${error.message}`, {
        location: error.location,
        hint: error.hint,
        cause: error,
      });
    }
  }
}

/**
 * The one way a run is opened from its files: loads the plan or the single mapping as prepared
 * steps in run order, takes a fixed rejects file in place of its step's input, connects the steps
 * that read a live v1 account, and compiles every mapping. Nothing is read from the account here:
 * the names come after (load's readNames), and so do the rows.
 */
export async function prepareRun(source: RunSource, options: PrepareRunOptions = {}): Promise<PreparedRun> {
  const { transforms } = options;
  const planned = source.kind === 'plan' ? await preparePlan(source.planFile, options.rejectsDir, transforms) : null;
  options.checkPlan?.(planned?.plan ?? null);
  const steps =
    source.kind === 'plan'
      ? (planned?.steps ?? [])
      : source.kind === 'rows'
        ? [await prepareRowsStep(source, options.rejectsFile, transforms)]
        : [await prepareSingleStep(source.mappingFile, source.inputFile, options.rejectsFile, transforms)];
  await checkStepInputs(steps);
  if (options.retryFile !== undefined && options.retryFile !== null) await retryFromRejects(steps, options.retryFile);
  if (options.live) connectLiveSteps(steps, options.live.connection);
  return { plan: planned?.plan ?? null, steps, compiled: await compileSteps(steps) };
}
