/**
 * The Map view: a mapping file as a table of the input's columns, the first rows mapped through
 * it, and the edits the table makes. The YAML stays the truth: the table is read from it, an edit
 * is made to it (through `yaml`'s document, so comments and the person's layout stay), and the
 * preview maps rows through the same compiler the run uses, and checks them in validate's order.
 *
 * The table edits what the mapping language says in its plain forms: a column's value
 * (`value: {column, transform}`) for any target, an address's part, a link's key (`ref:` +
 * `key: "{{column}}"`, with a value beside it as the name written when the link finds nothing),
 * an item's type and a website's service (a constant or a column), and the entry's `required`
 * and `onInvalid`. Anything else (a template over several columns, a condition, numbered items)
 * is shown in words and edited in the YAML: the table never writes a form it cannot read back.
 */
import { isMap, isNode, isScalar, isSeq, parse as parseYamlValue, parseDocument, Scalar, YAMLMap, type Document, type YAMLSeq } from 'yaml';
import { z } from 'zod';
import { FerryError } from '../errors/index.ts';
import {
  addressPartsSchema,
  compileMapping,
  conditionColumns,
  type Condition,
  type Entity,
  ENTITIES,
  isTemplate,
  LINK_KINDS,
  loadMapping,
  type MappedItem,
  type MappedRecord,
  type Mapping,
  MappingErrors,
  mapRows,
  type NameResolver,
  parseMapping,
  parseTemplate,
  REPEATABLE_KINDS,
  type Reason,
  reasonText,
  type SourceOptions,
  TARGET_INFO,
  TARGETS,
  TRANSFORMS,
  type TargetKind,
  WEBSITE_SERVICES,
} from '../mapping/index.ts';
import { findAttachments, foldDuplicates, indexDuplicates, recordToSend, type ReferenceBook, RowChecks } from '../plan/index.ts';
import { openSource, type CellValue, type OpenSourceOptions, type SourceItem } from '../sources/index.ts';
import type { CellMark, CellRole, Choice, MapColumnView, MapEdit, MapEntryView, PreviewRow, TargetChoice, YamlProblem } from './api.ts';
import { ON_INVALID_CHOICES } from './api.ts';
import { foldedText, uncheckedLinkText } from './reasons.ts';

/** Rows the preview maps: enough to see a column's values and its rejects, quick to redo on every change. */
export const PREVIEW_ROWS = 20;

/** The parts of an address, in the order the schema lists them. */
const ADDRESS_PARTS = Object.keys(addressPartsSchema.shape);

/** Items with a type (Home, Work, ...), and the types offered first; any other is typed in the YAML. */
type ItemKind = 'address' | 'phone' | 'email' | 'website';
const USUAL_TYPES: Record<ItemKind, readonly string[]> = {
  email: ['Work', 'Home'],
  phone: ['Work', 'Home', 'Mobile', 'Fax'],
  address: ['Work', 'Home', 'Postal'],
  website: ['Work', 'Home'],
};

/** How the target list names the targets whose name alone says too little. */
const TARGET_WORDS: Record<string, string> = {
  email: 'e-mail address',
  phone: 'phone number',
  website: 'website',
  address: 'address: street, as one value',
  tags: 'tags (a list: split it)',
  organisation: 'organisation by name (or id)',
};

type Raw = Record<string, unknown>;

