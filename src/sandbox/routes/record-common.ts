/**
 * Input handling shared by the party, project and opportunity routes: reading and checking body
 * properties, owner and team defaults, tags, custom fields, nested collections with the
 * add / update / `_delete` convention, visibility of restricted records and the deleted lists.
 *
 * Checks collect every problem of a request before answering, so that one 422 names all of them;
 * nothing is written to the store until the whole body has been checked.
 */
import type { FastifyRequest } from 'fastify';
import type { Caller, SandboxContext } from '../context.ts';
import { forbidden, notFound, parseIdList, parseSince, validationError } from '../http.ts';
import type { DeletedRec, EntityKind, FieldDefinitionRec, FieldValueRec, PartyRec, UserRec } from '../model.ts';
import { matchingOnce } from '../paging.ts';
import type { Store, Table } from '../store.ts';

/** The problems found in one request body, answered together as one 422. */
export class Problems {
  readonly list: Array<{ field: string; message: string }> = [];

  constructor(readonly resource: string) {}

  add(field: string, message: string): void {
    this.list.push({ field, message });
  }

  get empty(): boolean {
    return this.list.length === 0;
  }

  /** Throws the 422 when anything was found. */
  check(): void {
    if (!this.empty) throw validationError(this.resource, this.list);
  }
}

/** A JSON object from a request body, not yet checked. */
export type Body = Record<string, unknown>;

/** Whether a JSON value is an object (not null, not an array). */
export function isObject(value: unknown): value is Body {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return typeof value === 'object' ? 'an object' : String(value);
}

/**
 * Flags properties the resource does not have. Read-only properties a client may echo back from
 * a read (`id`, timestamps, ...) are listed in `ignored` and pass silently.
 */
export function checkKeys(body: Body, allowed: readonly string[], ignored: readonly string[], problems: Problems, prefix = ''): void {
  for (const key of Object.keys(body)) {
    if (!allowed.includes(key) && !ignored.includes(key)) problems.add(`${prefix}${key}`, 'is not a known property');
  }
}

interface ReadOptions {
  required?: boolean;
  nullable?: boolean;
  prefix?: string;
}

/**
 * Reads an optional string property: `undefined` when absent, null when null is allowed and given.
 * An empty string is stored as null when null is allowed, as the service treats blanks as unset.
 */
export function readString(body: Body, key: string, problems: Problems, options: ReadOptions & { max?: number } = {}): string | null | undefined {
  const field = `${options.prefix ?? ''}${key}`;
  const value = body[key];
  if (value === undefined) {
    if (options.required) problems.add(field, 'is required');
    return undefined;
  }
  if (value === null) {
    if (!options.nullable) problems.add(field, 'must be a string, not null');
    return null;
  }
  if (typeof value !== 'string') {
    problems.add(field, `must be a string, got ${describe(value)}`);
    return undefined;
  }
  const max = options.max ?? 10_000;
  if (value.length > max) problems.add(field, `must be at most ${max} characters long`);
  if (value.trim() === '') {
    if (options.nullable) return null;
    problems.add(field, 'must not be blank');
    return undefined;
  }
  return value;
}

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

/** Whether `value` is a real calendar date written `YYYY-MM-DD`. */
export function isDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const date = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === value;
}

/** Reads an optional `YYYY-MM-DD` date; null clears it. */
export function readDate(body: Body, key: string, problems: Problems, options: ReadOptions = {}): string | null | undefined {
  const field = `${options.prefix ?? ''}${key}`;
  const value = body[key];
  if (value === undefined) {
    if (options.required) problems.add(field, 'is required');
    return undefined;
  }
  if (value === null && options.nullable !== false) return null;
  if (typeof value !== 'string' || !isDate(value)) {
    problems.add(field, `must be a date written YYYY-MM-DD, got ${describe(value)}`);
    return undefined;
  }
  return value;
}

