import { FerryError } from '../errors/index.ts';
import type { CatalogPart } from '../client/index.ts';
import type { ExportEntity } from './filter.ts';

type Body = Record<string, unknown>;

/** A cell as the writers take it: text, a number, a yes/no, a date (YYYY-MM-DD), a timestamp, or empty. */
export type Cell = string | number | boolean | { date: string } | { timestamp: string } | null;

export interface Column {
  name: string;
  value(record: Body): Cell;
  /** A custom field's column: the field's name, with its data tag's in brackets (`Contract end (Customer)`). */
  customField?: string;
  /**
   * What the export asks for besides the listed record before the column can be filled: a
   * project's additional contacts or tracks (one request each per project), or an entry's
   * attachments downloaded (`--attachments DIR`).
   */
  fetches?: 'parties' | 'tracks' | 'attachments';
}

function list(record: Body, key: string): Body[] {
  const value = record[key];
  return Array.isArray(value) ? (value as Body[]) : [];
}

function text(value: unknown): Cell {
  if (value === undefined || value === null || value === '') return null;
  return typeof value === 'string' ? value : String(value);
}

function date(value: unknown): Cell {
  return typeof value === 'string' && /^\d{4}-\d{2}-\d{2}$/.test(value) ? { date: value } : text(value);
}

/** An ISO 8601 instant as the service writes them; checked by shape, as Date.parse costs more than the rest of a row. */
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})$/;

function timestamp(value: unknown): Cell {
  return typeof value === 'string' && INSTANT.test(value) ? { timestamp: value } : text(value);
}

/** A linked party's display name: an organisation's name, or a person's first and last name. */
function partyName(party: unknown): Cell {
  if (party === null || typeof party !== 'object') return null;
  const p = party as Body;
  if (typeof p.name === 'string' && p.name !== '') return p.name;
  return text([p.firstName, p.lastName].filter((v) => typeof v === 'string' && v !== '').join(' '));
}

/** A linked record's id: the column that tells two records of one name apart, and that a lookup joins on. */
function idOf(value: unknown): Cell {
  if (value === null || typeof value !== 'object') return null;
  const id = (value as Body).id;
  return typeof id === 'number' ? id : text(id);
}

function nameOf(value: unknown): Cell {
  if (value === null || typeof value !== 'object') return null;
  return text((value as Body).name ?? (value as Body).username);
}

function first(record: Body, key: string, field: string): Cell {
  const items = record[key];
  return Array.isArray(items) && items.length > 0 ? text((items[0] as Body)?.[field]) : null;
}

/** The values of `field` in `items` from `start` on, joined; null when there are none. */
function joined(items: unknown, start: number, field: string, separator: string): Cell {
  if (!Array.isArray(items) || items.length <= start) return null;
  let out = '';
  for (let i = start; i < items.length; i += 1) {
    const value = (items[i] as Body | null)?.[field];
    if (value === undefined || value === null || value === '') continue;
    out = out === '' ? String(value) : `${out}${separator}${String(value)}`;
  }
  return out === '' ? null : out;
}

/** The items after the first, joined: a spreadsheet has one cell for "the others". */
function others(record: Body, key: string, field: string): Cell {
  return joined(record[key], 1, field, '; ');
}

function column(name: string, value: (record: Body) => Cell): Column {
  return { name, value };
}

const address = (part: string) => (r: Body) => first(r, 'addresses', part);

const COMMON_TAIL = (): Column[] => [
  column('tags', (r) => joined(r.tags, 0, 'name', ';')),
  column('owner', (r) => nameOf(r.owner)),
  column('team', (r) => nameOf(r.team)),
];

const STAMPS = (): Column[] => [
  column('createdAt', (r) => timestamp(r.createdAt)),
  column('updatedAt', (r) => timestamp(r.updatedAt)),
];

