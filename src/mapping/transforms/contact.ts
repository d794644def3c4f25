import type { CountryCode } from 'libphonenumber-js';
import { z } from 'zod';
import { readPhoneFast } from './phone-fast-path.ts';
import { phoneLibrary } from './phone-library.ts';
import { TransformError } from './types.ts';
import type { TransformContext, TransformDefinition, TransformFn, Value } from './types.ts';
import { countryCodeOf } from '../countries.ts';
import { parsingTransform, quote } from './values.ts';

/**
 * What a written phone number may contain. libphonenumber would pick a number out of any text
 * ("call 020 ... after 6"), which hides a wrong column; letters and extensions are refused here.
 */
const PHONE_CHARACTERS = /^\+?[\d\s().\-/]+$/;

/** Distinct numbers remembered per phone transform; bounded so a large import cannot grow it without end. */
const PHONE_CACHE_SIZE = 10_000;

const phoneOptions = z
  .object({
    defaultCountry: z
      .string()
      .optional()
      .describe(
        'ISO 3166 alpha-2 country (GB, DE, US; any case) of numbers written without a country code; without it such numbers are invalid',
      ),
    countryColumn: z
      .string()
      .min(1)
      .optional()
      .describe(
        "A column saying each row's country (`Nederland`, `België`, `DE`: names in English, French, German, Spanish, Dutch and Italian, or ISO codes): a number without a country code is read as that country's; a row whose cell is empty or names no country uses `defaultCountry`",
      ),
    invalid: z
      .enum(['error', 'keep'])
      .default('error')
      .describe('A number that is not valid: reject the row, or keep the text as written (trimmed).'),
  })
  .strict()
  .superRefine((options, context) => {
    if (
      options.defaultCountry !== undefined &&
      !phoneLibrary().isSupportedCountry(options.defaultCountry.toUpperCase())
    ) {
      context.addIssue({
        code: 'custom',
        message: `${quote(options.defaultCountry)} is not a country code phone numbers are known for (ISO 3166 alpha-2, such as GB)`,
        path: ['defaultCountry'],
      });
    }
  });

/** How one country's numbers are read: the reader of a phone transform for one country. */
type CountryReader = (value: Value, context: TransformContext) => Value;

export const phone: TransformDefinition<z.output<typeof phoneOptions>> = {
  name: 'phone',
  summary:
    "Normalises a phone number to E.164 (+442079460000); numbers with a country code keep it, others use the row's country (`countryColumn`) or `defaultCountry`. Letters, extensions and numbers not valid for the country reject the row.",
  options: phoneOptions,
  shorthand: 'defaultCountry',
  examples: [
    { yaml: '{phone: GB}', input: '020 7946 0000', output: '+442079460000' },
    { yaml: '{phone: GB}', input: '+49 30 1234567', output: '+49301234567' },
    { yaml: '{phone: {defaultCountry: GB, invalid: keep}}', input: 'ask reception', output: 'ask reception' },
  ],
  columns: (options) => (options.countryColumn === undefined ? [] : [options.countryColumn]),
  create(options) {
    const fallback = options.defaultCountry?.toUpperCase() as CountryCode | undefined;
    const keep = options.invalid === 'keep';
    const fixed = countryReader(fallback, keep);
    const column = options.countryColumn;
    if (column === undefined) return fixed;
    // One reader per country the rows name: each keeps its own cache and message.
    const readers = new Map<CountryCode, CountryReader>();
    return (value, context, cells) => {
      const cell = cells?.[0];
      const named = typeof cell === 'string' ? countryCodeOf(cell) : undefined;
      if (named === undefined || named === fallback) return fixed(value, context);
      let reader = readers.get(named);
      if (reader === undefined) {
        reader = countryReader(named, keep, column);
        readers.set(named, reader);
      }
      return reader(value, context);
    };
  },
};

/** The reader of numbers of `country` (undefined: only numbers with a country code); `from` names the column the country came from, for messages. */
function countryReader(country: CountryCode | undefined, keep: boolean, from?: string): CountryReader {
  const where =
    country === undefined
      ? ''
      : from === undefined
        ? ` valid in ${country}`
        : ` valid in ${country} (the row's ${quote(from)})`;
  const expected = `a phone number${where}${country === undefined ? ' with a country code' : ' or with a country code'} like ${country === 'GB' ? '020 7946 0000' : '+44 20 7946 0000'}`;
  // Parsing costs tens of microseconds; switchboard numbers repeat across a company's contacts.
  const seen = new Map<string, string | null>();
  const read = (written: string): string | undefined => {
    // Most numbers are distinct, so the cache rarely helps them; the fast path answers the plain shapes.
    const fast = readPhoneFast(written, country);
    if (fast !== undefined) return fast ?? undefined;
    const known = seen.get(written);
    if (known !== undefined) return known ?? undefined;
    const parsed = PHONE_CHARACTERS.test(written)
      ? phoneLibrary().parsePhoneNumberFromString(written, country)
      : undefined;
    const result = parsed !== undefined && parsed.isValid() ? parsed.number : null;
    if (seen.size >= PHONE_CACHE_SIZE) seen.clear();
    seen.set(written, result);
    return result ?? undefined;
  };
  const plain = `a phone number${country === undefined ? ' with a country code' : ` (of ${country}, or with a country code)`}`;
  const invalid = (text: string): string => {
    if (keep) return text;
    throw new TransformError(`expected ${expected}, got ${quote(text)}`, 'phone', plain);
  };
  const general = parsingTransform((text, _context, original) => {
    // 00 is the international prefix in most of the world; without a default country libphonenumber would not know it.
    const written = country === undefined && text.startsWith('00') ? `+${text.slice(2)}` : text;
    // A spreadsheet cell formatted as a number has lost its leading 0 or +: the national reading
    // is tried first (the usual case), then the international one.
    const normalised = read(written) ?? (typeof original === 'number' ? read(`+${written}`) : undefined);
    return normalised ?? invalid(text);
  });
  return (value, context) => {
    // Text cells are the bulk of an import and the fast path answers most of them; the layers of
    // the general path cost a quarter of the call. Text the fast path answers starts with + or a
    // digit and ends with a digit, so trimming would not change it, and a country-less 00 number
    // is declined by it and gets its rewrite below.
    if (typeof value === 'string') {
      const fast = readPhoneFast(value, country);
      if (fast !== undefined) return fast ?? invalid(value);
    }
    return general(value, context);
  };
}

