import { isAbsolute, resolve } from 'node:path';
import type { CellValue } from '../sources/types.ts';
import { ENTITY_PLURAL } from './compile-targets.ts';
import type { TargetInfo } from './compile-targets.ts';
import { dateText, isEmpty, valueText } from './compile-template.ts';
import { compileKeyTemplate, compileValue, RowRejection } from './compile-value.ts';
import type { ValueCompiler, ValueFn } from './compile-value.ts';
import type { Entity, FieldEntry } from './schema.ts';
import type { NameKind, NameUse, RefUse } from './types.ts';

/** Names whose id the service takes as a bare integer rather than {id}. */
const BARE_ID_KINDS: ReadonlySet<NameKind> = new Set<NameKind>(['activityType', 'stage']);
import type { Value } from './transforms/types.ts';

/** A record being built from one row. */
export interface Draft {
  record: Record<string, unknown>;
  names: NameUse[];
  refs: RefUse[];
  attachments: string[];
  /** Tag names as first spelled, and the same lower-cased, for merging duplicates; null until a tag is seen. */
  tags: { names: string[]; lower: string[] } | null;
  milestone: NameUse | null;
  pipeline: string | null;
  amount: number | null;
  currency: string | null;
  /** Folder of the input file, for attachment paths. */
  inputDir: string;
  /**
   * The record's lists by their key, once made. Reading them from `record` by key is slow: records
   * of different rows gain their keys in different orders, so no lookup there stays monomorphic.
   */
  lists: DraftLists;
}

/** Lists a draft's record may hold; null until the first entry. */
export interface DraftLists {
  fields: Array<Record<string, unknown>> | null;
  phoneNumbers: Array<Record<string, unknown>> | null;
  emailAddresses: Array<Record<string, unknown>> | null;
  websites: Array<Record<string, unknown>> | null;
  addresses: Array<Record<string, unknown>> | null;
}

/** A draft's empty lists; one object per row, of one shape. */
export function emptyLists(): DraftLists {
  return { fields: null, phoneNumbers: null, emailAddresses: null, websites: null, addresses: null };
}

/** Writes one mapping entry into a draft; returns whether it wrote anything. */
export type Applier = (values: Record<string, CellValue>, draft: Draft) => boolean;

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;
const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;
const DECIMAL = /^-?\d+(?:\.\d+)?$/;

function shown(value: Value): string {
  return JSON.stringify(valueText(value));
}

function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return dateText(date) === text;
}

/** A date target's value as YYYY-MM-DD, or a reject that names the field and the fix. */
export function toDate(value: Value, field: string): string {
  if (value instanceof Date) return dateText(value);
  const text = valueText(value).trim();
  if (isCalendarDate(text)) return text;
  throw new RowRejection(field, `\`${field}\` must be a date written YYYY-MM-DD, found ${shown(value)}; add a \`date\` transform with the source's format`);
}

function toTimestamp(value: Value, field: string): string {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const text = valueText(value).trim();
  if (TIMESTAMP.test(text)) {
    const parsed = new Date(text);
    if (!Number.isNaN(parsed.getTime())) return parsed.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  throw new RowRejection(field, `\`${field}\` must be a timestamp such as 2024-03-01T14:30:00Z, found ${shown(value)}; add a \`timestamp\` transform with the source's format`);
}

function toTime(value: Value, field: string): string {
  const m = TIME.exec(valueText(value).trim());
  if (m && Number(m[1]) < 24 && Number(m[2]) < 60 && Number(m[3] ?? 0) < 60) return `${(m[1] as string).padStart(2, '0')}:${m[2]}:${m[3] ?? '00'}`;
  throw new RowRejection(field, `\`${field}\` must be a time of day hh:mm or hh:mm:ss, found ${shown(value)}`);
}

function toNumber(value: Value, field: string): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const text = valueText(value).trim();
  if (DECIMAL.test(text)) return Number(text);
  throw new RowRejection(field, `\`${field}\` must be a number, found ${shown(value)}; add a \`number\` transform for numbers written with a locale (1.234,56)`);
}

