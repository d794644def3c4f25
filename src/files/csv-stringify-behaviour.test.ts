/**
 * Why the CSV writer quotes fields itself instead of handing rows to csv-stringify: csv-stringify's
 * per-field work cost more than the rest of the export together (docs/benchmarks.md), and with the
 * record delimiter given (CRLF for Excel) it leaves a lone line break unquoted, which every reader
 * takes for the end of the row. These tests hold the writer's fields to csv-stringify's output with
 * `quote_record_delimiter: true`, and pin the unquoted line break; if one fails after an upgrade,
 * csv-stringify changed what it writes, and the writer should follow (or go back to it).
 */
import { stringify } from 'csv-stringify/sync';
import { describe, expect, it } from 'vitest';
import { csvField } from './csv.ts';

const FIELDS = [
  '',
  'plain',
  'two words',
  ' leading and trailing ',
  'a,b',
  'say "hi"',
  '"',
  '""',
  'line\nbreak',
  'carriage\rreturn',
  'windows\r\nline',
  'semi;colon',
  'tab\there',
  "'=1+1",
  'Ångström Optik AB',
  '東京',
  '😀 emoji',
  '\u2028separator',
  '#hash',
  'back\\slash',
];

describe('csvField against csv-stringify 6', () => {
  it.each(FIELDS.map((f) => [JSON.stringify(f), f]))('%s', (_, field) => {
    for (const record_delimiter of ['unix', 'windows'] as const) {
      const eol = record_delimiter === 'unix' ? '\n' : '\r\n';
      expect(csvField(field)).toBe(
        stringify([[field]], { record_delimiter, quote_record_delimiter: true }).slice(0, -eol.length),
      );
    }
  });

  it('a whole row of them, joined by commas', () => {
    expect(`${FIELDS.map(csvField).join(',')}\r\n`).toBe(
      stringify([FIELDS], { record_delimiter: 'windows', quote_record_delimiter: true }),
    );
  });

  it('csv-stringify with CRLF given leaves a lone line feed unquoted: the row would break in two', () => {
    expect(stringify([['line\nbreak', 'x']], { record_delimiter: 'windows' })).toBe('line\nbreak,x\r\n');
    expect(csvField('line\nbreak')).toBe('"line\nbreak"');
  });
});
