import { lstat, mkdir, realpath } from 'node:fs/promises';
import { dirname, resolve, sep } from 'node:path';
import { FerryError } from '../errors/index.ts';

/** Folders whose files are not storage: kernel views and devices. */
const SPECIAL_ROOTS = ['/proc', '/sys', '/dev'];

function under(path: string, root: string): boolean {
  return path === root || path.startsWith(root + sep);
}

export interface MakeFoldersOptions {
  /** Mode of the folders created (existing ones are left as they are). */
  mode: number;
  /** What the folder is, for messages: "the rejects folder", "the sandbox data folder". */
  what: string;
  /** What the person should do instead. */
  hint: string;
}

/**
 * Creates `folder` and any missing folders above it, one level at a time, refusing up front what
 * cannot be storage: a path under /proc, /sys or /dev (Node's recursive mkdir loops forever
 * there, deaf to Ctrl-C), or a path through something that is not a folder. Each refusal is a
 * `CONFIG_INVALID` naming the path. Returns the absolute path.
 */
export async function makeFolders(folder: string, options: MakeFoldersOptions): Promise<string> {
  const target = resolve(folder);
  const refuse = (message: string, cause?: unknown): FerryError =>
    new FerryError('CONFIG_INVALID', message, {
      location: { file: folder },
      hint: options.hint,
      ...(cause === undefined ? {} : { cause }),
    });
  checkNotSpecial(target, options.what, refuse);
  // Find the nearest level that exists; the levels below it are created.
  const missing: string[] = [];
  let level = target;
  for (;;) {
    const info = await lstat(level).catch(() => null);
    if (info) {
      const real = await realpath(level).catch(() => level);
      checkNotSpecial(real, options.what, refuse);
      const resolved = info.isSymbolicLink() ? await lstat(real).catch(() => null) : info;
      if (!resolved?.isDirectory()) throw refuse(`${options.what} cannot be created: ${level} is not a folder`);
      break;
    }
    missing.unshift(level);
    const parent = dirname(level);
    if (parent === level) break;
    level = parent;
  }
  for (const path of missing) {
    try {
      await mkdir(path, { mode: options.mode });
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
        throw refuse(`cannot create ${options.what} ${path}: ${(error as Error).message}`, error);
    }
  }
  return target;
}

/** Refuses a path under a special file system. */
export function checkNotSpecial(path: string, what: string, refuse: (message: string) => Error): void {
  for (const root of SPECIAL_ROOTS) {
    if (under(resolve(path), root)) throw refuse(`${what} cannot live under ${root}: it holds no ordinary files`);
  }
}