function toInteger(value: Value, field: string, info: TargetInfo): number {
  const n = toNumber(value, field);
  const min = info.min ?? Number.MIN_SAFE_INTEGER;
  const max = info.max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isInteger(n) || n < min || n > max) throw new RowRejection(field, `\`${field}\` must be a whole number from ${min} to ${max}, found ${shown(value)}`);
  return n;
}

/** An id given directly: a positive whole number, or text of digits only. */
function toId(value: Value): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value > 0 ? value : undefined;
  const text = valueText(value).trim();
  return /^\d+$/.test(text) && Number(text) > 0 ? Number(text) : undefined;
}

/** Each non-empty item of a value that may be a list (after `split`). */
// Hot path (once per value per row): plain loops, no callbacks. Under tsx every function created
// at run time is also named through Object.defineProperty, which costs more than the work here.
function items(value: Value): string[] {
  if (Array.isArray(value)) {
    const out: string[] = [];
    for (const v of value) {
      const text = v.trim();
      if (text !== '') out.push(text);
    }
    return out;
  }
  const text = valueText(value).trim();
  return text === '' ? [] : [text];
}

/** Adds a tag unless the row has it already (in any case). Lists of tags are short: a linear search beats a Map per row. */
function addTag(draft: Draft, name: string): void {
  const lower = name.toLowerCase();
  const tags = (draft.tags ??= { names: [], lower: [] });
  if (!tags.lower.includes(lower)) {
    tags.lower.push(lower);
    tags.names.push(name);
  }
}

/** One phone number, email address or website in the service's shape. */
function contactEntry(website: boolean, service: string, type: string | undefined, valueKey: string, item: string): Record<string, unknown> {
  if (website) return { service, address: item };
  if (type === undefined) return valueKey === 'number' ? { number: item } : { address: item };
  return valueKey === 'number' ? { type, number: item } : { type, address: item };
}

/** A name use shared by many records: frozen, so that a consumer that tries to change one fails loudly. */
function frozenUse(use: NameUse): NameUse {
  Object.freeze(use.path);
  return Object.freeze(use);
}

function customValue(value: Value): string | boolean {
  if (typeof value === 'boolean') return value;
  if (value instanceof Date) return dateText(value);
  return valueText(value);
}

function listOf(draft: Draft, key: string): Array<Record<string, unknown>> {
  let list = draft.record[key] as Array<Record<string, unknown>> | undefined;
  if (!list) {
    list = [];
    draft.record[key] = list;
  }
  return list;
}

/** The record's list under one of the keys DraftLists knows, made (and put in the record) on first use. */
function knownList(draft: Draft, key: keyof DraftLists): Array<Record<string, unknown>> {
  let list = draft.lists[key];
  if (list === null) {
    list = [];
    draft.lists[key] = list;
    draft.record[key] = list;
  }
  return list;
}

/** Builds the applier of one field entry. */
export async function compileField(compiler: ValueCompiler, entity: Entity, field: FieldEntry, info: TargetInfo, index: number): Promise<Applier> {
  const to = field.to;
  const yamlPath = `fields[${index}]`;
  const owner = { field: to, yamlPath };
  const applier = await buildApplier(compiler, entity, field, info, yamlPath, owner);
  if (!field.required) return applier;
  return (values, draft) => {
    if (applier(values, draft)) return true;
    throw new RowRejection(to, `\`${to}\` is required (${yamlPath}) but the row gives it no value`);
  };
}

