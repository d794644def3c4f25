import { getCountries, getCountryCallingCode, getExampleNumber, parsePhoneNumberFromString } from 'libphonenumber-js';
import type { CountryCode } from 'libphonenumber-js';
import examples from 'libphonenumber-js/mobile/examples';
import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../util/seeded-random.ts';
import { readPhoneFast } from './phone-fast-path.ts';

/** What the phone transform did before the fast path: the full parser's verdict. */
function full(text: string, country: CountryCode | undefined): string | null {
  const parsed = parsePhoneNumberFromString(text, country);
  return parsed !== undefined && parsed.isValid() ? parsed.number : null;
}

/** 10,000 numbers of every country in the shapes imports carry, valid ones and near misses. */
function generate(count: number): Array<{ text: string; country: CountryCode | undefined }> {
  // Seeded, so a failure names a case that can be replayed.
  const next = seededRandom(7);
  const countries = getCountries();
  const pick = <T>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const digits = (n: number): string => Array.from({ length: n }, () => String(Math.floor(next() * 10))).join('');
  const out: Array<{ text: string; country: CountryCode | undefined }> = [];
  while (out.length < count) {
    const country = pick(countries);
    const defaultCountry =
      next() < 0.1
        ? undefined
        : next() < 0.5
          ? country
          : pick(['GB', 'DE', 'US', 'FR', 'NO', 'IT', 'AR', 'BR', 'MX', 'RU'] as CountryCode[]);
    const code = getCountryCallingCode(country);
    const example = getExampleNumber(country, examples);
    const national = example?.nationalNumber ?? digits(9);
    // Keep the example's start (its leading digits) and vary the rest, so some stay valid.
    const varied =
      national.slice(0, 1 + Math.floor(next() * 3)) +
      digits(Math.max(0, national.length - 3 + Math.floor(next() * 4) - 1));
    const body = next() < 0.4 ? national : varied;
    const spaced = body.replace(/(\d{3})(?=\d)/g, next() < 0.5 ? '$1 ' : next() < 0.5 ? '$1-' : '$1');
    const shape = Math.floor(next() * 8);
    let text: string;
    if (shape === 0) text = `+${code}${body}`;
    else if (shape === 1) text = `+${code} ${spaced}`;
    else if (shape === 2) text = `+${code} 0${spaced}`;
    else if (shape === 3) text = `00${code} ${spaced}`;
    else if (shape === 4) text = example ? example.formatNational() : `0${spaced}`;
    else if (shape === 5) text = `0${spaced}`;
    else if (shape === 6) text = example ? example.formatInternational() : `+${code} ${spaced}`;
    else text = `${next() < 0.5 ? '+' : ''}${digits(3 + Math.floor(next() * 14))}`;
    out.push({ text, country: defaultCountry });
  }
  return out;
}

