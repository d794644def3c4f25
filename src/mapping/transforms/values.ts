import { TransformError } from './types.ts';
import type { TransformContext, TransformFn, Value } from './types.ts';

/** Longest piece of a cell quoted in a message: enough to recognise it, short enough for a rejects file. */
const QUOTE_LIMIT = 60;

/**
 * Describes a value for the "got ..." half of a message, so a reader of the rejects file sees
 * what the transform was given, including its type when that is the surprise.
 */
export function describeValue(value: Value): string {
  if (value === null) return 'nothing';
  if (typeof value === 'string') return quote(value);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) return `the date ${dateToText(value)}`;
  return value.length === 1 ? 'a list of 1 value' : `a list of ${value.length} values`;
}

/** Quotes text for a message; long cells are cut so one bad value cannot flood the rejects file. */
export function quote(text: string): string {
  const shown = text.length > QUOTE_LIMIT ? `${text.slice(0, QUOTE_LIMIT)}…` : text;
  return JSON.stringify(shown);
}

/**
 * Text of a date: XLSX dates arrive as UTC midnight when the cell has no time, so those print as
 * a plain date and anything else as a UTC timestamp without milliseconds.
 */
export function dateToText(date: Date): string {
  const time = date.getTime();
  if (Number.isNaN(time)) return 'Invalid Date';
  const iso = date.toISOString();
  return time % 86_400_000 === 0 ? iso.slice(0, 10) : `${iso.slice(0, 19)}Z`;
}

/** Turns a single scalar into text; text transforms work on this. */
export function scalarToText(value: string | number | boolean | Date): string {
  if (typeof value === 'string') return value;
  if (value instanceof Date) return dateToText(value);
  return String(value);
}

/** Empty in the sense of `default`: nothing, blank text or an empty list. */
export function isEmptyValue(value: Value): boolean {
  if (value === null) return true;
  if (typeof value === 'string') return value.trim() === '';
  if (Array.isArray(value)) return value.length === 0;
  return false;
}

/**
 * Builds a transform that works on text: null passes, numbers, booleans and dates become text
 * first, lists are handled element by element.
 */
export function textTransform(apply: (text: string) => string): TransformFn {
  return (value) => {
    if (value === null) return null;
    if (typeof value === 'string') return apply(value);
    if (Array.isArray(value)) return value.map(apply);
    return apply(scalarToText(value));
  };
}

/**
 * Builds a transform that parses each piece of text into new text (a date, a phone number). Blank
 * text means "no value": it becomes null, and blank elements of a list are dropped, because an
 * empty cell is not an error in a migration.
 */
export function parsingTransform(parse: (text: string, context: TransformContext, original: Value) => string): TransformFn {
  return (value, context) => {
    if (value === null) return null;
    if (Array.isArray(value)) {
      const out: string[] = [];
      for (const element of value) {
        const trimmed = element.trim();
        if (trimmed !== '') out.push(parse(trimmed, context, element));
      }
      return out;
    }
    const text = typeof value === 'string' ? value.trim() : scalarToText(value);
    return text === '' ? null : parse(text, context, value);
  };
}

/** The error for a list given to a transform that needs one value. */
export function listError(transform: string, expected: string, value: string[]): TransformError {
  return new TransformError(
    `expected ${expected}, got ${describeValue(value)} (pick one with \`first\` or \`nth\`, or combine them with \`join\`)`,
    transform,
  );
}

/** Escapes text for use inside a regular expression. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}
