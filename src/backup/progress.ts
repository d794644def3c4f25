/**
 * The state of a backup under way (`.backup-progress.json`): the account, when it began, and for
 * each step whether it is done, the address of its next page (lists) or how many targets are done
 * (each steps), and how many bytes of its work file belong to completed pages. Written under a
 * temporary name and renamed, after the work files it speaks of are on disk.
 */
import { readFile } from 'node:fs/promises';
import { z } from 'zod';
import { FerryError } from '../errors/index.ts';
import { jsonText, writeFileAtomic } from '../files/index.ts';
import { BACKUP_FILE_MODE, BACKUP_FORMAT } from './format.ts';

const count = z.number().int().min(0);

export const stepProgressSchema = z.object({
  done: z.boolean(),
  /** List steps: the path of the next page to read; null before the first page. */
  next: z.string().nullable(),
  /** Each steps: how many targets are done. */
  index: count,
  /** Bytes of the work file that belong to completed pages (the rest is cut on resume). */
  bytes: count,
  records: count,
});
export type StepProgress = z.output<typeof stepProgressSchema>;

export const progressSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  account: z.string(),
  startedAt: z.string(),
  since: z.string().nullable(),
  phase: z.enum(['read', 'commit']),
  steps: z.record(z.string(), stepProgressSchema),
  requests: count,
  downloaded: count,
});
export type Progress = z.output<typeof progressSchema>;

const HINT = 'Give the backup another --out folder, or remove this one to back up everything again.';

/** A file of the backup folder that the backup cannot go on from. */
export function damaged(file: string, message: string): FerryError {
  return new FerryError('EXPORT_WRITE', `${file} is not a backup crm-ferry can continue (${message})`, {
    location: { file },
    hint: HINT,
  });
}

/** A JSON file of the folder checked against its schema; undefined when it is not there. */
export async function readChecked<T>(file: string, schema: z.ZodType<T>, what: string): Promise<T | undefined> {
  let value: unknown;
  try {
    value = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new FerryError('EXPORT_WRITE', `${file} is damaged (${(error as Error).message})`, {
      location: { file },
      hint: HINT,
    });
  }
  const parsed = schema.safeParse(value);
  if (!parsed.success) throw damaged(file, `its ${what} is not one`);
  return parsed.data;
}

export async function saveProgress(file: string, progress: Progress): Promise<void> {
  await writeFileAtomic(file, jsonText(progress), { mode: BACKUP_FILE_MODE });
}
