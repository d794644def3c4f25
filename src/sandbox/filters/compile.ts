import { digitsOf } from '../party-text.ts';
import { resolveField } from './fields.ts';
import { FilterError } from './filter-error.ts';
import { compileCondition } from './operators.ts';
import type { FilterSpec, SortDirection } from './parse.ts';
import type { EntityRecords, FilterEntity, FilterEnv, SortKey } from './types.ts';

/** A filter turned into functions over stored records; build it once per request, apply it to many. */
export interface CompiledFilter<R> {
  /** Whether the record passes every condition. */
  matches(record: R): boolean;
  /** The order asked for by `orderBy`, then by id ascending. */
  compare(a: R, b: R): number;
  /** Sorts a copy of `records` by compare(), working out each record's sort keys only once. */
  sort(records: readonly R[]): R[];
  /**
   * The only ids the filter can match, ascending, when a condition of it says `id is N` (or an
   * orGroup of such conditions does, as a read of records by id asks): the records to look at
   * instead of every one. Null when no condition narrows it so. matches() still decides.
   */
  ids: number[] | null;
  /**
   * Texts a party must hold for the filter to match it, from conditions on its name, e-mail
   * address or phone number (is, starts with, ends with, contains): what the party index narrows
   * the records by. Empty for other entities and filters without such a condition.
   */
  texts: TextNarrowing[];
}

/** A text the filter's matches hold: in their name or an e-mail address (`text`, lower case), or a phone number's digits. */
export interface TextNarrowing {
  on: 'text' | 'phone';
  value: string;
}

const HOLDING: ReadonlySet<string> = new Set(['is', 'starts with', 'ends with', 'contains']);

type Predicate<R> = (record: R) => boolean;

function allOf<R>(predicates: Predicate<R>[]): Predicate<R> {
  if (predicates.length === 0) return () => true;
  if (predicates.length === 1) return predicates[0] as Predicate<R>;
  return (record) => {
    for (const predicate of predicates) if (!predicate(record)) return false;
    return true;
  };
}

function anyOf<R>(predicates: Predicate<R>[]): Predicate<R> {
  if (predicates.length === 1) return predicates[0] as Predicate<R>;
  return (record) => {
    for (const predicate of predicates) if (predicate(record)) return true;
    return false;
  };
}

/**
 * Order of two keys of one field in the given direction. Records without a value come last in
 * both directions: a list sorted by expected value, descending, should open with the largest.
 */
function compareKeys(a: SortKey, b: SortKey, sign: 1 | -1): number {
  if (a === b) return 0;
  if (a === null) return 1;
  if (b === null) return -1;
  return (a < b ? -1 : a > b ? 1 : 0) * sign;
}

interface SortStep<R> {
  key: (record: R) => SortKey;
  sign: 1 | -1;
}

/**
 * Resolves every field of a parsed filter for one entity and compiles it into a predicate and a
 * comparator. Names (tags, pipelines), custom field definitions and date bounds are looked up here,
 * once; the functions returned only read the records they are given.
 *
 * @throws FilterError naming the condition or orderBy element whose field is unknown, whose
 *   operator does not fit the field, or whose value has the wrong type.
 */
export function compileFilter<E extends FilterEntity>(
  entity: E,
  filter: FilterSpec,
  env: FilterEnv,
): CompiledFilter<EntityRecords[E]> {
  type R = EntityRecords[E];
  const condition = (c: { path: string; field: string; operator: string; value: unknown }): Predicate<R> =>
    compileCondition(resolveField(entity, c.field, env, c.path), c, env);
  const matches = allOf<R>(
    filter.conditions.map((c) => (c.kind === 'orGroup' ? anyOf(c.conditions.map(condition)) : condition(c))),
  );

  const steps: SortStep<R>[] = filter.orderBy.map((order) => {
    const field = resolveField(entity, order.field, env, order.path);
    if (!field.sortKey) throw new FilterError(order.path, `records cannot be ordered by "${order.field}"`);
    return { key: field.sortKey, sign: signOf(order.direction) };
  });

  const compareKeyLists = (a: readonly SortKey[], b: readonly SortKey[], idA: number, idB: number): number => {
    for (let i = 0; i < steps.length; i++) {
      const order = compareKeys(a[i] ?? null, b[i] ?? null, steps[i]?.sign ?? 1);
      if (order !== 0) return order;
    }
    return idA - idB;
  };
  const keysOf = (record: R): SortKey[] => steps.map((step) => step.key(record));

  return {
    matches,
    ids: idsNamed(filter),
    texts: entity === 'parties' ? textsNamed(filter) : [],
    compare: (a, b) => compareKeyLists(keysOf(a), keysOf(b), a.id, b.id),
    sort: (records) => {
      if (steps.length === 0) return [...records].sort((a, b) => a.id - b.id);
      const decorated = records.map((record) => ({ record, keys: keysOf(record) }));
      decorated.sort((a, b) => compareKeyLists(a.keys, b.keys, a.record.id, b.record.id));
      return decorated.map((entry) => entry.record);
    },
  };
}

/** The ids that conditions `id is N` (alone, or every condition of an orGroup) leave possible; null when none says so. */
function idsNamed(filter: FilterSpec): number[] | null {
  let ids: number[] | null = null;
  for (const c of filter.conditions) {
    const group = c.kind === 'orGroup' ? c.conditions : [c];
    if (
      group.length === 0 ||
      !group.every((one) => one.field === 'id' && one.operator === 'is' && typeof one.value === 'number')
    )
      continue;
    const named = new Set(group.map((one) => one.value as number));
    // Conditions all hold: an id must be named by each such condition.
    ids = ids === null ? [...named] : ids.filter((id) => named.has(id));
  }
  return ids === null ? null : ids.sort((a, b) => a - b);
}

/**
 * The texts a party's name, e-mail addresses or phone numbers must hold, from the conditions that
 * must all hold (not those of an orGroup): compared in lower case, and a phone number with digits
 * on its digits alone, as compileCondition compares them.
 */
function textsNamed(filter: FilterSpec): TextNarrowing[] {
  const texts: TextNarrowing[] = [];
  for (const c of filter.conditions) {
    if (c.kind !== 'condition' || typeof c.value !== 'string' || !HOLDING.has(c.operator)) continue;
    if (c.field === 'name' || c.field === 'email') texts.push({ on: 'text', value: c.value.toLowerCase() });
    else if (c.field === 'phone' && /\d/.test(c.value)) texts.push({ on: 'phone', value: digitsOf(c.value) });
  }
  return texts;
}

function signOf(direction: SortDirection): 1 | -1 {
  return direction === 'descending' ? -1 : 1;
}
