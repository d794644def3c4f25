import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../util/seeded-random.ts';
import type { TransformDefinition, Value } from './types.ts';
import { build, optionsError, transformErrorOf, UTC } from '../../../test/helpers/transforms.ts';
import { collapse, extract, lowercase, prefix, replace, suffix, titlecase, trim, truncate, uppercase } from './text.ts';

type Case = [definition: TransformDefinition<any>, options: unknown, input: Value, output: Value];

const cases: Case[] = [
  [trim, {}, '  Ada \t', 'Ada'],
  [trim, {}, null, null],
  [trim, {}, [' a ', 'b '], ['a', 'b']],
  [trim, {}, 42, '42'],
  [trim, {}, true, 'true'],
  [trim, {}, new Date(Date.UTC(2024, 2, 31)), '2024-03-31'],
  [trim, {}, new Date(Date.UTC(2024, 2, 31, 14, 5, 0, 120)), '2024-03-31T14:05:00Z'],
  [lowercase, {}, 'ÄRGER Ltd', 'ärger ltd'],
  [lowercase, {}, ['A', 'B'], ['a', 'b']],
  [uppercase, {}, 'straße', 'STRASSE'],
  [uppercase, {}, null, null],
  [titlecase, {}, "o'neil", "O'Neil"],
  [titlecase, {}, "O'NEIL", "O'Neil"],
  [titlecase, {}, "d'arcy", "D'Arcy"],
  [titlecase, {}, 'mcdonald', 'Mcdonald'],
  [titlecase, {}, 'McDonald', 'McDonald'],
  [titlecase, {}, 'JOHN SMITH', 'John Smith'],
  [titlecase, {}, 'anne-marie van der berg', 'Anne-Marie Van Der Berg'],
  [titlecase, {}, "don't stop", "Don't Stop"],
  [titlecase, {}, 'émile zola', 'Émile Zola'],
  [titlecase, {}, '3rd floor', '3rd Floor'],
  [titlecase, {}, ['ada', 'BOB'], ['Ada', 'Bob']],
  [collapse, {}, 'a \t\n b\u00A0\u202Fc', 'a b c'],
  [collapse, {}, '  a  ', ' a '],
  [replace, { pattern: '.', with: '-' }, '1.2.3', '1-2-3'],
  [replace, { pattern: 'x', with: '$&$&' }, 'axb', 'a$&$&b'],
  [replace, { pattern: 'LTD', with: 'Limited', flags: 'gi' }, 'Acme ltd', 'Acme Limited'],
  [replace, { pattern: '\\s+', with: ' ', regex: true }, 'a   b  c', 'a b c'],
  [replace, { pattern: 'a', with: 'o', regex: true, flags: '' }, 'banana', 'bonana'],
  [replace, { pattern: '(\\d{3})(\\d+)', with: '$1 $2', regex: true }, '0201234', '020 1234'],
  [
    replace,
    { pattern: '(?<last>\\w+), (?<first>\\w+)', with: '$<first> $<last>', regex: true },
    'Lovelace, Ada',
    'Ada Lovelace',
  ],
  [replace, { pattern: '-' }, ['a-b', 'c-d'], ['ab', 'cd']],
  [replace, { pattern: '0' }, 1050, '15'],
  [truncate, { length: 3 }, 'abcdef', 'abc'],
  [truncate, { length: 3 }, 'ab', 'ab'],
  [truncate, { length: 2 }, '😀😀😀', '😀😀'],
  [truncate, { length: 2 }, ['abc', 'd'], ['ab', 'd']],
  [prefix, { text: 'ID ' }, '7', 'ID 7'],
  [prefix, { text: 'ID ' }, ' ', ' '],
  [prefix, { text: 'ID ' }, null, null],
  [prefix, { text: 'ID ' }, 7, 'ID 7'],
  [suffix, { text: '!' }, ['a', ''], ['a!', '']],
  [suffix, { text: '!' }, '', ''],
  [extract, { pattern: 'ID-(\\d+)' }, 'x ID-12 y', '12'],
  [extract, { pattern: 'id-(\\d+)', flags: 'i' }, 'ID-12', '12'],
  [extract, { pattern: '(\\d+)?x' }, 'x', ''],
  [extract, { pattern: '(\\d+)', otherwise: 'keep' }, 'none', 'none'],
  [extract, { pattern: '(\\d+)', otherwise: 'empty' }, 'none', null],
  [extract, { pattern: '(\\d+)', otherwise: 'empty' }, ['a1', 'b', 'c22'], ['1', '22']],
  [extract, { pattern: '(\\d+)' }, null, null],
  [extract, { pattern: '(\\d+)' }, '', null],
  [extract, { pattern: '(\\d+)' }, '   ', null],
];

