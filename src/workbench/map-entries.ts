/**
 * The Map view: a mapping file as a table of the input's columns (map-table.ts), the edits the
 * table makes (map-edit.ts) and the first rows mapped through it (map-preview.ts). The YAML stays
 * the truth: the table is read from it, an edit is made to it (through `yaml`'s document, so
 * comments and the person's layout stay), and the preview maps rows through the same compiler the
 * run uses, and checks them in validate's order.
 *
 * The table edits what the mapping language says in its plain forms: a column's value
 * (`value: {column, transform}`) for any target, an address's part, a link's key (`ref:` +
 * `key: "{{column}}"`, with a value beside it as the name written when the link finds nothing),
 * an item's type and a website's service (a constant or a column), and the entry's `required`
 * and `onInvalid`. Anything else (a template over several columns, a condition, numbered items)
 * is shown in words and edited in the YAML: the table never writes a form it cannot read back.
 *
 * This file: what the three read from a mapping's entries, which columns an entry reads and how,
 * and what the table calls its target.
 */
import { parseDocument } from 'yaml';
import { z } from 'zod';
import { FerryError } from '../errors/index.ts';
import {
  addressPartsSchema,
  conditionColumns,
  type Condition,
  type Entity,
  ENTITIES,
  isTemplate,
  LINK_KINDS,
  parseTemplate,
  TARGET_INFO,
  TARGETS,
  type TargetKind,
} from '../mapping/index.ts';
import { type CellValue } from '../sources/index.ts';
import type { CellRole, TargetChoice } from './api.ts';

export const PREVIEW_ROWS = 20;

/** The parts of an address, in the order the schema lists them. */
export const ADDRESS_PARTS = Object.keys(addressPartsSchema.shape);

/** Items with a type (Home, Work, ...), and the types offered first; any other is typed in the YAML. */
export type ItemKind = 'address' | 'phone' | 'email' | 'website';
export const USUAL_TYPES: Record<ItemKind, readonly string[]> = {
  email: ['Work', 'Home'],
  phone: ['Work', 'Home', 'Mobile', 'Fax'],
  address: ['Work', 'Home', 'Postal'],
  website: ['Work', 'Home'],
};

/** How the target list names the targets whose name alone says too little. */
export const TARGET_WORDS: Record<string, string> = {
  email: 'e-mail address',
  phone: 'phone number',
  website: 'website',
  address: 'address: street, as one value',
  tags: 'tags (a list: split it)',
  organisation: 'organisation by name (or id)',
};

export type Raw = Record<string, unknown>;

export function isObject(value: unknown): value is Raw {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}

/** A value as the page shows it. */
export function cellText(value: CellValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) {
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  return String(value);
}

/** The columns a value spec reads (its column, template, coalesced values and condition). */
export function valueColumns(spec: unknown, into: Set<string>): void {
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
export function plainColumn(spec: unknown): string | null {
  if (!isObject(spec) || typeof spec.column !== 'string') return null;
  return Object.keys(spec).every((k) => k === 'column' || k === 'transform') ? spec.column : null;
}

/** The column of a link's key written as one placeholder, `key: "{{Company ID}}"`, else null. */
export function keyColumn(entry: Raw): string | null {
  if (entry.ref === undefined || typeof entry.key !== 'string') return null;
  const parsed = parseTemplate(entry.key);
  if (!parsed.ok || parsed.parts.length !== 1) return null;
  const [part] = parsed.parts;
  return typeof part === 'object' ? part.column : null;
}

export interface Place {
  role: CellRole;
  part: string | null;
}

/** How an entry reads a column (its value, an address part, a link's key, or otherwise), or null when it does not. */
export function placeOf(entry: Raw, column: string): Place | null {
  if (!entryColumns(entry).has(column)) return null;
  if (entry.items === undefined) {
    if (plainColumn(entry.value) === column) return { role: 'value', part: null };
    if (isObject(entry.parts)) {
      for (const [part, spec] of Object.entries(entry.parts))
        if (plainColumn(spec) === column) return { role: 'part', part };
    }
    if (keyColumn(entry) === column) return { role: 'key', part: null };
  }
  return { role: 'other', part: null };
}

/** A target as the table chooses it: a field, an address part, a custom field, or a link to other steps. */
export interface Target {
  to: string;
  part?: string;
  definition?: string;
  tag?: string | null;
  ref?: string | string[];
}

export const targetSchema = z
  .object({
    to: z.string().min(1),
    part: z.string().optional(),
    definition: z.string().min(1).optional(),
    tag: z.string().nullable().optional(),
    ref: z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]).optional(),
  })
  .strict();

