import { describe, expect, it } from 'vitest';
import { defaultTransform, first, join, nth, split } from './list.ts';
import type { TransformDefinition, Value } from './types.ts';
import { seededRandom } from '../../util/seeded-random.ts';
import { build, optionsError, UTC } from '../../../test/helpers/transforms.ts';

type Case = [definition: TransformDefinition<any>, options: unknown, input: Value, output: Value];

const cases: Case[] = [
  [split, {}, 'a, b,,c ', ['a', 'b', 'c']],
  [split, { separator: ';' }, 'a;b', ['a', 'b']],
  [split, { separator: ' | ' }, 'a | b|c', ['a', 'b|c']],
  [split, { trim: false }, 'a, b', ['a', ' b']],
  [split, { trim: false, dropEmpty: true }, 'a, ,b', ['a', 'b']],
  [split, { dropEmpty: false }, 'a,,b,', ['a', '', 'b', '']],
  [split, {}, '', []],
  [split, {}, null, null],
  [split, {}, 12, ['12']],
  [split, {}, ['a,b', 'c'], ['a', 'b', 'c']],
  [join, {}, ['a', 'b'], 'a, b'],
  [join, { separator: '' }, ['a', 'b'], 'ab'],
  [join, {}, ['a', ' ', 'b'], 'a, b'],
  [join, { dropEmpty: false }, ['a', '', 'b'], 'a, , b'],
  [join, {}, [], ''],
  [join, {}, 'single', 'single'],
  [join, {}, 5, 5],
  [join, {}, null, null],
  [first, {}, ['a', 'b'], 'a'],
  [first, {}, [], null],
  [first, {}, 'a', 'a'],
  [first, {}, null, null],
  [nth, { index: 1 }, ['a', 'b', 'c'], 'a'],
  [nth, { index: 3 }, ['a', 'b', 'c'], 'c'],
  [nth, { index: 4 }, ['a', 'b', 'c'], null],
  [nth, { index: -1 }, ['a', 'b', 'c'], 'c'],
  [nth, { index: -3 }, ['a', 'b', 'c'], 'a'],
  [nth, { index: -4 }, ['a', 'b', 'c'], null],
  [nth, { index: 1 }, 'only', 'only'],
  [nth, { index: -1 }, 'only', 'only'],
  [nth, { index: 2 }, 'only', null],
  [nth, { index: 2 }, null, null],
  [defaultTransform, { value: 'n/a' }, null, 'n/a'],
  [defaultTransform, { value: 'n/a' }, '', 'n/a'],
  [defaultTransform, { value: 'n/a' }, ' \t', 'n/a'],
  [defaultTransform, { value: 'n/a' }, [], 'n/a'],
  [defaultTransform, { value: 'n/a' }, 'x', 'x'],
  [defaultTransform, { value: 'n/a' }, 0, 0],
  [defaultTransform, { value: 'n/a' }, false, false],
  [defaultTransform, { value: 'n/a' }, [''], ['']],
  [defaultTransform, { value: 0 }, null, 0],
  [defaultTransform, { value: true }, '', true],
  [defaultTransform, { value: ['Imported'] }, [], ['Imported']],
];

describe('list transforms and default', () => {
  it.each(cases.map(([definition, ...rest]) => [definition.name, definition, ...rest] as const))(
    '%s %j: %j -> %j',
    async (_name, definition, options, input, output) => {
      const fn = await build(definition, options);
      expect(fn(input, UTC)).toEqual(output);
    },
  );

  it('gives every row its own copy of a default list', async () => {
    const fn = await build(defaultTransform, { value: ['a'] });
    const one = fn(null, UTC) as string[];
    one.push('changed');
    expect(fn(null, UTC)).toEqual(['a']);
  });

  it.each([
    [nth, { index: 0 }, 'index counts from 1 (the first element); use a negative number to count from the end'],
    [nth, {}, 'Invalid input: expected number, received undefined'],
    [split, { separator: '' }, 'Too small: expected string to have >=1 characters'],
    [defaultTransform, {}, 'Invalid input'],
    [defaultTransform, { value: { a: 1 } }, 'Invalid input'],
    [join, { separator: 1 }, 'Invalid input: expected string, received number'],
  ] as const)('rejects the options %j', (definition, options, message) => {
    expect(optionsError(definition, options)).toBe(message);
  });

  it('fills in defaults', () => {
    expect(split.options.parse({})).toEqual({ separator: ',', trim: true, dropEmpty: true });
    expect(join.options.parse({})).toEqual({ separator: ', ', dropEmpty: true });
  });
});

describe('split walks the text as String.split would', () => {
  // The transform as it was before it walked with indexOf: the reference every case must match.
  const reference = (text: string, separator: string, trim: boolean, dropEmpty: boolean): string[] => {
    const out: string[] = [];
    for (const part of text.split(separator)) {
      const piece = trim ? part.trim() : part;
      if (dropEmpty && (trim ? piece === '' : piece.trim() === '')) continue;
      out.push(piece);
    }
    return out;
  };

  it.each<[input: string, separator: string, output: string[]]>([
    ['aaa', 'aa', ['a']],
    [';a;', ';', ['a']],
    ['a\u00A0;\tb;\u2003c\u2003', ';', ['a', 'b', 'c']],
    ['a\u0085;b', ';', ['a\u0085', 'b']],
    ['no separator', ';', ['no separator']],
    [' padded ', ';', ['padded']],
    ['a<>b<>', '<>', ['a', 'b']],
  ])('%j split on %j gives %j', async (input, separator, output) => {
    const fn = await build(split, { separator });
    expect(fn(input, UTC)).toEqual(output);
  });

  it('agrees with String.split on generated text for every option', async () => {
    const random = seededRandom(7);
    const alphabet = ['a', 'b', ';', ';;', ' ', '\t', '\u00A0', '\u2028', '\uFEFF', 'é', '\u0085', ',', 'x y'];
    let pieces = 0;
    for (const separator of [';', ';;', ', ']) {
      for (const trim of [true, false]) {
        for (const dropEmpty of [true, false]) {
          const fn = await build(split, { separator, trim, dropEmpty });
          for (let round = 0; round < 300; round++) {
            let text = '';
            const length = Math.floor(random() * 12);
            for (let index = 0; index < length; index++) text += alphabet[Math.floor(random() * alphabet.length)];
            const expected = reference(text, separator, trim, dropEmpty);
            pieces += expected.length;
            expect([text, fn(text, UTC)]).toEqual([text, expected]);
            expect([text, fn([text, text], UTC)]).toEqual([text, [...expected, ...expected]]);
          }
        }
      }
    }
    // Generated text that always split into nothing would prove little.
    expect(pieces).toBeGreaterThan(3000);
  });

  it('gives each call its own list', async () => {
    const fn = await build(split, { separator: ';' });
    const one = fn('a;b', UTC);
    expect(fn('a;b', UTC)).not.toBe(one);
  });
});
