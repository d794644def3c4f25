/**
 * Control characters, and the Unicode ones that move or reorder text on a terminal: C0 and C1
 * controls, DEL, the line and paragraph separators, and the bidirectional overrides and isolates
 * (which make a quoted name read as something else).
 */
const UNPRINTABLE = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/g;
const NAMED: Record<string, string> = { '\n': '\\n', '\r': '\\r', '\t': '\\t' };

/** `\u0007`, `\n`: how a character from UNPRINTABLE is written instead. */
function escape(character: string): string {
  return NAMED[character] ?? `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`;
}

/**
 * `text` with every control character written as an escape (`\n`, `\u001b`), so that input quoted
 * in a message stays on one line and cannot colour, move or clear the terminal. The one helper
 * for whatever crm-ferry prints that may hold input: file names, column names, values, a parser's
 * message about a file.
 */
export function printable(text: string): string {
  return text.replace(UNPRINTABLE, escape);
}

/** printable() for text that is several lines on purpose (a list of problems): the line breaks stay. */
export function printableLines(text: string): string {
  return text.split('\n').map(printable).join('\n');
}

/** The first control character of `text` that a text file (YAML, JSON) cannot hold: all but tab and line ends. */
const NOT_TEXT = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/;

/** Where the first character a text file cannot hold is, or null when there is none. */
export function findControlCharacter(text: string): { character: string; line: number; column: number } | null {
  const match = NOT_TEXT.exec(text);
  if (!match) return null;
  const before = text.slice(0, match.index);
  const line = before.split('\n').length;
  return { character: match[0], line, column: match.index - before.lastIndexOf('\n') };
}

/** `0x1B`: a character named by its code, for messages. */
export function characterCode(character: string): string {
  return `0x${character.charCodeAt(0).toString(16).toUpperCase().padStart(2, '0')}`;
}
