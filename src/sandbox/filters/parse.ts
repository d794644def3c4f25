import { describeValue } from '../describe-value.ts';
import { FilterError } from './filter-error.ts';

/** One `{field, operator, value}` test, as written; `path` locates it for messages. */
export interface ConditionSpec {
  kind: 'condition';
  path: string;
  field: string;
  operator: string;
  value: unknown;
}

/** `{orGroup: [...]}`: passes when any of its conditions passes. Groups do not nest. */
export interface OrGroupSpec {
  kind: 'orGroup';
  path: string;
  conditions: ConditionSpec[];
}

export type SortDirection = 'ascending' | 'descending';

export interface OrderSpec {
  path: string;
  field: string;
  direction: SortDirection;
}

/** A filter whose shape is right; whether its fields and values fit is checked on compile. */
export interface FilterSpec {
  /** All of these must pass. */
  conditions: Array<ConditionSpec | OrGroupSpec>;
  /** Sort keys, most significant first; empty means by id. */
  orderBy: OrderSpec[];
}

// Plain objects only: a body sent without a JSON content type arrives as a Buffer.
function isObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null) return false;
  const prototype: unknown = Object.getPrototypeOf(value);
  return prototype === Object.prototype || prototype === null;
}

// A misspelt key would otherwise be dropped silently and the filter would match more than meant.
function rejectUnknownKeys(object: Record<string, unknown>, allowed: readonly string[], path: string | null): void {
  for (const key of Object.keys(object)) {
    if (!allowed.includes(key)) {
      throw new FilterError(path, `unknown property ${JSON.stringify(key)}; allowed: ${allowed.join(', ')}`);
    }
  }
}

function parseCondition(raw: unknown, path: string, inGroup: boolean): ConditionSpec | OrGroupSpec {
  if (!isObject(raw))
    throw new FilterError(path, `a condition must be an object, got ${describeValue(raw, { withType: true })}`);
  if ('orGroup' in raw) {
    if (inGroup) throw new FilterError(path, 'an orGroup cannot hold another orGroup (groups are one level deep)');
    rejectUnknownKeys(raw, ['orGroup'], path);
    const members = raw.orGroup;
    if (!Array.isArray(members))
      throw new FilterError(
        path,
        `orGroup must be an array of conditions, got ${describeValue(members, { withType: true })}`,
      );
    // An empty group could pass nothing, which is never what was meant.
    if (members.length === 0) throw new FilterError(path, 'orGroup must hold at least one condition');
    const conditions = members.map((member, index) => parseCondition(member, `${path}.orGroup[${index}]`, true));
    return { kind: 'orGroup', path, conditions: conditions as ConditionSpec[] };
  }
  rejectUnknownKeys(raw, ['field', 'operator', 'value'], path);
  const { field, operator } = raw;
  if (typeof field !== 'string' || field === '') {
    throw new FilterError(path, `field must be a non-empty string, got ${describeValue(field, { withType: true })}`);
  }
  if (typeof operator !== 'string' || operator === '') {
    throw new FilterError(
      path,
      `operator must be a non-empty string, got ${describeValue(operator, { withType: true })}`,
    );
  }
  if (!('value' in raw)) throw new FilterError(path, 'value is missing');
  return { kind: 'condition', path, field, operator, value: raw.value };
}

function parseOrder(raw: unknown, path: string): OrderSpec {
  if (!isObject(raw))
    throw new FilterError(path, `an orderBy element must be an object, got ${describeValue(raw, { withType: true })}`);
  rejectUnknownKeys(raw, ['field', 'direction'], path);
  const { field, direction = 'ascending' } = raw;
  if (typeof field !== 'string' || field === '') {
    throw new FilterError(path, `field must be a non-empty string, got ${describeValue(field, { withType: true })}`);
  }
  if (direction !== 'ascending' && direction !== 'descending') {
    throw new FilterError(
      path,
      `direction must be "ascending" or "descending", got ${describeValue(direction, { withType: true })}`,
    );
  }
  return { path, field, direction };
}

/**
 * Checks the shape of a `filter` object (the value under `filter` in the request body) and returns
 * it typed. Field names, operators and value types are checked by compileFilter(), which knows the
 * entity.
 *
 * @throws FilterError naming the condition (`conditions[i]`, `conditions[i].orGroup[j]`) or
 *   `orderBy[i]` that is malformed.
 */
export function parseFilter(raw: unknown): FilterSpec {
  if (!isObject(raw))
    throw new FilterError('filter', `must be an object with conditions, got ${describeValue(raw, { withType: true })}`);
  rejectUnknownKeys(raw, ['conditions', 'orderBy'], 'filter');
  const { conditions, orderBy = [] } = raw;
  if (!Array.isArray(conditions)) {
    throw new FilterError(
      'filter',
      `conditions must be an array, got ${describeValue(conditions, { withType: true })}`,
    );
  }
  if (!Array.isArray(orderBy))
    throw new FilterError('filter', `orderBy must be an array, got ${describeValue(orderBy, { withType: true })}`);
  return {
    conditions: conditions.map((condition, index) => parseCondition(condition, `conditions[${index}]`, false)),
    orderBy: orderBy.map((order, index) => parseOrder(order, `orderBy[${index}]`)),
  };
}

/**
 * Takes the filter out of a request body `{filter: {...}}`.
 *
 * @throws FilterError when the body is not an object holding `filter` and nothing else.
 */
export function parseFilterBody(body: unknown): FilterSpec {
  if (!isObject(body))
    throw new FilterError(null, 'the request body must be a JSON object like {"filter": {"conditions": [...]}}');
  // A missing wrapper is the likelier mistake than a stray key, so it is named first.
  if (!('filter' in body))
    throw new FilterError(
      null,
      'the request body must hold the filter under "filter", like {"filter": {"conditions": [...]}}',
    );
  rejectUnknownKeys(body, ['filter'], null);
  return parseFilter(body.filter);
}
