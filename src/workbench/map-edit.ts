/**
 * The edits the Map view's table makes, made to the YAML through `yaml`'s document, so the
 * person's comments and layout stay; comments that said why a replaced choice was made go with it.
 * The table never writes a form it cannot read back.
 */
import {
  isMap,
  isNode,
  isScalar,
  isSeq,
  parse as parseYamlValue,
  parseDocument,
  Scalar,
  YAMLMap,
  type Document,
  type YAMLSeq,
} from 'yaml';
import { z } from 'zod';
import { FerryError } from '../errors/index.ts';
import { type Entity, LINK_KINDS, parseTemplate, REPEATABLE_KINDS, TARGET_INFO, TRANSFORMS } from '../mapping/index.ts';
import type { MapEdit } from './api.ts';
import { ON_INVALID_CHOICES } from './api.ts';

import {
  type Raw,
  isObject,
  type Place,
  placeOf,
  type Target,
  choiceOf,
  kindOf,
  itemKind,
  parseChoice,
  targetOfPlace,
  entityOf,
} from './map-entries.ts';

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
  z
    .object({
      kind: z.literal('chain'),
      column: columnSchema,
      chain: z.array(z.object({ transform: z.string().min(1), param: z.string() }).strict()).max(20),
    })
    .strict(),
  z.object({ kind: z.literal('required'), column: columnSchema, required: z.boolean() }).strict(),
  z.object({ kind: z.literal('onInvalid'), column: columnSchema, onInvalid: onInvalidSchema }).strict(),
  z.object({ kind: z.literal('onDuplicate'), onDuplicate: z.enum(['reject', 'first', 'merge', 'separate']) }).strict(),
  z.object({ kind: z.literal('match'), match: z.string() }).strict(),
]);

/** An edit from the page, checked; a USAGE error says what is wrong with it. */
export function parseEdit(edit: unknown): MapEdit {
  const checked = mapEditSchema.safeParse(edit);
  if (!checked.success)
    throw new FerryError(
      'USAGE',
      `the table sent an edit the workbench does not know: ${checked.error.issues[0]?.message ?? 'malformed'}`,
    );
  return checked.data;
}

function fieldsSeq(doc: Document): YAMLSeq {
  const fields = doc.get('fields');
  if (!isSeq(fields))
    throw new FerryError('MAPPING_INVALID', 'the mapping has no `fields` list to edit', {
      hint: 'Fix the YAML first.',
    });
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
  if (!cell)
    throw new FerryError('USAGE', `no field reads the column ${JSON.stringify(column)} in a form the table edits`, {
      hint: 'Choose a target for it first, or edit it in the YAML.',
    });
  return cell;
}

/** The map under `key` of an entry the table found to hold one there. */
function mapAt(node: YAMLMap, key: unknown): YAMLMap {
  const found = node.get(key, true);
  if (!isMap(found))
    throw new FerryError('INTERNAL', `the entry's ${String(key)} is not a map; this is a bug in crm-ferry's workbench`);
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
    throw new FerryError(
      'USAGE',
      `the column ${JSON.stringify(column)} cannot be a link's key in a placeholder: its name holds braces or spaces at an end`,
      { hint: 'Write the link in the YAML.' },
    );
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
    return target.ref === undefined
      ? entry.ref !== undefined && entry.value === undefined
      : entry.ref === undefined && entry.value !== undefined;
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
    if (isNode(pair.value) && isScalar(pair.key) && pair.key.value !== 'value' && pair.key.value !== 'parts')
      pair.value.comment = null;
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
function attach(
  doc: Document,
  fields: YAMLSeq,
  entity: Entity,
  target: Target,
  column: string,
  kept: YAMLMap | null,
  at: number,
): void {
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
      return (
        entry.to === 'address' &&
        entry.items === undefined &&
        entry.value === undefined &&
        isObject(entry.parts) &&
        entry.parts[part] === undefined
      );
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
  if (
    cell &&
    target &&
    cell.place.role === 'value' &&
    !cell.node.has('ref') &&
    target.part === undefined &&
    target.ref === undefined &&
    partnerOf(fields, entity, target) === undefined
  ) {
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
  if (isObject(parsed) && Object.keys(parsed).length === 1 && typeof parsed.column === 'string' && parsed.column !== '')
    return flowNode(doc, { column: parsed.column });
  throw new FerryError('USAGE', `the ${what} ${JSON.stringify(value)} is neither a constant nor a column`, {
    hint: `Choose one from the ${what} list.`,
  });
}

function setOrDelete(node: YAMLMap, key: string, value: unknown): void {
  if (value === undefined) node.delete(key);
  else node.set(key, value);
}

/** One transform as the YAML writes it: its name, or `{name: options}`; refused when unknown or its options do not read. */
function chainLink(transform: string, param: string): unknown {
  if (!(transform in TRANSFORMS))
    throw new FerryError('USAGE', `there is no transform ${JSON.stringify(transform)}`, {
      hint: 'Choose one from the transform list.',
    });
  let options: unknown;
  try {
    options = param.trim() === '' ? undefined : parseYamlValue(param);
  } catch (error) {
    throw new FerryError(
      'USAGE',
      `the options of ${transform} are not a YAML value: ${(error as Error).message.split('\n')[0]}`,
      { cause: error, hint: 'Write them as in the YAML: `;`, `FR`, `{format: dd.MM.yyyy}`.' },
    );
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
  const before = isSeq(chain)
    ? chain.items.slice(0, -1).map((item) => (isScalar(item) ? item.value : (item as { toJSON(): unknown }).toJSON()))
    : [];
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
  if (by.length === 0 || custom === '')
    throw new FerryError('USAGE', `${JSON.stringify(value)} says nothing to find records by`, {
      hint: 'Choose one from the list.',
    });
  const match = doc.get('match', true);
  const byNode = by.length === 1 ? by[0] : flowNode(doc, by);
  if (isMap(match)) {
    match.set('by', byNode);
    setOrDelete(match, 'definition', custom ?? undefined);
    return;
  }
  const node = flowNode(
    doc,
    custom === null
      ? { by: by.length === 1 ? by[0] : by, onMatch: 'update' }
      : { by: 'custom', definition: custom, onMatch: 'update' },
  );
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
  if (doc.errors.length > 0)
    throw new FerryError('MAPPING_INVALID', 'the YAML has errors: fix them before using the table', {
      hint: 'The line of each error is shown beside the YAML.',
    });
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
      if (item === null || (edit.kind === 'service' && item !== 'website'))
        throw new FerryError('USAGE', `${to} has no ${edit.kind}`, {
          hint: 'Types are for e-mail addresses, phones, addresses and websites; services for websites.',
        });
      setOrDelete(
        cell.node,
        edit.kind,
        constantOrColumn(doc, edit.kind === 'type' ? edit.type : edit.service, edit.kind),
      );
      break;
    }
    case 'transform':
    case 'chain': {
      const cell = needCell(fieldsSeq(doc), edit.column);
      const spec = specNode(cell);
      if (spec === null)
        throw new FerryError(
          'USAGE',
          `the column ${JSON.stringify(edit.column)} is a link's key, which takes no transform`,
          { hint: 'Write a template key in the YAML.' },
        );
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