/** The columns a person reads, per entity, before the custom fields. */
const DEFAULTS: Record<ExportEntity, () => Column[]> = {
  parties: () => [
    column('id', (r) => (r.id as number) ?? null),
    column('type', (r) => text(r.type)),
    column('name', (r) => partyName(r)),
    column('title', (r) => text(r.title)),
    column('firstName', (r) => text(r.firstName)),
    column('lastName', (r) => text(r.lastName)),
    column('jobTitle', (r) => text(r.jobTitle)),
    column('organisation', (r) => partyName(r.organisation)),
    column('organisation.id', (r) => idOf(r.organisation)),
    column('email', (r) => first(r, 'emailAddresses', 'address')),
    column('otherEmails', (r) => others(r, 'emailAddresses', 'address')),
    column('phone', (r) => first(r, 'phoneNumbers', 'number')),
    column('otherPhones', (r) => others(r, 'phoneNumbers', 'number')),
    column('website', (r) => first(r, 'websites', 'address')),
    column('otherWebsites', (r) => others(r, 'websites', 'address')),
    column('street', address('street')),
    column('city', address('city')),
    column('state', address('state')),
    column('zip', address('zip')),
    column('country', address('country')),
    column('about', (r) => text(r.about)),
    ...COMMON_TAIL(),
    ...STAMPS(),
  ],
  opportunities: () => [
    column('id', (r) => (r.id as number) ?? null),
    column('name', (r) => text(r.name)),
    column('description', (r) => text(r.description)),
    column('party', (r) => partyName(r.party)),
    column('party.id', (r) => idOf(r.party)),
    column('milestone', (r) => nameOf(r.milestone)),
    column('amount', (r) => {
      const amount = (r.value as Body | null | undefined)?.amount;
      return typeof amount === 'number' ? amount : null;
    }),
    column('currency', (r) => text((r.value as Body | null | undefined)?.currency)),
    column('probability', (r) => (typeof r.probability === 'number' ? r.probability : null)),
    column('expectedCloseOn', (r) => date(r.expectedCloseOn)),
    column('closedOn', (r) => date(r.closedOn)),
    column('lostReason', (r) => text(r.lostReason)),
    ...COMMON_TAIL(),
    ...STAMPS(),
  ],
  kases: () => [
    column('id', (r) => (r.id as number) ?? null),
    column('name', (r) => text(r.name)),
    column('description', (r) => text(r.description)),
    column('party', (r) => partyName(r.party)),
    column('party.id', (r) => idOf(r.party)),
    column('status', (r) => text(r.status)),
    column('stage', (r) => nameOf(r.stage)),
    column('opportunity', (r) => nameOf(r.opportunity)),
    column('startOn', (r) => date(r.startOn)),
    column('expectedCloseOn', (r) => date(r.expectedCloseOn)),
    column('closedOn', (r) => date(r.closedOn)),
    ...COMMON_TAIL(),
    ...STAMPS(),
  ],
  entries: () => [
    column('id', (r) => (r.id as number) ?? null),
    column('type', (r) => text(r.type)),
    column('subject', (r) => text(r.subject)),
    column('content', (r) => text(r.content)),
    column('party', (r) => partyName(r.party)),
    column('kase', (r) => nameOf(r.kase)),
    column('opportunity', (r) => nameOf(r.opportunity)),
    column('creator', (r) => nameOf(r.creator)),
    column('activityType', (r) => nameOf(r.activityType)),
    column('attachments', (r) => joined(r.attachments, 0, 'filename', '; ')),
    column('entryAt', (r) => timestamp(r.entryAt)),
    ...STAMPS(),
  ],
  tasks: () => [
    column('id', (r) => (r.id as number) ?? null),
    column('description', (r) => text(r.description)),
    column('detail', (r) => text(r.detail)),
    column('category', (r) => nameOf(r.category)),
    column('status', (r) => text(r.status)),
    column('dueOn', (r) => date(r.dueOn)),
    column('dueTime', (r) => text(r.dueTime)),
    column('owner', (r) => nameOf(r.owner)),
    column('party', (r) => partyName(r.party)),
    column('opportunity', (r) => nameOf(r.opportunity)),
    column('kase', (r) => nameOf(r.kase)),
    ...STAMPS(),
  ],
};

