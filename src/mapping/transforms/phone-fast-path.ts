import { Metadata } from 'libphonenumber-js';
import type { CountryCode } from 'libphonenumber-js';
import metadataJson from 'libphonenumber-js/min/metadata';

/*
 * A fast reading of the phone number shapes migrations are full of: `+CC` followed by digits, and
 * national numbers of the default country. It follows, step by step, what libphonenumber-js (the
 * `min` metadata its default entry uses) does for these shapes: find the calling code, strip the
 * national prefix, pick the country among those sharing the calling code, check the length and
 * the number-type patterns. The library builds a RegExp from the metadata text on every check,
 * which costs tens of microseconds per number; here every pattern is compiled once per country.
 * Anything outside the plain shapes, or a country whose prefix rules rewrite digits, answers
 * `undefined` so the caller asks the full parser. phone-fast-path.test.ts holds the two to the
 * same outputs on generated numbers of every country.
 */

/** The library's bounds on a national number and on a calling code. */
const MIN_NATIONAL_LENGTH = 2;
const MAX_NATIONAL_LENGTH = 17;
const MAX_CALLING_CODE_LENGTH = 3;

/*
 * PLAIN: the shapes read here are an optional `+`, digits, and spaces, hyphens or dots between
 * digits. Brackets, slashes and other separators go to the full parser, whose text extraction
 * treats them specially.
 */

/** Number types in the order the library tries them; any match makes a number valid. */
const TYPES = ['FIXED_LINE', 'MOBILE', 'PREMIUM_RATE', 'TOLL_FREE', 'SHARED_COST', 'VOIP', 'PERSONAL_NUMBER', 'PAGER', 'UAN', 'VOICEMAIL'] as const;

interface NumberType {
  source: string;
  lengths: readonly number[] | undefined;
}

/** One country's numbering plan with its patterns compiled. */
interface Plan {
  callingCode: string;
  national: RegExp | null;
  prefixForParsing: RegExp | null;
  transformRule: boolean;
  possibleLengths: readonly number[] | undefined;
  leadingDigits: RegExp | null;
  idd: RegExp | null;
  hasTypes: boolean;
  types: NumberType[];
  /** By national number length: the types such a number may have as one expression, null for none. */
  typesByLength: Array<RegExp | null | undefined>;
  /** The last number hasNumberType was asked about and its answer: one number is checked against the same plan up to three times. */
  lastNumber: string;
  lastHasType: boolean;
}

// The library's own accessor class reads the metadata arrays, so field positions stay its business.
const metadata = new (Metadata as unknown as new (json: unknown) => LibraryMetadata)(metadataJson);

/** The parts of the library's Metadata object used here (its published types leave them out). */
interface LibraryMetadata {
  selectNumberingPlan(country: string): void;
  numberingPlan: LibraryPlan;
  getCountryCodesForCallingCode(callingCode: string): string[] | undefined;
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
  metadata.selectNumberingPlan(country);
  const p = metadata.numberingPlan;
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
    national: national ? new RegExp(`^(?:${national})$`) : null,
    prefixForParsing: prefix ? new RegExp(`^(?:${prefix})`) : null,
    transformRule: Boolean(p.nationalPrefixTransformRule()),
    possibleLengths: p.possibleLengths(),
    leadingDigits: leading ? new RegExp(leading) : null,
    idd: idd ? new RegExp(idd) : null,
    hasTypes: p.hasTypes(),
    types,
    typesByLength: [],
    lastNumber: '',
    lastHasType: false,
  };
  plans.set(country, plan);
  return plan;
}

/** The countries of one calling code, the first being the one whose plan the code selects. */
interface CallingCode {
  code: string;
  countries: string[];
  plans: Plan[];
  main: Plan;
  /** Every country allows the same national lengths, so which one a number is in does not change the length check. */
  sameLengths: boolean;
}

/** By the calling code's numeric value: null where no country has it, undefined until first asked. */
const callingCodes: Array<CallingCode | null | undefined> = [];

function callingCodeOf(code: string, index: number): CallingCode | null {
  let known = callingCodes[index];
  if (known === undefined) {
    const countries = metadata.getCountryCodesForCallingCode(code);
    if (countries === undefined || countries.length === 0) known = null;
    else {
      const list = countries.map(planOf);
      const first = String(list[0]?.possibleLengths);
      known = { code, countries, plans: list, main: list[0] as Plan, sameLengths: list.every((plan) => String(plan.possibleLengths) === first) };
    }
    callingCodes[index] = known;
  }
  return known;
}

function matchesNational(text: string, plan: Plan): boolean {
  return plan.national !== null && plan.national.test(text);
}

/** Whether the number has a type (fixed line, mobile, ...) in the plan: the library's getNumberType !== undefined. */
function hasNumberType(national: string, plan: Plan): boolean {
  if (plan.lastNumber === national) return plan.lastHasType;
  let found = false;
  if (matchesNational(national, plan)) {
    const length = national.length;
    let anyType = plan.typesByLength[length];
    if (anyType === undefined) {
      // The types a number of this length may be, as one alternation: one match instead of up to ten.
      const sources: string[] = [];
      for (const type of plan.types) if (!type.lengths || type.lengths.includes(length)) sources.push(`(?:${type.source})`);
      anyType = sources.length === 0 ? null : new RegExp(`^(?:${sources.join('|')})$`);
      plan.typesByLength[length] = anyType;
    }
    found = anyType !== null && anyType.test(national);
  }
  plan.lastNumber = national;
  plan.lastHasType = found;
  return found;
}