/** Reads an optional integer within bounds. */
export function readInteger(body: Body, key: string, problems: Problems, options: ReadOptions & { min?: number; max?: number } = {}): number | null | undefined {
  const field = `${options.prefix ?? ''}${key}`;
  const value = body[key];
  if (value === undefined) {
    if (options.required) problems.add(field, 'is required');
    return undefined;
  }
  if (value === null) {
    if (!options.nullable) problems.add(field, 'must be an integer, not null');
    return null;
  }
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    problems.add(field, `must be an integer, got ${describe(value)}`);
    return undefined;
  }
  if ((options.min !== undefined && value < options.min) || (options.max !== undefined && value > options.max)) {
    problems.add(field, `must be from ${options.min ?? '-'} to ${options.max ?? '-'}, got ${value}`);
    return undefined;
  }
  return value;
}

/**
 * Reads a reference to another record given as an integer id or as `{id}`. Returns the id, null
 * when null is given and allowed, undefined when absent or malformed (the problem is recorded).
 */
export function readIdRef(value: unknown, field: string, problems: Problems, nullable = false): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) {
    if (!nullable) problems.add(field, 'must not be null');
    return null;
  }
  const raw = isObject(value) ? value.id : value;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1) {
    problems.add(field, `must be {"id": <integer>}, got ${describe(value)}`);
    return undefined;
  }
  return raw;
}

/** Today's date on the sandbox clock, `YYYY-MM-DD`. */
export function today(ctx: SandboxContext): string {
  return ctx.now().toISOString().slice(0, 10);
}

// ---------------------------------------------------------------------------------------------
// Owner and team

function findUser(ctx: SandboxContext, value: unknown, field: string, problems: Problems): UserRec | null | undefined {
  if (value === null) return null;
  if (isObject(value) && typeof value.username === 'string' && value.id === undefined) {
    const wanted = value.username.toLowerCase();
    const user = ctx.store.users.all().find((u) => u.username.toLowerCase() === wanted);
    if (!user) problems.add(field, `no user with username ${JSON.stringify(value.username)}`);
    return user;
  }
  const id = readIdRef(value, field, problems);
  if (id === undefined || id === null) return undefined;
  const user = ctx.store.users.get(id);
  if (!user) problems.add(field, `no user with id ${id}`);
  return user;
}

function findTeam(ctx: SandboxContext, value: unknown, field: string, problems: Problems): number | null | undefined {
  if (value === null) return null;
  if (isObject(value) && typeof value.name === 'string' && value.id === undefined) {
    const wanted = value.name.toLowerCase();
    const team = ctx.store.teams.all().find((t) => t.name.toLowerCase() === wanted);
    if (!team) problems.add(field, `no team named ${JSON.stringify(value.name)}`);
    return team?.id;
  }
  const id = readIdRef(value, field, problems);
  if (id === undefined || id === null) return undefined;
  if (!ctx.store.teams.has(id)) problems.add(field, `no team with id ${id}`);
  return id;
}

/**
 * Works out owner and team from a create or update body. On create an absent owner is the
 * caller; on update it stays. A given owner without a team brings the owner's default team;
 * null sets none. `current` is null on create.
 */
export function resolveOwnerTeam(
  ctx: SandboxContext,
  body: Body,
  caller: Caller,
  problems: Problems,
  current: { ownerId: number | null; teamId: number | null } | null,
): { ownerId: number | null; teamId: number | null } {
  let ownerId = current ? current.ownerId : caller.user.id;
  let teamId = current ? current.teamId : null;
  const ownerGiven = body.owner !== undefined;
  if (ownerGiven) {
    const owner = findUser(ctx, body.owner, 'owner', problems);
    if (owner !== undefined) ownerId = owner === null ? null : owner.id;
    if (owner && body.team === undefined) teamId = owner.defaultTeamId;
  }
  if (body.team !== undefined) {
    const team = findTeam(ctx, body.team, 'team', problems);
    if (team !== undefined) teamId = team;
  }
  return { ownerId, teamId };
}

// ---------------------------------------------------------------------------------------------
// Tags

/** What a request does to the tags of a record; new tags are created only by applyTags(). */
export interface TagPlan {
  ids: number[];
  newNames: string[];
  removed: Set<number>;
}

/**
 * Reads `tags[]`: elements name a tag by `id` or `name`; on update an element with `id` and
 * `_delete: true` removes it. An unknown name becomes a new tag of the entity, an unknown id is
 * a problem.
 */