function isObject(value: unknown): value is Raw {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

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
  if (!isObject(spec)) return;
  if (typeof spec.column === 'string') into.add(spec.column);
  if (typeof spec.template === 'string') valueColumns(spec.template, into);
  if (Array.isArray(spec.coalesce)) for (const part of spec.coalesce) valueColumns(part, into);
  if (spec.when && typeof spec.when === 'object') {
    try {
      conditionColumns(spec.when as Condition, into);
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
  if (isObject(entry.parts)) for (const part of Object.values(entry.parts)) valueColumns(part, into);
  const keys = Array.isArray(entry.key) ? entry.key : [entry.key];
  for (const key of keys) if (typeof key === 'string') valueColumns(key, into);
  return into;
}

// ---------------------------------------------------------------------------------------------
// How an entry reads a column, and what the table calls its target.

/** The column of a value in the plain form the table edits, `{column, transform}`, else null. */
function plainColumn(spec: unknown): string | null {
  if (!isObject(spec) || typeof spec.column !== 'string') return null;
  return Object.keys(spec).every((k) => k === 'column' || k === 'transform') ? spec.column : null;
}

/** The column of a link's key written as one placeholder, `key: "{{Company ID}}"`, else null. */
function keyColumn(entry: Raw): string | null {
  if (entry.ref === undefined || typeof entry.key !== 'string') return null;
  const parsed = parseTemplate(entry.key);
  if (!parsed.ok || parsed.parts.length !== 1) return null;
  const [part] = parsed.parts;
  return typeof part === 'object' ? part.column : null;
}

interface Place {
  role: CellRole;
  part: string | null;
}

/** How an entry reads a column (its value, an address part, a link's key, or otherwise), or null when it does not. */
function placeOf(entry: Raw, column: string): Place | null {
  if (!entryColumns(entry).has(column)) return null;
  if (entry.items === undefined) {
    if (plainColumn(entry.value) === column) return { role: 'value', part: null };
    if (isObject(entry.parts)) {
      for (const [part, spec] of Object.entries(entry.parts)) if (plainColumn(spec) === column) return { role: 'part', part };
    }
    if (keyColumn(entry) === column) return { role: 'key', part: null };
  }
  return { role: 'other', part: null };
}

/** A target as the table chooses it: a field, an address part, a custom field, or a link to other steps. */
interface Target {
  to: string;
  part?: string;
  definition?: string;
  tag?: string | null;
  ref?: string | string[];
}

const targetSchema = z
  .object({
    to: z.string().min(1),
    part: z.string().optional(),
    definition: z.string().min(1).optional(),
    tag: z.string().nullable().optional(),
    ref: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  })
  .strict();

/** The target list's value for a target: its JSON, keys in one order, so that equal targets are equal text. */
function choiceOf(target: Target): string {
  return JSON.stringify({ to: target.to, part: target.part, definition: target.definition, tag: target.definition === undefined ? undefined : (target.tag ?? null), ref: target.ref });
}

function kindOf(entity: Entity, to: string): TargetKind | undefined {
  return TARGET_INFO[entity][to]?.kind;
}

function itemKind(entity: Entity, to: string): ItemKind | null {
  const kind = kindOf(entity, to);
  return kind === 'address' || kind === 'phone' || kind === 'email' || kind === 'website' ? kind : null;
}

/** Reads a target list value the page sent back; a USAGE error when it is not one the entity has. */
function parseChoice(value: string, entity: Entity): Target {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const checked = targetSchema.safeParse(parsed);
  const refuse = (why: string): FerryError => new FerryError('USAGE', `the target ${JSON.stringify(value)} ${why}`, { hint: 'Choose one from the target list.' });
  if (!checked.success) throw refuse('is not a target of the list');
  const target = checked.data as Target;
  const kind = kindOf(entity, target.to);
  if (kind === undefined) throw refuse(`is not a target of entity ${entity}`);
  if (target.part !== undefined && (kind !== 'address' || !ADDRESS_PARTS.includes(target.part))) throw refuse('names no part of an address');
  if ((target.definition !== undefined) !== (kind === 'custom')) throw refuse('needs a definition exactly when it is a custom field');
  if (target.ref !== undefined && !LINK_KINDS.has(kind)) throw refuse(`cannot link: ${target.to} takes no \`ref\``);
  return target;
}

function stepWords(ref: string | string[]): string {
  const steps = Array.isArray(ref) ? ref : [ref];
  return steps.length === 1 ? `step ${steps[0]}` : `steps ${steps.join(' or ')}`;
}

function targetLabel(entity: Entity, target: Target): string {
  if (target.ref !== undefined) return `${target.to}: link to a row of ${stepWords(target.ref)}`;
  if (target.part !== undefined) return `address: ${target.part}`;
  if (target.definition !== undefined) return `custom field: ${target.definition}${target.tag ? ` (tag ${target.tag})` : ''}`;
  const words = TARGET_WORDS[target.to];
  if (words !== undefined) return words;
  const kind = kindOf(entity, target.to);
  return kind === 'link' || kind === 'links' ? `${target.to} (an id)` : target.to;
}

/** The target of an entry's reading of a column, as the list names it. */
function targetOfPlace(entry: Raw, place: Place): Target {
  const to = String(entry.to ?? '');
  if (place.role === 'part' && place.part !== null) return { to, part: place.part };
  if (place.role === 'key') return { to, ref: entry.ref as string | string[] };
  if (to === 'custom') return { to, definition: String(entry.definition ?? ''), tag: typeof entry.tag === 'string' ? entry.tag : null };
  return { to };
}

export interface TargetListContext {
  entity: Entity;
  /** The account's custom fields of the entity. */
  customFields: ReadonlyArray<{ name: string; tag: string | null }>;
  /** The plan's other steps, which links can name. */
  steps: readonly string[];
}

/**
 * The target list: the entity's fields, its items, an address's parts, tags, the account's custom
 * fields by name, links to each other step of the plan, and last whatever the mapping names that
 * the rest does not (a custom field the account lacks, a link to several steps).
 */
export function targetChoices(raw: unknown, header: readonly string[], context: TargetListContext): TargetChoice[] {
  const { entity } = context;
  const out: TargetChoice[] = [];
  const add = (group: string, target: Target): void => {
    const value = choiceOf(target);
    if (!out.some((choice) => choice.value === value)) out.push({ value, label: targetLabel(entity, target), group });
  };
  const targets = TARGETS[entity];
  for (const to of targets) {
    const kind = kindOf(entity, to);
    if (kind !== 'custom' && kind !== 'tags' && itemKind(entity, to) === null) add('Fields', { to });
  }
  for (const to of targets) if (itemKind(entity, to) !== null && to !== 'address') add('Items', { to });
  if (targets.includes('address')) for (const part of ADDRESS_PARTS) add('Address parts', { to: 'address', part });
  if (targets.includes('tags')) add('Tags', { to: 'tags' });
  if (targets.includes('custom')) for (const field of context.customFields) add('Custom fields', { to: 'custom', definition: field.name, tag: field.tag });
  for (const to of targets) {
    const kind = kindOf(entity, to);
    if (kind !== undefined && LINK_KINDS.has(kind)) for (const step of context.steps) add('Links to other steps', { to, ref: step });
  }
  for (const { entry, place } of placesIn(raw, header)) if (place.role !== 'other' && kindOf(entity, String(entry.to)) !== undefined) add('As the mapping has it', targetOfPlace(entry, place));
  return out;
}

function fieldsOfRaw(raw: unknown): unknown[] {
  return isObject(raw) && Array.isArray(raw.fields) ? raw.fields : [];
}

function* placesIn(raw: unknown, header: readonly string[]): Generator<{ entry: Raw; index: number; column: string; place: Place }> {
  for (const [index, field] of fieldsOfRaw(raw).entries()) {
    if (!isObject(field)) continue;
    for (const column of header) {
      const place = placeOf(field, column);
      if (place) yield { entry: field, index, column, place };
    }
  }
}

// ---------------------------------------------------------------------------------------------
// The table.

function transformName(spec: unknown): { name: string; param: string } {
  if (typeof spec === 'string') return { name: spec, param: '' };
  if (isObject(spec)) {
    const [name, options] = Object.entries(spec)[0] ?? ['', undefined];
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

/**
 * A type or service list: none, the usual constants, or read from a column of the file; what the
 * entry has now is in it whatever it is. The values are the YAML's value as JSON.
 */
function constantOrColumnChoices(none: string, constants: readonly string[], header: readonly string[], current: unknown): { choices: Choice[]; chosen: string } {
  const choices: Choice[] = [{ value: '', label: none }, ...constants.map((c) => ({ value: JSON.stringify(c), label: c })), ...header.map((column) => ({ value: JSON.stringify({ column }), label: `read from column ${column}` }))];
  if (current === undefined || current === null) return { choices, chosen: '' };
  const chosen = typeof current === 'string' ? JSON.stringify(current) : plainColumn(current) !== null && Object.keys(current as Raw).length === 1 ? JSON.stringify({ column: (current as Raw).column }) : JSON.stringify(current);
  if (!choices.some((c) => c.value === chosen)) choices.splice(1, 0, { value: chosen, label: typeof current === 'string' ? current : `${flowText(current)} (as the YAML says)` });
  return { choices, chosen };
}

function summaryOf(entry: Raw, column: string, place: Place): string {
  const to = String(entry.to ?? '');
  const type = typeof entry.type === 'string' ? ` (${entry.type})` : '';
  if (place.role === 'part') return `address${type}, ${place.part} part`;
  if (place.role === 'key') return `${to}: link to a row of ${stepWords(entry.ref as string | string[])}, by its key`;
  if (place.role === 'value') {
    if (entry.ref !== undefined) return `${to} by name, when the link to ${stepWords(entry.ref as string | string[])} finds no row`;
    if (to === 'custom') return `custom field ${String(entry.definition ?? '')}`;
    return `${to}${type}`;
  }
  if (entry.items === 'numbered') return `${to}: numbered items (items: numbered)`;
  if (entry.items !== undefined) return `${to}: a list of items in one column`;
  const reads = (spec: unknown): boolean => {
    const set = new Set<string>();
    valueColumns(spec, set);
    return set.has(column);
  };
  if (isObject(entry.parts)) {
    const parts = Object.entries(entry.parts).filter(([, spec]) => reads(spec));
    if (parts.length > 0) return `address${type}, ${parts.map(([part]) => part).join(' and ')} part, from a template or a condition`;
  }
  if (reads(entry.type)) return `${to}: its type`;
  if (reads(entry.service)) return `${to}: its service`;
  if (entry.ref !== undefined) return `${to}: link to a row of ${stepWords(entry.ref as string | string[])}, by a key of several columns`;
  if (to === 'custom') return `custom field ${String(entry.definition ?? '')}, from a template or a condition`;
  return `${to}, from a template or a condition`;
}

/** `One address entry with street, zip: its type, Required and A bad value are the whole entry's.` */
function sharedText(to: string, others: string[], settings: string[]): string {
  const list = settings.length === 1 ? settings[0] : `${settings.slice(0, -1).join(', ')} and ${settings.at(-1)}`;
  return `One ${to} entry with ${others.join(', ')}: its ${list} ${settings.length === 1 ? 'is' : 'are'} the whole entry's.`;
}

function entryView(entity: Entity, entry: Raw, index: number, column: string, place: Place, header: readonly string[]): MapEntryView {
  const to = String(entry.to ?? '');
  const editable = place.role !== 'other';
  const spec = place.role === 'value' ? entry.value : place.role === 'part' && isObject(entry.parts) ? entry.parts[place.part as string] : undefined;
  const chain = isObject(spec) && Array.isArray(spec.transform) ? spec.transform : [];
  const last = chain.length > 0 ? transformName(chain[chain.length - 1]) : { name: '', param: '' };
  const item = editable && place.role !== 'key' ? itemKind(entity, to) : null;
  const types = item ? constantOrColumnChoices('(no type)', USUAL_TYPES[item], header, entry.type) : null;
  const services = item === 'website' ? constantOrColumnChoices('URL (the default)', WEBSITE_SERVICES, header, entry.service) : null;
  const others = [...entryColumns(entry)].filter((c) => c !== column && header.includes(c));
  const onInvalid = ON_INVALID_CHOICES.find((choice) => choice !== 'default' && choice === entry.onInvalid) ?? 'default';
  return {
    index,
    to,
    role: place.role,
    choice: editable ? choiceOf(targetOfPlace(entry, place)) : '',
    types: types?.choices ?? null,
    type: types?.chosen ?? '',
    services: services?.choices ?? null,
    service: services?.chosen ?? '',
    transform: last.name,
    param: last.param,
    before: chain.slice(0, -1).map((t) => (typeof t === 'string' ? t : flowText(t))),
    chain: chain.map((t) => {
      const link = transformName(t);
      return { transform: link.name, param: link.param };
    }),
    required: entry.required === true,
    onInvalid,
    editable,
    summary: summaryOf(entry, column, place),
    shared: editable && others.length > 0 ? sharedText(to, others, [...(item ? ['type'] : []), 'Required', ...(place.role === 'key' ? [] : ['A bad value'])]) : null,
  };
}

/** The table's lines: one per column of the input, each with the entries that read it. */
export function tableOf(raw: unknown, header: readonly string[], samples: ReadonlyMap<string, string[]>): { columns: MapColumnView[]; otherEntries: Array<{ index: number; summary: string }> } {
  const entity = entityOf(raw);
  const byColumn = new Map<string, MapEntryView[]>(header.map((column) => [column, []]));
  const otherEntries: Array<{ index: number; summary: string }> = [];
  for (const [index, field] of fieldsOfRaw(raw).entries()) {
    if (!isObject(field)) continue;
    let reads = false;
    for (const column of header) {
      const place = placeOf(field, column);
      if (!place) continue;
      reads = true;
      byColumn.get(column)?.push(entryView(entity, field, index, column, place, header));
    }
    if (!reads) {
      const shown = field.value === undefined ? '' : ` = ${flowText(field.value)}`;
      otherEntries.push({ index, summary: `${String(field.to ?? '')}${field.definition ? ` ${String(field.definition)}` : ''}${shown}` });
    }
  }
  return { columns: header.map((name) => ({ name, samples: samples.get(name) ?? [], entries: byColumn.get(name) ?? [] })), otherEntries };
}

/** What records of the account are found by (`match`), for the entity: the list, and the mapping's choice. */
export function matchChoices(raw: unknown): { choices: Choice[]; chosen: string } {
  const entity = entityOf(raw);
  if (entity === 'entry' || entity === 'task') return { choices: [], chosen: '' };
  const choices: Choice[] = [{ value: '', label: 'nothing: every row is a new record' }];
  if (entity === 'party') {
    choices.push(
      { value: 'email', label: 'the e-mail address' },
      { value: 'name', label: 'the name' },
      { value: 'email, name', label: 'the e-mail address, else the name' },
      { value: 'name, email', label: 'the name, else the e-mail address' },
    );
  } else choices.push({ value: 'name', label: 'the name' });
  const definitions = new Set(fieldsOfRaw(raw).flatMap((f) => (isObject(f) && f.to === 'custom' && typeof f.definition === 'string' ? [f.definition] : [])));
  const match = isObject(raw) ? raw.match : undefined;
  if (isObject(match) && typeof match.definition === 'string') definitions.add(match.definition);
  for (const definition of definitions) choices.push({ value: `custom:${definition}`, label: `the custom field ${definition}` });
  if (!isObject(match) || match.by === undefined) return { choices, chosen: '' };
  const by = (Array.isArray(match.by) ? match.by : [match.by]).map(String);
  const chosen = by.length === 1 && by[0] === 'custom' ? `custom:${String(match.definition ?? '')}` : by.join(', ');
  if (!choices.some((c) => c.value === chosen)) choices.push({ value: chosen, label: chosen });
  return { choices, chosen };
}

/** The YAML's problems, each with its line. */
export function yamlProblems(error: unknown): YamlProblem[] {
  if (error instanceof MappingErrors) return error.errors.map((e) => ({ message: e.location?.yamlPath ? `${e.location.yamlPath}: ${e.message}` : e.message, line: e.location?.line ?? null }));
  if (error instanceof FerryError) return [{ message: error.message, line: error.location?.line ?? null }];
  throw error;
}

// ---------------------------------------------------------------------------------------------
// Edits.

const onInvalidSchema = z.enum(ON_INVALID_CHOICES);
const columnSchema = z.string().min(1);

/** The edits the page may send; anything else is refused before the YAML is touched. */
const mapEditSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('target'), column: columnSchema, target: z.string() }).strict(),
  z.object({ kind: z.literal('type'), column: columnSchema, type: z.string() }).strict(),
  z.object({ kind: z.literal('service'), column: columnSchema, service: z.string() }).strict(),
  z.object({ kind: z.literal('transform'), column: columnSchema, transform: z.string(), param: z.string() }).strict(),
  z.object({ kind: z.literal('chain'), column: columnSchema, chain: z.array(z.object({ transform: z.string().min(1), param: z.string() }).strict()).max(20) }).strict(),
  z.object({ kind: z.literal('required'), column: columnSchema, required: z.boolean() }).strict(),
  z.object({ kind: z.literal('onInvalid'), column: columnSchema, onInvalid: onInvalidSchema }).strict(),
  z.object({ kind: z.literal('onDuplicate'), onDuplicate: z.enum(['reject', 'first', 'merge', 'separate']) }).strict(),
  z.object({ kind: z.literal('match'), match: z.string() }).strict(),
]);

