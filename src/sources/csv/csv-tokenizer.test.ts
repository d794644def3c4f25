import { parse } from 'csv-parse/sync';
import { describe, expect, it } from 'vitest';
import { CsvTokenizer } from './csv-tokenizer.ts';
import type { TokenizedRecord } from './csv-tokenizer.ts';

function tokenize(
  text: string,
  options: { delimiter?: string; maxFieldSize?: number; chunks?: number[] } = {},
): TokenizedRecord[] {
  const tokenizer = new CsvTokenizer({
    delimiter: options.delimiter ?? ',',
    maxFieldSize: options.maxFieldSize ?? 1000,
    maxRecordSize: (options.maxFieldSize ?? 1000) * 4,
  });
  const out: TokenizedRecord[] = [];
  const sink = (r: TokenizedRecord): void => {
    out.push(r);
  };
  let at = 0;
  for (const cut of options.chunks ?? []) {
    tokenizer.push(text.slice(at, cut), sink);
    at = cut;
  }
  tokenizer.push(text.slice(at), sink);
  tokenizer.finish(sink);
  return out;
}

const summary = (records: TokenizedRecord[]) =>
  records.map((r) => ({ fields: r.fields, lines: [r.startLine, r.endLine], problem: r.problem?.code }));

describe('CsvTokenizer on well-formed input', () => {
  // Each case must read the same as csv-parse reads it, which is the reference for valid CSV.
  const cases: Array<[string, string]> = [
    ['plain LF', 'a,b\n1,2\n'],
    ['no final line break', 'a,b\n1,2'],
    ['CRLF', 'a,b\r\n1,2\r\n'],
    ['CR only', 'a,b\r1,2\r'],
    ['quoted delimiter', 'a,b\n"x,y",2\n'],
    ['escaped quotes', 'a\n"he said ""hi"""\n'],
    ['newline inside quotes', 'a,b\n"line 1\nline 2",2\n'],
    ['CRLF inside quotes', 'a,b\r\n"line 1\r\nline 2",2\r\n'],
    ['empty fields', 'a,b,c\n,,\n'],
    ['empty quoted field', 'a,b\n"",x\n'],
    ['quote only field', 'a\n""""\n'],
    ['trailing delimiter', 'a,b,\n1,2,\n'],
    ['unicode', 'name\nZoë “quoted” €\n'],
    ['semicolon', 'a;b\n"1;2";3\n'],
  ];
  it.each(cases)('%s', (_name, text) => {
    const delimiter = text.includes(';') && !text.includes(',') ? ';' : ',';
    const expected = parse(text, { delimiter, relax_column_count: true, skip_empty_lines: true }) as string[][];
    const got = tokenize(text, { delimiter })
      .filter((r) => !r.blank)
      .map((r) => r.fields);
    expect(got).toEqual(expected);
  });

  it('gives the same records whatever the chunk boundaries', () => {
    const text = 'id,note\r\n1,"a ""b""\r\nc"\r\n2,plain\r\n"3","x,y"\r\n';
    const whole = summary(tokenize(text));
    for (let cut = 1; cut < text.length; cut++) {
      expect(summary(tokenize(text, { chunks: [cut] })), `cut at ${cut}`).toEqual(whole);
    }
    expect(whole).toEqual([
      { fields: ['id', 'note'], lines: [1, 1], problem: undefined },
      { fields: ['1', 'a "b"\r\nc'], lines: [2, 3], problem: undefined },
      { fields: ['2', 'plain'], lines: [4, 4], problem: undefined },
      { fields: ['3', 'x,y'], lines: [5, 5], problem: undefined },
    ]);
  });

  it('counts CRLF, LF and CR inside quoted fields as one line each', () => {
    const records = tokenize('a\n"1\r\n2\n3\r4"\nnext\n');
    expect(records.map((r) => [r.startLine, r.endLine])).toEqual([
      [1, 1],
      [2, 5],
      [6, 6],
    ]);
  });

  it('marks empty lines as blank but not an empty quoted field', () => {
    const records = tokenize('a\n\n""\n');
    expect(records.map((r) => r.blank)).toEqual([false, true, false]);
  });

  it('keeps a quote inside an unquoted field as text', () => {
    expect(tokenize('5" screen,x\n')[0]?.fields).toEqual(['5" screen', 'x']);
  });

  it('keeps the raw text of a record without its line break', () => {
    expect(tokenize('a,"b\nc"\r\nd\n').map((r) => r.raw)).toEqual(['a,"b\nc"', 'd']);
  });
});

