import { describe, expect, it } from 'vitest';
import { FewSpellings } from './values.ts';

describe('FewSpellings', () => {
  it('gives back what was remembered, by exact text', () => {
    const memo = new FewSpellings<string | null>();
    expect(memo.set('Germany', 'DE')).toBe(true);
    expect(memo.set('', 'blank')).toBe(true);
    expect(memo.set('Nowhere', null)).toBe(true);
    expect([memo.get('Germany'), memo.get(''), memo.get('Nowhere'), memo.get('germany'), memo.get('Germany ')]).toEqual(
      ['DE', 'blank', null, undefined, undefined],
    );
    // A second result for the same text is refused: the first stays.
    expect(memo.set('Germany', 'XX')).toBe(false);
    expect(memo.get('Germany')).toBe('DE');
  });

  it('tells apart texts that share first, middle and last characters', () => {
    const memo = new FewSpellings<number>();
    memo.set('abXcd', 1);
    memo.set('aYXZd', 2);
    expect([memo.get('abXcd'), memo.get('aYXZd'), memo.get('aaXdd')]).toEqual([1, 2, undefined]);
  });

  it('finds a text built at run time, not only the same string object', () => {
    const memo = new FewSpellings<string>();
    const chunk = 'x,United Kingdom of Great Britain,y';
    memo.set('United Kingdom of Great Britain', 'GB');
    expect(memo.get(chunk.slice(2, 33))).toBe('GB');
  });

  it('keeps 32 texts shorter than 48 characters and no more', () => {
    const memo = new FewSpellings<number>();
    expect(memo.set('x'.repeat(48), 0)).toBe(false);
    const kept = Array.from({ length: 40 }, (_, index) => memo.set(`text ${index}`, index));
    expect(kept.filter(Boolean)).toHaveLength(32);
    expect([memo.get('text 0'), memo.get('text 31'), memo.get('text 32'), memo.get('x'.repeat(48))]).toEqual([
      0,
      31,
      undefined,
      undefined,
    ]);
  });

  it('stops for good after a round of 1024 lookups of which fewer than a quarter found something', () => {
    const memo = new FewSpellings<number>();
    memo.set('known', 1);
    for (let index = 0; index < 1024; index++) memo.get(index % 8 === 0 ? 'known' : `unknown ${index}`);
    expect(memo.get('known')).toBeUndefined();
    expect(memo.set('later', 2)).toBe(false);
  });

  it('keeps going while a quarter or more of the lookups find something', () => {
    const memo = new FewSpellings<number>();
    memo.set('known', 1);
    for (let index = 0; index < 5000; index++) memo.get(index % 4 === 0 ? 'known' : `unknown ${index}`);
    expect(memo.get('known')).toBe(1);
  });
});
