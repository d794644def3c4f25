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
export function parsingTransform(
  parse: (text: string, context: TransformContext, original: Value) => string,
): TransformFn {
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
    'a single value',
  );
}

/** Escapes text for use inside a regular expression. */
export function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\/-]/g, '\\$&');
}

/** Spellings a {@link FewSpellings} keeps, and the longest text it keeps. */
const FEW_SPELLINGS = 32;
const FEW_SPELLINGS_LENGTH = 48;

/** Lookups a {@link FewSpellings} counts before it judges whether it pays. */
const FEW_SPELLINGS_ROUND = 1024;

/**
 * Results remembered for the first few distinct texts a transform sees (country names, company
 * names, tag sets repeat through a file). They sit in short lists by text length, each with three
 * of its characters as a fingerprint: a cell fresh from the reader has no hash yet, and comparing
 * it with another text of the same length is slow when it is a slice of the reader's chunk, so
 * the fingerprint rules out nearly every other text before any comparison. It keeps no more once
 * full, and when fewer than a quarter of a round of lookups find something (a column of unique
 * values) it stops looking for good, so such a column pays for one round only.
 */
export class FewSpellings<T> {
  /** Per length: text, fingerprint, result, text, fingerprint, result, ... */
  private readonly byLength: Array<Array<string | number | T> | undefined> = Array.from(
    { length: FEW_SPELLINGS_LENGTH },
    () => undefined,
  );
  private kept = 0;
  private looked = 0;
  private found = 0;
  private off = false;

  /** The result remembered for the text, or undefined. */
  get(text: string): T | undefined {
    if (this.off) return undefined;
    if (++this.looked === FEW_SPELLINGS_ROUND) {
      if (this.found * 4 < FEW_SPELLINGS_ROUND) this.off = true;
      this.looked = 0;
      this.found = 0;
    }
    const length = text.length;
    const bucket = length < FEW_SPELLINGS_LENGTH ? this.byLength[length] : undefined;
    if (bucket === undefined) return undefined;
    const print = fingerprint(text);
    for (let index = 0; index < bucket.length; index += 3) {
      if (bucket[index + 1] === print && bucket[index] === text) {
        this.found += 1;
        return bucket[index + 2] as T;
      }
    }
    return undefined;
  }

  /** Remembers a result (never undefined) if there is room; false when the text was not kept. */
  set(text: string, result: T): boolean {
    if (this.off || this.kept >= FEW_SPELLINGS || text.length >= FEW_SPELLINGS_LENGTH || this.has(text)) return false;
    const bucket = this.byLength[text.length];
    if (bucket === undefined) this.byLength[text.length] = [text, fingerprint(text), result];
    else bucket.push(text, fingerprint(text), result);
    this.kept += 1;
    return true;
  }

  private has(text: string): boolean {
    const bucket = this.byLength[text.length];
    if (bucket === undefined) return false;
    for (let index = 0; index < bucket.length; index += 3) if (bucket[index] === text) return true;
    return false;
  }
}

/**
 * First, middle and last UTF-16 units of a text mixed into a small integer (the engine keeps those
 * unboxed); different texts may share one, which the comparison after it settles. 0 for empty text.
 */
function fingerprint(text: string): number {
  const last = text.length - 1;
  if (last < 0) return 0;
  return ((text.charCodeAt(0) << 14) ^ (text.charCodeAt(last >> 1) << 7) ^ text.charCodeAt(last)) & 0x3fffffff;
}
