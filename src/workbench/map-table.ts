/**
 * The Map view's table: a row per column of the input, with the entry that reads it (its target,
 * transforms, type, service and rules) in the words of the page, read from the YAML.
 */
import { parseDocument } from 'yaml';
import { FerryError } from '../errors/index.ts';
import { type Entity, MappingErrors, WEBSITE_SERVICES } from '../mapping/index.ts';
import type { Choice, MapColumnView, MapEntryView, YamlProblem } from './api.ts';
import { ON_INVALID_CHOICES } from './api.ts';

import {
  USUAL_TYPES,
  type Raw,
  isObject,
  valueColumns,
  entryColumns,
  plainColumn,
  type Place,
  placeOf,
  choiceOf,
  itemKind,
  stepWords,
  targetOfPlace,
  fieldsOfRaw,
  entityOf,
} from './map-entries.ts';

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
function constantOrColumnChoices(
  none: string,
  constants: readonly string[],
  header: readonly string[],
  current: unknown,
): { choices: Choice[]; chosen: string } {
  const choices: Choice[] = [
    { value: '', label: none },
    ...constants.map((c) => ({ value: JSON.stringify(c), label: c })),
    ...header.map((column) => ({ value: JSON.stringify({ column }), label: `read from column ${column}` })),
  ];
  if (current === undefined || current === null) return { choices, chosen: '' };
  const chosen =
    typeof current === 'string'
      ? JSON.stringify(current)
      : plainColumn(current) !== null && Object.keys(current as Raw).length === 1
        ? JSON.stringify({ column: (current as Raw).column })
        : JSON.stringify(current);
  if (!choices.some((c) => c.value === chosen))
    choices.splice(1, 0, {
      value: chosen,
      label: typeof current === 'string' ? current : `${flowText(current)} (as the YAML says)`,
    });
  return { choices, chosen };
}

function summaryOf(entry: Raw, column: string, place: Place): string {
  const to = String(entry.to ?? '');
  const type = typeof entry.type === 'string' ? ` (${entry.type})` : '';
  if (place.role === 'part') return `address${type}, ${place.part} part`;
  if (place.role === 'key') return `${to}: link to a row of ${stepWords(entry.ref as string | string[])}, by its key`;
  if (place.role === 'value') {
    if (entry.ref !== undefined)
      return `${to} by name, when the link to ${stepWords(entry.ref as string | string[])} finds no row`;
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
    if (parts.length > 0)
      return `address${type}, ${parts.map(([part]) => part).join(' and ')} part, from a template or a condition`;
  }
  if (reads(entry.type)) return `${to}: its type`;
  if (reads(entry.service)) return `${to}: its service`;
  if (entry.ref !== undefined)
    return `${to}: link to a row of ${stepWords(entry.ref as string | string[])}, by a key of several columns`;
  if (to === 'custom') return `custom field ${String(entry.definition ?? '')}, from a template or a condition`;
  return `${to}, from a template or a condition`;
}

/** `One address entry with street, zip: its type, Required and A bad value are the whole entry's.` */
function sharedText(to: string, others: string[], settings: string[]): string {
  const list = settings.length === 1 ? settings[0] : `${settings.slice(0, -1).join(', ')} and ${settings.at(-1)}`;
  return `One ${to} entry with ${others.join(', ')}: its ${list} ${settings.length === 1 ? 'is' : 'are'} the whole entry's.`;
}

function entryView(
  entity: Entity,
  entry: Raw,
  index: number,
  column: string,
  place: Place,
  header: readonly string[],
): MapEntryView {
  const to = String(entry.to ?? '');
  const editable = place.role !== 'other';
  const spec =
    place.role === 'value'
      ? entry.value
      : place.role === 'part' && isObject(entry.parts)
        ? entry.parts[place.part as string]
        : undefined;
  const chain = isObject(spec) && Array.isArray(spec.transform) ? spec.transform : [];
  const last = chain.length > 0 ? transformName(chain[chain.length - 1]) : { name: '', param: '' };
  const item = editable && place.role !== 'key' ? itemKind(entity, to) : null;
  const types = item ? constantOrColumnChoices('(no type)', USUAL_TYPES[item], header, entry.type) : null;
  const services =
    item === 'website' ? constantOrColumnChoices('URL (the default)', WEBSITE_SERVICES, header, entry.service) : null;
  const others = [...entryColumns(entry)].filter((c) => c !== column && header.includes(c));
  const onInvalid =
    ON_INVALID_CHOICES.find((choice) => choice !== 'default' && choice === entry.onInvalid) ?? 'default';
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
    shared:
      editable && others.length > 0
        ? sharedText(to, others, [
            ...(item ? ['type'] : []),
            'Required',
            ...(place.role === 'key' ? [] : ['A bad value']),
          ])
        : null,
  };
}

/** The table's lines: one per column of the input, each with the entries that read it. */
export function tableOf(
  raw: unknown,
  header: readonly string[],
  samples: ReadonlyMap<string, string[]>,
): { columns: MapColumnView[]; otherEntries: Array<{ index: number; summary: string }> } {
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
      otherEntries.push({
        index,
        summary: `${String(field.to ?? '')}${field.definition ? ` ${String(field.definition)}` : ''}${shown}`,
      });
    }
  }
  const leaveOut = isObject(raw) && isObject(raw.leaveOut) ? raw.leaveOut : {};
  const leftOut = (name: string): { leftOut?: string } => {
    const why = Object.hasOwn(leaveOut, name) ? leaveOut[name] : undefined;
    return typeof why === 'string' ? { leftOut: why } : {};
  };
  return {
    columns: header.map((name) => ({
      name,
      samples: samples.get(name) ?? [],
      entries: byColumn.get(name) ?? [],
      ...leftOut(name),
    })),
    otherEntries,
  };
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
  const definitions = new Set(
    fieldsOfRaw(raw).flatMap((f) =>
      isObject(f) && f.to === 'custom' && typeof f.definition === 'string' ? [f.definition] : [],
    ),
  );
  const match = isObject(raw) ? raw.match : undefined;
  if (isObject(match) && typeof match.definition === 'string') definitions.add(match.definition);
  for (const definition of definitions)
    choices.push({ value: `custom:${definition}`, label: `the custom field ${definition}` });
  if (!isObject(match) || match.by === undefined) return { choices, chosen: '' };
  const by = (Array.isArray(match.by) ? match.by : [match.by]).map(String);
  const chosen = by.length === 1 && by[0] === 'custom' ? `custom:${String(match.definition ?? '')}` : by.join(', ');
  if (!choices.some((c) => c.value === chosen)) choices.push({ value: chosen, label: chosen });
  return { choices, chosen };
}

/** The YAML's problems, each with its line. */
export function yamlProblems(error: unknown): YamlProblem[] {
  if (error instanceof MappingErrors)
    return error.errors.map((e) => ({
      message: e.location?.yamlPath ? `${e.location.yamlPath}: ${e.message}` : e.message,
      line: e.location?.line ?? null,
    }));
  if (error instanceof FerryError) return [{ message: error.message, line: error.location?.line ?? null }];
  throw error;
}
