import { readFile, realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { checkNotSpecial } from './make-folders.ts';
import { characterCode, findControlCharacter } from './printable.ts';

/**
 * The one rule for every path crm-ferry reads from (a source file, a mapping, a plan, a filter,
 * an export state, a request body): nothing under /proc, /sys or /dev, with links resolved, as for
 * the folders it writes to (`makeFolders`). Those files are kernel views or devices: `inspect
 * /proc/self/status` would read the process's own status as a CSV. A path that does not exist
 * passes: the read that follows says so in the caller's words.
 */
export async function checkInputPath(file: string, what: string, refuse: (message: string) => Error): Promise<void> {
  const absolute = resolve(file);
  checkNotSpecial(absolute, what, refuse);
  const real = await realpath(absolute).catch(() => null);
  if (real !== null) checkNotSpecial(real, what, refuse);
}

/**
 * The text of a file that must be UTF-8 text (YAML, JSON), without its byte-order mark. A binary
 * file, another encoding or a control character is refused in one line that says where, before a
 * parser gets to quote the bytes back over several lines of the terminal.
 */
export function decodeTextInput(bytes: Uint8Array, what: string, refuse: (message: string) => Error): string {
  const zero = bytes.indexOf(0);
  if (zero !== -1) throw refuse(`${what} holds binary data (a zero byte at offset ${zero}), not text`);
  let text: string;
  try {
    text = new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    throw refuse(`${what} is not UTF-8 text (it is binary, or saved in another encoding); save it as UTF-8`);
  }
  const control = findControlCharacter(text);
  if (control)
    throw refuse(
      `${what} holds the control character ${characterCode(control.character)} on line ${control.line}, column ${control.column}, which a text file does not`,
    );
  return text;
}

/**
 * Reads a small text input (mapping, plan, filter, export state, request body): checkInputPath,
 * then decodeTextInput. Errors of the file system (a missing file) are thrown as they are, for
 * the caller to say in its own words.
 */
export async function readTextInput(file: string, what: string, refuse: (message: string) => Error): Promise<string> {
  await checkInputPath(file, what, refuse);
  return decodeTextInput(await readFile(file), what, refuse);
}
