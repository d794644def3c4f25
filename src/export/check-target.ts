import { access, constants, lstat, readlink, realpath, stat } from 'node:fs/promises';
import { dirname, resolve } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { checkNotSpecial } from '../util/index.ts';

/**
 * Refuses, before any request, a place the export could never put its file: a folder that does
 * not exist or cannot be written, or a target that is a folder, a device or a link into /dev,
 * /proc or /sys (the file is renamed onto its target, which would replace /dev/full or /dev/stdout with a
 * plain file). A link to a file is followed: the file it names is replaced and the link stays.
 * Returns the path to write.
 */
export async function checkTarget(target: string, what = '--out'): Promise<string> {
  const hint = `Give ${what} the path of a file in a folder you can write.`;
  const special = (): never => {
    throw new FerryError(
      'USAGE',
      `cannot write ${target}: it is not a regular file (a device, a pipe, a socket or a link to one)`,
      {
        location: { file: target },
        hint: what === '--out' ? `${hint} For standard output, give --out -.` : hint,
      },
    );
  };
  let path = target;
  // A file in /dev, /proc or /sys (or a link in, or into, them) is no file to replace.
  checkNotSpecial(target, what, special);
  const link = await lstat(target).catch(() => null);
  if (link?.isSymbolicLink()) {
    checkNotSpecial(resolve(dirname(target), await readlink(target)), what, special);
    path = await realpath(target).catch(() => special());
  }
  const folder = dirname(path);
  const folderStat = await stat(folder).catch(() => null);
  if (!folderStat?.isDirectory())
    throw new FerryError('USAGE', `cannot write ${target}: the folder ${folder} does not exist`, {
      location: { file: target },
      hint,
    });
  const existing = await stat(path).catch(() => null);
  if (existing?.isDirectory())
    throw new FerryError('USAGE', `cannot write ${target}: it is a folder`, { location: { file: target }, hint });
  if (existing && !existing.isFile()) special();
  try {
    await access(folder, constants.W_OK);
  } catch (error) {
    throw new FerryError(
      'EXPORT_WRITE',
      `cannot write ${target}: the folder ${folder} is not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`,
      { location: { file: target }, hint, cause: error },
    );
  }
  return path;
}
