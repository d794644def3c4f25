import { createHash, randomBytes } from 'node:crypto';
import { basename, dirname, join } from 'node:path';

/** The most bytes a file name takes on the file systems crm-ferry writes to (ext4, APFS, NTFS in UTF-8). */
export const MAX_FILE_NAME_BYTES = 255;

/** Bytes of a shortened name's tail: `~` and 12 hexadecimal digits of the full name's sha256. */
const HASH_TAIL = 13;

/** The name of a file whose own name is empty, `.` or `..` (or holds nothing else). */
const FALLBACK_FILE_NAME = 'attachment';

/**
 * `name` (a file name from outside: an attachment's, as the service gives it) as one file name the
 * file system takes, never a path: `/`, a backslash, the zero byte and control characters become `_`, and a
 * name that is then empty, `.` or `..` becomes `attachment`. The result is the name itself when it
 * fits in `maxBytes` bytes of UTF-8; otherwise its start, cut on a character, then `~` and 12
 * hexadecimal digits of the whole name's sha256, then its extension (when the extension is short),
 * so two long names that start alike stay apart, and the same name always gives the same file.
 * Export and restore both name files through here, so a backup's files are found again by the
 * restore.
 */
export function fileNameFor(given: string, maxBytes = MAX_FILE_NAME_BYTES): string {
  const plain = given.replace(/[/\\\u0000-\u001f\u007f]/g, '_').trim();
  const name = plain === '' || plain === '.' || plain === '..' ? FALLBACK_FILE_NAME : plain;
  if (Buffer.byteLength(name, 'utf8') <= maxBytes) return name;
  const tail = `~${createHash('sha256')
    .update(name, 'utf8')
    .digest('hex')
    .slice(0, HASH_TAIL - 1)}`;
  const dot = name.lastIndexOf('.');
  const extension = dot > 0 && Buffer.byteLength(name.slice(dot), 'utf8') <= 16 ? name.slice(dot) : '';
  const room = maxBytes - HASH_TAIL - Buffer.byteLength(extension, 'utf8');
  let stem = '';
  let used = 0;
  for (const character of name.slice(0, name.length - extension.length)) {
    const size = Buffer.byteLength(character, 'utf8');
    if (used + size > room) break;
    stem += character;
    used += size;
  }
  return `${stem}${tail}${extension}`;
}

/**
 * A temporary name beside `file` that nobody can have guessed and planted a link at, short enough
 * for the file system even when `file`'s own name takes all 255 bytes: `.NAME.PID.N.tmp`, N 48
 * random bits in decimal. The process id in it lets removeStaleTemps tell a dead writer's file
 * from a live one's.
 */
export function temporaryNameFor(file: string): string {
  return join(
    dirname(file),
    `.${fileNameFor(basename(file), 200)}.${process.pid}.${randomBytes(6).readUIntBE(0, 6)}.tmp`,
  );
}

/** `.NAME.PID.N.tmp`: a temporary name of an atomic write (N in hex in files of earlier versions); the process id is group 1. */
export const TEMPORARY_NAME = /^\..+\.(\d+)\.[0-9a-f]+\.tmp$/;
