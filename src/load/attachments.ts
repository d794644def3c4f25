import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { basename, extname } from 'node:path';
import type { AttachmentUse, RowWarning } from '../mapping/index.ts';
import { findAttachments } from '../plan/index.ts';

type Body = Record<string, unknown>;

/**
 * A file a note carries, as the importer writes it into the note's journaled body: what makes a
 * changed or added file a change on the next run (its content hash), and what the upload sends.
 * The service never sees this shape; uploads turn it into tokens.
 */
export interface AttachmentFile {
  path: string;
  filename: string;
  contentType: string;
  size: number;
  sha256: string;
}

/**
 * Content types by extension, for files whose source names no type. The common office, image,
 * text and archive formats; anything else is sent as application/octet-stream.
 */
const CONTENT_TYPES: Readonly<Record<string, string>> = {
  '.pdf': 'application/pdf',
  '.doc': 'application/msword',
  '.docx': 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  '.xls': 'application/vnd.ms-excel',
  '.xlsx': 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  '.ppt': 'application/vnd.ms-powerpoint',
  '.pptx': 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  '.odt': 'application/vnd.oasis.opendocument.text',
  '.ods': 'application/vnd.oasis.opendocument.spreadsheet',
  '.rtf': 'application/rtf',
  '.txt': 'text/plain',
  '.csv': 'text/csv',
  '.htm': 'text/html',
  '.html': 'text/html',
  '.xml': 'application/xml',
  '.json': 'application/json',
  '.eml': 'message/rfc822',
  '.msg': 'application/vnd.ms-outlook',
  '.ics': 'text/calendar',
  '.vcf': 'text/vcard',
  '.png': 'image/png',
  '.jpg': 'image/jpeg',
  '.jpeg': 'image/jpeg',
  '.gif': 'image/gif',
  '.bmp': 'image/bmp',
  '.tif': 'image/tiff',
  '.tiff': 'image/tiff',
  '.svg': 'image/svg+xml',
  '.webp': 'image/webp',
  '.heic': 'image/heic',
  '.mp3': 'audio/mpeg',
  '.wav': 'audio/wav',
  '.mp4': 'video/mp4',
  '.mov': 'video/quicktime',
  '.zip': 'application/zip',
  '.gz': 'application/gzip',
  '.7z': 'application/x-7z-compressed',
};

const OCTET_STREAM = 'application/octet-stream';

/** A type/subtype, as a Content-Type header takes it. */
const MIME = /^[A-Za-z0-9][\w.+-]*\/[A-Za-z0-9][\w.+-]*$/;

/** The content type a file is uploaded with: the source's when it names a valid one, else the extension's. */
export function contentTypeOf(path: string, given: string | null): string {
  const named = given?.trim().toLowerCase();
  if (named && MIME.test(named)) return named;
  return CONTENT_TYPES[extname(path).toLowerCase()] ?? OCTET_STREAM;
}

async function sha256Of(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** A file a note names, found on disk (or not). */
/** The note's files as findAttachments finds them, each read for its content hash, with its content type. */
export async function readAttachments(
  uses: readonly AttachmentUse[],
  field = 'attachment',
): Promise<{ files: AttachmentFile[]; warnings: RowWarning[]; problem: string | null }> {
  const { found, warnings, problem } = await findAttachments(uses, field);
  const files: AttachmentFile[] = [];
  if (problem) return { files, warnings, problem };
  for (const { use, size } of found) {
    try {
      const filename = use.filename ?? basename(use.path);
      files.push({
        path: use.path,
        filename,
        contentType: contentTypeOf(filename, use.contentType),
        size,
        sha256: await sha256Of(use.path),
      });
    } catch (error) {
      return { files, warnings, problem: `cannot read the attachment ${use.path}: ${(error as Error).message}` };
    }
  }
  return { files, warnings, problem: null };
}

/** The files a journaled note body holds (what an earlier run attached), or none. */
export function attachmentFilesOf(body: Body | null | undefined): AttachmentFile[] {
  const list = body?.attachments;
  if (!Array.isArray(list)) return [];
  return list.filter(
    (item): item is AttachmentFile =>
      item !== null && typeof item === 'object' && typeof (item as AttachmentFile).sha256 === 'string',
  );
}

/** What an attachment is known by: its file name and content (or size, where only the service's list is at hand). */
function sameFile(
  a: { filename?: unknown; size?: unknown; sha256?: unknown },
  b: { filename?: unknown; size?: unknown; sha256?: unknown },
): boolean {
  if (a.filename !== b.filename || Number(a.size) !== Number(b.size)) return false;
  return typeof a.sha256 !== 'string' || typeof b.sha256 !== 'string' || a.sha256 === b.sha256;
}

/**
 * How a note's attachments change from what an earlier run attached (`before`) to the row's files
 * now: the files to upload and add, and the service's attachments to remove (a changed file is
 * both). `current` is the note as the service has it, for the ids of those to remove; an
 * attachment someone added in the service is left alone.
 */
export function planAttachments(
  before: readonly AttachmentFile[],
  after: readonly AttachmentFile[],
  current: Body | null,
): { add: AttachmentFile[]; remove: number[] } {
  const add = after.filter((file) => !before.some((old) => sameFile(old, file)));
  const gone = before.filter((old) => !after.some((file) => sameFile(old, file)));
  const held = Array.isArray(current?.attachments) ? (current.attachments as Body[]) : [];
  const remove: number[] = [];
  for (const old of gone) {
    const match = held.find(
      (item) =>
        typeof item.id === 'number' &&
        !remove.includes(item.id) &&
        sameFile(item, { filename: old.filename, size: old.size }),
    );
    if (match) remove.push(match.id as number);
  }
  return { add, remove };
}

/** The row's files the service's note does not hold (by file name and size): what `verify` reports as differing. */
export function attachmentsLacking(files: readonly AttachmentFile[], current: Body): AttachmentFile[] {
  const held = Array.isArray(current.attachments) ? (current.attachments as Body[]) : [];
  return files.filter((file) => !held.some((item) => sameFile(item, { filename: file.filename, size: file.size })));
}
