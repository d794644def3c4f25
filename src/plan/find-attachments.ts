import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import type { AttachmentUse, RowWarning } from '../mapping/index.ts';

// Here rather than beside the upload (load/attachments.ts): validate checks the files without the
// importer, and the importer reads them through this one check.

export interface FoundFile {
  use: AttachmentUse;
  size: number;
}

/**
 * Looks for the note's files without reading them: what `validate` needs to say beforehand what a
 * run will warn about or reject. A file that is not there is a NOT_CARRIED warning (the note is
 * written without it, and a re-run once the file is in place adds it). A path that is there but is
 * no readable file is the row's `problem`: the row is rejected, the run goes on.
 */
export async function findAttachments(
  uses: readonly AttachmentUse[],
  field = 'attachment',
): Promise<{ found: FoundFile[]; warnings: RowWarning[]; problem: string | null }> {
  const found: FoundFile[] = [];
  const warnings: RowWarning[] = [];
  for (const use of uses) {
    try {
      const info = await stat(use.path);
      if (!info.isFile()) return { found, warnings, problem: `the attachment ${use.path} is not a file` };
      found.push({ use, size: info.size });
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        return { found, warnings, problem: `cannot read the attachment ${use.path}: ${(error as Error).message}` };
      warnings.push({
        code: 'NOT_CARRIED',
        field,
        message: `the attachment file ${use.path} is not there: the note is written without it (put the file there and run again to add it)`,
        value: basename(use.path),
      });
    }
  }
  return { found, warnings, problem: null };
}