/** An edit from the page, checked; a USAGE error says what is wrong with it. */
export function parseEdit(edit: unknown): MapEdit {
  const checked = mapEditSchema.safeParse(edit);
  if (!checked.success) throw new FerryError('USAGE', `the table sent an edit the workbench does not know: ${checked.error.issues[0]?.message ?? 'malformed'}`);
  return checked.data;
}

function fieldsSeq(doc: Document): YAMLSeq {
  const fields = doc.get('fields');
  if (!isSeq(fields)) throw new FerryError('MAPPING_INVALID', 'the mapping has no `fields` list to edit', { hint: 'Fix the YAML first.' });
  return fields;
}

interface DocCell {
  node: YAMLMap;
  place: Place;
}

/** The entry whose reading of `column` the table edits: the first that reads it in a form the table edits. */
function cellOf(fields: YAMLSeq, column: string): DocCell | undefined {
  for (const node of fields.items) {
    if (!isMap(node)) continue;
    const place = placeOf(node.toJSON() as Raw, column);
    if (place && place.role !== 'other') return { node, place };
  }
  return undefined;
}

function needCell(fields: YAMLSeq, column: string): DocCell {
  const cell = cellOf(fields, column);
  if (!cell) throw new FerryError('USAGE', `no field reads the column ${JSON.stringify(column)} in a form the table edits`, { hint: 'Choose a target for it first, or edit it in the YAML.' });
  return cell;
}

