import { basename, dirname, join } from 'node:path';
import { AtomicFile } from '../files/index.ts';

// Shared with every atomic write: exports clear their folder with it.
export { removeStaleTemps } from '../util/index.ts';

/** `out.csv` -> `out.deleted.csv` */
export function deletedFileOf(target: string, extension: string): string {
  const base = basename(target);
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  return join(dirname(target), `${stem}.deleted.${extension}`);
}

/** Commits the export's file, then the ids deleted since the last export beside it, when there are any to say. */
export async function commitWithDeleted(
  file: AtomicFile | null,
  target: string | null,
  deleted: string | null,
  extension: string,
): Promise<string[]> {
  const files: string[] = [];
  if (file) {
    await file.commit();
    files.push(file.target);
  }
  if (deleted !== null && target !== null) {
    const side = new AtomicFile(deletedFileOf(target, extension));
    try {
      await side.write(deleted);
      await side.commit();
    } catch (error) {
      // The export's file is in place by now; the deleted ids leave no half-written file beside it.
      await side.abort();
      throw error;
    }
    files.push(side.target);
  }
  return files;
}
