import type { CountryCode } from 'libphonenumber-js';
import { phoneLibrary, phoneMetadataJson } from './phone-library.ts';
import { DigitProduct, compileDigitPattern } from './phone-digit-automaton.ts';
import type { DigitPattern, ProductPart } from './phone-digit-automaton.ts';

/*
 * A fast reading of the phone number shapes migrations are full of: `+CC` followed by digits, and
 * national numbers of the default country. It follows, step by step, what libphonenumber-js (the
 * `min` metadata its default entry uses) does for these shapes: find the calling code, strip the
 * national prefix, pick the country among those sharing the calling code, check the length and
 * the number-type patterns. The library builds a RegExp from the metadata text on every check,
 * which costs tens of microseconds per number; here every pattern is compiled once per country
 * into a digit automaton (phone-digit-automaton.ts), and every pattern deciding which country of
 * a calling code a number belongs to and whether it is valid there is walked at once, in one
 * product automaton per calling code and length (see VERDICT): one pass over the digits where the
 * step-by-step reading would run up to eight large expressions.
 * Anything outside the plain shapes, or a country whose prefix rules rewrite digits, answers
 * `undefined` so the caller asks the full parser. phone-fast-path.test.ts holds the two to the
 * same outputs on generated numbers of every country.
 */

/** The library's bounds on a national number and on a calling code. */
const MIN_NATIONAL_LENGTH = 2;
const MAX_NATIONAL_LENGTH = 17;
const MAX_CALLING_CODE_LENGTH = 3;
const MAX_TEXT_LENGTH = 40;

/*
 * PLAIN: the shapes read here are an optional `+`, digits, and spaces, hyphens or dots between
 * digits. Brackets, slashes and other separators go to the full parser, whose text extraction
 * treats them specially.
 */

/*
 * The number being read, as digit values: the checks walk this buffer, and text is cut from the
 * scanned text only for a valid answer or a RegExp fallback. A national number is always a tail
 * of the digits, so it is named by where it starts. One call at a time (JavaScript is
 * single-threaded and nothing here awaits), so module-level scratch space is safe.
 */
const digitBuffer = new Uint8Array(MAX_TEXT_LENGTH);
/*
 * The scan's results sit in one object rather than module-level `let`s, which may carry an
 * initialisation check on every read; the object measured a little faster.
 */
const scan = {
  /** How many digits digitBuffer holds. */
  count: 0,
  text: '',
  /** Where in the text the last separator is, -1 for none: digits after it are one run of the text. */
  lastSeparator: -1,
  /** Stamps the memos below: an answer remembered during another call is stale. */
  stamp: 0,
};

/** Number types in the order the library tries them; any match makes a number valid. */
const TYPES = [
  'FIXED_LINE',
  'MOBILE',
  'PREMIUM_RATE',
  'TOLL_FREE',
  'SHARED_COST',
  'VOIP',
  'PERSONAL_NUMBER',
  'PAGER',
  'UAN',
  'VOICEMAIL',
] as const;

interface NumberType {
  source: string;
  lengths: readonly number[] | undefined;
}

/**
 * A prefix rule (national prefix for parsing, international dialling prefix). Most are a list of
 * digit strings, where the RegExp's answer is the first one the digits start with; the others
 * keep their RegExp, run on the digits as text.
 */
interface PrefixRule {
  literals: Uint8Array[] | null;
  /** `^(?:source)`: the same first match as searching the unanchored source at position 0. */
  regexp: RegExp;
}

function prefixRuleOf(source: string): PrefixRule {
  const literals = /^\d+(?:\|\d+)*$/.test(source)
    ? source.split('|').map((literal) => Uint8Array.from(literal, (char) => char.charCodeAt(0) - 48))
    : null;
  return { literals, regexp: new RegExp(`^(?:${source})`) };
}

/** Length of the first literal the digits from `from` start with, or -1; only for literal rules. */
function literalPrefixLength(literals: Uint8Array[], from: number): number {
  for (const literal of literals) {
    const length = literal.length;
    if (from + length > scan.count) continue;
    let i = 0;
    while (i < length && digitBuffer[from + i] === literal[i]) i++;
    if (i === length) return length;
  }
  return -1;
}

