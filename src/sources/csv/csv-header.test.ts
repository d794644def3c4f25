import { describe, expect, it } from 'vitest';
import { nameColumns, numberedColumns } from './csv-header.ts';

describe('nameColumns', () => {
  const cases: Array<[string, string[], string[]]> = [
    ['unique names stay', ['id', 'Email', 'email'], ['id', 'Email', 'email']],
    ['names are trimmed', [' id ', 'name\t'], ['id', 'name']],
    ['duplicates get _2, _3', ['Email', 'Email', 'Email'], ['Email', 'Email_2', 'Email_3']],
    ['blank becomes columnN by position', ['a', '', ' ', 'd'], ['a', 'column2', 'column3', 'd']],
    ['a rename never takes a literal name', ['Email', 'Email', 'Email_2'], ['Email', 'Email_3', 'Email_2']],
    ['a blank never takes a literal columnN', ['column2', ''], ['column2', 'column2_2']],
    ['__proto__ is renamed', ['__proto__', 'x'], ['proto_column', 'x']],
  ];
  it.each(cases)('%s', (_name, header, names) => {
    expect(nameColumns(header).names).toEqual(names);
  });

  it('lists each rename with its reason and the original text', () => {
    expect(nameColumns(['a', '', 'a']).renames).toEqual([
      { column: 2, original: '', name: 'column2', reason: 'blank' },
      { column: 3, original: 'a', name: 'a_2', reason: 'duplicate' },
    ]);
  });

  it('numbers columns for files without a header', () => {
    expect(numberedColumns(3)).toEqual(['column1', 'column2', 'column3']);
  });
});

describe('many repeats of one name', () => {
  it('16,000 columns named alike become a, a_2 ... a_16000, each suffix found where the last one stopped', () => {
    const { names, renames } = nameColumns(Array(16_000).fill('a'));
    expect(names.slice(0, 3)).toEqual(['a', 'a_2', 'a_3']);
    expect(names.at(-1)).toBe('a_16000');
    expect(new Set(names).size).toBe(16_000);
    expect(renames).toHaveLength(15_999);
  });

  it('a literal a_3 further on is still skipped by the repeats', () => {
    expect(nameColumns(['a', 'a', 'a', 'a_3', 'a']).names).toEqual(['a', 'a_2', 'a_4', 'a_3', 'a_5']);
  });
});