function isValidIn(national: string, plan: Plan): boolean {
  return plan.hasTypes ? hasNumberType(national, plan) : matchesNational(national, plan);
}

/** Among the countries sharing a calling code, the plan of the one the number belongs to. */
function planByNationalNumber(callingCode: CallingCode, national: string): Plan | undefined {
  const { plans: list } = callingCode;
  if (list.length === 1) return list[0];
  for (const plan of list) {
    if (plan.leadingDigits) {
      if (national !== '' && national.search(plan.leadingDigits) === 0) return plan;
    } else if (plan.hasTypes && hasNumberType(national, plan)) return plan;
  }
  return undefined;
}

/** Whether the length is one the plan may have: the library's checkNumberLength is neither TOO_SHORT nor INVALID_LENGTH. */
function lengthPossible(national: string, plan: Plan): boolean {
  const lengths = plan.possibleLengths;
  if (!lengths) return true;
  const length = national.length;
  const min = lengths[0] as number;
  if (min === length) return true;
  if (min > length) return false;
  if ((lengths[lengths.length - 1] as number) < length) return true; // TOO_LONG still counts as possible here
  return lengths.indexOf(length, 1) >= 0;
}

/** The national number after the national prefix, or undefined when the plan's prefix rule rewrites digits. */
function extractNational(number: string, plan: Plan, callingCode: CallingCode): string | undefined {
  if (plan.prefixForParsing === null) return number;
  const match = plan.prefixForParsing.exec(number);
  if (!match) return number;
  const groups = match.length - 1;
  if (plan.transformRule && groups > 0 && match[groups]) return undefined;
  const national = number.slice(match[0].length);
  if (national === number) return number;
  if (matchesNational(number, plan) && !matchesNational(national, plan)) return number;
  if (plan.possibleLengths) {
    const lengthPlan = callingCode.sameLengths ? plan : (planByNationalNumber(callingCode, national) ?? plan);
    if (!lengthPossible(national, lengthPlan)) return number;
  }
  return national;
}

/** The E.164 form if valid, null if not, undefined to ask the full parser. */
function finish(callingCode: CallingCode, national: string | undefined, fallback: Plan): string | null | undefined {
  if (national === undefined) return undefined;
  const exact = planByNationalNumber(callingCode, national);
  if (national.length < MIN_NATIONAL_LENGTH || national.length > MAX_NATIONAL_LENGTH) return null;
  return isValidIn(national, exact ?? fallback) ? `+${callingCode.code}${national}` : null;
}

function international(digits: string): string | null | undefined {
  if (digits.charCodeAt(0) === 48) return null;
  let index = 0;
  for (let length = 1; length <= MAX_CALLING_CODE_LENGTH && length <= digits.length; length++) {
    index = index * 10 + digits.charCodeAt(length - 1) - 48;
    const callingCode = callingCodeOf(digits.slice(0, length), index);
    if (callingCode === null) continue;
    const rest = digits.slice(length);
    if (rest === '') return null;
    return finish(callingCode, extractNational(rest, callingCode.main, callingCode), callingCode.main);
  }
  return null;
}

/** The digits of text in a plain shape (see PLAIN), or undefined for any other text. */
function plainDigits(text: string, from: number): string | undefined {
  let digits = '';
  let last = 0;
  for (let i = from; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code >= 48 && code <= 57) digits += text[i];
    else if (code !== 32 && code !== 45 && code !== 46) return undefined;
    else if (i === from) return undefined;
    last = code;
  }
  return last >= 48 && last <= 57 ? digits : undefined;
}

/** A national plan by country, with its calling code entry. */
function homeOf(country: string): { plan: Plan; callingCode: CallingCode } | undefined {
  const plan = planOf(country);
  const callingCode = callingCodeOf(plan.callingCode, Number(plan.callingCode));
  return callingCode === null ? undefined : { plan, callingCode };
}

/**
 * Reads a phone number the way `parsePhoneNumberFromString(text, country)` followed by
 * `isValid()` and `.number` does: the E.164 text of a valid number, null for a number the
 * library would not accept, or undefined when the text is not one of the plain shapes handled
 * here and the full parser must decide. `text` is trimmed.
 */
export function readPhoneFast(text: string, country: CountryCode | undefined): string | null | undefined {
  if (text.length > 40 || text.length === 0) return undefined;
  const plus = text.charCodeAt(0) === 43;
  const digits = plainDigits(text, plus ? 1 : 0);
  if (digits === undefined || digits.length < 4 || digits.length > 20) return undefined;
  if (plus) return international(digits);
  if (country === undefined) return undefined;
  const home = homeOf(country);
  if (home === undefined) return undefined;
  const { plan, callingCode } = home;
  if (plan.idd !== null && digits.search(plan.idd) === 0) {
    const match = plan.idd.exec(digits) as RegExpExecArray;
    const rest = digits.slice(match[0].length);
    if (rest !== '' && rest.charCodeAt(0) !== 48) return international(rest);
  }
  // A national number that starts with the country's own calling code may be an international
  // number written without its `+`: the library weighs both readings; leave that to it.
  if (digits.startsWith(plan.callingCode)) return undefined;
  const national = extractNational(digits, plan, callingCode);
  if (national === undefined) return undefined;
  const exact = planByNationalNumber(callingCode, national);
  if (national.length < MIN_NATIONAL_LENGTH || national.length > MAX_NATIONAL_LENGTH) return null;
  return isValidIn(national, exact ?? plan) ? `+${plan.callingCode}${national}` : null;
}
