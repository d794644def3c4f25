import { chmod, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { processAlive } from './alive.ts';
import { temporaryNameFor } from './safe-path.ts';

export interface WriteFileAtomicOptions {
  /** Mode of the file written. @default 0o600 (state, credentials and reports are the person's own) */
  mode?: number;
}

/**
 * Writes `data` whole under a temporary name and renames it over `file`: a reader sees the old
 * file or the new one, never half of one. The temporary file is created fresh (exclusive create,
 * which follows no link), and the rename replaces a link at `file` instead of writing through it,
 * so nothing planted in the folder redirects the write. On failure the temporary file is removed
 * and the error thrown as it came, for the caller to say what the file was.
 */
export async function writeFileAtomic(file: string, data: string | Buffer, options: WriteFileAtomicOptions = {}): Promise<void> {
  const mode = options.mode ?? 0o600;
  // Beside the file, so that the rename stays on one file system.
  const temp = temporaryNameFor(file);
  try {
    await writeFile(temp, data, { mode, flag: 'wx' });
    // The umask may have taken bits off the mode asked for; a tighter mode is kept as asked.
    await chmod(temp, mode);
    await rename(temp, file);
  } catch (error) {
    // A full disk fails the write after the exclusive create made the file: it is ours to remove
    // then too. Only a name that was there already (EEXIST) is someone else's.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') await rm(temp, { force: true, recursive: false }).catch(() => undefined);
    throw error;
  }
}

/** `.NAME.PID.N.tmp`: the temporary name of an atomic write (N in hex, or a count); the process that wrote it is in it. */
const TEMP_NAME = /^\..+\.(\d+)\.[0-9a-f]+\.tmp$/;

/**
 * Removes the temporary files that atomic writes into `folder` left when their process could not
 * (killed with `kill -9`, a power cut): whatever the file they were writing. A file of a process
 * still running is left alone.
 */
export async function removeStaleTemps(folder: string): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    const match = TEMP_NAME.exec(name);
    if (match && Number(match[1]) !== process.pid && !processAlive(Number(match[1]))) await rm(join(folder, name), { force: true });
  }
}

/** `value` as the JSON files of crm-ferry are written: two-space indented, with a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
