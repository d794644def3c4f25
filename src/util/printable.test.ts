import { describe, expect, it } from 'vitest';
import { findControlCharacter, printable, printableLines } from './printable.ts';

describe('printable', () => {
  it.each([
    ['plain text and letters past ASCII', 'Müller & Söhne', 'Müller & Söhne'],
    ['a line break and a tab', 'a\nb\tc\r', 'a\\nb\\tc\\r'],
    ['a terminal escape', '\x1b[2Jred', '\\u001b[2Jred'],
    ['NUL, DEL and a C1 control', '\0\x7f\x9b', '\\u0000\\u007f\\u009b'],
    ['a line separator and a right-to-left override', 'a\u2028b\u202ec', 'a\\u2028b\\u202ec'],
  ])('%s', (_what, text, expected) => {
    expect(printable(text)).toBe(expected);
  });

  it('keeps the line breaks of a list of lines, and escapes what is in them', () => {
    expect(printableLines('problems:\n  a\x07\n  b')).toBe('problems:\n  a\\u0007\n  b');
  });

  it('finds the first character a text file does not hold, by line and column', () => {
    expect(findControlCharacter('a: 1\n\tb: x\x01y')).toEqual({ character: '\x01', line: 2, column: 6 });
    expect(findControlCharacter('a: 1\r\n\tb: 2\n')).toBeNull();
  });
});