async function buildApplier(compiler: ValueCompiler, entity: Entity, field: FieldEntry, info: TargetInfo, yamlPath: string, owner: { field: string; yamlPath: string }): Promise<Applier> {
  const to = field.to;
  if (field.ref !== undefined && field.key !== undefined) {
    // One frozen list for every record of the mapping: the hot path makes no copy per row.
    const steps: readonly string[] = Object.freeze(typeof field.ref === 'string' ? [field.ref] : [...field.ref]);
    const keyOf = compileKeyTemplate(compiler, field.key);
    return (values, draft) => {
      const key = keyOf(values);
      if (key === '') return false;
      // Links travel as {id}; the plan fills in the id of the record the other step created.
      draft.record[to] = { id: null };
      draft.refs.push({ path: [to, 'id'], steps, key, yamlPath });
      return true;
    };
  }
  const valueOf: ValueFn = field.value === undefined ? () => null : await compileValue(compiler, field.value, owner, `${yamlPath}.value`);
  const read = (values: Record<string, CellValue>): Value | undefined => {
    const value = valueOf(values);
    return value === undefined || isEmpty(value) ? undefined : value;
  };
  switch (info.kind) {
    case 'text':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        draft.record[to] = valueText(value);
        return true;
      };
    case 'partyType':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        const type = valueText(value).trim().toLowerCase();
        if (type !== 'person' && type !== 'organisation') throw new RowRejection(to, `\`type\` must be person or organisation, found ${shown(value)}; a \`lookup\` transform can translate other words`);
        draft.record.type = type;
        return true;
      };
    case 'date':
    case 'timestamp':
    case 'time':
    case 'integer':
    case 'choice': {
      const convert = (value: Value): unknown => {
        switch (info.kind) {
          case 'date':
            return toDate(value, to);
          case 'timestamp':
            return toTimestamp(value, to);
          case 'time':
            return toTime(value, to);
          case 'integer':
            return toInteger(value, to, info);
          default: {
            const text = valueText(value).trim().toUpperCase();
            if (!(info.choices ?? []).includes(text)) throw new RowRejection(to, `\`${to}\` must be one of ${(info.choices ?? []).join(', ')}, found ${shown(value)}`);
            return text;
          }
        }
      };
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        draft.record[to] = convert(value);
        return true;
      };
    }
    case 'amount':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        const amount = toNumber(value, to);
        if (amount < 0) throw new RowRejection(to, `\`amount\` must be at least 0, found ${shown(value)}`);
        draft.amount = amount;
        return true;
      };
    case 'currency':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        const code = valueText(value).trim().toUpperCase();
        if (!/^[A-Z]{3}$/.test(code)) throw new RowRejection(to, `\`currency\` must be an ISO 4217 code such as EUR, found ${shown(value)}`);
        draft.currency = code;
        return true;
      };
    case 'pipeline':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        draft.pipeline = valueText(value).trim();
        return true;
      };
    case 'organisation':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        draft.record.organisation = typeof value === 'number' && toId(value) !== undefined ? { id: value } : { name: valueText(value).trim() };
        return true;
      };
    case 'link':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        const id = toId(value);
        if (id === undefined) throw new RowRejection(to, `\`${to}\` takes an id (a whole number) or \`ref\` + \`key\`, found ${shown(value)}`);
        draft.record[to] = { id };
        return true;
      };
    case 'name': {
      const kind = info.nameKind ?? 'user';
      // Consecutive rows mostly name the same owner or team: share the (frozen) use.
      let last: NameUse | null = null;
      // The service takes most of these as {id}, but activity types and project stages as a bare
      // integer: the placeholder has the shape the id goes into.
      const bare = BARE_ID_KINDS.has(kind);
      const path = bare ? [to] : [to, 'id'];
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        if (typeof value === 'number' && Number.isInteger(value)) {
          draft.record[to] = bare ? value : { id: value };
          return true;
        }
        const name = valueText(value).trim();
        draft.record[to] = bare ? null : { id: null };
        if (kind === 'milestone') {
          // Its scope is filled in per row when the record is finished, so it cannot be shared.
          const use: NameUse = { path, kind, name, yamlPath };
          draft.names.push(use);
          draft.milestone = use;
          return true;
        }
        if (last === null || last.name !== name) last = frozenUse({ path, kind, name, yamlPath });
        draft.names.push(last);
        return true;
      };
    }
    case 'names': {
      const kind = info.nameKind ?? 'trackDefinition';
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        const list = listOf(draft, to);
        for (const name of items(value)) {
          draft.names.push({ path: [to, list.length, 'definition'], kind, name, yamlPath });
          list.push({ definition: null });
        }
        return true;
      };
    }
    case 'tags':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        if (typeof value === 'string') {
          addTag(draft, value.trim());
          return true;
        }
        if (Array.isArray(value)) {
          // After `split`: walked in place rather than copied through items() first.
          let added = false;
          for (const item of value) {
            const name = item.trim();
            if (name === '') continue;
            addTag(draft, name);
            added = true;
          }
          return added;
        }
        const list = items(value);
        for (const name of list) addTag(draft, name);
        return list.length > 0;
      };
    case 'custom': {
      const definition = field.definition ?? '';
      const tag = field.tag ?? null;
      const scope = Object.freeze({ entity: ENTITY_PLURAL[entity as keyof typeof ENTITY_PLURAL], tag });
      // The same for every row but for the position in `fields`: built once per position, frozen
      // and shared. Resolving replaces `definition` in the row's own element, never these objects.
      const reference = Object.freeze({ name: definition, tag });
      const uses: NameUse[] = [];
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        const list = knownList(draft, 'fields');
        const position = list.length;
        const use = (uses[position] ??= frozenUse({ path: ['fields', position, 'definition'], kind: 'fieldDefinition', name: definition, scope, yamlPath }));
        draft.names.push(use);
        list.push({ definition: reference, value: customValue(value) });
        return true;
      };
    }
    case 'attachment':
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        for (const path of items(value)) draft.attachments.push(isAbsolute(path) ? path : resolve(draft.inputDir, path));
        return true;
      };
    case 'address':
      return compileAddress(compiler, field, yamlPath, owner, read);
    case 'phone':
    case 'email':
    case 'website': {
      const typeOf = field.type === undefined ? undefined : await compileValue(compiler, field.type, owner, `${yamlPath}.type`);
      const listKey: keyof DraftLists = info.kind === 'phone' ? 'phoneNumbers' : info.kind === 'email' ? 'emailAddresses' : 'websites';
      const valueKey = info.kind === 'phone' ? 'number' : 'address';
      const service = field.service ?? 'URL';
      const website = info.kind === 'website';
      return (values, draft) => {
        const value = valueOf(values);
        if (value === undefined || isEmpty(value)) return false;
        const type = typeOf?.(values);
        const typeText = type === undefined || isEmpty(type) ? undefined : valueText(type).trim();
        const list = knownList(draft, listKey);
        if (typeof value === 'string') list.push(contactEntry(website, service, typeText, valueKey, value.trim()));
        else for (const item of items(value)) list.push(contactEntry(website, service, typeText, valueKey, item));
        return true;
      };
    }
  }
}

