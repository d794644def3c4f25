import type { CountryCode } from 'libphonenumber-js';
import { phoneLibrary } from './transforms/phone-library.ts';
import type { CellValue } from '../sources/index.ts';
import { normalizeWord } from '../util/index.ts';
import { localeSeparators, NUMBER_LOCALES } from './transforms/number.ts';
import { countryCodeOf, countryName } from './countries.ts';

/**
 * What `mapping init` reads from a column's sample values: the transform a person would write
 * for them, and why. Each function looks at the texts of one column and proposes nothing when
 * the values do not agree, so a draft never guesses against its own samples.
 */
export interface Proposal {
  /** One transform, as written in YAML: `{date: "dd/MM/yyyy"}`. */
  transform: string;
  /** The comment written above it. */
  why: string;
}

const q = (text: string): string => JSON.stringify(text);

/** The non-blank sample values as trimmed text (spreadsheet dates and numbers are not text). */
export function sampleTexts(samples: CellValue[]): string[] {
  return samples.filter((s): s is string => typeof s === 'string' && s.trim() !== '').map((s) => s.trim());
}

const NUMERIC_DATE = /^(\d{1,2})([./-])(\d{1,2})\2(\d{4}|\d{2})$/;
const ISO_DATE = /^\d{4}-\d{2}-\d{2}$/;
const ISO_DATE_TIME = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}(:\d{2})?$/;
/** ISO 8601 with a `T` (and a fraction, a zone): what APIs and the legacy v1 export write; `date` reads it as it is. */
const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/;

/**
 * A date format from the values: `21/07/1951` has a first number over 12, so the day comes first
 * (dd/MM/yyyy); `11/30/1984` has it second (MM/dd/yyyy). Without a number over 12 the order
 * cannot be told and the draft says so.
 */
export function proposeDate(samples: CellValue[], hint: { monthFirst?: string } = {}): Proposal | undefined {
  const nonBlank = samples.filter((s) => s !== null && !(typeof s === 'string' && s.trim() === ''));
  if (nonBlank.length === 0) return undefined;
  if (nonBlank.every((s) => s instanceof Date)) return { transform: 'date', why: 'the cells are spreadsheet dates' };
  const texts = sampleTexts(samples);
  if (texts.length !== nonBlank.length) return undefined;
  if (texts.every((t) => ISO_DATE.test(t)))
    return { transform: 'date', why: `dates written as YYYY-MM-DD (${q(texts[0] as string)})` };
  if (texts.every((t) => ISO_TIMESTAMP.test(t)))
    return {
      transform: 'date',
      why: `ISO 8601 dates with a time (${q(texts[0] as string)}): the date as written is kept`,
    };
  const withTime = texts.map((t) => ISO_DATE_TIME.exec(t));
  if (withTime.every((m) => m !== null)) {
    const seconds = withTime.every((m) => m[1] !== undefined);
    const format = `yyyy-MM-dd HH:mm${seconds ? ':ss' : ''}`;
    return { transform: `{date: ${q(format)}}`, why: `a date and a time (${q(texts[0] as string)}): the date is kept` };
  }
  const parts = texts.map((t) => NUMERIC_DATE.exec(t));
  if (parts.some((p) => p === null)) return undefined;
  const matches = parts as RegExpExecArray[];
  const [first] = matches as [RegExpExecArray];
  const separator = first[2] as string;
  const yearLength = (first[4] as string).length;
  if (matches.some((p) => p[2] !== separator || (p[4] as string).length !== yearLength)) return undefined;
  const a = matches.map((p) => Number(p[1]));
  const b = matches.map((p) => Number(p[3]));
  if ([...a, ...b].some((n) => n < 1 || n > 31)) return undefined;
  const firstOver = matches.find((p) => Number(p[1]) > 12);
  const secondOver = matches.find((p) => Number(p[3]) > 12);
  if (firstOver && secondOver) return undefined;
  const twoDigits = matches.every((p) => (p[1] as string).length === 2 && (p[3] as string).length === 2);
  const day = twoDigits ? 'dd' : 'd';
  const month = twoDigits ? 'MM' : 'M';
  const year = yearLength === 4 ? 'yyyy' : 'yy';
  const dayFirst = secondOver === undefined && (firstOver !== undefined || hint.monthFirst === undefined);
  const format = dayFirst
    ? `${day}${separator}${month}${separator}${year}`
    : `${month}${separator}${day}${separator}${year}`;
  const why = firstOver
    ? `${q(firstOver.input)} has a number over 12 first: the day comes before the month`
    : secondOver
      ? `${q(secondOver.input)} has a number over 12 second: the month comes before the day`
      : hint.monthFirst !== undefined
        ? `no value has a number over 12; month first, as ${hint.monthFirst}: check`
        : `no value has a number over 12, so day and month cannot be told apart: day first assumed, check`;
  return { transform: `{date: ${q(format)}}`, why };
}

