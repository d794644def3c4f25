import { describe, expect, it } from 'vitest';
import { sniffDelimiter } from './csv-delimiter.ts';

describe('sniffDelimiter', () => {
  const cases: Array<[string, string, string, boolean]> = [
    ['comma', 'a,b,c\n1,2,3\n', ',', true],
    ['semicolon', 'a;b;c\r\n1;2;3\r\n', ';', true],
    ['tab', 'a\tb\n1\t2\n', '\t', true],
    ['pipe', 'a|b\n1|2\n', '|', true],
    ['commas inside quotes do not count', 'a;b\n"1,2,3";"4,5"\n"6,7";8\n', ';', true],
    ['decimal commas in a semicolon file', 'price;qty\n1,50;2\n2,75;1\n3,00;9\n', ';', true],
    ['the consistent candidate beats the frequent one', 'name|note\nAnn|a, b, c\nBob|d\nCy|e, f\n', '|', true],
    ['one column: assume comma', 'email\nann@example.com\n', ',', false],
    ['quoted newlines do not split records', 'a,b\n"x\ny;z",1\n', ',', true],
  ];
  it.each(cases)('%s', (_name, text, delimiter, found) => {
    expect(sniffDelimiter(text, true)).toEqual({ delimiter, found });
  });

  it('ignores a last record cut by the end of the prefix', () => {
    // Complete records say ';'; the cut one has commas only.
    expect(sniffDelimiter('a;b\n1;2\n3;4\nx,y,z,w,v', false).delimiter).toBe(';');
  });
});
