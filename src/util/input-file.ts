import { readFile, realpath } from 'node:fs/promises';
import { resolve } from 'node:path';
import { checkNotSpecial } from './make-folders.ts';

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
 * Reads a small text input (mapping, plan, filter, export state, request body) after
 * checkInputPath. Errors of the file system (a missing file) are thrown as they are, for the
 * caller to say in its own words.
 */
export async function readTextInput(file: string, what: string, refuse: (message: string) => Error): Promise<string> {
  await checkInputPath(file, what, refuse);
  return readFile(file, 'utf8');
}