const AMOUNT = /^[-+(]?\s*(?:\p{Sc}|[A-Z]{3})?\s*(\d[\d.,' \u00A0\u202F]*)\s*(?:\p{Sc}|[A-Z]{3})?\s*\)?-?$/u;

/**
 * A number locale from the values: `448.609,91` groups thousands with "." and writes "," before
 * the decimals (de-DE); `1,234.56` the other way round (en-US). Values that could be either
 * (`1.234`) do not decide alone.
 */
export function proposeNumber(samples: CellValue[]): Proposal | undefined {
  const texts = sampleTexts(samples);
  const nonText = samples.filter((s) => typeof s === 'number').length;
  if (texts.length === 0)
    return nonText > 0 ? { transform: 'number', why: 'the cells are spreadsheet numbers' } : undefined;
  let decimal: string | undefined;
  let thousands: string | undefined;
  let evidence: string | undefined;
  const agree = (kind: 'decimal' | 'thousands', separator: string, text: string): boolean => {
    const current = kind === 'decimal' ? decimal : thousands;
    if (current !== undefined && current !== separator) return false;
    if (kind === 'decimal') decimal = separator;
    else thousands = separator;
    evidence ??= text;
    return true;
  };
  for (const text of texts) {
    const digits = AMOUNT.exec(text)?.[1]?.trim();
    if (digits === undefined) return undefined;
    // 02134, 0049: a code written with digits, whose leading zero a number would lose.
    if (/^0\d/.test(digits)) return undefined;
    const spaced = digits.replace(/[\u00A0\u202F]/g, ' ');
    const seps = spaced.replace(/\d/g, '');
    if (seps === '') continue;
    const last = seps.at(-1) as string;
    const others = new Set(seps.slice(0, -1));
    const tail = spaced.slice(spaced.lastIndexOf(last) + 1);
    if (others.size > 1 || (others.size === 1 && others.has(last) && last !== ' ' && last !== "'")) {
      // 1.234.567: the same mark three digits apart is a thousands separator.
      if (!(others.size === 1 && others.has(last) && tail.length === 3 && agree('thousands', last, text)))
        return undefined;
      continue;
    }
    if (others.size === 1) {
      const group = [...others][0] as string;
      if (!agree('thousands', group, text) || !agree('decimal', last, text)) return undefined;
      continue;
    }
    if (last === ' ' || last === "'") {
      if (!agree('thousands', last, text)) return undefined;
    } else if (tail.length !== 3) {
      if (!agree('decimal', last, text)) return undefined;
    }
    // One mark before three digits (1.234, 1,234) could be either: it decides nothing alone.
  }
  if (decimal === undefined && thousands === undefined) {
    const undecided = texts.find((t) => /[.,]/.test(t));
    if (undecided !== undefined) return undefined;
    return { transform: 'number', why: `plain numbers (${q(texts[0] as string)})` };
  }
  // The first locale that writes the pair is the one proposed.
  const pair = NUMBER_LOCALES.map((locale) => ({ locale, ...localeSeparators(locale) })).find(
    (l) => (decimal === undefined || l.decimal === decimal) && (thousands === undefined || l.thousands === thousands),
  );
  if (pair === undefined) return undefined;
  const marks =
    thousands !== undefined && decimal !== undefined
      ? `${q(thousands)} groups thousands and ${q(decimal)} comes before the decimals`
      : decimal !== undefined
        ? `${q(decimal)} comes before the decimals`
        : `${q(thousands as string)} groups thousands`;
  return {
    transform: `{number: ${pair.locale}}`,
    why: `${q(evidence as string)}: ${marks}, as ${pair.locale} writes numbers`,
  };
}

/** Countries whose national numbers customers' exports hold most, in the order a tie is settled. */
const PHONE_COUNTRIES: CountryCode[] = [
  'US',
  'GB',
  'FR',
  'DE',
  'ES',
  'IT',
  'NL',
  'BE',
  'CH',
  'AT',
  'IE',
  'CA',
  'AU',
  'PT',
  'PL',
  'SE',
  'DK',
  'NO',
];

/**
 * The country of phone numbers written without a country code. Many countries accept almost any
 * digits, so a country scores first by the numbers it would write exactly as the file does
 * (`01 42 68 53 00` is how France writes a Paris number), then by the file's other evidence
 * (`evidence`: the countries its e-mail addresses and websites are at, `.nl`), then by the numbers
 * valid there. When neither the writing nor the evidence decides, the comment says it is a guess.
 */
export function proposePhone(samples: CellValue[], evidence: readonly CountryCode[] = []): Proposal | undefined {
  const texts = sampleTexts(samples);
  if (texts.length === 0) return undefined;
  if (texts.every((t) => t.startsWith('+')))
    return { transform: 'phone', why: `every number carries its country code (${q(texts[0] as string)})` };
  // "0034 91 ..." dials out of the country the file is from: it must read there too.
  const national = texts.filter((t) => !t.startsWith('+'));
  // The grouping counts: "01 42 68 53 00" is how France writes a number, "01426 85300" is not.
  const squash = (text: string): string => text.replace(/[\s.\-/]+/g, ' ').trim();
  const pointed = (country: CountryCode): number => evidence.filter((c) => c === country).length;
  const candidates = [...new Set([...PHONE_COUNTRIES, ...evidence])];
  let best: { country: CountryCode; written: number; valid: number; pointed: number } | undefined;
  const scored: Array<{ country: CountryCode; valid: number }> = [];
  for (const country of candidates) {
    let written = 0;
    let valid = 0;
    for (const text of national) {
      const number = phoneLibrary().parsePhoneNumberFromString(text, country);
      if (!number?.isValid()) continue;
      valid += 1;
      if (squash(number.formatNational()) === squash(text)) written += 1;
    }
    scored.push({ country, valid });
    const score = { country, written, valid, pointed: valid === national.length ? pointed(country) : 0 };
    if (
      best === undefined ||
      written > best.written ||
      (written === best.written &&
        (score.pointed > best.pointed || (score.pointed === best.pointed && valid > best.valid)))
    )
      best = score;
  }
  if (best === undefined || best.valid < national.length) return undefined;
  const name = countryName(best.country);
  const example = q(national[0] as string);
  if (best.written > 0)
    return {
      transform: `{phone: ${best.country}}`,
      why: `numbers without a country code, written as in ${name}: ${example}`,
    };
  if (best.pointed > 0) {
    return {
      transform: `{phone: ${best.country}}`,
      why: `numbers without a country code, valid in ${name}, where the file's addresses are (.${best.country.toLowerCase()}): a guess, check (${example})`,
    };
  }
  const others = scored.filter((s) => s.valid === national.length && s.country !== best?.country).length;
  const alike = others > 0 ? ` and in ${others} other ${others === 1 ? 'country' : 'countries'} alike` : '';
  return {
    transform: `{phone: ${best.country}}`,
    why: `numbers without a country code, valid in ${name}${alike}: a guess, check; a country column says each row's (${example})`,
  };
}

/**
 * The phone numbers' country read from each row's country column (`Land`: Nederland, België):
 * `{phone: {countryColumn, defaultCountry}}`, the default being the country the column names
 * most. Undefined when the column names no country in the rows that have a number.
 */
export function proposeRowCountry(
  rows: ReadonlyArray<readonly [number: CellValue, country: CellValue]>,
  countryColumn: string,
): Proposal | undefined {
  const named = new Map<CountryCode, string>();
  const counts = new Map<CountryCode, number>();
  let unknown: string | undefined;
  for (const [number, country] of rows) {
    if (number === null || (typeof number === 'string' && number.trim() === '')) continue;
    const text = typeof country === 'string' ? country.trim() : '';
    if (text === '') continue;
    const code = countryCodeOf(text);
    if (code === undefined) {
      unknown ??= text;
      continue;
    }
    counts.set(code, (counts.get(code) ?? 0) + 1);
    if (!named.has(code)) named.set(code, text);
  }
  const top = [...counts].sort((a, b) => b[1] - a[1])[0]?.[0];
  if (top === undefined) return undefined;
  const shown = [...named]
    .slice(0, 4)
    .map(([code, text]) => (normalizeWord(text) === code.toLowerCase() ? code : `${q(text)}: ${code}`));
  const names = named.size > 4 ? `${shown.join(', ')} and ${named.size - 4} more` : shown.join(', ');
  const strange =
    unknown === undefined ? '' : `; ${q(unknown)} names no country crm-ferry knows: its rows use ${top} too`;
  return {
    transform: `{phone: {countryColumn: ${q(countryColumn)}, defaultCountry: ${top}}}`,
    why: `each row's country from ${q(countryColumn)} (${names}); a row without one: ${top}, the most common${strange}`,
  };
}

/** Yes/no words in the languages of the synonyms; `x` and a blank cell are how checkboxes export. */
const BOOLEAN_WORDS: Array<[string[], string[]]> = [
  [
    ['yes', 'y', 'true', 'x'],
    ['no', 'n', 'false'],
  ],
  [
    ['ja', 'j'],
    ['nein', 'n'],
  ],
  [
    ['oui', 'o'],
    ['non', 'n'],
  ],
  [
    ['si', 's'],
    ['no', 'n'],
  ],
  [
    ['ja', 'j'],
    ['nee', 'n'],
  ],
  [['vero'], ['falso']],
];

/** yes/no, ja/nein, oui/non ...: a boolean, with the words of the file when they are not English. */
export function proposeBoolean(samples: CellValue[]): Proposal | undefined {
  const texts = sampleTexts(samples);
  if (texts.length === 0) return undefined;
  if (samples.every((s) => s === null || typeof s === 'boolean' || (typeof s === 'string' && s.trim() === ''))) {
    return samples.some((s) => typeof s === 'boolean')
      ? { transform: 'boolean', why: 'the cells are spreadsheet booleans' }
      : undefined;
  }
  const words = new Set(texts.map(normalizeWord));
  for (const [yes, no] of BOOLEAN_WORDS) {
    if (![...words].every((w) => yes.includes(w) || no.includes(w))) continue;
    const seen = texts.filter((t, i) => texts.findIndex((u) => normalizeWord(u) === normalizeWord(t)) === i);
    if (yes === (BOOLEAN_WORDS[0] as [string[], string[]])[0])
      return { transform: 'boolean', why: `yes/no values (${seen.map(q).join(', ')})` };
    const trueWords = seen.filter((t) => yes.includes(normalizeWord(t)));
    const falseWords = seen.filter((t) => no.includes(normalizeWord(t)));
    return {
      transform: `{boolean: {true: [${trueWords.map(q).join(', ')}], false: [${[...falseWords.map(q), '""'].join(', ')}]}}`,
      why: `yes/no values written ${seen.map(q).join(' and ')}; a blank cell is no`,
    };
  }
  return undefined;
}

/** The separator of a column that lists several values in one cell (tags, emails). */
export function proposeSplit(samples: CellValue[], fallback = ','): Proposal {
  const texts = sampleTexts(samples);
  const separator = [';', '|', ','].find((s) => texts.some((t) => t.includes(s)));
  const example = texts.find((t) => separator !== undefined && t.includes(separator));
  if (separator === undefined || example === undefined)
    return {
      transform: `{split: ${q(fallback)}}`,
      why: `one value per cell in the samples; ${q(fallback)} would separate several`,
    };
  return {
    transform: `{split: ${q(separator)}}`,
    why: `${q(example)} holds several values separated by ${q(separator)}`,
  };
}

/** A typed proposal for a column no standard field takes: a date, a yes/no or a number, in that order. */
export function proposeTyped(samples: CellValue[], hint: { monthFirst?: string } = {}): Proposal | undefined {
  return proposeDate(samples, hint) ?? proposeBoolean(samples) ?? proposeNumber(samples);
}
