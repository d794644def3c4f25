import { describe, expect, it } from 'vitest';
import { JsonSyntaxError, JsonTokenizer } from './v1-json-tokens.ts';
import type { JsonEvent } from './v1-json-tokens.ts';

function tokenize(chunks: string[]): JsonEvent[] {
  const events: JsonEvent[] = [];
  const tokenizer = new JsonTokenizer((event) => events.push(event));
  for (const chunk of chunks) tokenizer.write(chunk);
  tokenizer.end();
  return events;
}

function errorOf(text: string): JsonSyntaxError {
  try {
    tokenize([text]);
  } catch (error) {
    if (error instanceof JsonSyntaxError) return error;
    throw error;
  }
  throw new Error('no error');
}

const TRICKY =
  '{"a\\"b": [1, -2.5e+3, true, false, null, "\\u00e9\\ud83d\\ude00\\n\\t\\\\\\/"], "": {}, "x": [[], [{}]], "big": 12345678901234567890}';

describe('JsonTokenizer', () => {
  it('gives the same events whatever the chunk size', () => {
    const whole = tokenize([TRICKY]);
    expect(tokenize(TRICKY.split(''))).toEqual(whole);
    expect(tokenize([TRICKY.slice(0, 7), TRICKY.slice(7, 40), TRICKY.slice(40)])).toEqual(whole);
  });

  it('decodes escapes and keeps numbers as their source text', () => {
    const events = tokenize([TRICKY]);
    expect(events.filter((event) => event.type === 'key').map((event) => (event as { key: string }).key)).toEqual([
      'a"b',
      '',
      'x',
      'big',
    ]);
    const values = events.filter((event) => event.type === 'value').map((event) => (event as { value: unknown }).value);
    expect(values).toEqual(['1', '-2.5e+3', true, false, null, 'é😀\n\t\\/', '12345678901234567890']);
    expect(events.filter((event) => event.type === 'startArray')).toHaveLength(4);
  });

  it('reads a top-level scalar', () => {
    expect(tokenize(['  42 '])).toEqual([{ type: 'value', value: '42', number: true }]);
  });

  it.each([
    ['{"a": 1,}', 1, 9, /expected a property name/],
    ['{"a" 1}', 1, 6, /expected ":"/],
    ['[1, 2\n, tru]', 2, 3, /"tru" is not a JSON value/],
    ['[01]', 1, 2, /"01" is not a JSON value/],
    ['{"a": "line\nbreak"}', 1, 12, /control character/],
    ['[1] [2]', 1, 5, /after the end of the document/],
    ['[1}', 1, 3, /unexpected "}"/],
    ['"\\x"', 1, 3, /unknown escape/],
    ['{"a": [', 1, 7, /ends before it is complete/],
  ])('rejects %j at line %i column %i', (text, line, column, message) => {
    const error = errorOf(text);
    expect(error.message).toMatch(message);
    expect([error.line, error.column]).toEqual([line, column]);
  });
});
