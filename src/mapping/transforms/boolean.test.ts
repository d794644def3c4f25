import { describe, expect, it } from 'vitest';
import { boolean } from './boolean.ts';
import { build, optionsError, transformErrorOf, UTC } from '../../../test/helpers/transforms.ts';
import type { Value } from './types.ts';

describe('boolean', () => {
  it.each<[options: unknown, input: Value, output: boolean]>([
    [{}, 'yes', true],
    [{}, 'YES', true],
    [{}, ' y ', true],
    [{}, 'True', true],
    [{}, '1', true],
    [{}, 1, true],
    [{}, 'x', true],
    [{}, 'X', true],
    [{}, 'no', false],
    [{}, 'N', false],
    [{}, 'FALSE', false],
    [{}, '0', false],
    [{}, 0, false],
    [{}, '', false],
    [{}, '   ', false],
    [{}, null, false],
    [{}, true, true],
    [{}, false, false],
    [{ true: ['ja', 'j'], false: ['nein', 'n'] }, 'JA', true],
    [{ true: ['ja', 'j'], false: ['nein', 'n'] }, 'n', false],
    [{ true: [1, true], false: [0, false] }, 'TRUE', true],
    [{ true: ['active'] }, 'Active', true],
    [{ true: ['active'] }, 'no', false],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(boolean, options);
    expect(fn(input, UTC)).toBe(output);
  });

  it.each<[options: unknown, input: Value, message: string]>([
    [{}, 'maybe', 'expected one of "yes", "y", "true", "1", "x", "no", "n", "false", "0", "", got "maybe"'],
    [{}, 2, 'expected one of "yes", "y", "true", "1", "x", "no", "n", "false", "0", "", got "2"'],
    [{ true: ['ja'], false: ['nein'] }, 'yes', 'expected one of "ja", "nein", got "yes"'],
    [{ true: ['ja'], false: ['nein'] }, '', 'expected one of "ja", "nein", got ""'],
    [{ true: ['ja'], false: ['nein'] }, null, 'expected one of "ja", "nein", got nothing'],
    [
      {},
      ['yes'],
      'expected one of "yes", "y", "true", "1", "x", "no", "n", "false", "0", "", got a list of 1 value (pick one with `first` or `nth`, or combine them with `join`)',
    ],
  ])('%j rejects %j', async (options, input, message) => {
    const fn = await build(boolean, options);
    const error = transformErrorOf(fn, input);
    expect(error.message).toBe(message);
    expect(error.transform).toBe('boolean');
  });

  it.each([
    [{ true: ['yes', 'Y'], false: ['y'] }, '"y" cannot mean both true and false'],
    [{ true: 'yes' }, 'Invalid input: expected array, received string'],
    [{ maybe: ['?'] }, 'Unrecognized key: "maybe"'],
  ])('rejects the options %j', (options, message) => {
    expect(optionsError(boolean, options)).toBe(message);
  });
});

describe('boolean answers a word as written before trimming and lowering', () => {
  it.each<[options: unknown, input: Value, output: Value]>([
    [{}, 'yes', true],
    [{}, 'YES', true],
    [{}, ' no ', false],
    [{}, '', false],
    [{ true: ['Ja', ' J '], false: ['NEIN'] }, 'ja', true],
    [{ true: ['Ja', ' J '], false: ['NEIN'] }, 'j', true],
    [{ true: ['Ja', ' J '], false: ['NEIN'] }, 'nein', false],
    [{ true: ['Ja', ' J '], false: ['NEIN'] }, ' Nein', false],
    [{ true: [1], false: [0] }, '1', true],
    [{ true: [1], false: [0] }, 0, false],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(boolean, options);
    expect(fn(input, UTC)).toBe(output);
  });

  it.each<[options: unknown, input: string]>([
    [{ true: ['Ja'], false: ['Nein'] }, 'Ja '.repeat(2)],
    [{ true: ['Ja'], false: ['Nein'] }, 'yes'],
    [{ true: ['Ja'], false: ['Nein'] }, ''],
  ])('%j rejects %j', async (options, input) => {
    const fn = await build(boolean, options);
    expect(transformErrorOf(fn, input).message).toBe(`expected one of "Ja", "Nein", got ${JSON.stringify(input)}`);
  });
});