async function compileAddress(
  compiler: ValueCompiler,
  field: FieldEntry,
  yamlPath: string,
  owner: { field: string; yamlPath: string },
  read: (values: Record<string, CellValue>) => Value | undefined,
): Promise<Applier> {
  const keys = ['street', 'city', 'state', 'zip', 'country'] as const;
  const parts: Array<{ slot: number; fn: ValueFn }> = [];
  for (const [slot, key] of keys.entries()) {
    const spec = field.parts?.[key];
    if (spec !== undefined) parts.push({ slot, fn: await compileValue(compiler, spec, owner, `${yamlPath}.parts.${key}`) });
  }
  const typeOf = field.type === undefined ? undefined : await compileValue(compiler, field.type, owner, `${yamlPath}.type`);
  const hasValue = field.value !== undefined;
  // Part texts by slot, reused row after row (mapping is synchronous): the address object is then
  // built once, type first, instead of being copied by a spread to put the type in front.
  const texts: Array<string | undefined> = [undefined, undefined, undefined, undefined, undefined];
  return (values, draft) => {
    texts.fill(undefined);
    let filled = false;
    if (hasValue) {
      const street = read(values);
      if (street !== undefined) {
        texts[0] = valueText(street);
        filled = true;
      }
    }
    for (const part of parts) {
      const value = part.fn(values);
      if (value === undefined || isEmpty(value)) continue;
      texts[part.slot] = valueText(value);
      filled = true;
    }
    if (!filled) return false;
    const type = typeOf?.(values);
    const out: Record<string, unknown> = {};
    if (type !== undefined && !isEmpty(type)) out.type = valueText(type).trim();
    for (let slot = 0; slot < keys.length; slot++) {
      const text = texts[slot];
      if (text !== undefined) out[keys[slot] as string] = text;
    }
    knownList(draft, 'addresses').push(out);
    return true;
  };
}