/** One country's numbering plan with its patterns compiled. */
interface Plan {
  callingCode: string;
  national: DigitPattern | null;
  prefixForParsing: PrefixRule | null;
  transformRule: boolean;
  possibleLengths: readonly number[] | undefined;
  leadingDigits: DigitPattern | null;
  idd: PrefixRule | null;
  hasTypes: boolean;
  types: NumberType[];
  /** By national number length: the types such a number may have as one pattern, null for none. */
  typesByLength: Array<DigitPattern | null | undefined>;
  /** Position among the countries of its calling code. */
  index: number;
  /** hasNumberType's last answer, for the call and national start it was asked about: one number meets the same plan up to three times. */
  memoStamp: number;
  memoFrom: number;
  memoHasType: boolean;
}

// The library's own accessor class reads the metadata arrays, so field positions stay its business.
// Made at the first number read (see phone-library.ts).
let loaded: LibraryMetadata | undefined;
function metadata(): LibraryMetadata {
  loaded ??= new (phoneLibrary().Metadata as unknown as new (json: unknown) => LibraryMetadata)(phoneMetadataJson());
  return loaded;
}

/** The parts of the library's Metadata object used here (its published types leave them out). */
interface LibraryMetadata {
  selectNumberingPlan(country: string): void;
  numberingPlan: LibraryPlan;
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined;
  isNonGeographicCallingCode(callingCode: string): boolean;
}

interface LibraryPlan {
  callingCode(): string;
  nationalNumberPattern(): string | undefined;
  nationalPrefixForParsing(): string | undefined;
  nationalPrefixTransformRule(): string | undefined;
  possibleLengths(): number[] | undefined;
  leadingDigits(): string | undefined;
  IDDPrefix(): string | undefined;
  hasTypes(): boolean;
  type(name: string): { pattern(): string; possibleLengths(): number[] | undefined } | undefined;
}

const plans = new Map<string, Plan>();

function planOf(country: string): Plan {
  const known = plans.get(country);
  if (known) return known;
  const library = metadata();
  library.selectNumberingPlan(country);
  const p = library.numberingPlan;
  const types: NumberType[] = [];
  for (const name of TYPES) {
    const type = p.type(name);
    const pattern = type?.pattern();
    if (type && pattern) types.push({ source: pattern, lengths: type.possibleLengths() });
  }
  const national = p.nationalNumberPattern();
  const prefix = p.nationalPrefixForParsing();
  const leading = p.leadingDigits();
  const idd = p.IDDPrefix();
  const plan: Plan = {
    callingCode: p.callingCode(),
    national: national ? compileDigitPattern(national) : null,
    prefixForParsing: prefix ? prefixRuleOf(prefix) : null,
    transformRule: Boolean(p.nationalPrefixTransformRule()),
    possibleLengths: p.possibleLengths(),
    leadingDigits: leading ? compileDigitPattern(leading) : null,
    idd: idd ? prefixRuleOf(idd) : null,
    hasTypes: p.hasTypes(),
    types,
    typesByLength: [],
    index: 0,
    memoStamp: -1,
    memoFrom: -1,
    memoHasType: false,
  };
  plans.set(country, plan);
  return plan;
}

/** The countries of one calling code, the first being the one whose plan the code selects. */
interface CallingCode {
  code: string;
  /** `+` and the code: the start of every E.164 answer. */
  plus: string;
  countries: string[];
  plans: Plan[];
  main: Plan;
  /** Every country allows the same national lengths, so which one a number is in does not change the length check. */
  sameLengths: boolean;
  /** By fallback plan and national length (see verdictKey): the product answering planByNationalNumber and isValidIn in one walk. */
  products: Array<DigitProduct | undefined>;
  /** The last verdict, for the call, national start and fallback it was asked about. */
  memoStamp: number;
  memoFrom: number;
  memoFallback: number;
  memoVerdict: number;
}

/** By the calling code's numeric value: null where no country has it, undefined until first asked. */
const callingCodes: Array<CallingCode | null | undefined> = [];
/** By the calling code's numeric value: true for codes of no country that the library still reads (+800, +881, ...). */
const nonGeographic: boolean[] = [];

/** The calling code with this value; codes never start with 0, so the value names it. */
function callingCodeOf(index: number): CallingCode | null {
  let known = callingCodes[index];
  if (known === undefined) {
    const code = String(index);
    const countries = metadata().getCountryCodesForCallingCode(code);
    if (countries === undefined || countries.length === 0) {
      known = null;
      nonGeographic[index] = metadata().isNonGeographicCallingCode(code);
    } else {
      const list = countries.map(planOf);
      const first = String(list[0]?.possibleLengths);
      known = {
        code,
        plus: `+${code}`,
        countries,
        plans: list,
        main: list[0] as Plan,
        sameLengths: list.every((plan) => String(plan.possibleLengths) === first),
        products: [],
        memoStamp: -1,
        memoFrom: -1,
        memoFallback: -1,
        memoVerdict: 0,
      };
      list.forEach((plan, index) => {
        plan.index = index;
      });
    }
    callingCodes[index] = known;
  }
  return known;
}

