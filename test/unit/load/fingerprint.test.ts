import { describe, expect, it } from 'vitest';
import { canonicalJson, fingerprint } from '../../../src/load/fingerprint.ts';

describe('canonicalJson', () => {
  it.each([
    [
      'keys sorted at every depth',
      { b: 1, a: { d: [1, { z: true, y: null }], c: 'x' } },
      '{"a":{"c":"x","d":[1,{"y":null,"z":true}]},"b":1}',
    ],
    ['undefined members left out, undefined items as null', { a: undefined, b: [undefined, 2] }, '{"b":[null,2]}'],
    ['sorted by code unit, as < sorts', { é: 1, z: 2, Z: 3, a: 4 }, '{"Z":3,"a":4,"z":2,"é":1}'],
    ['scalars as JSON', 'he said "hi"\n', '"he said \\"hi\\"\\n"'],
    [
      'texts JSON escapes, and texts it does not',
      ['back\\slash', 'tab\t', '\u0001', 'lone \ud800', 'pair \ud83d\ude00', 'line\u2028sep', 'é'],
      JSON.stringify(['back\\slash', 'tab\t', '\u0001', 'lone \ud800', 'pair \ud83d\ude00', 'line\u2028sep', 'é']),
    ],
    ['empty containers', { a: {}, b: [] }, '{"a":{},"b":[]}'],
  ])('%s', (_name, value, expected) => {
    expect(canonicalJson(value)).toBe(expected);
  });

  it('orders the keys of small and large objects as the default sort does', () => {
    const names = [
      'b',
      'a',
      'B',
      'é',
      'aa',
      'a0',
      '_',
      'Z9',
      'z',
      '10',
      '9',
      'ab',
      'émile',
      'A',
      'ba',
      'c',
      'ç',
      'yy',
      'x',
      'w',
    ];
    for (let size = 0; size <= names.length; size += 1) {
      const keys = names.slice(0, size);
      const object = Object.fromEntries(keys.map((key, i) => [key, i]));
      // Integer-like keys ('10', '9') come first from Object.keys, in numeric order: the sort must still order them as text.
      const sorted = Object.keys(object).sort();
      expect(canonicalJson(object)).toBe(`{${sorted.map((key) => `${JSON.stringify(key)}:${object[key]}`).join(',')}}`);
    }
  });

  it('gives equal fingerprints whatever order the keys were written in', () => {
    expect(fingerprint({ lastName: 'Lovelace', firstName: 'Ada', tags: [{ name: 'vip' }] })).toBe(
      fingerprint({ tags: [{ name: 'vip' }], firstName: 'Ada', lastName: 'Lovelace' }),
    );
    expect(fingerprint({ a: 1 })).not.toBe(fingerprint({ a: 2 }));
  });

  it('gives the fingerprint journals written before hold: the same text, the same digest', () => {
    // Computed by the version before canonicalJson and the digest were made cheaper; a row whose
    // fingerprint changed would look changed to every run after an upgrade, and be written again.
    const row = {
      body: {
        type: 'person',
        firstName: 'Ada',
        lastName: 'Lovelace',
        emailAddresses: [{ type: 'Work', address: 'ada@example.org' }],
        fields: [{ definition: 7, value: true }],
        tags: [{ name: 'vip' }],
        about: 'é "q" \u2028',
        n: 1.5,
        neg: -0,
        big: 1e21,
        nan: Number.NaN,
      },
      attachments: [],
    };
    expect(fingerprint(row)).toBe('ho_88yCo5VyjqfdKAfnLUH');
    expect(canonicalJson({ d: new Date(0), f: () => 1, u: undefined, x: [undefined, () => 1] })).toBe(
      '{"d":{},"f":null,"x":[null,null]}',
    );
  });
});
