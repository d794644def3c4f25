import type { Value } from './transforms/types.ts';

/** A template split into literal text and column placeholders. */
export type TemplatePart = string | { column: string };

export type ParsedTemplate = { ok: true; parts: TemplatePart[]; columns: string[] } | { ok: false; error: string };

/**
 * Whether a plain string in a mapping is a template: it holds `{{` that is not escaped as `\{{`.
 * Anything else is a constant, so a value like `C:\data` or `a}}b` stays as written.
 */
export function isTemplate(text: string): boolean {
  for (let i = text.indexOf('{{'); i !== -1; i = text.indexOf('{{', i + 2)) {
    if (text[i - 1] !== '\\') return true;
  }
  return false;
}

/**
 * Parses `{{Column}}` placeholders (`{{ Column }}` with spaces is the same column). `\{{` is a
 * literal `{{`; a placeholder that is never closed, or names no column, is an error.
 */
export function parseTemplate(text: string): ParsedTemplate {
  const parts: TemplatePart[] = [];
  const columns: string[] = [];
  let literal = '';
  let i = 0;
  while (i < text.length) {
    const open = text.indexOf('{{', i);
    if (open === -1) {
      literal += text.slice(i);
      break;
    }
    if (text[open - 1] === '\\') {
      literal += `${text.slice(i, open - 1)}{{`;
      i = open + 2;
      continue;
    }
    literal += text.slice(i, open);
    const close = text.indexOf('}}', open + 2);
    if (close === -1) return { ok: false, error: `the placeholder at character ${open + 1} is not closed with }}` };
    const name = text.slice(open + 2, close).trim();
    if (name === '') return { ok: false, error: `the placeholder at character ${open + 1} names no column` };
    if (name.includes('{{'))
      return { ok: false, error: `the placeholder at character ${open + 1} is not closed before the next {{` };
    if (literal !== '') parts.push(literal);
    literal = '';
    parts.push({ column: name });
    if (!columns.includes(name)) columns.push(name);
    i = close + 2;
  }
  if (literal !== '') parts.push(literal);
  return { ok: true, parts, columns };
}

function pad(n: number, width = 2): string {
  return String(n).padStart(width, '0');
}

/** A date as the service writes dates (YYYY-MM-DD), from its UTC fields: readers give dates at UTC midnight. */
export function dateText(date: Date): string {
  return `${pad(date.getUTCFullYear(), 4)}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
}

/** A value as text: what a template puts in, and what a text target receives. */
export function valueText(value: Value | undefined): string {
  if (value === null || value === undefined) return '';
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return '';
    const midnight =
      value.getUTCHours() === 0 &&
      value.getUTCMinutes() === 0 &&
      value.getUTCSeconds() === 0 &&
      value.getUTCMilliseconds() === 0;
    return midnight ? dateText(value) : value.toISOString().replace(/\.000Z$/, 'Z');
  }
  let out = '';
  for (const item of value) {
    if (isBlank(item)) continue;
    out = out === '' ? item : `${out}, ${item}`;
  }
  return out;
}

/**
 * Generated code (see codegen.ts): the expression "`value` is not empty", `isEmpty` naming the
 * isEmpty function there. Text starting with a visible ASCII character, what nearly every cell
 * is, is decided inline; anything else asks isEmpty.
 */
export function filledExpression(value: string, isEmptyName: string): string {
  const first = `${value}.charCodeAt(0)`;
  return `(typeof ${value} === 'string' && ${first} > 32 && ${first} < 127 || !${isEmptyName}(${value}))`;
}

/** Generated code: the expression "`value` as text" (valueText), text itself taken as it is. */
export function textExpression(value: string, valueTextName: string): string {
  return `(typeof ${value} === 'string' ? ${value} : ${valueTextName}(${value}))`;
}

/**
 * Text without white space at its ends. Values have mostly been trimmed by a transform already:
 * looking at the two end characters is cheaper than trim() finding nothing to do.
 */
export function trimText(text: string): string {
  const length = text.length;
  if (length === 0) return text;
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(length - 1);
  return first > 32 && first < 127 && last > 32 && last < 127 ? text : text.trim();
}

/** Whether text is only white space; stops at the first other character, without copying the text. */
function isBlank(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (
      code > 32 &&
      code !== 160 &&
      code !== 0xfeff &&
      !(code >= 0x2000 && code <= 0x200a) &&
      code !== 0x3000 &&
      code !== 0x2028 &&
      code !== 0x2029 &&
      code !== 0x202f &&
      code !== 0x205f &&
      code !== 0x1680 &&
      code !== 0x85
    )
      return false;
    if (code <= 32 && code !== 32 && (code < 9 || code > 13)) return false;
  }
  return true;
}

/** Empty: null, blank text, or a list of blank texts. Empty values leave their target out. */
export function isEmpty(value: Value | undefined): boolean {
  if (value === null || value === undefined) return true;
  if (typeof value === 'string') return isBlank(value);
  if (Array.isArray(value)) return value.every(isBlank);
  if (value instanceof Date) return Number.isNaN(value.getTime());
  return false;
}
