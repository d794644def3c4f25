/**
 * The attachment files of a backup: each downloaded once into `attachments/ID` (a file already
 * there, from an earlier run, is kept) and described by its line of attachments.jsonl with its
 * size and SHA-256, which the restore checks the bytes against.
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { lstat, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { replaceFile } from '../files/index.ts';
import type { CrmClient } from '../client/index.ts';
import { BACKUP_FILE_MODE, ATTACHMENTS_FOLDER, type AttachmentLine } from './format.ts';

/** The SHA-256 of a file, hex. */
export async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** An attachment to download: its id, and what its entry says of it. */
export interface AttachmentTarget {
  id: number;
  entryId: number;
  filename: string;
  contentType: string | null;
}

/**
 * Downloads an attachment into `DIR/attachments/ID` once: a file already there (an earlier run's)
 * is kept. Gives its line of attachments.jsonl and whether it was downloaded now.
 */
export async function downloadAttachment(
  client: CrmClient,
  dir: string,
  target: AttachmentTarget,
): Promise<{ line: AttachmentLine; downloaded: boolean }> {
  const relative = `${ATTACHMENTS_FOLDER}/${target.id}`;
  const file = join(dir, relative);
  // A plain file this backup wrote; anything else there (a link, a folder) is replaced.
  const existing = await lstat(file).catch(() => null);
  let contentType = target.contentType;
  let downloaded = false;
  if (!existing?.isFile()) {
    if (existing) await rm(file, { recursive: true, force: true });
    await replaceFile(
      file,
      async (temp) => {
        const got = await client.download(target.id, temp);
        contentType ??= got.contentType ?? null;
      },
      { mode: BACKUP_FILE_MODE },
    );
    downloaded = true;
  }
  const bytes = (await lstat(file)).size;
  return {
    line: {
      id: target.id,
      entryId: target.entryId,
      filename: target.filename,
      contentType,
      bytes,
      sha256: await sha256Of(file),
      file: relative,
    },
    downloaded,
  };
}
