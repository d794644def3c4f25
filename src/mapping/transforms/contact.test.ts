import { describe, expect, it } from 'vitest';
import { EMAIL, email, isSimpleEmail, phone } from './contact.ts';
import { build, optionsError, transformErrorOf, UTC } from './test-support.ts';
import type { Value } from './types.ts';

describe('phone', () => {
  it.each<[options: unknown, input: Value, output: Value]>([
    [{ defaultCountry: 'GB' }, '020 7946 0000', '+442079460000'],
    [{ defaultCountry: 'gb' }, '(020) 7946-0000', '+442079460000'],
    [{ defaultCountry: 'GB' }, '+49 30 1234567', '+49301234567'],
    [{ defaultCountry: 'US' }, '+49 30 1234567', '+49301234567'],
    [{ defaultCountry: 'GB' }, '0049 30 1234567', '+49301234567'],
    [{ defaultCountry: 'US' }, '(212) 555-0123', '+12125550123'],
    [{ defaultCountry: 'US' }, '212.555.0123', '+12125550123'],
    [{ defaultCountry: 'DE' }, '030/1234567', '+49301234567'],
    [{ defaultCountry: 'DE' }, '030\u00A01234567', '+49301234567'],
    [{}, '+44 20 7946 0000', '+442079460000'],
    [{}, '0044 20 7946 0000', '+442079460000'],
    // A number cell from a spreadsheet has lost its plus sign.
    [{ defaultCountry: 'GB' }, 2079460000, '+442079460000'],
    [{ defaultCountry: 'GB' }, 49301234567, '+49301234567'],
    [{ defaultCountry: 'GB' }, ['020 7946 0000', '', '+1 212 555 0123'], ['+442079460000', '+12125550123']],
    [{ defaultCountry: 'GB' }, '', null],
    [{ defaultCountry: 'GB' }, null, null],
    [{ defaultCountry: 'GB', invalid: 'keep' }, ' 123 ', '123'],
    [{ defaultCountry: 'GB', invalid: 'keep' }, ['0800 FLOWERS', '020 7946 0000'], ['0800 FLOWERS', '+442079460000']],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(phone, options);
    expect(fn(input, UTC)).toEqual(output);
  });

  it.each<[options: unknown, input: Value, message: string]>([
    [{ defaultCountry: 'GB' }, '123', 'expected a phone number valid in GB or with a country code like 020 7946 0000, got "123"'],
    [{ defaultCountry: 'GB' }, '0800 FLOWERS', 'expected a phone number valid in GB or with a country code like 020 7946 0000, got "0800 FLOWERS"'],
    [{ defaultCountry: 'GB' }, 'call 020 7946 0000', 'expected a phone number valid in GB or with a country code like 020 7946 0000, got "call 020 7946 0000"'],
    [{ defaultCountry: 'GB' }, '020 7946 0000 ext. 12', 'expected a phone number valid in GB or with a country code like 020 7946 0000, got "020 7946 0000 ext. 12"'],
    [{ defaultCountry: 'DE' }, '+44 20 7946', 'expected a phone number valid in DE or with a country code like +44 20 7946 0000, got "+44 20 7946"'],
    [{}, '020 7946 0000', 'expected a phone number with a country code like +44 20 7946 0000, got "020 7946 0000"'],
  ])('%j rejects %j', async (options, input, message) => {
    const fn = await build(phone, options);
    const error = transformErrorOf(fn, input);
    expect(error.message).toBe(message);
    expect(error.transform).toBe('phone');
  });

  it('rejects an invalid number on every row, not only the first time', async () => {
    const fn = await build(phone, { defaultCountry: 'GB' });
    expect(transformErrorOf(fn, '123').transform).toBe('phone');
    expect(transformErrorOf(fn, '123').transform).toBe('phone');
    expect([fn('020 7946 0000', UTC), fn('020 7946 0000', UTC)]).toEqual(['+442079460000', '+442079460000']);
  });

  it.each([
    [{ defaultCountry: 'XX' }, '"XX" is not a country code phone numbers are known for (ISO 3166 alpha-2, such as GB)'],
    [{ defaultCountry: 'GBR' }, '"GBR" is not a country code phone numbers are known for (ISO 3166 alpha-2, such as GB)'],
    [{ invalid: 'drop' }, 'Invalid option: expected one of "error"|"keep"'],
  ])('rejects the options %j', (options, message) => {
    expect(optionsError(phone, options)).toBe(message);
  });
});

