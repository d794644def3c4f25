import { z } from 'zod';
import { compileLinearPattern, type LinearPattern, PatternError } from '../linear-pattern.ts';
import { TransformError } from './types.ts';
import type { TransformDefinition, TransformFn, Value } from './types.ts';
import { escapeRegExp, FewSpellings, quote, scalarToText, textTransform } from './values.ts';

const noOptions = z.object({}).strict();
type NoOptions = z.output<typeof noOptions>;

/**
 * Flags a mapping may give a regular expression. `y` and `d` are left out: a sticky expression
 * keeps state between rows, and match indices are of no use to a replacement.
 */
const FLAGS_PATTERN = /^(?!.*(.).*\1)[gimsuv]*$/;

/**
 * Compiles a mapping's regular expression for the linear-time engine (see linear-pattern.ts), or
 * says why it cannot be run (for a zod issue).
 */
function compileRegExp(pattern: string, flags: string): LinearPattern | string {
  if (!FLAGS_PATTERN.test(flags))
    return `flags ${quote(flags)} are not valid: use each of g, i, m, s, u, v at most once`;
  try {
    return compileLinearPattern(pattern, flags);
  } catch (error) {
    if (!(error instanceof PatternError)) throw error;
    return `pattern ${quote(pattern)} ${error.message}`;
  }
}

/** Checks a plain-text pattern's flags (the text itself is escaped, so it always compiles). */
function flagsProblem(flags: string): string | undefined {
  return FLAGS_PATTERN.test(flags)
    ? undefined
    : `flags ${quote(flags)} are not valid: use each of g, i, m, s, u, v at most once`;
}

export const trim: TransformDefinition<NoOptions> = {
  name: 'trim',
  summary: 'Removes white space at both ends of text.',
  options: noOptions,
  examples: [{ yaml: 'trim', input: '  Ada Lovelace ', output: 'Ada Lovelace' }],
  create: () => {
    const general = textTransform((text) => text.trim());
    // Text is what nearly every cell is: its own call site, so the engine can inline the string method.
    const fn: TransformFn = (value, context) => (typeof value === 'string' ? value.trim() : general(value, context));
    return fn;
  },
};

/**
 * Characters whose case mapping may differ from themselves: ASCII letters of the other case, and
 * everything beyond ASCII (left to the full Unicode mapping). Text without any is its own result.
 */
const MAY_LOWER = /[A-Z\u0080-\uFFFF]/;
const MAY_UPPER = /[a-z\u0080-\uFFFF]/;

/**
 * Whether changing the case of text could change it; `from` is the char code of `A` (lowering)
 * or `a` (raising). Text that needs the change nearly always shows it at an end ("Acme Ltd",
 * "London"), and then asking the expression would only add its cost to the case mapping's.
 */
function mayChangeCase(text: string, from: number, mayChange: RegExp): boolean {
  const length = text.length;
  if (length === 0) return false;
  const first = text.charCodeAt(0);
  const last = text.charCodeAt(length - 1);
  if ((first >= from && first <= from + 25) || first >= 128 || (last >= from && last <= from + 25) || last >= 128)
    return true;
  return mayChange.test(text);
}

export const lowercase: TransformDefinition<NoOptions> = {
  name: 'lowercase',
  summary: 'Turns text into lower case.',
  options: noOptions,
  examples: [{ yaml: 'lowercase', input: 'Ada@Example.COM', output: 'ada@example.com' }],
  create: () => {
    const general = textTransform((text) => text.toLowerCase());
    // Text is what nearly every cell is, and mostly already lower case (emails, keys): asking the
    // expression engine whether anything could change is cheaper than toLowerCase finding nothing.
    const fn: TransformFn = (value, context) =>
      typeof value === 'string'
        ? mayChangeCase(value, 65, MAY_LOWER)
          ? value.toLowerCase()
          : value
        : general(value, context);
    return fn;
  },
};

export const uppercase: TransformDefinition<NoOptions> = {
  name: 'uppercase',
  summary: 'Turns text into upper case.',
  options: noOptions,
  examples: [{ yaml: 'uppercase', input: 'gb', output: 'GB' }],
  create: () => {
    const general = textTransform((text) => text.toUpperCase());
    // As for lowercase: codes and postcodes mostly arrive in capitals already.
    const fn: TransformFn = (value, context) =>
      typeof value === 'string'
        ? mayChangeCase(value, 97, MAY_UPPER)
          ? value.toUpperCase()
          : value
        : general(value, context);
    return fn;
  },
};

