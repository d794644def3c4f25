import { chmod, rename, rm, writeFile } from 'node:fs/promises';

export interface WriteFileAtomicOptions {
  /** Mode of the file written. @default 0o600 (state, credentials and reports are the person's own) */
  mode?: number;
  /** The temporary name, beside the file so that the rename stays on one file system. @default `${file}.${process.pid}.tmp` */
  temp?: string;
}

/**
 * Writes `data` whole under a temporary name and renames it over `file`: a reader sees the old
 * file or the new one, never half of one. On failure the temporary file is removed and the error
 * thrown as it came, for the caller to say what the file was.
 */
export async function writeFileAtomic(file: string, data: string | Buffer, options: WriteFileAtomicOptions = {}): Promise<void> {
  const mode = options.mode ?? 0o600;
  const temp = options.temp ?? `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temp, data, { mode });
    // writeFile keeps the mode of a file that was already there.
    await chmod(temp, mode);
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true, recursive: false }).catch(() => undefined);
    throw error;
  }
}

/** `value` as the JSON files of crm-ferry are written: two-space indented, with a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