/**
 * The digits from `from` to the end as text, cut from the scanned text run by run. It is read
 * from the end (which scanPlain made a digit) so the scan need not record where digits are: most
 * numbers never need their text.
 */
function digitText(from: number): string {
  let remaining = scan.count - from;
  let end = scan.text.length;
  if (end - remaining > scan.lastSeparator) return scan.text.slice(end - remaining);
  let at = end - 1;
  let text = '';
  while (remaining > 0) {
    const code = scan.text.charCodeAt(at);
    if (code >= 48 && code <= 57) remaining--;
    else {
      text = scan.text.slice(at + 1, end) + text;
      end = at;
    }
    at--;
  }
  return scan.text.slice(at + 1, end) + text;
}

function matchesNational(from: number, plan: Plan): boolean {
  return plan.national !== null && plan.national.matches(digitBuffer, from, scan.count);
}

/** Whether the national number from `from` has a type (fixed line, mobile, ...) in the plan: the library's getNumberType !== undefined. */
function hasNumberType(from: number, plan: Plan): boolean {
  if (plan.memoStamp === scan.stamp && plan.memoFrom === from) return plan.memoHasType;
  let found = false;
  if (matchesNational(from, plan)) {
    const anyType = typesOfLength(plan, scan.count - from);
    found = anyType !== null && anyType.matches(digitBuffer, from, scan.count);
  }
  plan.memoStamp = scan.stamp;
  plan.memoFrom = from;
  plan.memoHasType = found;
  return found;
}

function isValidIn(from: number, plan: Plan): boolean {
  return plan.hasTypes ? hasNumberType(from, plan) : matchesNational(from, plan);
}

/** Among the countries sharing a calling code, the plan of the one the national number from `from` belongs to (one pattern at a time). */
function planByNationalNumberSlowly(callingCode: CallingCode, from: number): Plan | undefined {
  const { plans: list } = callingCode;
  if (list.length === 1) return list[0];
  for (const plan of list) {
    if (plan.leadingDigits) {
      if (from < scan.count && plan.leadingDigits.matchesStart(digitBuffer, from, scan.count)) return plan;
    } else if (plan.hasTypes && hasNumberType(from, plan)) return plan;
  }
  return undefined;
}

/*
 * VERDICT: planByNationalNumber and isValidIn together, as one number: bits 0-4 hold the index
 * of the plan the number belongs to plus one (0: none), bit 5 whether it is valid in that plan,
 * bit 6 whether it is valid in the fallback plan the caller uses when no plan claims it.
 */
const PLAN_BITS = 31;
const VALID_IN_EXACT = 32;
const VALID_IN_FALLBACK = 64;

/** The types a number of this length may be in the plan, as one pattern; null for none. */
function typesOfLength(plan: Plan, length: number): DigitPattern | null {
  let anyType = plan.typesByLength[length];
  if (anyType === undefined) {
    // One walk instead of up to ten.
    const sources: string[] = [];
    for (const type of plan.types)
      if (!type.lengths || type.lengths.includes(length)) sources.push(`(?:${type.source})`);
    anyType = sources.length === 0 ? null : compileDigitPattern(sources.join('|'));
    plan.typesByLength[length] = anyType;
  }
  return anyType;
}

