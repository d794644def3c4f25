import { z } from 'zod';
import { TransformError } from './types.ts';
import type { TransformDefinition, TransformFn } from './types.ts';
import { describeValue, escapeRegExp, listError, quote } from './values.ts';

/** Characters that group thousands in some locale; the spaces are the ones Intl and spreadsheets write. */
const THOUSANDS = ['', '.', ',', ' ', '\u00A0', '\u202F', "'", '’'] as const;
const SPACES = new Set<string>([' ', '\u00A0', '\u202F']);
const APOSTROPHES = new Set<string>(["'", '’']);

function isKnownLocale(tag: string): boolean {
  try {
    return Intl.NumberFormat.supportedLocalesOf([tag]).length === 1;
  } catch {
    return false;
  }
}

const numberOptions = z
  .object({
    locale: z
      .string()
      .optional()
      .describe('A BCP 47 locale (de-DE, en-US, fr-FR) whose decimal and thousands separators are expected'),
    decimal: z
      .enum(['.', ','])
      .optional()
      .describe('The decimal separator. Default: the locale\'s, or "." without a locale'),
    thousands: z
      .enum(THOUSANDS)
      .optional()
      .describe(
        'The thousands separator, or "" for none; any space stands for all spaces, either apostrophe for both. Default: the locale\'s, or none without a locale',
      ),
  })
  .strict()
  .superRefine((options, context) => {
    if (options.locale !== undefined && !isKnownLocale(options.locale)) {
      context.addIssue({
        code: 'custom',
        message: `${quote(options.locale)} is not a locale this system knows (a BCP 47 tag such as de-DE or en-US)`,
        path: ['locale'],
      });
      return;
    }
    const { decimal, thousands } = resolveSeparators(options);
    if (decimal === thousands) {
      context.addIssue({
        code: 'custom',
        message: `the decimal and thousands separators are both ${quote(decimal)}`,
        path: ['thousands'],
      });
    }
  });

type NumberOptions = z.output<typeof numberOptions>;

/** Separators from the locale first, then the explicit options on top. */
function resolveSeparators(options: NumberOptions): { decimal: string; thousands: string } {
  let decimal = '.';
  let thousands = '';
  if (options.locale !== undefined && isKnownLocale(options.locale)) {
    for (const part of new Intl.NumberFormat(options.locale).formatToParts(1234567.5)) {
      if (part.type === 'decimal') decimal = part.value;
      if (part.type === 'group') thousands = part.value;
    }
  }
  return { decimal: options.decimal ?? decimal, thousands: options.thousands ?? thousands };
}

/** A character class for a separator, widened so that every space (or apostrophe) is accepted. */
function separatorClass(separator: string): string {
  if (SPACES.has(separator)) return '[ \\u00A0\\u202F]';
  if (APOSTROPHES.has(separator)) return "['’]";
  return escapeRegExp(separator);
}

interface NumberParser {
  parse(text: string): number | undefined;
  /** "1.234,56 (de-DE)": what the message shows as expected. */
  example: string;
}

/**
 * Compiles the parser once per mapping. Grouping is checked (groups of three digits) so that a
 * file read with the wrong locale fails loudly instead of turning 1.5 into 15.
 */
function createParser(options: NumberOptions): NumberParser {
  const { decimal, thousands } = resolveSeparators(options);
  const decimalPattern = escapeRegExp(decimal);
  const integerPart = thousands === '' ? '\\d+' : `\\d{1,3}(?:${separatorClass(thousands)}\\d{3})+|\\d+`;
  const body = new RegExp(
    `^(?:(${integerPart})(?:${decimalPattern}(\\d*))?|${decimalPattern}(\\d+))(?:[eE]([+-]?\\d+))?$`,
  );
  const groupSeparator = thousands === '' ? null : new RegExp(separatorClass(thousands), 'g');
  // Currency: any symbol, or an ISO code (EUR, USD) at either end.
  const currency = /^(?:\p{Sc}|[A-Z]{3}(?![A-Za-z]))\s*|\s*(?:\p{Sc}|(?<![A-Za-z])[A-Z]{3})$/u;

  const parse = (input: string): number | undefined => {
    let text = input.trim();
    let negative = false;
    // Accounting notation writes a loss in brackets: (12.50) is -12.50.
    if (text.startsWith('(') && text.endsWith(')')) {
      negative = true;
      text = text.slice(1, -1).trim();
    }
    for (let pass = 0; pass < 2; pass += 1) {
      const stripped = text.replace(currency, '');
      if (stripped === text) break;
      text = stripped.trim();
    }
    const sign = text.charAt(0);
    if (sign === '-' || sign === '\u2212' || sign === '+') {
      if (negative && sign !== '+') return undefined;
      negative = negative || sign !== '+';
      text = text.slice(1).trim();
    } else if (text.endsWith('-') && !negative) {
      // Some ledgers (SAP exports) put the minus after the amount.
      negative = true;
      text = text.slice(0, -1).trim();
    }
    // The currency may also stand between the sign and the digits: -€12.
    text = text.replace(currency, '').trim();
    const match = body.exec(text);
    if (match === null) return undefined;
    const [, whole, fraction, onlyFraction, exponent] = match;
    const digits = whole === undefined ? '0' : groupSeparator === null ? whole : whole.replace(groupSeparator, '');
    // Number() of the canonical text gives the closest double: "0.1" stays 0.1, no float noise.
    const canonical = `${negative ? '-' : ''}${digits}.${fraction ?? onlyFraction ?? ''}0${exponent === undefined ? '' : `e${exponent}`}`;
    const result = Number(canonical);
    return Number.isFinite(result) ? result : undefined;
  };

  const shownThousands = SPACES.has(thousands) ? ' ' : thousands;
  const example = `${thousands === '' ? '1234' : `1${shownThousands}234`}${decimal}56`;
  const described =
    options.locale !== undefined
      ? ` (${options.locale})`
      : thousands === ''
        ? ''
        : ` (thousands ${quote(thousands)}, decimal ${quote(decimal)})`;
  return { parse, example: `${example}${described}` };
}