describe('readPhoneFast', () => {
  it("gives the full parser's answer for 10,000 generated numbers across countries, and answers most itself", () => {
    const cases = generate(10_000);
    let answered = 0;
    let valid = 0;
    const differences: string[] = [];
    for (const { text, country } of cases) {
      const fast = readPhoneFast(text, country);
      if (fast === undefined) continue;
      answered++;
      if (fast !== null) valid++;
      const expected = full(text, country);
      if (fast !== expected)
        differences.push(`${JSON.stringify(text)} (${country ?? 'no country'}): fast ${fast}, full ${expected}`);
    }
    expect(differences.slice(0, 20)).toEqual([]);
    // A fast path that declines everything would pass the comparison above and help nobody.
    expect(answered).toBeGreaterThan(8_000);
    expect(valid).toBeGreaterThan(2_000);
  });

  it.each([
    ['020 7946 0000', 'GB', '+442079460000'],
    ['+49 30 1234567', 'GB', '+49301234567'],
    ['0049 30 1234567', 'GB', '+49301234567'],
    ['+44 7400 123456', undefined, '+447400123456'],
    ['+44 09953406510', 'GB', null],
    ['+0 123 4567', 'GB', null],
    ['+999 1234567', 'GB', null],
  ] as Array<[string, CountryCode | undefined, string | null]>)(
    'reads %s (default %s) as %s',
    (text, country, expected) => {
      expect(readPhoneFast(text, country)).toBe(expected);
      expect(full(text, country)).toBe(expected);
    },
  );

  it("gives the full parser's answer on the benchmark's shape, +44 0 and ten random digits", () => {
    // Most are not valid anywhere, so every plan sharing calling code 44 is consulted.
    const next = seededRandom(44);
    const differences: string[] = [];
    let valid = 0;
    for (let i = 0; i < 2_000; i++) {
      let digits = '';
      for (let j = 0; j < 10; j++) digits += String(Math.floor(next() * 10));
      const text = `+44 0${digits}`;
      const fast = readPhoneFast(text, 'GB');
      if (fast !== null) valid++;
      if (fast !== full(text, 'GB')) differences.push(`${text}: fast ${fast}, full ${full(text, 'GB')}`);
    }
    expect(differences.slice(0, 10)).toEqual([]);
    // Both outcomes occur, so both branches were compared.
    expect(valid).toBeGreaterThan(100);
    expect(valid).toBeLessThan(1_900);
  });

  it("gives the full parser's answer on random digit strings after every calling code, in every separator layout", () => {
    // Short, long and empty national numbers, and calling codes shared by many countries (1, 7, 44, 262, 590).
    const next = seededRandom(3);
    const countries = getCountries();
    const differences: string[] = [];
    let answered = 0;
    for (let i = 0; i < 3_000; i++) {
      const country = countries[Math.floor(next() * countries.length)] as CountryCode;
      const code =
        i % 5 === 0 ? (['1', '7', '44', '262', '590'][(i % 25) / 5] as string) : getCountryCallingCode(country);
      let digits = '';
      const length = Math.floor(next() * 19);
      for (let j = 0; j < length; j++) digits += String(Math.floor(next() * 10));
      const separator = [' ', '-', '.', ''][Math.floor(next() * 4)] as string;
      const national = digits.replace(/(\d{2,4})(?=\d)/g, `$1${separator}`);
      const text = next() < 0.7 ? `+${code} ${national}` : `0${national}`;
      const home = next() < 0.2 ? undefined : country;
      const fast = readPhoneFast(text.trim(), home);
      if (fast === undefined) continue;
      answered++;
      const expected = full(text.trim(), home);
      if (fast !== expected)
        differences.push(`${JSON.stringify(text)} (${home ?? 'no country'}): fast ${fast}, full ${expected}`);
    }
    expect(differences.slice(0, 10)).toEqual([]);
    expect(answered).toBeGreaterThan(2_000);
  });

  it.each([
    ['+44 20 7946 0000', 'GB', '+442079460000'],
    ['+44-20-7946-0000', undefined, '+442079460000'],
    ['+44.20.7946.0000', 'DE', '+442079460000'],
    ['07400 123456', 'GB', '+447400123456'],
    ['+44 1481 256789', 'GB', '+441481256789'],
    ['+44 7624 123456', 'GB', '+447624123456'],
    ['030 1234567', 'DE', '+49301234567'],
    ['+49 30 1234567', 'DE', '+49301234567'],
    ['(212) 555-0123', 'US', undefined],
    ['212 555 0123', 'US', '+12125550123'],
    ['+1 212 555 0123', 'GB', '+12125550123'],
    ['011 44 20 7946 0000', 'US', '+442079460000'],
    ['416 555 0123', 'CA', '+14165550123'],
    ['+1 416 555 0123', undefined, '+14165550123'],
    ['+1 876 555 0123', 'US', '+18765550123'],
    ['+1 555 555 0123', 'US', null],
    ['+44 0', 'GB', undefined],
    ['+44 00', 'GB', null],
    ['+44 0 12345678901234567', 'GB', null],
  ] as Array<[string, CountryCode | undefined, string | null | undefined]>)(
    'reads %s (default %s) as %s, as the full parser does',
    (text, country, expected) => {
      expect(readPhoneFast(text, country)).toBe(expected);
      if (expected !== undefined) expect(full(text, country)).toBe(expected);
    },
  );

  it.each([
    ['(020) 7946 0000', 'GB'],
    ['020/7946 0000', 'GB'],
    // Global (non-geographic) numbers, which an earlier version called invalid.
    ['+881 293213581', 'SC'],
    ['010 88 1293 2135 81', 'SC'],
    ['4420 7946 0000', 'GB'],
    ['020 7946 0000', undefined],
    ['12', 'GB'],
  ] as Array<[string, CountryCode | undefined]>)('leaves %s (default %s) to the full parser', (text, country) => {
    expect(readPhoneFast(text, country)).toBeUndefined();
  });
});
