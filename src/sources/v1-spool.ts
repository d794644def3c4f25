/**
 * The spool of a live v1 read: every record a read of the old account fetched (completed with its
 * sub-lists), kept in the run's state folder page by page, with a cursor saying where the list
 * goes on. A later read of the same list (the run after its set-up read it, the run going on after
 * a crash) takes the records from the spool, without a request, and reads live only from the
 * recorded page on.
 *
 * Two files per spool: `BASE.jsonl`, one line per record (or per warning the read gave, so that a
 * replay says it again), appended as each record is completed; and `BASE.cursor.json`, replaced
 * whole after each page once the lines before it are synced: what was read (the key), the `start`
 * of the next page, how many bytes of the spool belong to recorded pages, and whether the list was
 * read to its end. Lines past those bytes are of a page whose cursor was never written (the process
 * died within it): they are cut off and the page is read again. Neither file holds a token: the
 * key names the address, never credentials.
 */
import { createReadStream } from 'node:fs';
import { mkdir, open, readFile, rm, type FileHandle } from 'node:fs/promises';
import { dirname } from 'node:path';
import { createInterface } from 'node:readline';
import { FerryError, type ErrorCode, type ErrorLocation } from '../errors/index.ts';
import { jsonText, writeFileAtomic } from '../util/index.ts';
import type { SourceWarning } from './types.ts';
import type { V1Node } from './v1-flatten.ts';
import type { RawV1Record } from './v1-xml.ts';

/** What a spool holds the records of: a read with another key reads the account again. */
export interface V1SpoolKey {
  /** The account's address (origin): no credentials. */
  address: string;
  list: string;
  /** The record kind asked for (history completes records otherwise); null for the list's own. */
  record: string | null;
  wireFormat: string;
  /** `lastmodified` as an ISO time; null for the whole list. */
  since: string | null;
  pageSize: number;
}

/** One line of the spool: a record, or a warning the read gave where it stands. */
export type V1SpoolEntry = { record: RawV1Record } | { warning: SourceWarning };

const FORMAT = 1;

interface Cursor {
  format: number;
  key: V1SpoolKey;
  /** `start` of the next page of the list. */
  next: number;
  /** Bytes of the spool that belong to recorded pages. */
  bytes: number;
  /** The list was read to its end. */
  done: boolean;
}

/** A node as a short array: `[name, text]`, or `[name, text, children]`. */
type Packed = [string, string | null] | [string, string | null, Packed[]];

function pack(node: V1Node): Packed {
  return node.children.length === 0 ? [node.name, node.text] : [node.name, node.text, node.children.map(pack)];
}

function unpack(packed: Packed): V1Node {
  return { name: packed[0], text: packed[1], children: (packed[2] ?? []).map(unpack) };
}

interface RecordLine {
  n: Packed;
  p: string;
  l: number;
  e?: { code: ErrorCode; message: string; location?: ErrorLocation; hint?: string };
}

function lineOf(entry: V1SpoolEntry): string {
  if ('warning' in entry) return `${JSON.stringify({ w: entry.warning })}\n`;
  const { record } = entry;
  const line: RecordLine = { n: pack(record.node), p: record.elementPath, l: record.line };
  if (record.error) {
    const { code, message, location, hint } = record.error;
    line.e = { code, message, ...(location ? { location } : {}), ...(hint !== undefined ? { hint } : {}) };
  }
  return `${JSON.stringify({ r: line })}\n`;
}

function entryOf(text: string, file: string, number: number): V1SpoolEntry {
  try {
    const parsed = JSON.parse(text) as { r?: RecordLine; w?: SourceWarning };
    if (parsed.w) return { warning: parsed.w };
    const line = parsed.r as RecordLine;
    const record: RawV1Record = { node: unpack(line.n), elementPath: line.p, line: line.l };
    if (line.e) record.error = new FerryError(line.e.code, line.e.message, { ...(line.e.location ? { location: line.e.location } : {}), ...(line.e.hint !== undefined ? { hint: line.e.hint } : {}) });
    return { record };
  } catch (error) {
    throw new FerryError('JOURNAL_CORRUPT', `line ${number} of the spool ${file} is damaged (${(error as Error).message})`, {
      location: { file, line: number },
      cause: error,
      hint: 'Delete the spool folder in the state folder: the next run reads the old account again from its first page (what was written stays written).',
    });
  }
}

