/**
 * The Map view: a mapping file as a table of the input's columns, the first rows mapped through
 * it, and the edits the table makes. The YAML stays the truth: the table is read from it, an edit
 * is made to it (through `yaml`'s document, so comments and the person's layout stay), and the
 * preview maps rows through the same compiler the run uses.
 */
import { isMap, isScalar, isSeq, parse as parseYamlValue, parseDocument, YAMLMap, type Document } from 'yaml';
import { FerryError } from '../errors/index.ts';
import { compileMapping, conditionColumns, type Condition, type Mapping, type MappedItem, type NameResolver, isTemplate, mapRows, MappingErrors, parseMapping, parseTemplate, resolveRecord, TARGETS, TRANSFORMS, type Entity, ENTITIES, type SourceOptions } from '../mapping/index.ts';
import { openSource, type CellValue, type OpenSourceOptions, type SourceItem } from '../sources/index.ts';
import type { CellMark, MapColumnView, MapEdit, MapEntryView, OnInvalidChoice, PreviewRow, YamlProblem } from './api.ts';
import { reasonText } from './reasons.ts';

/** Rows the preview maps: enough to see a column's values and its rejects, quick to redo on every change. */
export const PREVIEW_ROWS = 20;

const TYPED_TARGETS = new Set(['address', 'phone', 'email', 'website']);

type Raw = Record<string, unknown>;

/** A value as the page shows it. */
function cellText(value: CellValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) {
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  return String(value);
}

/** The columns a value spec reads (its column, template, coalesced values and condition). */
function valueColumns(spec: unknown, into: Set<string>): void {
  if (typeof spec === 'string') {
    // A malformed template is the parser's to report.
    const parsed = isTemplate(spec) ? parseTemplate(spec) : null;
    if (parsed?.ok) for (const column of parsed.columns) into.add(column);
    return;
  }
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec)) return;
  const value = spec as Raw;
  if (typeof value.column === 'string') into.add(value.column);
  if (typeof value.template === 'string') valueColumns(value.template, into);
  if (Array.isArray(value.coalesce)) for (const part of value.coalesce) valueColumns(part, into);
  if (value.when && typeof value.when === 'object') {
    try {
      conditionColumns(value.when as Condition, into);
    } catch {
      // An ill-formed condition is the parser's to report.
    }
  }
}

/** The columns a `fields` entry reads. */
export function entryColumns(entry: Raw): Set<string> {
  const into = new Set<string>();
  valueColumns(entry.value, into);
  valueColumns(entry.type, into);
  valueColumns(entry.service, into);
  if (entry.parts && typeof entry.parts === 'object') for (const part of Object.values(entry.parts as Raw)) valueColumns(part, into);
  const keys = Array.isArray(entry.key) ? entry.key : [entry.key];
  for (const key of keys) if (typeof key === 'string') valueColumns(key, into);
  return into;
}

/** Whether an entry reads its column in the plain form the table edits: `value: {column, transform}`. */
function isPlain(entry: Raw): boolean {
  const value = entry.value;
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return false;
  const keys = Object.keys(value as Raw);
  return typeof (value as Raw).column === 'string' && keys.every((k) => k === 'column' || k === 'transform') && entry.parts === undefined && entry.items === undefined && entry.ref === undefined;
}

function transformName(spec: unknown): { name: string; param: string } {
  if (typeof spec === 'string') return { name: spec, param: '' };
  if (spec && typeof spec === 'object') {
    const [name, options] = Object.entries(spec as Raw)[0] ?? ['', undefined];
    return { name, param: options === undefined ? '' : flowText(options) };
  }
  return { name: '', param: '' };
}

/** A value as YAML flow text, on one line: `";"`, `FR`, `{format: dd.MM.yyyy}`. */
function flowText(value: unknown): string {
  const doc = parseDocument('x');
  const node = doc.createNode(value, { flow: true });
  doc.contents = node as never;
  return doc.toString({ lineWidth: 0 }).trim();
}

