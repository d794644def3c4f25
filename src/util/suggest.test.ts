import { describe, expect, it } from 'vitest';
import { didYouMean, normalizeWord, suggest } from './suggest.ts';

describe('suggest', () => {
  it.each([
    ['dat', ['date', 'time', 'trim'], ['date']],
    ['E-Mail', ['email', 'phone'], ['email']],
    ['firstNme', ['firstName', 'lastName', 'name'], ['firstName']],
    ['zzz', ['date', 'time'], []],
    ['Postcode', ['Post Code', 'Postcode ', 'City'], ['Post Code', 'Postcode ']],
  ])('%s among %j -> %j', (word, candidates, expected) => {
    expect(suggest(word, candidates)).toEqual(expected);
  });

  it('keeps at most the asked number, closest first', () => {
    expect(suggest('ab', ['abc', 'ab', 'abd', 'xab'], 2)).toEqual(['ab', 'abc']);
  });

  it('words the hint for messages', () => {
    expect(didYouMean('dat', ['date'])).toBe(', did you mean `date`?');
    expect(didYouMean('qqq', ['date'])).toBe('');
  });

  it('compares without case, accents, spaces or punctuation', () => {
    expect(normalizeWord('E-Mail Address')).toBe('emailaddress');
    expect(normalizeWord('Prénom')).toBe('prenom');
  });
});
