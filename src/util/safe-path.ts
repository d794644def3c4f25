import { constants } from 'node:fs';
import { chmod, type FileHandle, lstat, mkdir, open, realpath } from 'node:fs/promises';
import { isAbsolute, join, relative, resolve, sep } from 'node:path';
import { FerryError } from '../errors/index.ts';

/**
 * The one rule for paths that come from outside crm-ferry: a name read from a backup, a journal, a
 * spool, an attachment list, a page's request. Such a name is untrusted: it may climb out of its
 * folder (`../`, an absolute path) or lead through a link someone planted to a file elsewhere. The
 * folder itself is trusted (the person gave it on the command line); what is inside it is not.
 *
 * - `pathInside` turns a name into a path inside its folder, or refuses it;
 * - `openInside` opens such a file for reading without following a link on any level;
 * - `openNoFollow` opens a path crm-ferry chose itself (a journal) without following a link there;
 * - `writeFileAtomic` (files/atomic-file.ts) writes a file fresh, never through what is there.
 */

/** What a refused path is, for the message: "the backup's attachments.jsonl line 12". */
export interface PathContext {
  /** What holds the name, said so that a person finds it: "attachments.jsonl, line 12". */
  what: string;
  /** What the person can do. @default a hint to look at where the folder came from */
  hint?: string;
}

const DEFAULT_HINT =
  'the folder or file came from elsewhere and names a path outside it: check where it came from; crm-ferry reads and writes only inside the folders it is given';

function refuse(message: string, context: PathContext, file: string, cause?: unknown): FerryError {
  return new FerryError('PATH_UNSAFE', message, {
    location: { file },
    hint: context.hint ?? DEFAULT_HINT,
    ...(cause === undefined ? {} : { cause }),
  });
}

/**
 * Checks the form of a relative name: not empty, not absolute, no `..` level, no zero byte, no
 * backslash (a Windows separator would be a plain character here and hide a `..\`). Returns the
 * name's levels.
 */
export function checkRelativeName(name: string, context: PathContext, folder: string): string[] {
  if (typeof name !== 'string' || name === '') throw refuse(`${context.what}: the file name is empty`, context, folder);
  if (name.includes('\0')) throw refuse(`${context.what}: the file name holds a zero byte`, context, folder);
  if (isAbsolute(name) || name.includes('\\'))
    throw refuse(`${context.what}: ${JSON.stringify(name)} is not a name inside ${folder}`, context, folder);
  const levels = name.split('/').filter((level) => level !== '' && level !== '.');
  if (levels.length === 0 || levels.some((level) => level === '..')) {
    throw refuse(`${context.what}: ${JSON.stringify(name)} climbs out of ${folder}`, context, folder);
  }
  return levels;
}

/**
 * The path of `name` inside `folder`, after checking that no level of it, from the folder down, is
 * a link (a level that does not exist yet passes: the caller may be about to create it). The
 * folder may itself be a link: it is the person's own choice, and is resolved first. Refuses with
 * `PATH_UNSAFE`.
 */
export async function pathInside(folder: string, name: string, context: PathContext): Promise<string> {
  const levels = checkRelativeName(name, context, folder);
  const root = await realpath(folder).catch(() => resolve(folder));
  let path = root;
  for (const level of levels) {
    path = join(path, level);
    const info = await lstat(path).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT' || error.code === 'ENOTDIR') return null;
      throw error;
    });
    if (info === null) break;
    if (info.isSymbolicLink())
      throw refuse(
        `${context.what}: ${JSON.stringify(name)} leads through a link (${path}), which crm-ferry does not follow`,
        context,
        folder,
      );
  }
  const inside = relative(root, path);
  if (inside === '' || inside.startsWith(`..${sep}`) || inside === '..' || isAbsolute(inside)) {
    throw refuse(`${context.what}: ${JSON.stringify(name)} is not inside ${folder}`, context, folder);
  }
  return path;
}

/**
 * Opens `path`, which crm-ferry named itself, refusing a link in its last level (`O_NOFOLLOW`):
 * a journal replaced by a link to a file elsewhere is refused instead of written through. `flags`
 * are the `open(2)` flags without `O_NOFOLLOW`. Files created get `mode` (0600 by default).
 */
export async function openNoFollow(
  path: string,
  flags: number,
  context: PathContext,
  mode = 0o600,
): Promise<FileHandle> {
  try {
    return await open(path, flags | constants.O_NOFOLLOW, mode);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ELOOP' || code === 'EMLINK')
      throw refuse(`${context.what}: ${path} is a link, which crm-ferry does not follow`, context, path, error);
    throw error;
  }
}

/**
 * Opens the file `name` inside `folder` for reading: the name is checked by `pathInside`, then
 * opened without following a link in its last level, and must be a plain file. The caller closes
 * the handle. A missing file is thrown as the file system's `ENOENT`, for the caller to say in its
 * own words.
 */
export async function openInside(
  folder: string,
  name: string,
  context: PathContext,
): Promise<{ path: string; handle: FileHandle }> {
  const path = await pathInside(folder, name, context);
  const handle = await openNoFollow(path, constants.O_RDONLY, context);
  try {
    const info = await handle.stat();
    if (!info.isFile()) throw refuse(`${context.what}: ${JSON.stringify(name)} is not a plain file`, context, folder);
  } catch (error) {
    await handle.close();
    throw error;
  }
  return { path, handle };
}

/**
 * Creates `folder` (and the levels above it that are missing) for files holding account data:
 * 0700 whatever the umask, and refused when it is a link or not a folder. An existing folder the
 * person made keeps its mode unless `tighten` is set.
 */
export async function makePrivateFolder(
  folder: string,
  context: PathContext,
  options: { tighten?: boolean } = {},
): Promise<string> {
  const path = resolve(folder);
  const before = await lstat(path).catch(() => null);
  if (before?.isSymbolicLink())
    throw refuse(`${context.what}: ${path} is a link, which crm-ferry does not write through`, context, path);
  if (before && !before.isDirectory()) throw refuse(`${context.what}: ${path} is not a folder`, context, path);
  if (!before) await mkdir(path, { recursive: true, mode: 0o700 });
  if (!before || options.tighten) await chmod(path, 0o700);
  return path;
}
