import { describe, expect, it } from 'vitest';
import { IdSet, KeySet } from './compact-sets.ts';
import { seededRandom } from './seeded-random.ts';

describe('KeySet', () => {
  it('answers as a Set of strings does, through growth, for ASCII, other scripts and keys UTF-8 cannot hold', () => {
    const random = seededRandom(43);
    const keys = new KeySet();
    const expected = new Set<string>();
    const slots = new Map<string, number>();
    // Keys that UTF-8 would make one (lone surrogates become U+FFFD) must stay three.
    const awkward = [
      '',
      '\uD800',
      '\uDC00',
      '\uFFFD',
      'a\uD800b',
      'a\uFFFDb',
      'Zoë',
      'Zoe',
      '株式会社',
      '😀',
      '\uD83D\uDE00x',
    ];
    const pool = [...awkward];
    for (let i = 0; i < 40_000; i++) pool.push(`P${Math.floor(random() * 30_000)}`);
    for (const key of pool) {
      expect(keys.has(key)).toBe(expected.has(key));
      const slot = keys.slotOf(key);
      if (!expected.has(key)) {
        expect(slot).toBe(expected.size);
        expected.add(key);
        slots.set(key, slot);
      } else {
        expect(slot).toBe(slots.get(key));
      }
    }
    expect(keys.size).toBe(expected.size);
    for (const [key, slot] of slots) {
      expect(keys.keyAt(slot)).toBe(key);
      expect(keys.find(key)).toBe(slot);
    }
    expect([...keys]).toEqual([...expected]);
    for (const absent of ['P30000', 'p1', '\uDBFF', 'Zoë ', '']) expect(keys.has(absent)).toBe(expected.has(absent));
  });

  it('keeps a short key in a few tens of bytes', () => {
    const keys = new KeySet();
    const count = 100_000;
    for (let i = 0; i < count; i++) keys.add(`row-${i}`);
    // 4 of hash, 4 of start, 8-16 of table, the key's 5-9 bytes (the buffer grown by doubling).
    expect(keys.bytes / count).toBeLessThan(48);
  });
});

describe('IdSet', () => {
  it('answers as a Set of numbers does, ids beyond 2^32 and NaN included', () => {
    const random = seededRandom(7);
    const ids = new IdSet();
    const expected = new Set<number>();
    const pool = [0, -0, Number.NaN, 2 ** 32, 2 ** 32 + 1, 2 ** 53 - 1, 1.5, -7];
    for (let i = 0; i < 50_000; i++)
      pool.push(1 + Math.floor(random() * 80_000), 2 ** 40 + Math.floor(random() * 1000));
    for (const id of pool) {
      expect(ids.has(id)).toBe(expected.has(id));
      ids.add(id);
      expected.add(id);
    }
    expect(ids.size).toBe(expected.size);
    for (const id of [80_001, 2 ** 32 + 2, 2.5, -8, 2 ** 40 + 1001]) expect(ids.has(id)).toBe(expected.has(id));
    expect(new IdSet([3, 3, 4]).size).toBe(2);
  });
});
