import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../util/seeded-random.ts';
import { EMAIL, email, isSimpleEmail, LOWER_EMAIL, LOWER_EMAIL_MAX, phone } from './contact.ts';
import { build, optionsError, transformErrorOf, UTC } from '../../../test/helpers/transforms.ts';
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
    [
      { defaultCountry: 'GB' },
      '123',
      'expected a phone number valid in GB or with a country code like 020 7946 0000, got "123"',
    ],
    [
      { defaultCountry: 'GB' },
      '0800 FLOWERS',
      'expected a phone number valid in GB or with a country code like 020 7946 0000, got "0800 FLOWERS"',
    ],
    [
      { defaultCountry: 'GB' },
      'call 020 7946 0000',
      'expected a phone number valid in GB or with a country code like 020 7946 0000, got "call 020 7946 0000"',
    ],
    [
      { defaultCountry: 'GB' },
      '020 7946 0000 ext. 12',
      'expected a phone number valid in GB or with a country code like 020 7946 0000, got "020 7946 0000 ext. 12"',
    ],
    [
      { defaultCountry: 'DE' },
      '+44 20 7946',
      'expected a phone number valid in DE or with a country code like +44 20 7946 0000, got "+44 20 7946"',
    ],
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
    [
      { defaultCountry: 'GBR' },
      '"GBR" is not a country code phone numbers are known for (ISO 3166 alpha-2, such as GB)',
    ],
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
  const domains = [
    'example.com',
    'ex-ample.co.uk',
    '-example.com',
    'example-.com',
    'a.b',
    'example.c0m',
    'example.com.',
    `${'d'.repeat(63)}.com`,
    `${'d'.repeat(64)}.com`,
    'exämple.com',
    `${'a.'.repeat(126)}com`,
    `${'a.'.repeat(127)}com`,
  ];

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

describe('email answers plain lower-case addresses before the general path', () => {
  // The general path as written before the shortcut: trim, mailto, the two checks, lower-casing.
  const reference = (text: string): string | null => {
    const trimmed = text.trim();
    if (trimmed === '') return null;
    const address = /^mailto:/i.test(trimmed) ? trimmed.slice(7).trim() : trimmed;
    if (!isSimpleEmail(address) && !EMAIL.test(address)) return 'rejected';
    return address.toLowerCase();
  };
  const outcome = (fn: (value: Value, context: typeof UTC) => Value, text: string): Value => {
    try {
      return fn(text, UTC);
    } catch {
      return 'rejected';
    }
  };

  it('LOWER_EMAIL takes only what isSimpleEmail takes, and all its lower-case addresses, up to the length limit', () => {
    const random = seededRandom(11);
    const pieces = [
      'a',
      'z',
      '0',
      '9',
      '.',
      '..',
      '@',
      '-',
      '--',
      '_',
      '+',
      'A',
      ' ',
      'é',
      'ab',
      'example',
      'com',
      'co',
      '.uk',
      '.com',
      'x'.repeat(30),
    ];
    let matched = 0;
    for (let round = 0; round < 6000; round++) {
      // Half the strings start from a valid address and get changed, so near misses are common.
      let text =
        random() < 0.5
          ? `${pieces[Math.floor(random() * 14)]}ada@ex${pieces[Math.floor(random() * pieces.length)]}.com`
          : '';
      const extra = Math.floor(random() * 8);
      for (let index = 0; index < extra; index++) {
        const at = Math.floor(random() * (text.length + 1));
        text = text.slice(0, at) + pieces[Math.floor(random() * pieces.length)] + text.slice(at);
      }
      if (text.length > LOWER_EMAIL_MAX) continue;
      const fast = LOWER_EMAIL.test(text);
      if (fast) matched++;
      const lowerSimple = isSimpleEmail(text) && text === text.toLowerCase();
      expect([text, fast]).toEqual([text, lowerSimple]);
    }
    expect(matched).toBeGreaterThan(200);
  });

  it('keeps the length limits of isSimpleEmail at the boundary', () => {
    // 66 characters with a 62-character label: short enough for the shortcut, and valid.
    const longLabel = `a@${'d'.repeat(60)}.com`;
    expect(longLabel.length).toBe(66);
    expect([LOWER_EMAIL.test(longLabel), isSimpleEmail(longLabel)]).toEqual([true, true]);
    // Longer ones go to the full checks, which refuse a 64-character label or local part of 65.
    expect(LOWER_EMAIL_MAX).toBeLessThanOrEqual(66);
  });

  it.each<[input: string, output: string]>([
    ['ada@example.com', 'ada@example.com'],
    ['Ada@Example.com', 'ada@example.com'],
    [' ada@example.com', 'ada@example.com'],
    ['ada@example.com\u00A0', 'ada@example.com'],
    ['mailto:ada@example.com', 'ada@example.com'],
    [`${'x'.repeat(64)}@example.com`, `${'x'.repeat(64)}@example.com`],
    [`${'x'.repeat(65)}@example.com`, 'rejected'],
    [`ada@${'d'.repeat(63)}.com`, `ada@${'d'.repeat(63)}.com`],
    [`ada@${'d'.repeat(64)}.com`, 'rejected'],
    [`ada@example.${'c'.repeat(64)}`, 'rejected'],
    ['ada@exa--mple.com', 'ada@exa--mple.com'],
    ['ada@example.co1', 'rejected'],
    ["o'neil@example.ie", "o'neil@example.ie"],
    ['jörg@bücher.de', 'jörg@bücher.de'],
  ])('%j -> %j as the general path gives it', async (input, output) => {
    const fn = await build(email, {});
    expect(outcome(fn, input)).toBe(output);
    expect(reference(input)).toBe(output);
  });

  it('agrees with the general path on generated cells', async () => {
    const fn = await build(email, {});
    const keep = await build(email, { lowercase: false });
    const random = seededRandom(5);
    const pieces = ['a', 'B', '.', '@', '-', '_', ' ', 'example', '.com', 'mailto:', 'ü', "'"];
    for (let round = 0; round < 3000; round++) {
      let text = 'ada@example.com';
      const extra = Math.floor(random() * 4);
      for (let index = 0; index < extra; index++) {
        const at = Math.floor(random() * (text.length + 1));
        text = text.slice(0, at) + pieces[Math.floor(random() * pieces.length)] + text.slice(at);
      }
      expect([text, outcome(fn, text)]).toEqual([text, reference(text)]);
      const kept =
        reference(text) === 'rejected'
          ? 'rejected'
          : reference(text) === null
            ? null
            : text
                .trim()
                .replace(/^mailto:/i, '')
                .trim();
      expect([text, outcome(keep, text)]).toEqual([text, kept]);
    }
  });
});