/** The map under `key` of an entry the table found to hold one there. */
function mapAt(node: YAMLMap, key: unknown): YAMLMap {
  const found = node.get(key, true);
  if (!isMap(found)) throw new FerryError('INTERNAL', `the entry's ${String(key)} is not a map; this is a bug in crm-ferry's workbench`);
  return found;
}

/** The value node of a cell (`value`, or the address part), which holds its column and transforms. */
function specNode(cell: DocCell): YAMLMap | null {
  if (cell.place.role === 'value') return mapAt(cell.node, 'value');
  if (cell.place.role === 'part') return mapAt(mapAt(cell.node, 'parts'), cell.place.part);
  return null;
}

function flowNode(doc: Document, value: unknown): YAMLMap {
  return doc.createNode(value, { flow: true }) as YAMLMap;
}

/** `"{{column}}"`, the key of a link read from one column; refused for a name a placeholder cannot hold. */
function keyTemplate(doc: Document, column: string): Scalar {
  const text = `{{${column}}}`;
  const parsed = parseTemplate(text);
  const [part] = parsed.ok ? parsed.parts : [];
  if (!parsed.ok || parsed.parts.length !== 1 || typeof part !== 'object' || part.column !== column) {
    throw new FerryError('USAGE', `the column ${JSON.stringify(column)} cannot be a link's key in a placeholder: its name holds braces or spaces at an end`, { hint: 'Write the link in the YAML.' });
  }
  const node = doc.createNode(text) as Scalar;
  node.type = Scalar.QUOTE_DOUBLE;
  return node;
}