export function planTags(
  ctx: SandboxContext,
  entity: EntityKind,
  currentIds: readonly number[],
  input: unknown,
  mode: 'create' | 'update',
  problems: Problems,
): TagPlan {
  const plan: TagPlan = { ids: [...currentIds], newNames: [], removed: new Set() };
  if (input === undefined) return plan;
  if (!Array.isArray(input)) {
    problems.add('tags', `must be an array, got ${describe(input)}`);
    return plan;
  }
  const tags = ctx.store.tags.all().filter((t) => t.entity === entity);
  input.forEach((element, index) => {
    const at = `tags[${index}]`;
    if (!isObject(element)) {
      problems.add(at, `must be an object with id or name, got ${describe(element)}`);
      return;
    }
    checkKeys(element, ['id', 'name', '_delete'], ['dataTag'], problems, `${at}.`);
    if (element._delete !== undefined && typeof element._delete !== 'boolean') problems.add(`${at}._delete`, 'must be a boolean');
    let id: number | undefined;
    if (element.id !== undefined) {
      const ref = readIdRef(element.id, `${at}.id`, problems);
      if (ref === undefined || ref === null) return;
      if (!tags.some((t) => t.id === ref)) {
        problems.add(`${at}.id`, `no ${entityNoun(entity)} tag with id ${ref}`);
        return;
      }
      id = ref;
    } else if (typeof element.name === 'string' && element.name.trim() !== '') {
      const wanted = element.name.trim().toLowerCase();
      id = tags.find((t) => t.name.toLowerCase() === wanted)?.id;
    } else {
      problems.add(at, 'needs an id or a non-blank name');
      return;
    }
    if (element._delete === true) {
      if (mode === 'create') {
        problems.add(`${at}._delete`, 'cannot remove a tag from a record being created');
      } else if (id !== undefined) {
        plan.ids = plan.ids.filter((t) => t !== id);
        plan.removed.add(id);
      }
      return;
    }
    if (id === undefined) {
      const name = (element.name as string).trim();
      if (!plan.newNames.some((n) => n.toLowerCase() === name.toLowerCase())) plan.newNames.push(name);
    } else if (!plan.ids.includes(id)) {
      plan.ids.push(id);
    }
  });
  return plan;
}

