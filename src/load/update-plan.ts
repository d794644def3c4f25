import type { Entity } from '../mapping/index.ts';
import { canonicalJson } from './fingerprint.ts';

type Body = Record<string, unknown>;

/**
 * Lists of a record that an update changes item by item (spec: an element without id adds, one
 * with id and `_delete` removes), each with what makes two items the same one.
 */
const COLLECTIONS: Record<string, (item: Body) => string> = {
  emailAddresses: (i) => String(i.address ?? '').toLowerCase(),
  phoneNumbers: (i) => String(i.number ?? '').replace(/[^\d+]/g, ''),
  addresses: (i) =>
    ['street', 'city', 'state', 'zip', 'country'].map((k) => String(i[k] ?? '').toLowerCase()).join('|'),
  websites: (i) => `${String(i.service ?? 'URL')}|${String(i.address ?? '').toLowerCase()}`,
  tags: (i) => (i.name !== undefined ? String(i.name).toLowerCase() : `#${String(i.id)}`),
  fields: (i) => `def:${definitionId(i.definition)}`,
};

/** The keys of a body that hold lists of items. */
export const COLLECTION_KEYS: ReadonlySet<string> = new Set(Object.keys(COLLECTIONS));

/** Taken on create only: an update cannot change them. */
const CREATE_ONLY = new Set(['tracks', 'attachments', 'type']);

/**
 * Lists the interface changes with requests of their own, never in the record's body: a project's
 * additional contacts (POST and DELETE /kases/{id}/parties/{partyId}).
 */
export const SENT_APART: ReadonlySet<string> = new Set(['parties']);

/** The body without the lists sent apart: what the record's own create or update takes. */
export function withoutApart(body: Body): Body {
  if (!Object.keys(body).some((key) => SENT_APART.has(key))) return body;
  const out: Body = {};
  for (const [key, value] of Object.entries(body)) if (!SENT_APART.has(key)) out[key] = value;
  return out;
}

/** A project's additional contacts in a body, by party id. */
export function contactIdsOf(body: Body | null | undefined): number[] {
  const ids: number[] = [];
  // Most records have none: asked three times a row, this is no place for a flatMap.
  if (!Array.isArray(body?.parties)) return ids;
  for (const item of itemsOf(body, 'parties')) if (typeof item.id === 'number') ids.push(item.id);
  return ids;
}

/** The additional contacts to add and remove to go from what an earlier run wrote to the row of now. */
export function planContacts(from: Body | null | undefined, to: Body): { add: number[]; remove: number[] } {
  const before = contactIdsOf(from);
  const after = contactIdsOf(to);
  return { add: after.filter((id) => !before.includes(id)), remove: before.filter((id) => !after.includes(id)) };
}

function definitionId(definition: unknown): string {
  if (definition !== null && typeof definition === 'object') {
    const d = definition as Body;
    return d.id !== undefined ? String(d.id) : `${String(d.name)}|${String(d.tag)}`;
  }
  return String(definition);
}

function itemsOf(body: Body | null | undefined, key: string): Body[] {
  const list = body?.[key];
  return Array.isArray(list) ? (list as Body[]) : [];
}

/** The change to send to turn what crm-ferry wrote before (`from`) into what the row maps to now (`to`). */
export interface UpdatePlan {
  changes: Body;
  /** True when a list changed: the record must be read first, for the ids of the items to remove. */
  needsCurrent: boolean;
}

/**
 * What to send to bring a record from the body written before to the body of now. Only what
 * crm-ferry wrote is touched: an e-mail address or tag someone added in the service stays, and
 * one the row no longer has is removed only if crm-ferry had written it. `current` is the record
 * as the service has it, needed when lists change (see `needsCurrent`).
 */
export function planUpdate(from: Body, to: Body, current?: Body | null): UpdatePlan {
  const changes: Body = {};
  let needsCurrent = false;
  const keys = new Set([...Object.keys(from), ...Object.keys(to)]);
  for (const key of keys) {
    if (CREATE_ONLY.has(key) || SENT_APART.has(key)) continue;
    const before = from[key];
    const after = to[key];
    if (canonicalJson(before) === canonicalJson(after)) continue;
    const identity = COLLECTIONS[key];
    if (!identity) {
      changes[key] = after === undefined ? null : after;
      continue;
    }
    needsCurrent = true;
    const oldItems = new Map(itemsOf(from, key).map((item) => [identity(item), item]));
    const newItems = new Map(itemsOf(to, key).map((item) => [identity(item), item]));
    const existing = new Map(
      itemsOf(current, key).map((item) => [
        key === 'fields' ? `def:${definitionId(item.definition)}` : identity(item),
        item,
      ]),
    );
    const delta: Body[] = [];
    for (const [id, item] of newItems) {
      const old = oldItems.get(id);
      if (old && canonicalJson(old) === canonicalJson(item)) continue;
      const present = existing.get(id);
      // The service has it as the row says: nothing to send.
      if (present && holds(present, item)) continue;
      // A changed item that the service has: update it in place (its id plus the new values).
      if (present && present.id !== undefined && key !== 'tags') delta.push({ ...item, id: present.id });
      else if (!present) delta.push(item);
    }
    for (const [id] of oldItems) {
      if (newItems.has(id)) continue;
      const present = existing.get(id);
      if (present && present.id !== undefined) delta.push({ id: present.id, _delete: true });
    }
    if (delta.length > 0) changes[key] = delta;
  }
  return { changes, needsCurrent };
}