/** Removes an entry, returning where it was. */
function removeEntry(fields: YAMLSeq, node: YAMLMap): number {
  const at = fields.items.indexOf(node);
  if (at !== -1) fields.items.splice(at, 1);
  return at;
}

/** Whether a target may be written by several entries; the others are merged with their partner or written once. */
function repeatable(entity: Entity, to: string): boolean {
  const kind = kindOf(entity, to);
  return kind !== undefined && REPEATABLE_KINDS.has(kind);
}

/**
 * The entry a new reading of a non-repeatable link target joins: a link (`ref:`) and a name
 * (`value`) of one target are one entry, the name written when the link finds no row.
 */
function partnerOf(fields: YAMLSeq, entity: Entity, target: Target): YAMLMap | undefined {
  if (target.part !== undefined || repeatable(entity, target.to)) return undefined;
  const kind = kindOf(entity, target.to);
  if (kind === undefined || !LINK_KINDS.has(kind)) return undefined;
  return fields.items.find((node): node is YAMLMap => {
    if (!isMap(node)) return false;
    const entry = node.toJSON() as Raw;
    if (entry.to !== target.to || entry.items !== undefined) return false;
    return target.ref === undefined ? entry.ref !== undefined && entry.value === undefined : entry.ref === undefined && entry.value !== undefined;
  });
}

/**
 * Takes away the comments that say why an entry's choices were made (the lines above its keys, as
 * `mapping init` writes them, and the notes after its target's keys): once the table changes the
 * target they would speak of the old one. A note after the value (on the column) stays with it.
 */
function forgetWhy(node: YAMLMap): void {
  node.commentBefore = null;
  for (const pair of node.items) {
    if (isNode(pair.key)) pair.key.commentBefore = null;
    if (isNode(pair.value) && isScalar(pair.key) && pair.key.value !== 'value' && pair.key.value !== 'parts') pair.value.comment = null;
  }
}

