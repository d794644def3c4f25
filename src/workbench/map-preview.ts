import {
  compileMapping,
  loadMapping,
  type MappedItem,
  type MappedRecord,
  type Mapping,
  mapRows,
  type NameResolver,
  type Reason,
  reasonText,
  type SourceOptions,
} from '../mapping/index.ts';
import {
  findAttachments,
  foldDuplicates,
  indexDuplicates,
  recordToSend,
  type ReferenceBook,
  RowChecks,
} from '../plan/index.ts';
import { openSource, type CellValue, type OpenSourceOptions, type SourceItem } from '../sources/index.ts';
import type { CellMark, PreviewRow } from './api.ts';
import { foldedText, uncheckedLinkText } from './reasons.ts';

import { PREVIEW_ROWS, type Raw, isObject, cellText, entryColumns, stepWords } from './map-entries.ts';

// ---------------------------------------------------------------------------------------------
// The first rows.

export interface Sample {
  header: string[];
  items: SourceItem[];
}

/** The header and the first rows of an input, read as the mapping's `source:` says. */
export async function readSample(inputFile: string, source: Raw | undefined, rows = PREVIEW_ROWS): Promise<Sample> {
  let detected: string[] | undefined;
  const options: OpenSourceOptions = {
    ...(source as SourceOptions | undefined),
    onMalformed: 'report',
    onDetected: (d) => (detected ??= d.columns),
  };
  const opened = await openSource(inputFile, options);
  const items: SourceItem[] = [];
  try {
    for await (const item of opened.items) {
      items.push(item);
      if (items.length >= rows) break;
    }
  } finally {
    await opened.items.return?.(undefined);
  }
  const first = items.find((item) => item.kind === 'row');
  const header = detected ?? (first && first.kind === 'row' ? Object.keys(first.values) : []);
  return { header, items };
}

/** Samples per column: the first distinct values, three at most. */
export function samplesOf(sample: Sample): Map<string, string[]> {
  const out = new Map<string, string[]>(sample.header.map((c) => [c, []]));
  for (const item of sample.items) {
    if (item.kind !== 'row') continue;
    for (const [column, value] of Object.entries(item.values)) {
      const list = out.get(column);
      const text = cellText(value).slice(0, 60);
      if (list && text !== '' && list.length < 3 && !list.includes(text)) list.push(text);
    }
  }
  return out;
}

async function* fromList<T>(items: readonly T[]): AsyncGenerator<T> {
  yield* items;
}

/** The keys a step's rows give, valid and rejected, for checking links to it without the account. */
export interface StepKeys {
  valid: string[];
  rejected: string[];
}

/**
 * Maps every row of another step's input through its mapping, for the keys links to it find. Its
 * own links and names are not checked: a row rejected only for those counts as there.
 */
export async function readStepKeys(mappingFile: string, inputFile: string, baseDir: string): Promise<StepKeys> {
  const mapping = await loadMapping(mappingFile);
  const compiled = await compileMapping(mapping, { file: mappingFile, baseDir });
  const opened = await openSource(inputFile, { ...mapping.source, onMalformed: 'report' });
  const keys: StepKeys = { valid: [], rejected: [] };
  for await (const item of mapRows(opened.items, compiled)) {
    if (item.kind === 'record') keys.valid.push(item.key);
    else if (item.kind === 'rejected' && item.key) keys.rejected.push(item.key);
  }
  return keys;
}

/** The columns of each entry, by its place in `fields`, for marking a reason's cells. */
function columnsByEntry(mapping: Mapping): { byIndex: Map<number, string[]>; byTarget: Map<string, string[]> } {
  const byIndex = new Map<number, string[]>();
  const byTarget = new Map<string, string[]>();
  mapping.fields.forEach((entry, index) => {
    const columns = [...entryColumns(entry as unknown as Raw)];
    byIndex.set(index, columns);
    byTarget.set(entry.to, [...(byTarget.get(entry.to) ?? []), ...columns]);
  });
  return { byIndex, byTarget };
}

/** The columns the mapping's `match` reads: those of the targets its criteria compare. */
function matchColumns(mapping: Mapping, map: ReturnType<typeof columnsByEntry>): string[] {
  const match = mapping.match;
  if (!match) return [];
  const out = new Set<string>();
  for (const by of Array.isArray(match.by) ? match.by : [match.by]) {
    if (by === 'custom') {
      mapping.fields.forEach((entry, index) => {
        if (entry.to === 'custom' && entry.definition === match.definition)
          for (const c of map.byIndex.get(index) ?? []) out.add(c);
      });
    } else
      for (const to of by === 'email' ? ['email'] : ['firstName', 'lastName', 'name'])
        for (const c of map.byTarget.get(to) ?? []) out.add(c);
  }
  return [...out];
}