/** The product for numbers of this length whose fallback plan is `fallback`: every pattern the verdict depends on, walked at once. */
function productOf(callingCode: CallingCode, fallback: Plan, length: number): DigitProduct {
  const key = fallback.index * (MAX_NATIONAL_LENGTH + 1) + length;
  const known = callingCode.products[key];
  if (known !== undefined) return known;
  const parts: ProductPart[] = [];
  const partOf = (pattern: DigitPattern | null, start: boolean): number => {
    if (pattern === null) return -1;
    parts.push({ pattern, start });
    return parts.length - 1;
  };
  const list = callingCode.plans;
  const national = list.map((plan) => partOf(plan.national, false));
  const types = list.map((plan) => (plan.hasTypes ? partOf(typesOfLength(plan, length), false) : -1));
  const leading = list.map((plan) => (list.length > 1 ? partOf(plan.leadingDigits, true) : -1));
  const product = new DigitProduct(parts, (matched) => {
    const matchedPart = (part: number): boolean => part >= 0 && matched(part);
    // As hasNumberType and isValidIn read them.
    const hasType = (index: number): boolean =>
      matchedPart(national[index] as number) && matchedPart(types[index] as number);
    const valid = (index: number): boolean =>
      (list[index] as Plan).hasTypes ? hasType(index) : matchedPart(national[index] as number);
    let exact = -1;
    if (list.length === 1) exact = 0;
    else {
      for (let index = 0; index < list.length; index++) {
        const plan = list[index] as Plan;
        if (plan.leadingDigits) {
          if (matchedPart(leading[index] as number)) {
            exact = index;
            break;
          }
        } else if (plan.hasTypes && hasType(index)) {
          exact = index;
          break;
        }
      }
    }
    return (
      (exact + 1) | (exact >= 0 && valid(exact) ? VALID_IN_EXACT : 0) | (valid(fallback.index) ? VALID_IN_FALLBACK : 0)
    );
  });
  callingCode.products[key] = product;
  return product;
}

/** The VERDICT on the national number from `from`. */
function verdictOf(callingCode: CallingCode, from: number, fallback: Plan): number {
  if (
    callingCode.memoStamp === scan.stamp &&
    callingCode.memoFrom === from &&
    callingCode.memoFallback === fallback.index
  )
    return callingCode.memoVerdict;
  const length = scan.count - from;
  let verdict: number;
  if (length >= 1 && length <= MAX_NATIONAL_LENGTH && callingCode.plans.length <= PLAN_BITS - 1) {
    verdict = productOf(callingCode, fallback, length).verdict(digitBuffer, from, scan.count);
  } else {
    // Empty or overlong national numbers are rare; the product needs at least one digit for a leading-digits match to mean what it means here.
    const exact = planByNationalNumberSlowly(callingCode, from);
    verdict =
      (exact === undefined ? 0 : exact.index + 1) |
      (exact !== undefined && isValidIn(from, exact) ? VALID_IN_EXACT : 0) |
      (isValidIn(from, fallback) ? VALID_IN_FALLBACK : 0);
  }
  callingCode.memoStamp = scan.stamp;
  callingCode.memoFrom = from;
  callingCode.memoFallback = fallback.index;
  callingCode.memoVerdict = verdict;
  return verdict;
}

/** Among the countries sharing a calling code, the plan of the one the national number from `from` belongs to. */
function planByNationalNumber(callingCode: CallingCode, from: number, fallback: Plan): Plan | undefined {
  const index = verdictOf(callingCode, from, fallback) & PLAN_BITS;
  return index === 0 ? undefined : callingCode.plans[index - 1];
}

/** Whether the length is one the plan may have: the library's checkNumberLength is neither TOO_SHORT nor INVALID_LENGTH. */
function lengthPossible(length: number, plan: Plan): boolean {
  const lengths = plan.possibleLengths;
  if (!lengths) return true;
  const min = lengths[0] as number;
  if (min === length) return true;
  if (min > length) return false;
  if ((lengths[lengths.length - 1] as number) < length) return true; // TOO_LONG still counts as possible here
  return lengths.indexOf(length, 1) >= 0;
}

/** Where the national number starts once the national prefix after `start` is stripped, or -1 when the plan's prefix rule rewrites digits. */
function extractNational(start: number, plan: Plan, callingCode: CallingCode): number {
  const rule = plan.prefixForParsing;
  if (rule === null) return start;
  let from: number;
  if (rule.literals !== null) {
    // A literal rule has no groups, so the transform rule never applies.
    const length = literalPrefixLength(rule.literals, start);
    if (length < 0) return start;
    from = start + length;
  } else {
    const match = rule.regexp.exec(digitText(start));
    if (!match) return start;
    const groups = match.length - 1;
    if (plan.transformRule && groups > 0 && match[groups]) return -1;
    from = start + match[0].length;
  }
  if (from === start) return start;
  if (matchesNational(start, plan) && !matchesNational(from, plan)) return start;
  if (plan.possibleLengths) {
    const lengthPlan = callingCode.sameLengths ? plan : (planByNationalNumber(callingCode, from, plan) ?? plan);
    if (!lengthPossible(scan.count - from, lengthPlan)) return start;
  }
  return from;
}