/** Takes away the comment lines above the key that holds a value's transforms (they say why those were chosen). */
function forgetWhyTransform(cell: DocCell): void {
  const holder = cell.place.role === 'part' ? mapAt(cell.node, 'parts') : cell.node;
  const key = cell.place.role === 'part' ? cell.place.part : 'value';
  for (const pair of holder.items) if (isScalar(pair.key) && pair.key.value === key) pair.key.commentBefore = null;
}

/** Takes away the comment lines above a key of an entry (`onInvalid`, `required`) whose value the table changed. */
function forgetWhyKey(node: YAMLMap, key: string): void {
  for (const pair of node.items) if (isScalar(pair.key) && pair.key.value === key) pair.key.commentBefore = null;
}

/** Gives an entry read from a plain value another target in place, keeping its transforms, Required and its value's note. */
function retarget(node: YAMLMap, entity: Entity, target: Target): void {
  forgetWhy(node);
  node.set('to', target.to);
  if (target.definition !== undefined) {
    node.set('definition', target.definition);
    node.set('tag', target.tag ?? null);
  } else {
    node.delete('definition');
    node.delete('tag');
  }
  const item = itemKind(entity, target.to);
  if (item === null) node.delete('type');
  else if (!node.has('type')) node.set('type', 'Work');
  if (item !== 'website') node.delete('service');
  const info = TARGET_INFO[entity][target.to];
  if (!(info?.kind === 'name' && (info.nameKind === 'user' || info.nameKind === 'team'))) node.delete('onUnknown');
  if (!(info?.kind === 'name' && info.nameKind === 'team')) node.delete('ifEmpty');
}

/** Takes a column's reading out of its entry; returns its value node (to keep its transforms) and where a removed entry was. */
function detach(fields: YAMLSeq, cell: DocCell): { spec: YAMLMap | null; at: number } {
  const { node, place } = cell;
  const spec = specNode(cell);
  if (place.role === 'value') {
    if (node.has('ref')) {
      node.delete('value');
      return { spec, at: -1 };
    }
    return { spec, at: removeEntry(fields, node) };
  }
  if (place.role === 'part') {
    const parts = mapAt(node, 'parts');
    parts.delete(place.part);
    if (parts.items.length === 0) node.delete('parts');
    return { spec, at: node.has('parts') || node.has('value') ? -1 : removeEntry(fields, node) };
  }
  // A link's key: the name beside it, if any, stays as a plain value.
  if (node.has('value')) {
    node.delete('ref');
    node.delete('key');
    return { spec: null, at: -1 };
  }
  return { spec: null, at: removeEntry(fields, node) };
}

/** Makes `column` feed `target`: into an address with that part free, beside its partner link or name, or in an entry of its own. */
function attach(doc: Document, fields: YAMLSeq, entity: Entity, target: Target, column: string, kept: YAMLMap | null, at: number): void {
  const spec = kept ?? flowNode(doc, { column });
  const insert = (pairs: Array<[string, unknown]>): void => {
    const node = new YAMLMap();
    for (const [key, value] of pairs) node.set(key, value);
    fields.items.splice(at === -1 ? fields.items.length : at, 0, node);
  };
  if (target.part !== undefined) {
    const part = target.part;
    const address = fields.items.filter((node): node is YAMLMap => {
      if (!isMap(node)) return false;
      const entry = node.toJSON() as Raw;
      return entry.to === 'address' && entry.items === undefined && entry.value === undefined && isObject(entry.parts) && entry.parts[part] === undefined;
    });
    const into = address[address.length - 1];
    if (into) mapAt(into, 'parts').set(part, spec);
    else {
      const parts = new YAMLMap();
      parts.set(part, spec);
      insert([
        ['to', 'address'],
        ['type', 'Work'],
        ['parts', parts],
      ]);
    }
    return;
  }
  const partner = partnerOf(fields, entity, target);
  if (target.ref !== undefined) {
    const ref = Array.isArray(target.ref) ? flowNode(doc, target.ref) : target.ref;
    if (partner) {
      partner.set('ref', ref);
      partner.set('key', keyTemplate(doc, column));
    } else
      insert([
        ['to', target.to],
        ['ref', ref],
        ['key', keyTemplate(doc, column)],
      ]);
    return;
  }
  if (partner) {
    partner.set('value', spec);
    return;
  }
  const pairs: Array<[string, unknown]> = [['to', target.to]];
  if (target.definition !== undefined) pairs.push(['definition', target.definition], ['tag', target.tag ?? null]);
  if (itemKind(entity, target.to) !== null) pairs.push(['type', 'Work']);
  pairs.push(['value', spec]);
  insert(pairs);
}

function applyTarget(doc: Document, entity: Entity, column: string, value: string): void {
  const fields = fieldsSeq(doc);
  const target = value === '' ? null : parseChoice(value, entity);
  const cell = cellOf(fields, column);
  if (cell && target && choiceOf(targetOfPlace(cell.node.toJSON() as Raw, cell.place)) === choiceOf(target)) return;
  if (cell && target && cell.place.role === 'value' && !cell.node.has('ref') && target.part === undefined && target.ref === undefined && partnerOf(fields, entity, target) === undefined) {
    retarget(cell.node, entity, target);
    return;
  }
  const { spec, at } = cell ? detach(fields, cell) : { spec: null, at: -1 };
  if (!target) return;
  attach(doc, fields, entity, target, column, spec, at);
  // A column the draft left out on purpose is carried now: it leaves the list (a mapping may not
  // both read a column and leave it out).
  const leaveOut = doc.get('leaveOut', true);
  if (isMap(leaveOut) && leaveOut.has(column)) {
    leaveOut.delete(column);
    if (leaveOut.items.length === 0) doc.delete('leaveOut');
  }
}

