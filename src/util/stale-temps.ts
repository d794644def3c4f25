import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { TEMPORARY_NAME } from '../files/index.ts';
import { processAlive } from './process-alive.ts';

/**
 * Removes the temporary files that atomic writes into `folder` left when their process could not
 * (killed with `kill -9`, a power cut): whatever the file they were writing. A file of a process
 * still running is left alone.
 */
export async function removeStaleTemps(folder: string): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    const match = TEMPORARY_NAME.exec(name);
    if (match && Number(match[1]) !== process.pid && !processAlive(Number(match[1])))
      await rm(join(folder, name), { force: true });
  }
}