function summaryOf(entry: Raw, column: string): string {
  const to = String(entry.to ?? '');
  if (entry.parts && typeof entry.parts === 'object') {
    const parts = Object.entries(entry.parts as Raw).filter(([, spec]) => {
      const set = new Set<string>();
      valueColumns(spec, set);
      return set.has(column);
    });
    return `${to}, ${parts.map(([part]) => part).join(' and ')} part`;
  }
  if (entry.ref !== undefined) return `${to}: link to step ${Array.isArray(entry.ref) ? entry.ref.join(' or ') : String(entry.ref)}`;
  if (to === 'custom') return `custom field ${String(entry.definition ?? '')}`;
  return `${to}, from a template or a condition`;
}

function entryView(entry: Raw, index: number, column: string): MapEntryView {
  const value = (entry.value && typeof entry.value === 'object' && !Array.isArray(entry.value) ? entry.value : {}) as Raw;
  const chain = Array.isArray(value.transform) ? value.transform : [];
  const last = chain.length > 0 ? transformName(chain[chain.length - 1]) : { name: '', param: '' };
  const onInvalid = entry.onInvalid;
  return {
    index,
    to: String(entry.to ?? ''),
    definition: typeof entry.definition === 'string' ? entry.definition : null,
    type: typeof entry.type === 'string' ? entry.type : null,
    transform: last.name,
    param: last.param,
    before: chain.slice(0, -1).map((t) => (typeof t === 'string' ? t : flowText(t))),
    required: entry.required === true,
    onInvalid: onInvalid === 'reject' || onInvalid === 'drop' || onInvalid === 'keep' ? onInvalid : 'default',
    ref: entry.ref === undefined ? null : Array.isArray(entry.ref) ? entry.ref.join(', ') : String(entry.ref),
    editable: isPlain(entry),
    summary: summaryOf(entry, column),
  };
}

/** The table's lines: one per column of the input, each with the entries that read it. */
export function tableOf(raw: unknown, header: readonly string[], samples: ReadonlyMap<string, string[]>): { columns: MapColumnView[]; otherEntries: Array<{ index: number; summary: string }> } {
  const fields = raw && typeof raw === 'object' && Array.isArray((raw as Raw).fields) ? ((raw as Raw).fields as unknown[]) : [];
  const byColumn = new Map<string, MapEntryView[]>(header.map((column) => [column, []]));
  const otherEntries: Array<{ index: number; summary: string }> = [];
  fields.forEach((field, index) => {
    if (!field || typeof field !== 'object') return;
    const entry = field as Raw;
    const columns = [...entryColumns(entry)].filter((c) => byColumn.has(c));
    if (columns.length === 0) {
      const value = entry.value;
      const shown = value === undefined ? '' : ` = ${flowText(value)}`;
      otherEntries.push({ index, summary: `${String(entry.to ?? '')}${entry.definition ? ` ${String(entry.definition)}` : ''}${shown}` });
      return;
    }
    for (const column of columns) byColumn.get(column)?.push(entryView(entry, index, column));
  });
  return { columns: header.map((name) => ({ name, samples: samples.get(name) ?? [], entries: byColumn.get(name) ?? [] })), otherEntries };
}

/** The YAML's problems, each with its line. */
export function yamlProblems(error: unknown): YamlProblem[] {
  if (error instanceof MappingErrors) return error.errors.map((e) => ({ message: e.location?.yamlPath ? `${e.location.yamlPath}: ${e.message}` : e.message, line: e.location?.line ?? null }));
  if (error instanceof FerryError) return [{ message: error.message, line: error.location?.line ?? null }];
  throw error;
}

// ---------------------------------------------------------------------------------------------
// Edits.

function fieldsOf(doc: Document): YAMLMap[] {
  const fields = doc.get('fields');
  if (!isSeq(fields)) throw new FerryError('MAPPING_INVALID', 'the mapping has no `fields` list to edit', { hint: 'Fix the YAML first.' });
  return fields.items.filter((item): item is YAMLMap => isMap(item));
}

/** The entry of `column` the table edits: the first plain one that reads it. */
function plainEntryOf(doc: Document, column: string): YAMLMap | undefined {
  return fieldsOf(doc).find((item) => {
    const entry = item.toJSON() as Raw;
    return isPlain(entry) && (entry.value as Raw).column === column;
  });
}

function needEntry(doc: Document, column: string): YAMLMap {
  const entry = plainEntryOf(doc, column);
  if (!entry) throw new FerryError('USAGE', `no field reads the column ${JSON.stringify(column)} in the plain form the table edits`, { hint: 'Choose a target for it first, or edit it in the YAML.' });
  return entry;
}