describe('CsvTokenizer on malformed input', () => {
  it('reports a bad closing quote and ends the record at its own line break', () => {
    expect(summary(tokenize('1,"x"y\n2,3\n'))).toEqual([
      { fields: ['1', 'x"y'], lines: [1, 1], problem: 'SOURCE_MALFORMED_RECORD' },
      { fields: ['2', '3'], lines: [2, 2], problem: undefined },
    ]);
  });

  it('rejects only the line of a quote never closed and reads the lines after it again', () => {
    const records = tokenize('a,b\n1,"oops\n2,3\n4,5\n');
    expect(summary(records)).toEqual([
      { fields: ['a', 'b'], lines: [1, 1], problem: undefined },
      { fields: ['1', 'oops\n2,3\n4,5\n'], lines: [2, 2], problem: 'SOURCE_MALFORMED_RECORD' },
      { fields: ['2', '3'], lines: [3, 3], problem: undefined },
      { fields: ['4', '5'], lines: [4, 4], problem: undefined },
    ]);
    expect(records[1]?.raw).toBe('1,"oops');
  });

  it('recovers the same way when the unclosed quote is cut across chunks', () => {
    const text = 'a\r\n"x\r\ny\r\nz\r\n';
    const whole = summary(tokenize(text));
    for (let cut = 1; cut < text.length; cut++) expect(summary(tokenize(text, { chunks: [cut] }))).toEqual(whole);
    expect(whole.map((r) => [r.lines, r.problem])).toEqual([
      [[1, 1], undefined],
      [[2, 2], 'SOURCE_MALFORMED_RECORD'],
      [[3, 3], undefined],
      [[4, 4], undefined],
    ]);
  });

  it('rejects only the line of a stray quote that a later quote seems to close', () => {
    const text = 'a,b\n1,"stray\n2,3\n4,"x"\n5,6\n';
    const whole = summary(tokenize(text));
    for (let cut = 1; cut < text.length; cut++)
      expect(summary(tokenize(text, { chunks: [cut] })), `cut at ${cut}`).toEqual(whole);
    expect(whole).toEqual([
      { fields: ['a', 'b'], lines: [1, 1], problem: undefined },
      { fields: ['1', 'stray\n2,3\n4,'], lines: [2, 2], problem: 'SOURCE_MALFORMED_RECORD' },
      { fields: ['2', '3'], lines: [3, 3], problem: undefined },
      { fields: ['4', 'x'], lines: [4, 4], problem: undefined },
      { fields: ['5', '6'], lines: [5, 5], problem: undefined },
    ]);
  });

  it('recovers from many stray quotes in one chunk without deep recursion', () => {
    const lines = Array.from({ length: 20000 }, (_, i) => `${i},"stray`);
    const records = tokenize(`${lines.join('\n')}\n`);
    expect(records).toHaveLength(20000);
    expect(records.every((r) => r.problem?.code === 'SOURCE_MALFORMED_RECORD')).toBe(true);
    expect(records[19999]?.startLine).toBe(20000);
  });

  it('reports an unclosed quote on the last line without inventing rows', () => {
    expect(summary(tokenize('a\n"x'))).toEqual([
      { fields: ['a'], lines: [1, 1], problem: undefined },
      { fields: ['x'], lines: [2, 2], problem: 'SOURCE_MALFORMED_RECORD' },
    ]);
  });

  it('drops an oversized field without keeping it and goes on at the next record', () => {
    const big = 'x'.repeat(50);
    const records = tokenize(`a,b\n1,${big}\n2,"${big}\n${big}"\n3,4\n`, { maxFieldSize: 20, chunks: [7, 15, 40, 70] });
    expect(summary(records)).toEqual([
      { fields: ['a', 'b'], lines: [1, 1], problem: undefined },
      { fields: [], lines: [2, 2], problem: 'SOURCE_FIELD_TOO_LARGE' },
      { fields: [], lines: [3, 4], problem: 'SOURCE_FIELD_TOO_LARGE' },
      { fields: ['3', '4'], lines: [5, 5], problem: undefined },
    ]);
    expect(records[1]?.raw.length).toBeLessThan(250);
  });

  it('bounds a record made of many small fields', () => {
    const records = tokenize(`${'ab,'.repeat(100)}\nok\n`, { maxFieldSize: 10 });
    expect(records.map((r) => r.problem?.code)).toEqual(['SOURCE_FIELD_TOO_LARGE', undefined]);
    expect(records[0]?.problem?.message).toContain('record is longer than the limit of 40');
  });
});
