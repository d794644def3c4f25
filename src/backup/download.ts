/**
 * The attachment files of a backup: each downloaded once into `attachments/ID` (a file already
 * there, from an earlier run, is kept) and described by its line of attachments.jsonl with its
 * size and SHA-256, which the restore checks the bytes against.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { chmod, lstat, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { temporaryNameFor } from '../util/index.ts';
import type { StepContext, Target } from './backup-steps.ts';
import { ATTACHMENTS_FOLDER, type AttachmentLine } from './format.ts';
import { BACKUP_FILE_MODE } from './work-files.ts';

/** The SHA-256 of a file, hex. */
export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Downloads an attachment once: a file already in the folder (an earlier run) is kept. */
export async function downloadAttachment(ctx: StepContext, target: Target): Promise<AttachmentLine> {
  const relative = `${ATTACHMENTS_FOLDER}/${target.id}`;
  const file = join(ctx.dir, relative);
  // A plain file this backup wrote; anything else there (a link, a folder) is replaced.
  const existing = await lstat(file).catch(() => null);
  let contentType = (target.extra?.contentType as string | null | undefined) ?? null;
  if (!existing?.isFile()) {
    if (existing) await rm(file, { recursive: true, force: true });
    const temp = temporaryNameFor(file);
    try {
      const got = await ctx.client.download(target.id, temp);
      await chmod(temp, BACKUP_FILE_MODE);
      await rename(temp, file);
      contentType ??= got.contentType ?? null;
    } catch (error) {
      await rm(temp, { force: true });
      throw error;
    }
    ctx.downloads += 1;
  }
  const bytes = (await lstat(file)).size;
  return { id: target.id, entryId: Number(target.extra?.entryId), filename: String(target.extra?.filename ?? target.id), contentType, bytes, sha256: await sha256Of(file), file: relative };
}