/** Letters, marks and digits with apostrophes inside, so "o'neil" is one word and "anne-marie" two. */
const WORD = /[\p{L}\p{M}\p{N}'’]+/gu;
const HAS_LETTER = /^\p{L}/u;

function titlecaseWord(word: string): string {
  // Only shouting is lowered: a name typed with care ("McDonald", "van der Berg") keeps its capitals.
  let out = word === word.toUpperCase() ? word.toLowerCase() : word;
  if (HAS_LETTER.test(out)) out = out.charAt(0).toUpperCase() + out.slice(1);
  // A one-letter prefix before an apostrophe is an Irish or French name part (O'Neil, D'Arcy);
  // a longer one is a contraction ("don't") whose tail stays small.
  const second = out.charAt(1);
  if (out.length > 2 && (second === "'" || second === '’'))
    out = out.slice(0, 2) + out.charAt(2).toUpperCase() + out.slice(3);
  return out;
}

export const titlecase: TransformDefinition<NoOptions> = {
  name: 'titlecase',
  summary:
    "Capitalises the first letter of every word; words in all capitals are lowered first, other capitals are kept (McDonald stays, O'NEIL becomes O'Neil).",
  options: noOptions,
  examples: [
    { yaml: 'titlecase', input: "mary o'neil-SMITH", output: "Mary O'Neil-Smith" },
    { yaml: 'titlecase', input: 'mcdonald', output: 'Mcdonald' },
  ],
  create: () => textTransform((text) => text.replace(WORD, titlecaseWord)),
};

export const collapse: TransformDefinition<NoOptions> = {
  name: 'collapse',
  summary:
    'Replaces every run of white space (tabs, line breaks, no-break spaces) with one space; ends are left to `trim`.',
  options: noOptions,
  examples: [{ yaml: 'collapse', input: 'Ada\t\tKing \n Lovelace', output: 'Ada King Lovelace' }],
  create: () => textTransform((text) => text.replace(/\s+/g, ' ')),
};

const replaceOptions = z
  .object({
    pattern: z.string().min(1).describe('The text to find; a regular expression when `regex` is true'),
    with: z.string().default('').describe('The replacement; with `regex`, `$1` and `$<name>` insert captured groups.'),
    regex: z
      .boolean()
      .default(false)
      .describe(
        'Treat `pattern` as a regular expression (JavaScript syntax without lookarounds or backreferences; see Regular expressions).',
      ),
    flags: z
      .string()
      .default('g')
      .describe(
        'Regular expression flags (g, i, m, s, u, v); without `g` only the first match is replaced. Also applies to plain text patterns.',
      ),
  })
  .strict()
  .superRefine((options, context) => {
    const problem = options.regex ? compileRegExp(options.pattern, options.flags) : flagsProblem(options.flags);
    if (typeof problem === 'string') context.addIssue({ code: 'custom', message: problem, path: ['pattern'] });
  });

export const replace: TransformDefinition<z.output<typeof replaceOptions>> = {
  name: 'replace',
  summary: 'Replaces plain text or a regular expression match, every occurrence by default.',
  options: replaceOptions,
  examples: [
    { yaml: "{replace: {pattern: ' Ltd.', with: ' Limited'}}", input: 'Acme Ltd.', output: 'Acme Limited' },
    {
      yaml: "{replace: {pattern: '^(\\w+), (\\w+)$', with: '$2 $1', regex: true}}",
      input: 'Lovelace, Ada',
      output: 'Ada Lovelace',
    },
  ],
  create(options) {
    const replacement = options.with;
    let apply: (text: string) => string;
    if (options.regex) {
      const expression = compileLinearPattern(options.pattern, options.flags);
      apply = (text) => expression.replace(text, replacement);
    } else {
      // Escaped plain text cannot backtrack: the built-in engine runs it. A plain replacement is
      // inserted as written: `$&` in it must not be read as a group reference.
      const expression = new RegExp(escapeRegExp(options.pattern), options.flags);
      apply = (text) => text.replace(expression, () => replacement);
    }
    const general = textTransform(apply);
    // The same text always gives the same result (no sticky flag, lastIndex is reset by replace),
    // so the few texts a column repeats are replaced once.
    const seen = new FewSpellings<string>();
    const fn: TransformFn = (value, context) => {
      if (typeof value !== 'string') return general(value, context);
      const known = seen.get(value);
      if (known !== undefined) return known;
      const result = apply(value);
      seen.set(value, result);
      return result;
    };
    return fn;
  },
};

const truncateOptions = z
  .object({
    length: z.number().int().min(1).describe('Most characters kept; longer text is cut at the end'),
  })
  .strict();

export const truncate: TransformDefinition<z.output<typeof truncateOptions>> = {
  name: 'truncate',
  summary: 'Cuts text to at most `length` characters (counting characters, so emoji and accents are never split).',
  options: truncateOptions,
  shorthand: 'length',
  examples: [{ yaml: '{truncate: 10}', input: 'Analytical Engine Ltd', output: 'Analytical' }],
  create({ length }) {
    return textTransform((text) => {
      if (text.length <= length) return text;
      // Counting code points rather than UTF-16 units keeps surrogate pairs whole.
      let out = '';
      let count = 0;
      for (const character of text) {
        if (count === length) break;
        out += character;
        count += 1;
      }
      return out;
    });
  },
};

const affixOptions = z
  .object({
    text: z.string().min(1).describe('The text to add'),
  })
  .strict();

export const prefix: TransformDefinition<z.output<typeof affixOptions>> = {
  name: 'prefix',
  summary:
    'Puts text in front of a value; blank values stay as they are, so an empty cell does not become the prefix alone.',
  options: affixOptions,
  shorthand: 'text',
  examples: [
    { yaml: "{prefix: 'Legacy ID: '}", input: '4711', output: 'Legacy ID: 4711' },
    { yaml: "{prefix: 'Legacy ID: '}", input: '', output: '' },
  ],
  create({ text: added }) {
    return textTransform((text) => (text.trim() === '' ? text : added + text));
  },
};

export const suffix: TransformDefinition<z.output<typeof affixOptions>> = {
  name: 'suffix',
  summary: 'Puts text after a value; blank values stay as they are.',
  options: affixOptions,
  shorthand: 'text',
  examples: [{ yaml: "{suffix: ' (imported)'}", input: 'Acme', output: 'Acme (imported)' }],
  create({ text: added }) {
    return textTransform((text) => (text.trim() === '' ? text : text + added));
  },
};

const extractOptions = z
  .object({
    pattern: z
      .string()
      .min(1)
      .describe('A regular expression with exactly one capturing group; the group is the result'),
    flags: z.string().default('').describe('Regular expression flags (i, m, s, u, v).'),
    otherwise: z
      .enum(['error', 'empty', 'keep'])
      .default('error')
      .describe(
        'When the pattern does not match: reject the row, give nothing (dropped from a list), or keep the value.',
      ),
  })
  .strict()
  .superRefine((options, context) => {
    const compiled = compileRegExp(options.pattern, options.flags);
    if (typeof compiled === 'string') {
      context.addIssue({ code: 'custom', message: compiled, path: ['pattern'] });
      return;
    }
    const { groups } = compiled;
    if (groups !== 1) {
      context.addIssue({
        code: 'custom',
        message: `pattern ${quote(options.pattern)} must have exactly one capturing group, it has ${groups}`,
        path: ['pattern'],
      });
    }
  });

export const extract: TransformDefinition<z.output<typeof extractOptions>> = {
  name: 'extract',
  summary: 'Keeps the part of the text that the one capturing group of a regular expression matches.',
  options: extractOptions,
  shorthand: 'pattern',
  examples: [
    { yaml: "{extract: 'ID-(\\d+)'}", input: 'Order ID-4711 (web)', output: '4711' },
    { yaml: "{extract: {pattern: '@(.+)$', otherwise: empty}}", input: 'no address', output: null },
  ],
  create(options) {
    const expression = compileLinearPattern(options.pattern, options.flags.replace('g', ''));
    const { otherwise } = options;
    const one = (text: string): string | null => {
      // A blank cell has nothing to extract from: it stays empty, as in the other parsing transforms.
      if (text.trim() === '') return null;
      const match = expression.exec(text);
      if (match !== null) return match[1] ?? '';
      if (otherwise === 'keep') return text;
      if (otherwise === 'empty') return null;
      throw new TransformError(
        `expected text matching /${options.pattern}/, got ${quote(text)}`,
        'extract',
        'in the form the mapping expects',
      );
    };
    const fn: TransformFn = (value: Value) => {
      if (value === null) return null;
      if (Array.isArray(value)) {
        const out: string[] = [];
        for (const element of value) {
          const result = one(element);
          if (result !== null) out.push(result);
        }
        return out;
      }
      return one(scalarToText(value));
    };
    return fn;
  },
};
