/**
 * The one JSON Lines reader of the backup room: a backup's files (read-backup.ts), and the work
 * files of a backup under way (readWorkFile). It reads bytes, not text, so that a line is measured before it becomes a string: a
 * line over the cap is an error naming the file and line, never Node's own `RangeError` for a
 * string too long (a 2 GB line in a crafted backup), and memory stays within the cap.
 */
import { constants } from 'node:fs';
import { type FileHandle, open } from 'node:fs/promises';
import { basename } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { openNoFollow, formatCount } from '../util/index.ts';
import type { Body } from './record-fields.ts';

/**
 * The longest line read, in bytes: a record as the interface gives it, a note with pages of text
 * included, is far smaller. docs/backup.md says so.
 */
export const MAX_LINE_BYTES = 64 * 1024 * 1024;

/** What to read and how it is named in messages. */
export interface JsonLinesSource {
  /** The file's path, as messages name it. */
  file: string;
  /** An open handle of the file (read from its start, closed by the caller), or none to read `file`. */
  handle?: FileHandle;
  /** @default MAX_LINE_BYTES */
  maxLineBytes?: number;
  /** What the error is when a line is too long or not JSON. @default 'SOURCE_UNREADABLE' */
  code?: 'SOURCE_UNREADABLE' | 'EXPORT_WRITE';
  /** What the person can do about a bad line. */
  hint?: string;
  /** Given every chunk of bytes as it is read (to hash the file in the same pass). */
  onBytes?: (bytes: Buffer) => void;
}

/** One line read: its number as a person counts them (the first line is 1) and its value. */
export interface JsonLine {
  line: number;
  value: unknown;
}

const NEWLINE = 0x0a;

/**
 * The values of a JSON Lines file, in order, with their line numbers; blank lines are skipped. A
 * line that is not JSON, or longer than the cap, stops the read with a FerryError naming the file
 * and the line.
 */
export async function* readJsonLines(source: JsonLinesSource): AsyncGenerator<JsonLine> {
  const max = source.maxLineBytes ?? MAX_LINE_BYTES;
  const code = source.code ?? 'SOURCE_UNREADABLE';
  const bad = (line: number, message: string, cause?: unknown): FerryError =>
    new FerryError(code, `${source.file}, line ${line}: ${message}`, {
      location: { file: source.file, line },
      ...(cause === undefined ? {} : { cause }),
      ...(source.hint ? { hint: source.hint } : {}),
    });
  const own = source.handle === undefined;
  const handle = source.handle ?? (await open(source.file, 'r'));
  let line = 0;
  /** The bytes of the line read so far (the parts of it in earlier chunks). */
  let parts: Buffer[] = [];
  let length = 0;
  const parse = (bytes: Buffer): JsonLine | null => {
    line += 1;
    const text = bytes.toString('utf8');
    if (text.trim() === '') return null;
    try {
      return { line, value: JSON.parse(text) as unknown };
    } catch (error) {
      throw bad(line, `not JSON (${(error as Error).message})`, error);
    }
  };
  const tooLong = (): FerryError => bad(line + 1, `a line longer than ${formatCount(max)} bytes, which no record is`);
  try {
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const { bytesRead } = await handle.read(buffer, 0, buffer.length, null);
      if (bytesRead === 0) break;
      source.onBytes?.(buffer.subarray(0, bytesRead));
      let start = 0;
      for (;;) {
        const end = buffer.indexOf(NEWLINE, start);
        if (end === -1 || end >= bytesRead) break;
        if (length + (end - start) > max) throw tooLong();
        const bytes =
          parts.length === 0 ? buffer.subarray(start, end) : Buffer.concat([...parts, buffer.subarray(start, end)]);
        parts = [];
        length = 0;
        const read = parse(bytes);
        if (read) yield read;
        start = end + 1;
      }
      if (start < bytesRead) {
        length += bytesRead - start;
        if (length > max) throw tooLong();
        parts.push(Buffer.from(buffer.subarray(start, bytesRead)));
      }
    }
    if (length > 0) {
      const read = parse(Buffer.concat(parts));
      if (read) yield read;
    }
  } finally {
    if (own) await handle.close();
  }
}

/** A value as one line of a JSON Lines file. */
export function jsonLine(value: unknown): string {
  return `${JSON.stringify(value)}\n`;
}

const WORK_HINT = 'Give the backup another --out folder, or remove this one to back up everything again.';

/**
 * Reads the records of a work file or of a file of the folder (which this run wrote or checked);
 * a file not there (yet) has none.
 */
export async function* readWorkFile(file: string): AsyncGenerator<Body> {
  let handle;
  try {
    handle = await openNoFollow(file, constants.O_RDONLY, {
      what: `the backup's file ${basename(file)}`,
      hint: WORK_HINT,
    });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    for await (const { value } of readJsonLines({ file, handle, code: 'EXPORT_WRITE', hint: WORK_HINT }))
      yield value as Body;
  } finally {
    await handle.close();
  }
}
