import { chmod, rename, rm, writeFile } from 'node:fs/promises';
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
  let created = false;
  try {
    await writeFile(temp, data, { mode, flag: 'wx' });
    created = true;
    // The umask may have taken bits off the mode asked for; a tighter mode is kept as asked.
    await chmod(temp, mode);
    await rename(temp, file);
  } catch (error) {
    if (created) await rm(temp, { force: true, recursive: false }).catch(() => undefined);
    throw error;
  }
}

/** `value` as the JSON files of crm-ferry are written: two-space indented, with a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
