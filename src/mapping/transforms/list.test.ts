import { describe, expect, it } from 'vitest';
import { defaultTransform, first, join, nth, split } from './list.ts';
import type { TransformDefinition, Value } from './types.ts';
import { build, optionsError, UTC } from './test-support.ts';

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
  it.each(cases.map(([definition, ...rest]) => [definition.name, definition, ...rest] as const))('%s %j: %j -> %j', async (_name, definition, options, input, output) => {
    const fn = await build(definition, options);
    expect(fn(input, UTC)).toEqual(output);
  });

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