/** Creates the tags a plan names and returns the final tag ids; the data tags of `fields` are added too. */
export function applyTags(ctx: SandboxContext, entity: EntityKind, plan: TagPlan, fields: readonly FieldValueRec[]): number[] {
  const ids = [...plan.ids];
  for (const name of plan.newNames) ids.push(ctx.store.tags.insert({ entity, name, dataTag: false }).id);
  // A value of a data-tag field only makes sense with its tag on the record, so the tag follows.
  for (const field of fields) {
    const tagId = ctx.store.fieldDefinitions.get(field.definitionId)?.tagId ?? null;
    if (tagId !== null && !ids.includes(tagId)) ids.push(tagId);
  }
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Custom fields

function entityNoun(entity: EntityKind): string {
  return entity === 'parties' ? 'party' : entity === 'kases' ? 'project' : 'opportunity';
}

function findDefinition(
  ctx: SandboxContext,
  entity: EntityKind,
  value: unknown,
  at: string,
  problems: Problems,
): FieldDefinitionRec | undefined {
  const definitions = ctx.store.fieldDefinitions.all().filter((d) => d.entity === entity);
  if (isObject(value) && value.id === undefined && value.name !== undefined) {
    if (typeof value.name !== 'string') {
      problems.add(`${at}.name`, 'must be a string');
      return undefined;
    }
    if (!('tag' in value)) {
      problems.add(`${at}.tag`, 'is required with a definition name: the data tag id or name, or null for a field outside data tags');
      return undefined;
    }
    let tagId: number | null = null;
    if (value.tag !== null) {
      const tags = ctx.store.tags.all().filter((t) => t.entity === entity && t.dataTag);
      const tag =
        typeof value.tag === 'string'
          ? tags.find((t) => t.name.toLowerCase() === (value.tag as string).toLowerCase())
          : tags.find((t) => t.id === (isObject(value.tag) ? value.tag.id : value.tag));
      if (!tag) {
        problems.add(`${at}.tag`, `no data tag ${describe(value.tag)}`);
        return undefined;
      }
      tagId = tag.id;
    }
    const wanted = value.name.toLowerCase();
    const found = definitions.find((d) => d.name.toLowerCase() === wanted && d.tagId === tagId);
    if (!found) {
      problems.add(at, `no custom field named ${JSON.stringify(value.name)} ${tagId === null ? 'outside data tags' : `in data tag ${tagId}`}`);
    }
    return found;
  }
  const id = readIdRef(value, at, problems);
  if (id === undefined || id === null) return undefined;
  const found = definitions.find((d) => d.id === id);
  if (!found) problems.add(at, `no ${entityNoun(entity)} custom field definition with id ${id}`);
  return found;
}

/** Checks a value against its definition; returns the value as stored or undefined (problem recorded). */
export function checkFieldValue(definition: FieldDefinitionRec, value: unknown, at: string, problems: Problems): string | boolean | undefined {
  const bad = (expected: string): undefined => {
    problems.add(at, `${definition.name} is a ${definition.type} field: expected ${expected}, got ${describe(value)}`);
    return undefined;
  };
  switch (definition.type) {
    case 'Boolean':
      return typeof value === 'boolean' ? value : bad('true or false');
    case 'Date':
      return typeof value === 'string' && isDate(value) ? value : bad('a date written YYYY-MM-DD');
    case 'List': {
      const options = definition.options ?? [];
      return typeof value === 'string' && options.includes(value) ? value : bad(`one of ${options.map((o) => JSON.stringify(o)).join(', ')}`);
    }
    case 'Text': {
      if (typeof value !== 'string') return bad('a string');
      if (definition.pattern !== null && !new RegExp(definition.pattern).test(value)) return bad(`text matching ${definition.pattern}`);
      return value;
    }
  }
}

/**
 * Applies `fields[]` to the current values. An element without `id` sets the value of its
 * definition (replacing an earlier value, as a record holds one value per field); with `id` it
 * updates that instance, or removes it with `_delete: true` or a null value.
 */
export function planFields(
  ctx: SandboxContext,
  entity: EntityKind,
  forClass: 'PERSON' | 'ORGANISATION' | null,
  current: readonly FieldValueRec[],
  input: unknown,
  mode: 'create' | 'update',
  problems: Problems,
): FieldValueRec[] {
  let fields = current.map((f) => ({ ...f }));
  if (input === undefined) return fields;
  if (!Array.isArray(input)) {
    problems.add('fields', `must be an array, got ${describe(input)}`);
    return fields;
  }
  input.forEach((element, index) => {
    const at = `fields[${index}]`;
    if (!isObject(element)) {
      problems.add(at, `must be an object with definition and value, got ${describe(element)}`);
      return;
    }
    checkKeys(element, ['id', 'definition', 'value', '_delete'], ['tagId'], problems, `${at}.`);
    if (element.id !== undefined) {
      const id = readIdRef(element.id, `${at}.id`, problems);
      if (id === undefined || id === null) return;
      const existing = fields.find((f) => f.id === id);
      if (!existing || mode === 'create') {
        problems.add(`${at}.id`, `no custom field value with id ${id} on this record`);
        return;
      }
      if (element._delete === true || element.value === null) {
        fields = fields.filter((f) => f.id !== id);
        return;
      }
      const definition = ctx.store.fieldDefinitions.get(existing.definitionId);
      if (!definition || !('value' in element)) {
        problems.add(`${at}.value`, 'is required to change a custom field');
        return;
      }
      const value = checkFieldValue(definition, element.value, `${at}.value`, problems);
      if (value !== undefined) existing.value = value;
      return;
    }
    if (element._delete !== undefined) {
      problems.add(`${at}._delete`, 'needs the id of the custom field value to remove');
      return;
    }
    if (element.definition === undefined) {
      problems.add(`${at}.definition`, 'is required');
      return;
    }
    const definition = findDefinition(ctx, entity, element.definition, `${at}.definition`, problems);
    if (!definition) return;
    if (definition.forClass !== null && forClass !== null && definition.forClass !== forClass) {
      problems.add(`${at}.definition`, `${definition.name} is only for ${definition.forClass === 'PERSON' ? 'people' : 'organisations'}`);
      return;
    }
    if (!('value' in element) || element.value === undefined) {
      problems.add(`${at}.value`, 'is required');
      return;
    }
    if (element.value === null) {
      fields = fields.filter((f) => f.definitionId !== definition.id);
      return;
    }
    const value = checkFieldValue(definition, element.value, `${at}.value`, problems);
    if (value === undefined) return;
    const existing = fields.find((f) => f.definitionId === definition.id);
    if (existing) existing.value = value;
    else fields.push({ id: ctx.store.next(), definitionId: definition.id, value });
  });
  return fields;
}

/** Drops values of data-tag fields whose tag this request removed from the record. */
export function dropFieldsOfRemovedTags(ctx: SandboxContext, fields: FieldValueRec[], removed: ReadonlySet<number>): FieldValueRec[] {
  if (removed.size === 0) return fields;
  return fields.filter((f) => {
    const tagId = ctx.store.fieldDefinitions.get(f.definitionId)?.tagId ?? null;
    return tagId === null || !removed.has(tagId);
  });
}

/**
 * Whether an important field that applies to the record has no value. Fields of a data tag apply
 * only when the record carries the tag; party fields may be for people or organisations only.
 */
export function missingImportantFields(
  ctx: SandboxContext,
  entity: EntityKind,
  record: { tagIds: readonly number[]; fields: readonly FieldValueRec[] },
  forClass: 'PERSON' | 'ORGANISATION' | null,
): boolean {
  return ctx.store.fieldDefinitions.all().some(
    (d) =>
      d.entity === entity &&
      d.important &&
      (d.tagId === null || record.tagIds.includes(d.tagId)) &&
      (d.forClass === null || forClass === null || d.forClass === forClass) &&
      !record.fields.some((f) => f.definitionId === d.id && f.value !== ''),
  );
}

// ---------------------------------------------------------------------------------------------
// Nested collections

/**
 * Applies a nested collection (addresses, phone numbers, ...) with the add / update / `_delete`
 * convention. `build` checks one element and returns the stored item, merging into `existing`
 * on update; it records problems and returns undefined when the element is unusable.
 */
export function applyCollection<T extends { id: number }>(
  ctx: SandboxContext,
  name: string,
  current: readonly T[],
  input: unknown,
  problems: Problems,
  build: (element: Body, existing: T | undefined, at: string) => T | undefined,
): T[] {
  let items = [...current];
  if (input === undefined) return items;
  if (!Array.isArray(input)) {
    problems.add(name, `must be an array, got ${describe(input)}`);
    return items;
  }
  input.forEach((element, index) => {
    const at = `${name}[${index}]`;
    if (!isObject(element)) {
      problems.add(at, `must be an object, got ${describe(element)}`);
      return;
    }
    if (element._delete !== undefined && typeof element._delete !== 'boolean') {
      problems.add(`${at}._delete`, 'must be a boolean');
      return;
    }
    if (element.id === undefined) {
      if (element._delete === true) {
        problems.add(`${at}._delete`, 'needs the id of the item to remove');
        return;
      }
      const added = build(element, undefined, at);
      if (added) items.push({ ...added, id: ctx.store.next() });
      return;
    }
    const id = readIdRef(element.id, `${at}.id`, problems);
    if (id === undefined || id === null) return;
    const existing = items.find((item) => item.id === id);
    if (!existing) {
      problems.add(`${at}.id`, `no item with id ${id} in ${name} of this record`);
      return;
    }
    if (element._delete === true) {
      items = items.filter((item) => item.id !== id);
      return;
    }
    const updated = build(element, existing, at);
    if (updated) items = items.map((item) => (item.id === id ? { ...updated, id } : item));
  });
  return items;
}

// ---------------------------------------------------------------------------------------------
// Visibility, reads and deleted lists

/** Whether the caller may see the record (restricted records are listed separately). */
export function visibleTo(record: { restrictedFor: readonly number[] }, caller: Caller): boolean {
  return !record.restrictedFor.includes(caller.user.id);
}

/** Fetches one record for a single read or write: 404 when unknown, 403 when restricted for the caller. */
export function mustFind<T extends { id: number; restrictedFor: number[] }>(table: Table<T>, id: number, caller: Caller, noun: string): T {
  const record = table.get(id);
  if (!record) throw notFound(`no ${noun} with id ${id}`);
  if (!visibleTo(record, caller)) throw forbidden(`the ${noun} with id ${id} is restricted and cannot be seen by ${caller.user.username}`);
  return record;
}

/** Fetches the records of a multi-id read (`1,2,3`, at most 10); 404 names every missing id. */
export function mustFindAll<T extends { id: number; restrictedFor: number[] }>(table: Table<T>, raw: string, caller: Caller, noun: string): T[] {
  const ids = parseIdList(raw, noun);
  const missing = ids.filter((id) => !table.has(id));
  if (missing.length > 0) throw notFound(`no ${noun} with id ${missing.join(', ')}`);
  return ids.map((id) => mustFind(table, id, caller, noun));
}

/**
 * Keeps records changed at or after `since`. Inclusive, so that a client passing the time of its
 * last run never misses a change made in the same second.
 */
export function changedSince(request: FastifyRequest): (record: { updatedAt: string }) => boolean {
  const since = parseSince(request);
  if (!since) return () => true;
  const from = since.getTime();
  return (record) => Date.parse(record.updatedAt) >= from;
}

/** The `/deleted` answer: deleted records since the date, and records restricted for the caller. */
export function deletedList<T extends { id: number; restrictedFor: number[] }>(
  request: FastifyRequest,
  store: Store,
  caller: Caller,
  deleted: readonly DeletedRec[],
  records: () => Iterable<T>,
  nameOf: (record: T) => string,
  keys: { deleted: string; restricted: string },
): Record<string, unknown> {
  const since = parseSince(request);
  const list = deleted.filter((d) => !since || Date.parse(d.deletedAt) >= since.getTime()).map((d) => ({ id: d.id, deletedAt: d.deletedAt }));
  // The records hidden from the caller need a scan of the table: once per caller until it changes.
  const hidden = matchingOnce(store, `restricted ${keys.restricted} for ${caller.user.id}`, { records, matches: (r: T) => !visibleTo(r, caller) });
  const restricted = hidden.map((r) => ({ id: r.id, name: nameOf(r), isRestricted: true }));
  return restricted.length > 0 ? { [keys.deleted]: list, [keys.restricted]: restricted } : { [keys.deleted]: list };
}

// ---------------------------------------------------------------------------------------------
// Search

/** The display name of a party: the organisation name or the person's first and last name. */
export function partyName(party: PartyRec): string {
  return party.type === 'organisation' ? (party.name ?? '') : [party.firstName, party.lastName].filter(Boolean).join(' ');
}

function digitsOf(text: string): string {
  return text.replace(/\D+/g, '');
}

/**
 * Whether a party matches a search: part of its name, a postcode, or a phone number. Phone
 * numbers are compared on their digits alone, so `+44 (0)20 7946-0018` is found by `7946 0018`.
 */
export function partyMatches(party: PartyRec, q: string): boolean {
  const needle = q.trim().toLowerCase();
  if (needle === '') return false;
  if (partyName(party).toLowerCase().includes(needle)) return true;
  const squeezed = needle.replace(/\s+/g, '');
  if (party.addresses.some((a) => a.zip !== null && a.zip.toLowerCase().replace(/\s+/g, '') === squeezed)) return true;
  const digits = digitsOf(needle);
  // Only a query that is mostly digits is a phone number; otherwise "a1" would match any phone with a 1.
  if (digits.length >= 3 && digits.length >= squeezed.replace(/[^0-9a-z]/g, '').length) {
    return party.phoneNumbers.some((p) => digitsOf(p.number).includes(digits));
  }
  return false;
}

/** Whether a project or opportunity matches a search: by its own name, or by its party (name, postcode, phone). */
export function nameOrPartyMatches(ctx: SandboxContext, record: { name: string; partyId: number }, q: string): boolean {
  if (record.name.toLowerCase().includes(q.trim().toLowerCase())) return true;
  const party = ctx.store.parties.get(record.partyId);
  return party !== undefined && partyMatches(party, q);
}