/** A custom field's value in its type: a checkbox as yes/no, a date as a date, a number as a number. */
function customValue(type: string | undefined, value: unknown): Cell {
  if (value === undefined || value === null || value === '') return null;
  if (type === 'Boolean' || typeof value === 'boolean') return value === true || value === 'true';
  if (type === 'Date') return date(value);
  if (type === 'Number' && typeof value === 'number') return value;
  return text(value);
}

/**
 * One column per custom field definition of the entity, named after it. The record's values are
 * indexed by definition once per record, not searched once per column.
 */
function customColumns(entity: ExportEntity, catalog: CatalogPart | null): Column[] {
  if (entity !== 'parties' && entity !== 'opportunities' && entity !== 'kases') return [];
  let indexed: Body | null = null;
  let byDefinition = new Map<unknown, unknown>();
  const valueOf = (r: Body, id: number): unknown => {
    if (r !== indexed) {
      indexed = r;
      byDefinition = new Map();
      for (const field of list(r, 'fields')) {
        const key = (field.definition as Body | undefined)?.id;
        // The first value of a definition counts, as it did when each column searched the list.
        if (!byDefinition.has(key)) byDefinition.set(key, field.value);
      }
    }
    return byDefinition.get(id);
  };
  return (catalog?.fieldDefinitions[entity] ?? []).map((definition) => {
    const name = definition.tag ? `${definition.name} (${definition.tag})` : definition.name;
    return { name, customField: name, value: (r: Body) => customValue(definition.type, valueOf(r, definition.id)) };
  });
}

/**
 * Every column an export of `entity` can have, in their default order. A custom field named like
 * another column (a project's `Status`, a second `Region`) gets ` (custom field)`, then its id:
 * two columns of one name made the file ambiguous to read and --columns pick the first.
 */
export function availableColumns(entity: ExportEntity, catalog: CatalogPart | null): Column[] {
  const columns = DEFAULTS[entity]();
  const taken = new Set(columns.map((c) => c.name.toLowerCase()));
  const definitions =
    entity === 'parties' || entity === 'opportunities' || entity === 'kases'
      ? (catalog?.fieldDefinitions[entity] ?? [])
      : [];
  customColumns(entity, catalog).forEach((custom, i) => {
    let name = custom.name;
    if (taken.has(name.toLowerCase())) name = `${custom.name} (custom field)`;
    if (taken.has(name.toLowerCase())) name = `${custom.name} (custom field ${definitions[i]?.id ?? i + 1})`;
    taken.add(name.toLowerCase());
    columns.push(name === custom.name ? custom : { ...custom, name });
  });
  return columns;
}

/** The columns asked for with `--columns` (by name, in that order), or all of them. */
export function chooseColumns(
  entity: ExportEntity,
  catalog: CatalogPart | null,
  names: readonly string[] | null,
): Column[] {
  const all = availableColumns(entity, catalog);
  if (names === null) return all;
  return names.map((name) => {
    const found = all.find((c) => c.name === name) ?? all.find((c) => c.name.toLowerCase() === name.toLowerCase());
    if (!found)
      throw new FerryError('USAGE', `--columns: ${entity} have no column ${JSON.stringify(name)}`, {
        hint: `Columns: ${all.map((c) => c.name).join(', ')}.`,
      });
    return found;
  });
}

/** The embeds that fill the default columns. */
export function embedFor(entity: ExportEntity): string[] {
  if (entity === 'parties') return ['tags', 'fields', 'organisation'];
  if (entity === 'opportunities') return ['tags', 'fields', 'milestone', 'party'];
  if (entity === 'kases') return ['tags', 'fields', 'party', 'opportunity'];
  if (entity === 'entries') return ['party', 'kase', 'opportunity', 'creator', 'activityType'];
  return ['party', 'opportunity', 'kase', 'owner'];
}