/** A type or service as the page chose it: '' for none, else a constant or `{column}`, as JSON. */
function constantOrColumn(doc: Document, value: string, what: string): unknown {
  if (value === '') return undefined;
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  if (typeof parsed === 'string' && parsed !== '') return parsed;
  if (isObject(parsed) && Object.keys(parsed).length === 1 && typeof parsed.column === 'string' && parsed.column !== '') return flowNode(doc, { column: parsed.column });
  throw new FerryError('USAGE', `the ${what} ${JSON.stringify(value)} is neither a constant nor a column`, { hint: `Choose one from the ${what} list.` });
}

function setOrDelete(node: YAMLMap, key: string, value: unknown): void {
  if (value === undefined) node.delete(key);
  else node.set(key, value);
}

/** One transform as the YAML writes it: its name, or `{name: options}`; refused when unknown or its options do not read. */
function chainLink(transform: string, param: string): unknown {
  if (!(transform in TRANSFORMS)) throw new FerryError('USAGE', `there is no transform ${JSON.stringify(transform)}`, { hint: 'Choose one from the transform list.' });
  let options: unknown;
  try {
    options = param.trim() === '' ? undefined : parseYamlValue(param);
  } catch (error) {
    throw new FerryError('USAGE', `the options of ${transform} are not a YAML value: ${(error as Error).message.split('\n')[0]}`, { cause: error, hint: 'Write them as in the YAML: `;`, `FR`, `{format: dd.MM.yyyy}`.' });
  }
  return options === undefined ? transform : { [transform]: options };
}

/** Sets a value's whole chain of transforms, in order; an empty chain takes `transform` away. */
function applyChain(doc: Document, spec: YAMLMap, chain: ReadonlyArray<{ transform: string; param: string }>): void {
  const links = chain.map((link) => chainLink(link.transform, link.param));
  if (links.length === 0) spec.delete('transform');
  else spec.set('transform', doc.createNode(links, { flow: true }));
}

function applyTransform(doc: Document, spec: YAMLMap, transform: string, param: string): void {
  const chain = spec.get('transform', true);
  const before = isSeq(chain) ? chain.items.slice(0, -1).map((item) => (isScalar(item) ? item.value : (item as { toJSON(): unknown }).toJSON())) : [];
  if (transform === '') {
    if (before.length === 0) spec.delete('transform');
    else spec.set('transform', doc.createNode(before, { flow: true }));
    return;
  }
  const last = chainLink(transform, param);
  spec.set('transform', doc.createNode([...before, last], { flow: true }));
}

function applyMatch(doc: Document, value: string): void {
  if (value === '') {
    doc.delete('match');
    return;
  }
  const custom = value.startsWith('custom:') ? value.slice('custom:'.length) : null;
  const by =
    custom !== null
      ? ['custom']
      : value
          .split(',')
          .map((s) => s.trim())
          .filter(Boolean);
  if (by.length === 0 || custom === '') throw new FerryError('USAGE', `${JSON.stringify(value)} says nothing to find records by`, { hint: 'Choose one from the list.' });
  const match = doc.get('match', true);
  const byNode = by.length === 1 ? by[0] : flowNode(doc, by);
  if (isMap(match)) {
    match.set('by', byNode);
    setOrDelete(match, 'definition', custom ?? undefined);
    return;
  }
  const node = flowNode(doc, custom === null ? { by: by.length === 1 ? by[0] : by, onMatch: 'update' } : { by: 'custom', definition: custom, onMatch: 'update' });
  doc.set('match', node);
}

