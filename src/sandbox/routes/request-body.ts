/** Reading and checking a request body: every problem of a request collected, answered together as one 422. */
import type { SandboxContext } from '../context.ts';
import { validationError } from '../http.ts';

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

export function describeInput(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  if (typeof value === 'string') return JSON.stringify(value.length > 40 ? `${value.slice(0, 40)}...` : value);
  return typeof value === 'object' ? 'an object' : String(value);
}

/**
 * Flags properties the resource does not have. Read-only properties a client may echo back from
 * a read (`id`, timestamps, ...) are listed in `ignored` and pass silently.
 */
export function checkKeys(
  body: Body,
  allowed: readonly string[],
  ignored: readonly string[],
  problems: Problems,
  prefix = '',
): void {
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
 * A property of the body and the name its problems go under (with the prefix); an absent one is
 * `undefined`, and a problem when it is required.
 */
function propertyOf(
  body: Body,
  key: string,
  problems: Problems,
  options: ReadOptions,
): { field: string; value: unknown } {
  const field = `${options.prefix ?? ''}${key}`;
  const value = body[key];
  if (value === undefined && options.required) problems.add(field, 'is required');
  return { field, value };
}

/**
 * Reads an optional string property: `undefined` when absent, null when null is allowed and given.
 * An empty string is stored as null when null is allowed, as the service treats blanks as unset.
 */
export function readString(
  body: Body,
  key: string,
  problems: Problems,
  options: ReadOptions & { max?: number } = {},
): string | null | undefined {
  const { field, value } = propertyOf(body, key, problems, options);
  if (value === undefined) return undefined;
  if (value === null) {
    if (!options.nullable) problems.add(field, 'must be a string, not null');
    return null;
  }
  if (typeof value !== 'string') {
    problems.add(field, `must be a string, got ${describeInput(value)}`);
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
export function readDate(
  body: Body,
  key: string,
  problems: Problems,
  options: ReadOptions = {},
): string | null | undefined {
  const { field, value } = propertyOf(body, key, problems, options);
  if (value === undefined) return undefined;
  if (value === null && options.nullable !== false) return null;
  if (typeof value !== 'string' || !isDate(value)) {
    problems.add(field, `must be a date written YYYY-MM-DD, got ${describeInput(value)}`);
    return undefined;
  }
  return value;
}

/** Reads an optional integer within bounds. */
export function readInteger(
  body: Body,
  key: string,
  problems: Problems,
  options: ReadOptions & { min?: number; max?: number } = {},
): number | null | undefined {
  const { field, value } = propertyOf(body, key, problems, options);
  if (value === undefined) return undefined;
  if (value === null) {
    if (!options.nullable) problems.add(field, 'must be an integer, not null');
    return null;
  }
  if (typeof value !== 'number' || !Number.isInteger(value)) {
    problems.add(field, `must be an integer, got ${describeInput(value)}`);
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
export function readIdRef(
  value: unknown,
  field: string,
  problems: Problems,
  nullable = false,
): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) {
    if (!nullable) problems.add(field, 'must not be null');
    return null;
  }
  const raw = isObject(value) ? value.id : value;
  if (typeof raw !== 'number' || !Number.isInteger(raw) || raw < 1) {
    problems.add(field, `must be {"id": <integer>}, got ${describeInput(value)}`);
    return undefined;
  }
  return raw;
}

/** Today's date on the sandbox clock, `YYYY-MM-DD`. */
export function today(ctx: SandboxContext): string {
  return ctx.now().toISOString().slice(0, 10);
}
