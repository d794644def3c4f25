import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprint } from '../../../src/load/fingerprint.ts';

describe('canonicalJson', () => {
  it.each([
    ['keys sorted at every depth', { b: 1, a: { d: [1, { z: true, y: null }], c: 'x' } }, '{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1}'],
    ['undefined members left out, undefined items as null', { a: undefined, b: [undefined, 2] }, '{"b":[null,2]}'],
    ['sorted by code unit, as < sorts', { é: 1, z: 2, Z: 3, a: 4 }, '{"Z":3,"a":4,"z":2,"é":1}'],
    ['scalars as JSON', 'he said "hi"\n', '"he said \\"hi\\"\\n"'],
    ['empty containers', { a: {}, b: [] }, '{"a":{},"b":[]}'],
  ])('%s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('gives equal fingerprints whatever order the keys were written in', () => {
    expect(fingerprint({ lastName: 'Lovelace', firstName: 'Ada', tags: [{ name: 'vip' }] })).toBe(fingerprint({ tags: [{ name: 'vip' }], firstName: 'Ada', lastName: 'Lovelace' }));
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
  });
});
