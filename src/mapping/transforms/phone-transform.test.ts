import { describe, expect, it } from 'vitest';
import { seededRandom } from '../../util/seeded-random.ts';
import { phone } from './contact.ts';
import { build, transformErrorOf, UTC } from '../../../test/helpers/transforms.ts';
import { TransformError } from './types.ts';
import type { TransformFn, Value } from './types.ts';

/*
 * The phone transform answers plain text cells before its general path (trimming, lists, number
 * cells). These tests hold the two routes to the same answers: a cell with blanks around it, or
 * inside a list, takes the general path; the bare cell takes the direct one.
 */

/** The outcome of one call: its value, or the message of the error it threw. */
function outcome(fn: TransformFn, value: Value): Value | { error: string } {
  try {
    return fn(value, UTC);
  } catch (error) {
    if (error instanceof TransformError) return { error: error.message };
    throw error;
  }
}

function cells(): string[] {
  const next = seededRandom(21);
  const out = [
    '+44 09953406510',
    '+44 20 7946 0000',
    '020 7946 0000',
    '+49 30 1234567',
    '07700 900123',
    '0044 20 7946 0000',
    '+1 212 555 0123',
    '123',
    '+44 0',
    '(020) 7946 0000',
    '0800 FLOWERS',
  ];
  for (let i = 0; i < 300; i++) {
    let digits = '';
    for (let j = 0; j < 10; j++) digits += String(Math.floor(next() * 10));
    out.push(
      i % 3 === 0
        ? `+44 0${digits}`
        : i % 3 === 1
          ? `0${digits.slice(0, 4)} ${digits.slice(4)}`
          : `+${digits.slice(0, 2)} ${digits.slice(2)}`,
    );
  }
  return out;
}

describe('phone transform, direct and general routes', () => {
  it.each([
    [{ defaultCountry: 'GB', invalid: 'keep' }],
    [{ defaultCountry: 'GB' }],
    [{ defaultCountry: 'US', invalid: 'keep' }],
    [{ invalid: 'keep' }],
    [{}],
  ])('%j: a bare cell gets the answer the same cell gets with blanks around it and inside a list', async (options) => {
    const fn = await build(phone, options);
    const differences: string[] = [];
    let valid = 0;
    for (const cell of cells()) {
      const bare = outcome(fn, cell);
      if (typeof bare === 'string' && bare.startsWith('+') && bare !== cell) valid++;
      const padded = outcome(fn, ` ${cell}\t`);
      const listed = outcome(fn, [cell]);
      const listedAsOne = Array.isArray(listed) ? listed[0] : listed;
      if (JSON.stringify(bare) !== JSON.stringify(padded))
        differences.push(`${cell}: ${JSON.stringify(bare)} vs padded ${JSON.stringify(padded)}`);
      if (JSON.stringify(bare) !== JSON.stringify(listedAsOne))
        differences.push(`${cell}: ${JSON.stringify(bare)} vs listed ${JSON.stringify(listed)}`);
    }
    expect(differences.slice(0, 10)).toEqual([]);
    expect(valid).toBeGreaterThan(20);
  });

  it.each<[options: unknown, input: Value, output: Value]>([
    [{ defaultCountry: 'GB', invalid: 'keep' }, '+44 09953406510', '+44 09953406510'],
    [{ defaultCountry: 'GB', invalid: 'keep' }, '+44 0 2079460000', '+442079460000'],
    [{ defaultCountry: 'GB' }, '+44 20 7946 0000', '+442079460000'],
    [{}, '0044 20 7946 0000', '+442079460000'],
    [{ defaultCountry: 'GB' }, 2079460000, '+442079460000'],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(phone, options);
    expect(fn(input, UTC)).toEqual(output);
  });

  it('rejects an invalid bare cell with the message the general path gives', async () => {
    const fn = await build(phone, { defaultCountry: 'GB' });
    expect(transformErrorOf(fn, '+44 09953406510').message).toBe(
      'expected a phone number valid in GB or with a country code like 020 7946 0000, got "+44 09953406510"',
    );
  });
});
