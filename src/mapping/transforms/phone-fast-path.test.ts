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
  const pick = <T,>(list: readonly T[]): T => list[Math.floor(next() * list.length)] as T;
  const digits = (n: number): string => Array.from({ length: n }, () => String(Math.floor(next() * 10))).join('');
  const out: Array<{ text: string; country: CountryCode | undefined }> = [];
  while (out.length < count) {
    const country = pick(countries);
    const defaultCountry = next() < 0.1 ? undefined : next() < 0.5 ? country : pick(['GB', 'DE', 'US', 'FR', 'NO', 'IT', 'AR', 'BR', 'MX', 'RU'] as CountryCode[]);
    const code = getCountryCallingCode(country);
    const example = getExampleNumber(country, examples);
    const national = example?.nationalNumber ?? digits(9);
    // Keep the example's start (its leading digits) and vary the rest, so some stay valid.
    const varied = national.slice(0, 1 + Math.floor(next() * 3)) + digits(Math.max(0, national.length - 3 + Math.floor(next() * 4) - 1));
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
  it('gives the full parser\'s answer for 10,000 generated numbers across countries, and answers most itself', () => {
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
      if (fast !== expected) differences.push(`${JSON.stringify(text)} (${country ?? 'no country'}): fast ${fast}, full ${expected}`);
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
  ] as Array<[string, CountryCode | undefined, string | null]>)('reads %s (default %s) as %s', (text, country, expected) => {
    expect(readPhoneFast(text, country)).toBe(expected);
    expect(full(text, country)).toBe(expected);
  });

  it.each([
    ['(020) 7946 0000', 'GB'],
    ['020/7946 0000', 'GB'],
    ['4420 7946 0000', 'GB'],
    ['020 7946 0000', undefined],
    ['12', 'GB'],
  ] as Array<[string, CountryCode | undefined]>)('leaves %s (default %s) to the full parser', (text, country) => {
    expect(readPhoneFast(text, country)).toBeUndefined();
  });
});
