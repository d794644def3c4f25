import { addDays, isIsoDate } from './dates.ts';
import { describeValue } from '../describe-value.ts';
import { FilterError } from './filter-error.ts';
import {
  type FieldKind,
  type FieldSpec,
  type FilterEnv,
  type Operator,
  OPERATORS,
  OPERATORS_BY_KIND,
  type RefField,
  type StringField,
} from './types.ts';

const KIND_NAMES: Record<FieldKind, string> = {
  string: 'a string field',
  number: 'a number field',
  boolean: 'a boolean field',
  date: 'a date field',
  ref: 'a field taking an id (number) or a name (string)',
};

function isOperator(text: string): text is Operator {
  return (OPERATORS as readonly string[]).includes(text);
}

/** Where a condition is and what it names, for messages. */
export interface ConditionAt {
  path: string;
  field: string;
  operator: string;
  value: unknown;
}

function wrongValue(at: ConditionAt, expected: string): FilterError {
  return new FilterError(
    at.path,
    `operator "${at.operator}" on field "${at.field}" takes ${expected}, got ${describeValue(at.value, { withType: true })}`,
  );
}

function stringValue(at: ConditionAt): string {
  if (typeof at.value !== 'string') throw wrongValue(at, 'a string');
  return at.value;
}

function numberValue(at: ConditionAt): number {
  if (typeof at.value !== 'number' || !Number.isFinite(at.value)) throw wrongValue(at, 'a number');
  return at.value;
}

function booleanValue(at: ConditionAt): boolean {
  if (typeof at.value !== 'boolean') throw wrongValue(at, 'true or false');
  return at.value;
}

function dateValue(at: ConditionAt): string {
  if (typeof at.value !== 'string' || !isIsoDate(at.value)) throw wrongValue(at, 'a date written YYYY-MM-DD');
  return at.value;
}

function dayCount(at: ConditionAt): number {
  if (typeof at.value !== 'number' || !Number.isSafeInteger(at.value) || at.value < 0) {
    throw wrongValue(at, 'a whole number of days (0 or more)');
  }
  return at.value;
}

/** A test on lower-cased text; the operator is one of the text operators. */
function textTest(operator: Operator, wanted: string): (lowered: string) => boolean {
  switch (operator) {
    case 'starts with':
      return (text) => text.startsWith(wanted);
    case 'ends with':
      return (text) => text.endsWith(wanted);
    case 'contains':
      return (text) => text.includes(wanted);
    default:
      return (text) => text === wanted;
  }
}

function compileString<R>(field: StringField<R>, operator: Operator, at: ConditionAt): (record: R) => boolean {
  const raw = stringValue(at);
  const rewrite = field.canonical?.(raw, operator) ?? null;
  const matches = textTest(operator, (rewrite ? rewrite(raw) : raw).toLowerCase());
  const test = rewrite
    ? (text: string): boolean => matches(rewrite(text).toLowerCase())
    : (text: string): boolean => matches(text.toLowerCase());
  return (record) => field.some(record, test);
}

function compileRef<R>(field: RefField<R>, operator: Operator, at: ConditionAt): (record: R) => boolean {
  if (typeof at.value === 'number' && (operator === 'is' || operator === 'is not')) {
    const id = numberValue(at);
    const test = (candidate: number): boolean => candidate === id;
    return (record) => field.some(record, test);
  }
  if (typeof at.value !== 'string') {
    throw wrongValue(at, operator === 'is' || operator === 'is not' ? 'an id (number) or a name (string)' : 'a string');
  }
  // Names are resolved once, against the (small) table of targets; records then only test ids.
  const matches = textTest(operator, at.value.toLowerCase());
  const ids = new Set<number>();
  for (const target of field.targets()) if (matches(target.name.toLowerCase())) ids.add(target.id);
  const test = (candidate: number): boolean => ids.has(candidate);
  return (record) => field.some(record, test);
}

/**
 * Compiles one condition on a resolved field into a record predicate. `is not` is the negation of
 * `is`: it passes for records with no value, and for fields with several values it means that
 * none of them is the value.
 *
 * @throws FilterError when the operator is unknown, does not fit the field, or the value has the
 *   wrong type.
 */
export function compileCondition<R>(field: FieldSpec<R>, at: ConditionAt, env: FilterEnv): (record: R) => boolean {
  const { operator } = at;
  if (!isOperator(operator)) {
    throw new FilterError(at.path, `unknown operator ${JSON.stringify(operator)}; operators: ${OPERATORS.join(', ')}`);
  }
  const allowed = OPERATORS_BY_KIND[field.kind];
  if (!allowed.includes(operator)) {
    throw new FilterError(
      at.path,
      `operator "${operator}" does not apply to field "${at.field}" (${KIND_NAMES[field.kind]}); it takes: ${allowed.join(', ')}`,
    );
  }
  const positive = compilePositive(field, operator === 'is not' ? 'is' : operator, at, env);
  return operator === 'is not' ? (record) => !positive(record) : positive;
}

function compilePositive<R>(
  field: FieldSpec<R>,
  operator: Operator,
  at: ConditionAt,
  env: FilterEnv,
): (record: R) => boolean {
  switch (field.kind) {
    case 'string':
      return compileString(field, operator, at);
    case 'ref':
      return compileRef(field, operator, at);
    case 'number': {
      const wanted = numberValue(at);
      const test =
        operator === 'is greater than'
          ? (n: number) => n > wanted
          : operator === 'is less than'
            ? (n: number) => n < wanted
            : (n: number) => n === wanted;
      return (record) => field.some(record, test);
    }
    case 'boolean': {
      const wanted = booleanValue(at);
      const test = (b: boolean): boolean => b === wanted;
      return (record) => field.some(record, test);
    }
    case 'date': {
      const test = dateTest(operator, at, env.today);
      return (record) => field.some(record, test);
    }
  }
}

function dateTest(operator: Operator, at: ConditionAt, today: string): (date: string) => boolean {
  switch (operator) {
    case 'is after': {
      const wanted = dateValue(at);
      return (date) => date > wanted;
    }
    case 'is before': {
      const wanted = dateValue(at);
      return (date) => date < wanted;
    }
    case 'is older than': {
      const limit = addDays(today, -dayCount(at));
      return (date) => date < limit;
    }
    case 'is within last': {
      const from = addDays(today, -dayCount(at));
      return (date) => date >= from && date <= today;
    }
    case 'is within next': {
      const to = addDays(today, dayCount(at));
      return (date) => date >= today && date <= to;
    }
    default: {
      const wanted = dateValue(at);
      return (date) => date === wanted;
    }
  }
}