/** Whether the text writes its flow collections with a space inside the braces, `{ column: X }`, more often than not. */
function padsFlow(yaml: string): boolean {
  const padded = yaml.match(/[{[] \S/g)?.length ?? 0;
  const tight = yaml.match(/[{[][^\s\]}]/g)?.length ?? 0;
  return padded > tight;
}

/**
 * Applies one edit of the table to the mapping's YAML and returns the new text. Comments and the
 * order and style of what was not edited stay as they were.
 */
export function applyEdit(yaml: string, edit: MapEdit): string {
  const doc = parseDocument(yaml);
  if (doc.errors.length > 0) throw new FerryError('MAPPING_INVALID', 'the YAML has errors: fix them before using the table', { hint: 'The line of each error is shown beside the YAML.' });
  const entity = entityOf(doc.toJS());
  switch (edit.kind) {
    case 'target':
      applyTarget(doc, entity, edit.column, edit.target);
      break;
    case 'type':
    case 'service': {
      const cell = needCell(fieldsSeq(doc), edit.column);
      const to = String(cell.node.get('to'));
      const item = cell.place.role === 'key' ? null : itemKind(entity, to);
      if (item === null || (edit.kind === 'service' && item !== 'website')) throw new FerryError('USAGE', `${to} has no ${edit.kind}`, { hint: 'Types are for e-mail addresses, phones, addresses and websites; services for websites.' });
      setOrDelete(cell.node, edit.kind, constantOrColumn(doc, edit.kind === 'type' ? edit.type : edit.service, edit.kind));
      break;
    }
    case 'transform':
    case 'chain': {
      const cell = needCell(fieldsSeq(doc), edit.column);
      const spec = specNode(cell);
      if (spec === null) throw new FerryError('USAGE', `the column ${JSON.stringify(edit.column)} is a link's key, which takes no transform`, { hint: 'Write a template key in the YAML.' });
      if (edit.kind === 'chain') applyChain(doc, spec, edit.chain);
      else applyTransform(doc, spec, edit.transform, edit.param);
      forgetWhyTransform(cell);
      break;
    }
    case 'required': {
      const { node } = needCell(fieldsSeq(doc), edit.column);
      setOrDelete(node, 'required', edit.required ? true : undefined);
      break;
    }
    case 'onInvalid': {
      const { node } = needCell(fieldsSeq(doc), edit.column);
      forgetWhyKey(node, 'onInvalid');
      setOrDelete(node, 'onInvalid', edit.onInvalid === 'default' ? undefined : edit.onInvalid);
      break;
    }
    case 'onDuplicate':
      doc.set('onDuplicate', edit.onDuplicate);
      break;
    case 'match':
      applyMatch(doc, edit.match);
      break;
  }
  return doc.toString({ lineWidth: 0, flowCollectionPadding: padsFlow(yaml) });
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
        if (entry.to === 'custom' && entry.definition === match.definition) for (const c of map.byIndex.get(index) ?? []) out.add(c);
      });
    } else for (const to of by === 'email' ? ['email'] : ['firstName', 'lastName', 'name']) for (const c of map.byTarget.get(to) ?? []) out.add(c);
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
  if ('definition' in object && 'value' in object) return `${shortText(isObject(object.definition) ? object.definition.name : object.definition)}: ${shortText(object.value)}`;
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
    if (state === false && !ref.required && ref.fallback !== undefined) parts.push(`${String(ref.path[0])} ${shortText(ref.fallback)}`);
    if (state !== false) parts.push(`${String(ref.path[0])}: the row '${ref.key}' of ${stepWords([...ref.steps])}${state === null ? ' (not checked)' : ''}`);
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
  const places: ReasonPlaces = { header: new Set(sample.header), map, key: Array.isArray(mapping.key) ? mapping.key : [...entryColumns({ key: mapping.key })], match: matchColumns(mapping, map) };
  const valuesOf = new Map<number, Record<string, CellValue>>();
  for (const item of sample.items) if (item.kind === 'row') valuesOf.set(item.location.row, item.values);
  const mapped: MappedItem[] = [];
  for await (const item of mapRows(fromList(sample.items), compiled)) mapped.push(item);
  const policy = mapping.onDuplicate;
  const items = policy === 'first' || policy === 'merge' ? foldDuplicates(fromList(mapped), await indexDuplicates(fromList(mapped), mapping.match), policy) : fromList(mapped);
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
      rows.push({ row: item.location.row, status: 'skipped', key: outcome.kind === 'folded' ? outcome.key : null, cells, marks, record: '' });
      continue;
    }
    if (outcome.kind === 'repeated') {
      // A step others link to may name one record in many rows (a company per person): the same values are that record again.
      rows.push({ row: item.location.row, status: 'ok', key: outcome.mapped.key, cells, marks, record: recordText(outcome.mapped, () => null) });
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
      if (missing !== undefined) mark(marks, reasonColumns({ field: ref.yamlPath, message: '', column: ref.column }, places), 'warning', uncheckedLinkText(missing, unchecked.get(missing) ?? ''));
    }
    // Before links and names become ids: the row as the mapping names it.
    const record = recordText(mapped, (ref) => (isChecked(ref) ? book.checkRefs([ref]).length === 0 : null));
    // A key or match value an earlier row has; else links and names as the run makes them.
    const same = outcome.kind === 'rejected' ? outcome.rejected : null;
    mapped.refs = refs.filter(isChecked);
    const sent = same ? null : await recordToSend(mapped, { entity: mapping.entity, links: book, resolver: options.resolver, files: findAttachments });
    mapped.refs = refs;
    const problems = same ? [same, ...(same.also ?? [])] : sent?.kind === 'problems' ? sent.problems : [];
    for (const problem of problems) mark(marks, reasonColumns(problem, places), 'rejected', reasonText({ ...problem, values }));
    for (const warning of mapped.warnings ?? []) mark(marks, reasonColumns(warning, places), 'warning', reasonText({ ...warning, values }));
    if (problems.length === 0) book.addValid(step, mapped.key);
    else book.addRejected(step, mapped.key);
    rows.push({ row: item.location.row, status: problems.length > 0 ? 'rejected' : 'ok', key: mapped.key, cells, marks, record });
  }
  // Under `merge` a first row comes out after its last later row.
  return rows.sort((a, b) => a.row - b.row);
}

/** The mapping's entity as written, when it is one. */
export function entityOf(raw: unknown): Entity {
  const entity = isObject(raw) ? raw.entity : undefined;
  return (ENTITIES as readonly unknown[]).includes(entity) ? (entity as Entity) : 'party';
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