interface ReasonPlaces {
  /** The input's columns: a reason's column is marked when it is one of them. */
  header: ReadonlySet<string>;
  map: ReturnType<typeof columnsByEntry>;
  key: string[];
  match: string[];
}

/**
 * Which columns a reason is about: the column it names, else the entry of its rule or message
 * (`fields[3]`), else the key, the match, or the entries of its target.
 */
function reasonColumns(reason: Pick<Reason, 'field' | 'message' | 'column' | 'rule'>, places: ReasonPlaces): string[] {
  const { field, message } = reason;
  if (reason.column !== undefined && places.header.has(reason.column)) return [reason.column];
  const place = /fields\[(\d+)\]/.exec(`${reason.rule ?? ''} ${field} ${message}`);
  if (place) return places.map.byIndex.get(Number(place[1])) ?? [];
  if (field === 'key') return places.key;
  if (field === 'match') return places.match;
  return places.map.byTarget.get(field) ?? [];
}

function mark(marks: Record<string, CellMark[]>, columns: string[], kind: CellMark['kind'], text: string): void {
  for (const column of columns.length === 0 ? [''] : columns) {
    const list = (marks[column] ??= []);
    if (!list.some((m) => m.kind === kind && m.text === text)) list.push({ kind, text });
  }
}

/** A part of a record in short: `ada@example.com (Work)`, `Customer since: 2024-01-31`, `Hauptstraße 5, Berlin`. */
function shortText(value: unknown): string {
  if (value === null || value === undefined) return '';
  if (typeof value !== 'object') return String(value);
  if (Array.isArray(value)) return value.map(shortText).filter(Boolean).join(', ');
  const object = value as Raw;
  if ('definition' in object && 'value' in object)
    return `${shortText(isObject(object.definition) ? object.definition.name : object.definition)}: ${shortText(object.value)}`;
  const type = typeof object.type === 'string' ? object.type : null;
  const service = typeof object.service === 'string' && object.service !== 'URL' ? object.service : null;
  const rest = Object.entries(object)
    .filter(([key]) => key !== 'type' && key !== 'service')
    .map(([, v]) => shortText(v))
    .filter(Boolean)
    .join(', ');
  const about = [service, type].filter(Boolean).join(', ');
  return about === '' ? rest : `${rest} (${about})`;
}

/**
 * What a row becomes, in short, for the preview: the record's fields, and the links the plan
 * makes (`found`: whether the key finds a row; null when it could not be checked).
 */
function recordText(mapped: MappedRecord, found: (ref: MappedRecord['refs'][number]) => boolean | null): string {
  const parts: string[] = [];
  for (const [key, value] of Object.entries(mapped.record)) {
    const text = shortText(value);
    if (text !== '') parts.push(`${key} ${text}`);
  }
  for (const ref of mapped.refs) {
    const state = found(ref);
    // A link that finds no row writes its fallback, as the run does (the organisation by its name).
    if (state === false && !ref.required && ref.fallback !== undefined)
      parts.push(`${String(ref.path[0])} ${shortText(ref.fallback)}`);
    if (state !== false)
      parts.push(
        `${String(ref.path[0])}: the row '${ref.key}' of ${stepWords([...ref.steps])}${state === null ? ' (not checked)' : ''}`,
      );
  }
  const text = parts.join('; ');
  return text.length > 400 ? `${text.slice(0, 399)}…` : text;
}

export interface PreviewOptions {
  mapping: Mapping;
  mappingFile: string;
  baseDir: string;
  sample: Sample;
  /** Names are checked with it, as `validate --online` checks them (the offline one checks none). */
  resolver: NameResolver;
  /** The plan's step of this input, whose earlier rows' keys a later row may repeat. */
  step: string;
  /** The keys of the steps the mapping links to, as far as they could be read; `linked` holds `step` when other steps link to it. */
  book: ReferenceBook;
  /** Steps whose keys the book lacks, with why: links to them are marked, not checked. */
  unchecked: ReadonlyMap<string, string>;
}

/**
 * The first rows mapped through the mapping and checked in validate's order (a repeated key or
 * match value, links to the other steps, names in the account), each reason placed on the cells
 * it is about. Rows with one key or match value are folded as `onDuplicate` says, as the run does.
 */