function setTarget(doc: Document, entry: YAMLMap, to: string): void {
  const custom = to.startsWith('custom:') ? to.slice('custom:'.length) : null;
  entry.set('to', custom === null ? to : 'custom');
  if (custom !== null) {
    entry.set('definition', custom);
    if (!entry.has('tag')) entry.set('tag', null);
  } else {
    entry.delete('definition');
    entry.delete('tag');
  }
  const target = custom === null ? to : 'custom';
  if (TYPED_TARGETS.has(target)) {
    if (!entry.has('type')) entry.set('type', 'Work');
  } else {
    entry.delete('type');
    entry.delete('service');
  }
  void doc;
}

/**
 * Applies one edit of the table to the mapping's YAML and returns the new text. Comments and the
 * order and style of what was not edited stay as they were.
 */
export function applyEdit(yaml: string, edit: MapEdit): string {
  const doc = parseDocument(yaml);
  if (doc.errors.length > 0) throw new FerryError('MAPPING_INVALID', 'the YAML has errors: fix them before using the table', { hint: 'The line of each error is shown beside the YAML.' });
  switch (edit.kind) {
    case 'target': {
      const entry = plainEntryOf(doc, edit.column);
      if (edit.to === '') {
        if (entry) {
          const fields = doc.get('fields');
          if (isSeq(fields)) fields.items.splice(fields.items.indexOf(entry), 1);
        }
        break;
      }
      if (entry) {
        setTarget(doc, entry, edit.to);
        break;
      }
      const fields = doc.get('fields');
      if (!isSeq(fields)) throw new FerryError('MAPPING_INVALID', 'the mapping has no `fields` list to edit');
      const node = doc.createNode({ to: 'x', value: { column: edit.column } }) as YAMLMap;
      const value = node.get('value');
      if (isMap(value)) value.flow = true;
      setTarget(doc, node, edit.to);
      fields.add(node);
      break;
    }
    case 'transform': {
      const entry = needEntry(doc, edit.column);
      const value = entry.get('value') as YAMLMap;
      const chain = value.get('transform');
      const before = isSeq(chain) ? chain.items.slice(0, -1).map((item) => (isScalar(item) ? item.value : (item as { toJSON(): unknown }).toJSON())) : [];
      if (edit.transform === '') {
        if (before.length === 0) value.delete('transform');
        else value.set('transform', doc.createNode(before, { flow: true }));
        break;
      }
      if (!(edit.transform in TRANSFORMS)) throw new FerryError('MAPPING_INVALID', `there is no transform ${JSON.stringify(edit.transform)}`);
      let options: unknown;
      try {
        options = edit.param.trim() === '' ? undefined : parseYamlValue(edit.param);
      } catch (error) {
        throw new FerryError('MAPPING_INVALID', `the options of ${edit.transform} are not a YAML value: ${(error as Error).message.split('\n')[0]}`, { cause: error });
      }
      const last = options === undefined ? edit.transform : { [edit.transform]: options };
      value.set('transform', doc.createNode([...before, last], { flow: true }));
      break;
    }
    case 'required': {
      const entry = needEntry(doc, edit.column);
      if (edit.required) entry.set('required', true);
      else entry.delete('required');
      break;
    }
    case 'onInvalid': {
      const entry = needEntry(doc, edit.column);
      if (edit.onInvalid === 'default') entry.delete('onInvalid');
      else entry.set('onInvalid', edit.onInvalid satisfies OnInvalidChoice);
      break;
    }
    case 'onDuplicate':
      doc.set('onDuplicate', edit.onDuplicate);
      break;
    case 'matchBy': {
      const by = edit.matchBy
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
      if (by.length === 0) {
        doc.delete('match');
        break;
      }
      const match = doc.get('match');
      const value = by.length === 1 ? by[0] : by;
      if (isMap(match)) match.set('by', value);
      else {
        const node = doc.createNode({ by: value, onMatch: 'update' }) as YAMLMap;
        node.flow = true;
        doc.set('match', node);
      }
      break;
    }
  }
  return doc.toString({ lineWidth: 0, flowCollectionPadding: false });
}

