import { describe, expect, it } from 'vitest';
import { jargonIn } from '../../test/helpers/glossary.ts';
import { forPage } from './reasons.ts';

/** What the engine and the command line say, as they say it (each holds a word of the glossary). */
const SAID = [
  'Unknown custom field date_added without a data tag of parties',
  'Unknown custom field Lid sinds in data tag `Leden` of parties',
  'fields[4].value.transform[1] (`email`): expected an e-mail address, got "jan@@bakker.nl"',
  'the key repeats row 3 (onDuplicate: merge)',
  'onDuplicate: reject rejects the later rows of a key',
  'a bad value is left out (onInvalid: drop) in fields[2]',
  '3 rows rejected: fix the input or the mapping and run again: rejected rows are taken again, rows already written cost no request (add --retry-rejects to take only the rejected rows); or fix them in the rejects file and give it back (`validate --input FILE` checks it, `import` or `run` with --retry-rejects FILE writes its rows).',
  'Rolled back run 20261129T041000123Z-4242-1:\n  contacts             11 records deleted, 0 restored\nRequests: 23.',
  'Would roll back runs 20261129T041000123Z-4242-1, 20261129T051000123Z-4242-2:',
  'the state belongs to another account. Give another --state-dir for this account; `run` and `import` also take --fresh, to start over here.',
  'custom field Lid sinds (parties): named by 4 rows of leden',
];

describe("the page's words: forPage", () => {
  it.each(SAID)("says %j without the glossary's words", (text) => {
    // The list holds what the test looks for: without the translation, it would be found.
    expect(jargonIn(text)).not.toEqual([]);
    expect(jargonIn(forPage(text))).toEqual([]);
  });

  it('keeps what the reader needs: the column, the value, what is wrong, what to do', () => {
    expect(forPage(SAID[0] as string)).toBe('Unknown custom field date_added of people and organisations');
    expect(forPage(SAID[2] as string)).toBe('expected an e-mail address, got "jan@@bakker.nl"');
    expect(forPage(SAID[3] as string)).toBe('the key repeats row 3 (rows with the same key are merged into the first)');
    expect(forPage(SAID[7] as string)).toBe(
      'Rolled back the run:\n  contacts             11 records deleted, 0 restored\nRequests: 23.',
    );
    expect(forPage(SAID[8] as string)).toBe('Would roll back those runs:');
    expect(forPage(SAID[9] as string)).toBe('the state belongs to another account.');
    expect(forPage(SAID[10] as string)).toBe(
      'custom field Lid sinds (people and organisations): named by 4 rows of leden',
    );
  });

  it('leaves plain words alone', () => {
    for (const text of [
      'E-mail "anne@@example" is not an e-mail address',
      'Every row is valid.',
      'the fields of a person',
      'run again after fixing the file',
    ])
      expect(forPage(text)).toBe(text);
  });
});