const sameKey = (a: V1SpoolKey, b: V1SpoolKey): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The cursor of a read of `key`; null when there is none (a first read), or one of another read. */
async function readCursor(file: string, key: V1SpoolKey): Promise<Cursor | null> {
  try {
    const parsed = JSON.parse(await readFile(file, 'utf8')) as Cursor;
    if (parsed.format === FORMAT && sameKey(parsed.key, key) && Number.isInteger(parsed.bytes) && Number.isInteger(parsed.next)) return parsed;
  } catch {
    // None, or one cut off (it is replaced whole, so only by hand): the list is read again.
  }
  return null;
}

/** The entries of the first `bytes` of a spool. */
async function* replayEntries(file: string, bytes: number): AsyncGenerator<V1SpoolEntry> {
  if (bytes === 0) return;
  const stream = createReadStream(file, { start: 0, end: bytes - 1 });
  let number = 0;
  try {
    for await (const text of createInterface({ input: stream, crlfDelay: Infinity })) {
      number += 1;
      if (text !== '') yield entryOf(text, file, number);
    }
  } finally {
    stream.destroy();
  }
}

/** Spools open in this process: a second read of one spool at once reads live without it. */
const inUse = new Set<string>();

/** The files of the spool at `base`. */
export function v1SpoolFiles(base: string): { records: string; cursor: string } {
  return { records: `${base}.jsonl`, cursor: `${base}.cursor.json` };
}

/** Removes a spool (a run that read its list to the end and finished, or a dry run's). */
export async function removeV1Spool(base: string): Promise<void> {
  const files = v1SpoolFiles(base);
  for (const file of [files.cursor, `${files.cursor}.tmp`, files.records]) await rm(file, { force: true });
}

export class V1Spool {
  #bytes: number;
  #closed = false;

  private constructor(
    readonly base: string,
    readonly key: V1SpoolKey,
    private readonly handle: FileHandle,
    /** Bytes of recorded pages found at open: what replay() reads. */
    readonly replayBytes: number,
    /** `start` of the next page to read live. */
    readonly next: number,
    /** The list was read to its end: nothing to read live. */
    readonly done: boolean,
  ) {
    this.#bytes = replayBytes;
  }

  /**
   * Opens the spool at `base` for a read of `key`: what a read of the same key recorded is kept
   * (cut back to its last recorded page), anything else is dropped. Null when this process reads
   * that spool already.
   */
  static async open(base: string, key: V1SpoolKey): Promise<V1Spool | null> {
    if (inUse.has(base)) return null;
    const files = v1SpoolFiles(base);
    await mkdir(dirname(base), { recursive: true, mode: 0o700 });
    let cursor = await readCursor(files.cursor, key);
    const handle = await open(files.records, 'a+', 0o600);
    try {
      const size = (await handle.stat()).size;
      // A spool shorter than its cursor says lost lines: nothing of it can be trusted.
      if (cursor && size < cursor.bytes) cursor = null;
      await handle.truncate(cursor?.bytes ?? 0);
    } catch (error) {
      await handle.close();
      throw error;
    }
    inUse.add(base);
    return new V1Spool(base, key, handle, cursor?.bytes ?? 0, cursor?.next ?? 0, cursor?.done ?? false);
  }

  /** The entries of the recorded pages, in the order they were read. */
  replay(): AsyncGenerator<V1SpoolEntry> {
    return replayEntries(v1SpoolFiles(this.base).records, this.replayBytes);
  }

  /**
   * The entries of a spool that holds the whole list read with `key`, read without opening it
   * (a read of it may be under way beside, appending nothing since it is whole); null when there is
   * no such spool.
   */
  static async whole(base: string, key: V1SpoolKey): Promise<AsyncGenerator<V1SpoolEntry> | null> {
    const files = v1SpoolFiles(base);
    const cursor = await readCursor(files.cursor, key);
    if (!cursor?.done) return null;
    return replayEntries(files.records, cursor.bytes);
  }

  /** Appends an entry of the page being read; it counts once the page is committed. */
  async add(entry: V1SpoolEntry): Promise<void> {
    const text = lineOf(entry);
    await this.handle.write(text);
    this.#bytes += Buffer.byteLength(text);
  }

  /** Records a page: its lines synced, then the cursor says the list goes on at `next` (or ends). */
  async commit(next: number, done: boolean): Promise<void> {
    await this.handle.sync();
    const cursor: Cursor = { format: FORMAT, key: this.key, next, bytes: this.#bytes, done };
    const file = v1SpoolFiles(this.base).cursor;
    await writeFileAtomic(file, jsonText(cursor), { temp: `${file}.tmp` });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    inUse.delete(this.base);
    await this.handle.close();
  }
}