describe('email', () => {
  it.each<[options: unknown, input: Value, output: Value]>([
    [{}, ' Ada@Example.COM ', 'ada@example.com'],
    [{ lowercase: false }, 'Ada@Example.COM', 'Ada@Example.COM'],
    [{}, 'first.last+tag@sub.example.co.uk', 'first.last+tag@sub.example.co.uk'],
    [{}, "o'neil@example.ie", "o'neil@example.ie"],
    [{}, 'mailto:ada@example.com', 'ada@example.com'],
    [{}, 'jörg@bücher.de', 'jörg@bücher.de'],
    [{}, ['a@example.com', ' ', 'B@example.com'], ['a@example.com', 'b@example.com']],
    [{}, '', null],
    [{}, null, null],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(email, options);
    expect(fn(input, UTC)).toEqual(output);
  });

  it.each<[input: Value, shown: string]>([
    ['ada', '"ada"'],
    ['ada@home', '"ada@home"'],
    ['ada@@example.com', '"ada@@example.com"'],
    ['ada@exa@mple.com', '"ada@exa@mple.com"'],
    ['ada lovelace@example.com', '"ada lovelace@example.com"'],
    ['ada@example .com', '"ada@example .com"'],
    ['.ada@example.com', '".ada@example.com"'],
    ['ada.@example.com', '"ada.@example.com"'],
    ['a..da@example.com', '"a..da@example.com"'],
    ['ada@-example.com', '"ada@-example.com"'],
    ['ada@example.c', '"ada@example.c"'],
    ['Ada <ada@example.com>', '"Ada <ada@example.com>"'],
    [42, '"42"'],
  ])('rejects %j', async (input, shown) => {
    const fn = await build(email, {});
    const error = transformErrorOf(fn, input);
    expect(error.message).toBe(`expected an email address like name@example.com, got ${shown}`);
    expect(error.transform).toBe('email');
  });
});

describe('isSimpleEmail (the cheap check before the full expression)', () => {
  // Every address the cheap check accepts must be one the full check accepts: the transform
  // relies on that. Built from pieces so that near misses (dots, hyphens, lengths) are covered.
  const locals = ['a', 'ada.lovelace', 'a+b', 'a_b-c', '.a', 'a.', 'a..b', 'x'.repeat(64), 'x'.repeat(65), 'ä', 'a b'];
  const domains = ['example.com', 'ex-ample.co.uk', '-example.com', 'example-.com', 'a.b', 'example.c0m', 'example.com.', `${'d'.repeat(63)}.com`, `${'d'.repeat(64)}.com`, 'exämple.com', `${'a.'.repeat(126)}com`, `${'a.'.repeat(127)}com`];

  it('accepts nothing the full expression refuses, and some of what it accepts', () => {
    let simple = 0;
    for (const local of locals) {
      for (const domain of domains) {
        const address = `${local}@${domain}`;
        if (!isSimpleEmail(address)) continue;
        simple++;
        expect([address, EMAIL.test(address)]).toEqual([address, true]);
      }
    }
    expect(simple).toBeGreaterThan(10);
  });

  it('takes the plain addresses of real files', () => {
    expect(isSimpleEmail('ada.lovelace1@example.com')).toBe(true);
    expect(isSimpleEmail('a..b@example.com')).toBe(false);
    expect(isSimpleEmail(`${'x'.repeat(65)}@example.com`)).toBe(false);
  });
});