/** Locales whose separators differ, tried in turn to say which one reads a value that failed. */
/**
 * The locales whose way of writing numbers crm-ferry names: `mapping init` proposes the first that
 * writes a file's separators, and a number that fails says which of them would read it.
 */
export const NUMBER_LOCALES: readonly string[] = ['en-US', 'de-DE', 'fr-FR', 'de-CH'];

/** A locale's separators as a person sees them in a file: any space as ' ', either apostrophe as "'". */
export function localeSeparators(locale: string): { decimal: string; thousands: string } {
  const { decimal, thousands } = resolveSeparators({ locale });
  return { decimal, thousands: SPACES.has(thousands) ? ' ' : APOSTROPHES.has(thousands) ? "'" : thousands };
}
type Separators = ReturnType<typeof resolveSeparators>;
let otherParsers: Array<{ locale: string; parser: NumberParser; separators: Separators }> | undefined;

/**
 * `; de-DE reads it as 448609.91`: the locale a value that failed was written in, when one of
 * the common ones reads it (only on the error path, so a run that reads its values pays nothing;
 * the other locales' parsers and separators are worked out once, as they cost tens of µs each).
 */
function readerHint(value: string, current: Separators): string {
  otherParsers ??= NUMBER_LOCALES.map((locale) => ({
    locale,
    parser: createParser({ locale }),
    separators: resolveSeparators({ locale }),
  }));
  for (const { locale, parser, separators: other } of otherParsers) {
    if (
      other.decimal === current.decimal &&
      (other.thousands === current.thousands || (SPACES.has(other.thousands) && SPACES.has(current.thousands)))
    )
      continue;
    const read = parser.parse(value);
    if (read !== undefined) return `; ${locale} reads it as ${read} (write {number: ${locale}})`;
  }
  return '';
}

/** Builds `number` or `integer`; they differ only in the whole-number check. */
function createNumberTransform(name: 'number' | 'integer', options: NumberOptions): TransformFn {
  const parser = createParser(options);
  const separators = resolveSeparators(options);
  const expected =
    name === 'integer'
      ? `a whole number like ${parser.example.replace(/[.,]56(?= |$)/, '')}`
      : `a number like ${parser.example}`;
  const plain = name === 'integer' ? 'a whole number' : 'a number';
  const check = (result: number, found: string): number => {
    if (name === 'integer' && !Number.isSafeInteger(result)) {
      throw new TransformError(`expected ${expected}, got ${found}`, name, plain);
    }
    // -0 would print as "0" but compare oddly downstream.
    return result === 0 ? 0 : result;
  };
  return (value) => {
    if (value === null) return null;
    if (typeof value === 'number') {
      if (!Number.isFinite(value))
        throw new TransformError(`expected ${expected}, got ${describeValue(value)}`, name, plain);
      return check(value, describeValue(value));
    }
    if (typeof value === 'string') {
      // An empty cell is no amount, not a broken one.
      if (value.trim() === '') return null;
      const result = parser.parse(value);
      if (result === undefined)
        throw new TransformError(
          `expected ${expected}, got ${quote(value)}${readerHint(value, separators)}`,
          name,
          plain,
        );
      return check(result, quote(value));
    }
    if (Array.isArray(value)) throw listError(name, expected, value);
    throw new TransformError(
      `expected ${expected}, got ${typeof value === 'boolean' ? `the boolean ${value}` : describeValue(value)}`,
      name,
      plain,
    );
  };
}

export const number: TransformDefinition<NumberOptions> = {
  name: 'number',
  summary:
    "Reads a number written with a locale's separators; currency signs and codes and surrounding spaces are ignored, (12.50) and 12.50- are negative, blank is nothing.",
  options: numberOptions,
  shorthand: 'locale',
  examples: [
    { yaml: '{number: de-DE}', input: '1.234,56 €', output: 1234.56 },
    { yaml: "{number: {decimal: '.', thousands: ','}}", input: '($1,250.00)', output: -1250 },
    { yaml: 'number', input: '0.1', output: 0.1 },
  ],
  create: (options) => createNumberTransform('number', options),
};

export const integer: TransformDefinition<NumberOptions> = {
  name: 'integer',
  summary: 'Like `number`, but the value must be whole (12.0 is accepted as 12).',
  options: numberOptions,
  shorthand: 'locale',
  examples: [
    { yaml: '{integer: en-US}', input: '1,200', output: 1200 },
    { yaml: 'integer', input: '12.0', output: 12 },
  ],
  create: (options) => createNumberTransform('integer', options),
};