/** The E.164 form if valid, null if not, undefined to ask the full parser. */
function finish(callingCode: CallingCode, from: number, fallback: Plan): string | null | undefined {
  if (from < 0) return undefined;
  const length = scan.count - from;
  if (length < MIN_NATIONAL_LENGTH || length > MAX_NATIONAL_LENGTH) return null;
  const verdict = verdictOf(callingCode, from, fallback);
  const valid = (verdict & PLAN_BITS) === 0 ? (verdict & VALID_IN_FALLBACK) !== 0 : (verdict & VALID_IN_EXACT) !== 0;
  return valid ? callingCode.plus + digitText(from) : null;
}

/** Reads the digits from `start` as an international number (after `+` or a dialling prefix). */
function international(start: number): string | null | undefined {
  if (digitBuffer[start] === 0) return null;
  let index = 0;
  for (let length = 1; length <= MAX_CALLING_CODE_LENGTH && start + length <= scan.count; length++) {
    index = index * 10 + (digitBuffer[start + length - 1] as number);
    const callingCode = callingCodeOf(index);
    if (callingCode === null) {
      // The library reads global numbers by their own plans, which this path does not load.
      if (nonGeographic[index] === true) return undefined;
      continue;
    }
    if (start + length === scan.count) return null;
    return finish(callingCode, extractNational(start + length, callingCode.main, callingCode), callingCode.main);
  }
  return null;
}

/** Fills the digit buffer from text in a plain shape (see PLAIN); false for any other text. */
function scanPlain(text: string, from: number): boolean {
  let count = 0;
  let last = 0;
  let lastSeparator = -1;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) {
      digitBuffer[count] = code - 48;
      count++;
    } else if (code !== 32 && code !== 45 && code !== 46) return false;
    else if (i === from) return false;
    else lastSeparator = i;
    last = code;
  }
  scan.count = count;
  scan.text = text;
  scan.lastSeparator = lastSeparator;
  return last >= 48 && last <= 57;
}

/** Where the digits continue after the rule's prefix at the start, or -1 when they do not start with it. */
function afterPrefix(rule: PrefixRule): number {
  if (rule.literals !== null) return literalPrefixLength(rule.literals, 0);
  const match = rule.regexp.exec(digitText(0));
  return match ? match[0].length : -1;
}

function startsWithCode(code: string): boolean {
  if (code.length > scan.count) return false;
  for (let i = 0; i < code.length; i++) if (digitBuffer[i] !== code.charCodeAt(i) - 48) return false;
  return true;
}

/** A national plan by country, with its calling code entry. */
interface Home {
  country: string;
  plan: Plan;
  callingCode: CallingCode;
}

/** The last country asked about: a transform asks about the same one for every row. */
let lastHome: Home | undefined;

function homeOf(country: string): Home | undefined {
  if (lastHome !== undefined && lastHome.country === country) return lastHome;
  const plan = planOf(country);
  const callingCode = callingCodeOf(Number(plan.callingCode));
  // The verdicts name the fallback plan by its place in the calling code's list.
  if (callingCode === null || callingCode.plans[plan.index] !== plan) return undefined;
  lastHome = { country, plan, callingCode };
  return lastHome;
}

/**
 * Reads a phone number the way `parsePhoneNumberFromString(text, country)` followed by
 * `isValid()` and `.number` does: the E.164 text of a valid number, null for a number the
 * library would not accept, or undefined when the text is not one of the plain shapes handled
 * here and the full parser must decide. `text` is trimmed.
 */
export function readPhoneFast(text: string, country: CountryCode | undefined): string | null | undefined {
  if (text.length > MAX_TEXT_LENGTH || text.length === 0) return undefined;
  const plus = text.charCodeAt(0) === 43;
  if (!scanPlain(text, plus ? 1 : 0) || scan.count < 4 || scan.count > 20) return undefined;
  scan.stamp++;
  if (plus) return international(0);
  if (country === undefined) return undefined;
  const home = homeOf(country);
  if (home === undefined) return undefined;
  const { plan, callingCode } = home;
  if (plan.idd !== null) {
    const rest = afterPrefix(plan.idd);
    if (rest >= 0 && rest < scan.count && digitBuffer[rest] !== 0) return international(rest);
  }
  // A national number that starts with the country's own calling code may be an international
  // number written without its `+`: the library weighs both readings; leave that to it.
  if (startsWithCode(plan.callingCode)) return undefined;
  return finish(callingCode, extractNational(0, plan, callingCode), plan);
}
