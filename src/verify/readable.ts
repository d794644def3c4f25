/**
 * Values of a record as a person reads them in the differences file and on the page: an owner by
 * name rather than `{"id":1004}`, a custom field as `Support level: Gold`, an e-mail address as
 * `Work: ben@example.com`, list items joined by `; `. The ids the comparison goes by are of no use
 * to the person who owns the data.
 */
import type { MappedRecord } from '../mapping/index.ts';

type Body = Record<string, unknown>;

/** What the ids of one row's record stand for, as the row names them. */
export interface RowNames {
  /** A field's name as the row gives it (`owner` -> `Sam Seller`), or the key a link names. */
  byField: Map<string, string>;
  /** Custom field definitions by id, as the row and the account name them. */
  definitions: Map<number, string>;
}

/** The names a row gave its record's ids (names resolved, links made), with the account's names of custom fields. */
export function rowNames(mapped: MappedRecord, body: Body, record: Body): RowNames {
  const names: RowNames = { byField: new Map(), definitions: new Map() };
  const fields = Array.isArray(body.fields) ? (body.fields as Body[]) : [];
  for (const use of mapped.names) {
    if (use.kind === 'fieldDefinition' && use.path[0] === 'fields' && typeof use.path[1] === 'number') {
      const id = fields[use.path[1]]?.definition;
      if (typeof id === 'number') names.definitions.set(id, use.name);
    } else if (use.path.length <= 2) names.byField.set(String(use.path[0]), use.name);
  }
  for (const ref of mapped.refs)
    if (ref.path.length === 2) names.byField.set(String(ref.path[0]), `the record of ${ref.key}`);
  for (const item of Array.isArray(record.fields) ? (record.fields as Body[]) : []) {
    const definition = item.definition as Body | undefined;
    if (definition && typeof definition.id === 'number' && typeof definition.name === 'string')
      names.definitions.set(definition.id, definition.name);
  }
  return names;
}

function text(value: unknown): string {
  if (value === undefined || value === null) return '';
  return typeof value === 'string'
    ? value
    : typeof value === 'number' || typeof value === 'boolean'
      ? String(value)
      : JSON.stringify(value);
}

/** A linked record, a user, a milestone: by its name. */
function nameOf(link: Body): string | undefined {
  if (typeof link.name === 'string' && link.name !== '') return link.name;
  const person = [link.firstName, link.lastName].filter((part) => typeof part === 'string' && part !== '').join(' ');
  if (person !== '') return person;
  return typeof link.username === 'string' ? link.username : undefined;
}

function typed(type: unknown, what: string): string {
  return typeof type === 'string' && type !== '' ? `${type}: ${what}` : what;
}

function itemText(field: string, item: unknown, names: RowNames): string {
  if (item === null || typeof item !== 'object') return text(item);
  const it = item as Body;
  switch (field) {
    case 'emailAddresses':
      return typed(it.type, text(it.address));
    case 'phoneNumbers':
      return typed(it.type, text(it.number));
    case 'websites':
      return typed(
        it.type,
        `${it.service !== undefined && it.service !== 'URL' ? `${text(it.service)} ` : ''}${text(it.address)}`,
      );
    case 'addresses':
      return typed(
        it.type,
        ['street', 'city', 'state', 'zip', 'country']
          .map((part) => text(it[part]))
          .filter((part) => part !== '')
          .join(', '),
      );
    case 'tags':
      return nameOf(it) ?? `tag ${text(it.id)}`;
    case 'fields': {
      const definition = it.definition;
      const id =
        typeof definition === 'number' ? definition : ((definition as Body | undefined)?.id as number | undefined);
      const name =
        (definition !== null && typeof definition === 'object' ? nameOf(definition as Body) : undefined) ??
        (id === undefined ? undefined : names.definitions.get(id));
      return `${name ?? `field ${text(id)}`}: ${text(it.value)}`;
    }
    case 'attachments':
      return text(it.filename);
    default:
      return nameOf(it) ?? text(it);
  }
}

/** A value of a record's field as a person reads it; '' for none. */
export function readable(field: string, value: unknown, names: RowNames): string {
  if (value === undefined || value === null) return '';
  if (Array.isArray(value)) return value.map((item) => itemText(field, item, names)).join('; ');
  if (typeof value === 'object') {
    const link = value as Body;
    if (typeof link.amount === 'number' || typeof link.currency === 'string')
      return `${text(link.amount)} ${text(link.currency)}`.trim();
    const named = nameOf(link);
    if (named !== undefined) return named;
    if (typeof link.id === 'number') return names.byField.get(field) ?? `record ${link.id}`;
    return text(value);
  }
  // A bare id the row gave by name (an activity type, a project stage).
  if (typeof value === 'number' && names.byField.has(field)) return names.byField.get(field) as string;
  return text(value);
}
