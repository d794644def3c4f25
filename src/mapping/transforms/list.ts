import { z } from 'zod';
import type { TransformDefinition, TransformFn } from './types.ts';
import { isEmptyValue, scalarToText } from './values.ts';

/**
 * Whether trimming could change the text: false when both ends are printable ASCII, the usual
 * case, so the piece is kept without asking trim() to look. Any other end (control characters,
 * no-break and other Unicode spaces) is left to trim() to judge.
 */
function hasOuterSpace(text: string): boolean {
  const last = text.length - 1;
  if (last < 0) return false;
  const first = text.charCodeAt(0);
  const end = text.charCodeAt(last);
  return first <= 32 || first >= 127 || end <= 32 || end >= 127;
}

const splitOptions = z
  .object({
    separator: z.string().min(1).default(',').describe('Text between the parts.'),
    trim: z.boolean().default(true).describe('Remove white space around each part.'),
    dropEmpty: z.boolean().default(true).describe('Leave out blank parts, so "a,,b" gives two.'),
  })
  .strict();

export const split: TransformDefinition<z.output<typeof splitOptions>> = {
  name: 'split',
  summary:
    'Splits text into a list (for tags, several emails or phone numbers); a list is split element by element and flattened.',
  options: splitOptions,
  shorthand: 'separator',
  examples: [
    { yaml: "{split: ';'}", input: 'VIP; Newsletter;;Partner ', output: ['VIP', 'Newsletter', 'Partner'] },
    { yaml: 'split', input: '', output: [] },
  ],
  create({ separator, trim, dropEmpty }) {
    const step = separator.length;
    // Walking with indexOf pushes each piece straight into the result, where String.split would
    // build a second array to copy from; the pieces are the same.
    const splitInto = (text: string, out: string[]): void => {
      let start = 0;
      for (;;) {
        const end = text.indexOf(separator, start);
        const part = end === -1 ? (start === 0 ? text : text.slice(start)) : text.slice(start, end);
        const piece = trim && hasOuterSpace(part) ? part.trim() : part;
        if (!(dropEmpty && (trim ? piece === '' : piece.trim() === ''))) out.push(piece);
        if (end === -1) return;
        start = end + step;
      }
    };
    const fn: TransformFn = (value) => {
      if (value === null) return null;
      const out: string[] = [];
      if (typeof value === 'string') splitInto(value, out);
      else if (Array.isArray(value))
        for (let index = 0; index < value.length; index++) splitInto(value[index] as string, out);
      else splitInto(scalarToText(value), out);
      return out;
    };
    return fn;
  },
};

const joinOptions = z
  .object({
    separator: z.string().default(', ').describe('Text put between the parts.'),
    dropEmpty: z.boolean().default(true).describe('Leave out blank parts, so no doubled separators appear.'),
  })
  .strict();

export const join: TransformDefinition<z.output<typeof joinOptions>> = {
  name: 'join',
  summary: 'Joins a list into one text; a single value is already joined and stays as it is.',
  options: joinOptions,
  shorthand: 'separator',
  examples: [
    { yaml: "{join: ' | '}", input: ['VIP', 'Partner'], output: 'VIP | Partner' },
    { yaml: 'join', input: ['Main St 1', '', 'London'], output: 'Main St 1, London' },
  ],
  create({ separator, dropEmpty }) {
    return (value) => {
      if (!Array.isArray(value)) return value;
      return (dropEmpty ? value.filter((part) => part.trim() !== '') : value).join(separator);
    };
  },
};

const noOptions = z.object({}).strict();

export const first: TransformDefinition<z.output<typeof noOptions>> = {
  name: 'first',
  summary: 'Takes the first element of a list (nothing when the list is empty); a single value stays as it is.',
  options: noOptions,
  examples: [{ yaml: 'first', input: ['ada@example.com', 'ada@home.example'], output: 'ada@example.com' }],
  create: () => (value) => (Array.isArray(value) ? (value[0] ?? null) : value),
};

const nthOptions = z
  .object({
    index: z
      .number()
      .int()
      .refine(
        (index) => index !== 0,
        'index counts from 1 (the first element); use a negative number to count from the end',
      )
      .describe('Position in the list counting from 1; negative counts from the end (-1 is the last)'),
  })
  .strict();

export const nth: TransformDefinition<z.output<typeof nthOptions>> = {
  name: 'nth',
  summary:
    'Takes one element of a list by its position, counting from 1 (-1 is the last); nothing when the list is shorter. A single value counts as a list of one.',
  options: nthOptions,
  shorthand: 'index',
  examples: [
    { yaml: '{nth: 2}', input: ['+44 20 7946 0000', '+44 7700 900123'], output: '+44 7700 900123' },
    { yaml: '{nth: -1}', input: ['a', 'b', 'c'], output: 'c' },
  ],
  create({ index }) {
    // A person counts "the second phone" from 1; at() wants 0 for the first.
    const at = index > 0 ? index - 1 : index;
    return (value) => {
      if (value === null) return null;
      if (Array.isArray(value)) return value.at(at) ?? null;
      return at === 0 || at === -1 ? value : null;
    };
  },
};

const defaultOptions = z
  .object({
    value: z
      .union([z.string(), z.number(), z.boolean(), z.array(z.string())])
      .describe('The value used when the input is empty (nothing, blank text or an empty list)'),
  })
  .strict();

export const defaultTransform: TransformDefinition<z.output<typeof defaultOptions>> = {
  name: 'default',
  summary: 'Replaces an empty value (nothing, blank text or an empty list) with a fixed one.',
  options: defaultOptions,
  shorthand: 'value',
  examples: [
    { yaml: '{default: Unknown}', input: '   ', output: 'Unknown' },
    { yaml: '{default: Unknown}', input: 'Acme', output: 'Acme' },
  ],
  create({ value: fallback }) {
    // Each row gets its own copy of a list, so a later step changing one row cannot change the next.
    if (Array.isArray(fallback)) return (value) => (isEmptyValue(value) ? [...fallback] : value);
    return (value) => (isEmptyValue(value) ? fallback : value);
  },
};