export async function previewRows(options: PreviewOptions): Promise<PreviewRow[]> {
  const { mapping, sample, book, step, unchecked } = options;
  const compiled = await compileMapping(mapping, { file: options.mappingFile, baseDir: options.baseDir });
  compiled.checkColumns(sample.header);
  const map = columnsByEntry(mapping);
  const places: ReasonPlaces = {
    header: new Set(sample.header),
    map,
    key: Array.isArray(mapping.key) ? mapping.key : [...entryColumns({ key: mapping.key })],
    match: matchColumns(mapping, map),
  };
  const valuesOf = new Map<number, Record<string, CellValue>>();
  for (const item of sample.items) if (item.kind === 'row') valuesOf.set(item.location.row, item.values);
  const mapped: MappedItem[] = [];
  for await (const item of mapRows(fromList(sample.items), compiled)) mapped.push(item);
  const policy = mapping.onDuplicate;
  const items =
    policy === 'first' || policy === 'merge'
      ? foldDuplicates(fromList(mapped), await indexDuplicates(fromList(mapped), mapping.match), policy)
      : fromList(mapped);
  // The run's row checks, in the run's order: what the preview says of a row is what the run does.
  const checks = new RowChecks(step, mapping, book.linked.has(step));
  const rows: PreviewRow[] = [];
  for await (const item of items) {
    const values = valuesOf.get(item.location.row) ?? {};
    const cells = Object.fromEntries(sample.header.map((c) => [c, cellText(values[c])]));
    const marks: Record<string, CellMark[]> = {};
    const outcome = checks.check(item);
    if (outcome.kind === 'skipped' || outcome.kind === 'folded') {
      if (outcome.kind === 'folded') mark(marks, places.key, 'warning', foldedText(outcome.into));
      rows.push({
        row: item.location.row,
        status: 'skipped',
        key: outcome.kind === 'folded' ? outcome.key : null,
        cells,
        marks,
        record: '',
      });
      continue;
    }
    if (outcome.kind === 'repeated') {
      // A step others link to may name one record in many rows (a company per person): the same values are that record again.
      rows.push({
        row: item.location.row,
        status: 'ok',
        key: outcome.mapped.key,
        cells,
        marks,
        record: recordText(outcome.mapped, () => null),
      });
      continue;
    }
    if (outcome.kind === 'rejected' && item.kind === 'rejected') {
      mark(marks, reasonColumns(item, places), 'rejected', reasonText(item));
      if (item.key) book.addRejected(step, item.key);
      rows.push({ row: item.location.row, status: 'rejected', key: item.key, cells, marks, record: '' });
      continue;
    }
    const mapped = item as MappedRecord;
    // Links to steps whose keys are not at hand are said to be unchecked, and left to the run.
    const refs = mapped.refs;
    const isChecked = (ref: (typeof refs)[number]): boolean => !ref.steps.some((s) => unchecked.has(s));
    for (const ref of refs) {
      const missing = ref.steps.find((s) => unchecked.has(s));
      if (missing !== undefined)
        mark(
          marks,
          reasonColumns({ field: ref.yamlPath, message: '', column: ref.column }, places),
          'warning',
          uncheckedLinkText(missing, unchecked.get(missing) ?? ''),
        );
    }
    // Before links and names become ids: the row as the mapping names it.
    const record = recordText(mapped, (ref) => (isChecked(ref) ? book.checkRefs([ref]).length === 0 : null));
    // A key or match value an earlier row has; else links and names as the run makes them.
    const same = outcome.kind === 'rejected' ? outcome.rejected : null;
    mapped.refs = refs.filter(isChecked);
    const sent = same
      ? null
      : await recordToSend(mapped, {
          entity: mapping.entity,
          links: book,
          resolver: options.resolver,
          files: findAttachments,
        });
    mapped.refs = refs;
    const problems = same ? [same, ...(same.also ?? [])] : sent?.kind === 'problems' ? sent.problems : [];
    for (const problem of problems)
      mark(marks, reasonColumns(problem, places), 'rejected', reasonText({ ...problem, values }));
    for (const warning of mapped.warnings ?? [])
      mark(marks, reasonColumns(warning, places), 'warning', reasonText({ ...warning, values }));
    if (problems.length === 0) book.addValid(step, mapped.key);
    else book.addRejected(step, mapped.key);
    rows.push({
      row: item.location.row,
      status: problems.length > 0 ? 'rejected' : 'ok',
      key: mapped.key,
      cells,
      marks,
      record,
    });
  }
  // Under `merge` a first row comes out after its last later row.
  return rows.sort((a, b) => a.row - b.row);
}

/** The mapping's entity as written, when it is one. */