function isLink(value: unknown): boolean {
  return value !== null && typeof value === 'object' && 'id' in value;
}

/** Whether the service's list item has every value of the row's item (a link, or an id for one, compared by its id). */
function holds(present: Body, item: Body): boolean {
  for (const [field, value] of Object.entries(item)) {
    const had = present[field];
    const same = isLink(had) || isLink(value) ? idOf(had) === idOf(value) : canonicalJson(had) === canonicalJson(value);
    if (!same) return false;
  }
  return true;
}

/** A link by plain name (`organisation: {name}`): the service links the record of that name, or creates it. */
function nameLink(value: unknown): string | undefined {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return undefined;
  const link = value as Body;
  return link.id === undefined && typeof link.name === 'string' ? link.name : undefined;
}

/**
 * Link objects as a write takes them back: `{id}` only, or the bare id where the body gives one
 * (`activityType: 3` is read back as `activityType: {id: 3, ...}`). A link written by plain name
 * is read back by the linked record's name, the same link when the names agree as the service
 * finds one by name (case aside): `{name: "Köhler GmbH"}` is what `{id: 7, name: "KÖHLER GmbH"}` holds.
 */
function slim(value: unknown, written: unknown): unknown {
  const name = nameLink(written);
  if (name !== undefined && value !== null && typeof value === 'object' && typeof (value as Body).name === 'string') {
    const held = (value as Body).name as string;
    return held.trim().toLowerCase() === name.trim().toLowerCase() ? written : { name: held };
  }
  if (value !== null && typeof value === 'object' && !Array.isArray(value) && typeof (value as Body).id === 'number') {
    return typeof written === 'number' ? (value as Body).id : { id: (value as Body).id };
  }
  return value === undefined ? null : value;
}

/**
 * The account's record as the starting point of an update: its values of the body's plain fields
 * (lists are compared item by item with the record itself, see planUpdate). `planUpdate(fromRecord(
 * record, body), body, record)` is what the account's record lacks of the body: what `--full`
 * sends, and what `verify` reports.
 */
export function fromRecord(record: Body, body: Body): Body {
  const from: Body = {};
  for (const key of Object.keys(body)) if (!COLLECTION_KEYS.has(key)) from[key] = slim(record[key], body[key]);
  return from;
}

/** The earlier values of what `changes` touches, for rollback. */
export function beforeImage(from: Body, changes: Body): Body {
  const before: Body = {};
  for (const key of Object.keys(changes)) before[key] = from[key] === undefined ? null : from[key];
  return before;
}

/**
 * An update of the account's `record` to `body` (onMatch: update, and every update under --full):
 * what it changes, and the earlier values of that for rollback, whole lists included.
 */
export function planRecordUpdate(record: Body, body: Body): { plan: UpdatePlan; before: Body } {
  const from = fromRecord(record, body);
  const plan = planUpdate(from, body, record);
  const before = beforeImage(from, plan.changes);
  for (const key of Object.keys(plan.changes)) if (COLLECTION_KEYS.has(key)) before[key] = record[key] ?? [];
  return { plan, before };
}

function idOf(link: unknown): string {
  if (link !== null && typeof link === 'object') return String((link as Body).id ?? '');
  return link === undefined || link === null ? '' : String(link);
}

function lower(value: unknown): string {
  return typeof value === 'string' ? value.trim().toLowerCase() : '';
}

/**
 * What a created record and the body that created it have in common, to recognise a record whose
 * create was applied but whose answer was lost. Deliberately made of what the service keeps as
 * sent: names, the first e-mail address, links, content, dates.
 */
export function signatureOf(entity: Entity, record: Body): string {
  switch (entity) {
    case 'party': {
      const email = lower(itemsOf(record, 'emailAddresses')[0]?.address);
      return [
        'party',
        lower(record.type),
        lower(record.name),
        lower(record.firstName),
        lower(record.lastName),
        email,
      ].join('|');
    }
    case 'kase':
    case 'opportunity':
      return [entity, lower(record.name), idOf(record.party)].join('|');
    case 'entry':
      return [
        'entry',
        idOf(record.party),
        idOf(record.kase),
        idOf(record.opportunity),
        String(record.content ?? ''),
      ].join('|');
    case 'task':
      return [
        'task',
        lower(record.description),
        String(record.dueOn ?? ''),
        idOf(record.party),
        idOf(record.kase),
        idOf(record.opportunity),
      ].join('|');
  }
}