/**
 * The practical shape of an address: a local part without spaces, one @, and a domain of at least
 * two labels of letters, digits and hyphens (any script), ending in a label of two or more letters.
 */
export const EMAIL =
  /^(?!\.)(?!.*\.\.)[^\s@"<>(),;:\\[\]]{1,64}(?<!\.)@(?=.{1,253}$)(?:[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?\.)+\p{L}{2,63}$/u;

/** Starts with "mailto:" in any case; only the first seven characters are lower-cased, not the whole cell. */
function isMailto(text: string): boolean {
  return text.length >= 7 && (text.charCodeAt(0) | 32) === 109 && text.slice(0, 7).toLowerCase() === 'mailto:';
}

/**
 * The plain ASCII addresses nearly every cell holds, checked by a much cheaper expression whose
 * every match EMAIL accepts too (its local part, labels and lengths stay inside EMAIL's rules);
 * anything it refuses is still given to EMAIL.
 */
const SIMPLE_EMAIL =
  /^[A-Za-z0-9_+-]+(?:\.[A-Za-z0-9_+-]+)*@(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+[A-Za-z]{2,63}$/;

/** Whether the address is a plain one EMAIL would accept; false says nothing. */
export function isSimpleEmail(address: string): boolean {
  const at = address.indexOf('@');
  return at > 0 && at <= 64 && address.length - at - 1 <= 253 && SIMPLE_EMAIL.test(address);
}

/**
 * The plain shape in lower case, written so the engine never backtracks far: one pass of this
 * costs less than SIMPLE_EMAIL, whose bounded label repeats make it try and retreat per label.
 * It leaves out SIMPLE_EMAIL's length limits (64 before the @, 63 per label, 253 for the domain),
 * so it may only be used on addresses of at most LOWER_EMAIL_MAX characters: there a label of 64,
 * a last label of 64 or a local part of 65 cannot fit, and every match is one SIMPLE_EMAIL takes.
 */
export const LOWER_EMAIL = /^[a-z0-9_+-]+(?:\.[a-z0-9_+-]+)*@(?:[a-z0-9]+(?:-+[a-z0-9]+)*\.)+[a-z]{2,}$/;

/** Longest address LOWER_EMAIL may decide on its own (see there). */
export const LOWER_EMAIL_MAX = 66;

const emailOptions = z
  .object({
    lowercase: z
      .boolean()
      .default(true)
      .describe('Write the whole address in lower case, so the same person matches across files.'),
  })
  .strict();

export const email: TransformDefinition<z.output<typeof emailOptions>> = {
  name: 'email',
  summary:
    'Trims and checks an email address (one @, no spaces, a dotted domain), lower-cased by default; anything else rejects the row.',
  options: emailOptions,
  examples: [
    { yaml: 'email', input: ' Ada.Lovelace@Example.COM ', output: 'ada.lovelace@example.com' },
    { yaml: '{email: {lowercase: false}}', input: 'Ada@Example.com', output: 'Ada@Example.com' },
  ],
  create(options) {
    const lower = options.lowercase;
    const general = parsingTransform((text) => {
      // A "mailto:" link is an address in disguise, common in exports from web forms.
      const address = isMailto(text) ? text.slice(7).trim() : text;
      if (!isSimpleEmail(address) && !EMAIL.test(address))
        throw new TransformError(
          `expected an email address like name@example.com, got ${quote(text)}`,
          'email',
          'an e-mail address',
        );
      return lower ? address.toLowerCase() : address;
    });
    // Nearly every cell is one plain address already in lower case (a `lowercase` step usually
    // comes first): a match has no white space to trim and nothing to lower, so it is the answer.
    // Capitals, blanks, mailto links and anything unusual take the general path.
    const fn: TransformFn = (value, context) => {
      if (typeof value === 'string' && value.length <= LOWER_EMAIL_MAX && LOWER_EMAIL.test(value)) return value;
      return general(value, context);
    };
    return fn;
  },
};