// ---------------------------------------------------------------------------------------------
// The first rows.

export interface Sample {
  header: string[];
  items: SourceItem[];
}

/** The header and the first rows of an input, read as the mapping's `source:` says. */
export async function readSample(inputFile: string, source: Raw | undefined, rows = PREVIEW_ROWS): Promise<Sample> {
  let detected: string[] | undefined;
  const options: OpenSourceOptions = { ...(source as SourceOptions | undefined), onMalformed: 'report', onDetected: (d) => (detected ??= d.columns) };
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

async function* fromList(items: SourceItem[]): AsyncGenerator<SourceItem> {
  yield* items;
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

/** Which columns a reason is about: the entry its message names (`fields[3]`), else the entries of its target. */
function reasonColumns(field: string, message: string, map: ReturnType<typeof columnsByEntry>, keyColumns: string[]): string[] {
  const place = /fields\[(\d+)\]/.exec(`${field} ${message}`);
  if (place) return map.byIndex.get(Number(place[1])) ?? [];
  if (field === 'key') return keyColumns;
  return map.byTarget.get(field) ?? [];
}

function mark(marks: Record<string, CellMark[]>, columns: string[], kind: CellMark['kind'], text: string): void {
  for (const column of columns.length === 0 ? [''] : columns) (marks[column] ??= []).push({ kind, text });
}

/**
 * The first rows mapped through the mapping, names checked with `resolver` (the account's, as
 * `validate --online` checks them), each reason placed on the cells it is about.
 */
export async function previewRows(mapping: Mapping, mappingFile: string, baseDir: string, sample: Sample, resolver: NameResolver): Promise<PreviewRow[]> {
  const compiled = await compileMapping(mapping, { file: mappingFile, baseDir });
  compiled.checkColumns(sample.header);
  const map = columnsByEntry(mapping);
  const keyColumns = Array.isArray(mapping.key) ? mapping.key : [...entryColumns({ key: mapping.key })];
  const rows: PreviewRow[] = [];
  const valuesOf = new Map<number, Record<string, CellValue>>();
  for (const item of sample.items) if (item.kind === 'row') valuesOf.set(item.location.row, item.values);
  for await (const item of mapRows(fromList(sample.items), compiled) as AsyncIterable<MappedItem>) {
    const values = valuesOf.get(item.location.row) ?? {};
    const cells = Object.fromEntries(sample.header.map((c) => [c, cellText(values[c])]));
    const marks: Record<string, CellMark[]> = {};
    if (item.kind === 'skipped') {
      rows.push({ row: item.location.row, status: 'skipped', key: null, cells, marks });
      continue;
    }
    if (item.kind === 'rejected') {
      mark(marks, reasonColumns(item.field, item.message, map, keyColumns), 'rejected', reasonText(item));
      rows.push({ row: item.location.row, status: 'rejected', key: item.key, cells, marks });
      continue;
    }
    // Links to other steps are made by the plan; names are checked as the run checks them.
    const problems = resolveRecord(item, resolver);
    for (const problem of problems) mark(marks, reasonColumns(problem.field, problem.message, map, keyColumns), 'rejected', reasonText(problem));
    for (const warning of item.warnings ?? []) mark(marks, reasonColumns(warning.field, warning.message, map, keyColumns), 'warning', reasonText({ code: warning.code, field: warning.field, message: warning.value === undefined ? warning.message : `${warning.message} (value: ${warning.value})` }));
    rows.push({ row: item.location.row, status: problems.length > 0 ? 'rejected' : 'ok', key: item.key, cells, marks });
  }
  return rows;
}

/** The mapping's entity as written, when it is one. */
export function entityOf(raw: unknown): Entity {
  const entity = raw && typeof raw === 'object' ? (raw as Raw).entity : undefined;
  return (ENTITIES as readonly unknown[]).includes(entity) ? (entity as Entity) : 'party';
}

/** Every target of the entity, for the list. */
export function targetsOf(entity: Entity): string[] {
  return [...TARGETS[entity]];
}

/** Parses the YAML for the table even when it does not pass the schema: what can be shown is shown. */
export function looseParse(yaml: string): unknown {
  try {
    return parseDocument(yaml).toJS();
  } catch {
    return null;
  }
}

export { parseMapping };