/** The target list's value for a target: its JSON, keys in one order, so that equal targets are equal text. */
export function choiceOf(target: Target): string {
  return JSON.stringify({
    to: target.to,
    part: target.part,
    definition: target.definition,
    tag: target.definition === undefined ? undefined : (target.tag ?? null),
    ref: target.ref,
  });
}

export function kindOf(entity: Entity, to: string): TargetKind | undefined {
  return TARGET_INFO[entity][to]?.kind;
}

export function itemKind(entity: Entity, to: string): ItemKind | null {
  const kind = kindOf(entity, to);
  return kind === 'address' || kind === 'phone' || kind === 'email' || kind === 'website' ? kind : null;
}

/** Reads a target list value the page sent back; a USAGE error when it is not one the entity has. */
export function parseChoice(value: string, entity: Entity): Target {
  let parsed: unknown;
  try {
    parsed = JSON.parse(value);
  } catch {
    parsed = undefined;
  }
  const checked = targetSchema.safeParse(parsed);
  const refuse = (why: string): FerryError =>
    new FerryError('USAGE', `the target ${JSON.stringify(value)} ${why}`, { hint: 'Choose one from the target list.' });
  if (!checked.success) throw refuse('is not a target of the list');
  const target = checked.data as Target;
  const kind = kindOf(entity, target.to);
  if (kind === undefined) throw refuse(`is not a target of entity ${entity}`);
  if (target.part !== undefined && (kind !== 'address' || !ADDRESS_PARTS.includes(target.part)))
    throw refuse('names no part of an address');
  if ((target.definition !== undefined) !== (kind === 'custom'))
    throw refuse('needs a definition exactly when it is a custom field');
  if (target.ref !== undefined && !LINK_KINDS.has(kind)) throw refuse(`cannot link: ${target.to} takes no \`ref\``);
  return target;
}

export function stepWords(ref: string | string[]): string {
  const steps = Array.isArray(ref) ? ref : [ref];
  return steps.length === 1 ? `step ${steps[0]}` : `steps ${steps.join(' or ')}`;
}

export function targetLabel(entity: Entity, target: Target): string {
  if (target.ref !== undefined) return `${target.to}: link to a row of ${stepWords(target.ref)}`;
  if (target.part !== undefined) return `address: ${target.part}`;
  if (target.definition !== undefined)
    return `custom field: ${target.definition}${target.tag ? ` (tag ${target.tag})` : ''}`;
  const words = TARGET_WORDS[target.to];
  if (words !== undefined) return words;
  const kind = kindOf(entity, target.to);
  return kind === 'link' || kind === 'links' ? `${target.to} (an id)` : target.to;
}

/** The target of an entry's reading of a column, as the list names it. */
export function targetOfPlace(entry: Raw, place: Place): Target {
  const to = String(entry.to ?? '');
  if (place.role === 'part' && place.part !== null) return { to, part: place.part };
  if (place.role === 'key') return { to, ref: entry.ref as string | string[] };
  if (to === 'custom')
    return { to, definition: String(entry.definition ?? ''), tag: typeof entry.tag === 'string' ? entry.tag : null };
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
  if (targets.includes('custom'))
    for (const field of context.customFields)
      add('Custom fields', { to: 'custom', definition: field.name, tag: field.tag });
  for (const to of targets) {
    const kind = kindOf(entity, to);
    if (kind !== undefined && LINK_KINDS.has(kind))
      for (const step of context.steps) add('Links to other steps', { to, ref: step });
  }
  for (const { entry, place } of placesIn(raw, header))
    if (place.role !== 'other' && kindOf(entity, String(entry.to)) !== undefined)
      add('As the mapping has it', targetOfPlace(entry, place));
  return out;
}

export function fieldsOfRaw(raw: unknown): unknown[] {
  return isObject(raw) && Array.isArray(raw.fields) ? raw.fields : [];
}

function* placesIn(
  raw: unknown,
  header: readonly string[],
): Generator<{ entry: Raw; index: number; column: string; place: Place }> {
  for (const [index, field] of fieldsOfRaw(raw).entries()) {
    if (!isObject(field)) continue;
    for (const column of header) {
      const place = placeOf(field, column);
      if (place) yield { entry: field, index, column, place };
    }
  }
}

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