describe('text transforms', () => {
  it.each(cases.map(([definition, ...rest]) => [definition.name, definition, ...rest] as const))(
    '%s %j: %j -> %j',
    async (_name, definition, options, input, output) => {
      const fn = await build(definition, options);
      expect(fn(input, UTC)).toEqual(output);
    },
  );

  it('keeps no state between rows for a global expression', async () => {
    const fn = await build(extract, { pattern: '(\\d)', flags: 'g' });
    expect([fn('a1', UTC), fn('b2', UTC), fn('c3', UTC)]).toEqual(['1', '2', '3']);
  });

  it('names the pattern and the value when extract finds nothing', async () => {
    const fn = await build(extract, { pattern: 'ID-(\\d+)' });
    expect(transformErrorOf(fn, 'no id here').message).toBe('expected text matching /ID-(\\d+)/, got "no id here"');
    expect(transformErrorOf(fn, 'no id here').transform).toBe('extract');
  });

  it('cuts long values in messages', async () => {
    const fn = await build(extract, { pattern: '(\\d)' });
    expect(transformErrorOf(fn, 'x'.repeat(100)).message).toBe(
      `expected text matching /(\\d)/, got "${'x'.repeat(60)}…"`,
    );
  });
});

const optionCases: Array<[TransformDefinition<any>, unknown, string]> = [
  [trim, { extra: 1 }, 'Unrecognized key: "extra"'],
  [replace, { pattern: '(', regex: true }, 'pattern "(" is not a valid regular expression (missing closing ): `(`)'],
  [replace, { pattern: 'a', flags: 'gg' }, 'flags "gg" are not valid: use each of g, i, m, s, u, v at most once'],
  [replace, { pattern: 'a', flags: 'y' }, 'flags "y" are not valid: use each of g, i, m, s, u, v at most once'],
  [replace, { pattern: '' }, 'Too small: expected string to have >=1 characters'],
  [truncate, { length: 0 }, 'Too small: expected number to be >=1'],
  [truncate, { length: 1.5 }, 'Invalid input: expected int, received number'],
  [prefix, {}, 'Invalid input: expected string, received undefined'],
  [extract, { pattern: '\\d+' }, 'pattern "\\\\d+" must have exactly one capturing group, it has 0'],
  [extract, { pattern: '(a)(b)' }, 'pattern "(a)(b)" must have exactly one capturing group, it has 2'],
  [
    extract,
    { pattern: '(a', otherwise: 'empty' },
    'pattern "(a" is not a valid regular expression (missing closing ): `(a`)',
  ],
  [extract, { pattern: '(a)', otherwise: 'skip' }, 'Invalid option: expected one of "error"|"empty"|"keep"'],
];

describe('text transform options', () => {
  it.each(optionCases.map(([definition, ...rest]) => [definition.name, definition, ...rest] as const))(
    '%s rejects %j',
    (_name, definition, options, message) => {
      expect(optionsError(definition, options)).toBe(message);
    },
  );

  it('accepts the defaults', () => {
    expect(replace.options.parse({ pattern: 'a' })).toEqual({ pattern: 'a', with: '', regex: false, flags: 'g' });
    expect(extract.options.parse({ pattern: '(a)' })).toEqual({ pattern: '(a)', flags: '', otherwise: 'error' });
  });
});

