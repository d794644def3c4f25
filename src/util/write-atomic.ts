import { rename, rm, writeFile } from 'node:fs/promises';

/**
 * Writes `file` whole under a temporary name beside it and renames it into place: a reader (or a
 * process killed half-way) sees the old file or the new one, never half of one.
 */
export async function writeFileAtomic(file: string, data: string | Buffer, options: { mode?: number } = {}): Promise<void> {
  const temp = `${file}.${process.pid}.tmp`;
  try {
    await writeFile(temp, data, { mode: options.mode ?? 0o644 });
    await rename(temp, file);
  } catch (error) {
    await rm(temp, { force: true }).catch(() => undefined);
    throw error;
  }
}