describe('replace remembers the texts a column repeats', () => {
  it.each<[options: Record<string, unknown>, input: Value, output: Value]>([
    [{ pattern: '[^a-z0-9]+', with: '-', regex: true }, 'acme ltd.', 'acme-ltd-'],
    [{ pattern: '[^a-z0-9]+', with: '-', regex: true }, ['a b', 'c'], ['a-b', 'c']],
    [{ pattern: '[^a-z0-9]+', with: '-', regex: true }, 12.5, '12-5'],
    [{ pattern: '[^a-z0-9]+', with: '-', regex: true }, null, null],
    [{ pattern: '[^a-z0-9]+', with: '-', regex: true, flags: '' }, 'a b c', 'a-b c'],
    [{ pattern: '[^a-z0-9]+', with: '<$&>', regex: true }, 'a b', 'a< >b'],
    [{ pattern: '(\\w+) (\\w+)', with: '$2 $1', regex: true }, 'ada king', 'king ada'],
    [{ pattern: '.', with: '$&' }, 'a.b', 'a$&b'],
  ])('%j: %j -> %j, the same every time', async (options, input, output) => {
    const fn = await build(replace, options);
    for (let round = 0; round < 3; round++) expect(fn(input, UTC)).toEqual(output);
  });

  it('gives the expression result for repeating and unique texts alike, before and after it stops remembering', async () => {
    const fn = await build(replace, { pattern: '[^a-z0-9]+', with: '-', regex: true });
    const random = seededRandom(3);
    const alphabet = ['a', 'z', '0', '-', ' ', '&', '.', 'é', '\u{1F600}', 'acme'];
    const repeated = Array.from({ length: 40 }, (_, index) => `company ${index}`);
    let unique = 0;
    // Repeating texts first (the memory fills and pays), then unique ones (it stops), then both.
    for (let round = 0; round < 6000; round++) {
      let text: string;
      if (round < 2000 || (round >= 4000 && round % 2 === 0))
        text = repeated[Math.floor(random() * repeated.length)] ?? '';
      else {
        text = `${unique++}`;
        for (let index = 0; index < 6; index++) text += alphabet[Math.floor(random() * alphabet.length)];
      }
      expect([text, fn(text, UTC)]).toEqual([text, text.replace(/[^a-z0-9]+/g, '-')]);
    }
  });
});

describe('lowercase and uppercase skip text that is already in the case asked for', () => {
  it.each<[input: string, lower: string, upper: string]>([
    ['', '', ''],
    ['ada@example.com', 'ada@example.com', 'ADA@EXAMPLE.COM'],
    ['SW1A 1AA', 'sw1a 1aa', 'SW1A 1AA'],
    ['1aB2', '1ab2', '1AB2'],
    ['1ß1', '1ß1', '1SS1'],
    ['1İ1', '1i\u03071', '1İ1'],
    ['1é1', '1é1', '1É1'],
    ['1É1', '1é1', '1É1'],
    ['12-34 ', '12-34 ', '12-34 '],
    ['\u{1F600}a', '\u{1F600}a', '\u{1F600}A'],
  ])('%j -> %j and %j', async (input, lower, upper) => {
    const toLower = await build(lowercase);
    const toUpper = await build(uppercase);
    expect([toLower(input, UTC), toUpper(input, UTC)]).toEqual([lower, upper]);
    expect([input.toLowerCase(), input.toUpperCase()]).toEqual([lower, upper]);
  });

  it('agrees with the string methods on generated text', async () => {
    const toLower = await build(lowercase);
    const toUpper = await build(uppercase);
    const random = seededRandom(9);
    const alphabet = ['a', 'Z', '0', ' ', '@', '[', '`', '{', 'ß', 'Ä', 'ı', '\u0130', 'ǅ', '\u00A0'];
    for (let round = 0; round < 2000; round++) {
      let text = '';
      const length = Math.floor(random() * 6);
      for (let index = 0; index < length; index++) text += alphabet[Math.floor(random() * alphabet.length)];
      expect([text, toLower(text, UTC), toUpper(text, UTC)]).toEqual([text, text.toLowerCase(), text.toUpperCase()]);
    }
  });
});
