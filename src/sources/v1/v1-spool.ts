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
import { createHash } from 'node:crypto';
import { constants } from 'node:fs';
import { readdir, rm, type FileHandle } from 'node:fs/promises';
import { dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { FerryError, type ErrorCode, type ErrorLocation } from '../../errors/index.ts';
import { jsonText, writeFileAtomic } from '../../files/index.ts';
import { makePrivateFolder, openNoFollow } from '../../util/index.ts';
import type { SourceWarning } from '../types.ts';
import type { V1Node } from './v1-flatten.ts';
import { V1PageRepeats, type V1PageRecords } from './v1-pages.ts';
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
    if (line.e)
      record.error = new FerryError(line.e.code, line.e.message, {
        ...(line.e.location ? { location: line.e.location } : {}),
        ...(line.e.hint !== undefined ? { hint: line.e.hint } : {}),
      });
    return { record };
  } catch (error) {
    throw new FerryError(
      'JOURNAL_CORRUPT',
      `line ${number} of the spool ${file} is damaged (${(error as Error).message})`,
      {
        location: { file, line: number },
        cause: error,
        hint: 'Delete the spool folder in the state folder: the next run reads the old account again from its first page (what was written stays written).',
      },
    );
  }
}

const sameKey = (a: V1SpoolKey, b: V1SpoolKey): boolean => JSON.stringify(a) === JSON.stringify(b);

/** The spool is in the state folder, and nothing there is followed: a link planted in it is refused (PATH_UNSAFE). */
const SPOOL_PATH = {
  what: 'the spool of a live read',
  hint: 'Something replaced a file of the spool (in the state folder) with a link. Remove the link: the next run reads the old account again.',
};

/** Opens a file of the spool without following a link; a FIFO planted there is not waited on. */
async function openSpoolFile(file: string, flags: number): Promise<FileHandle> {
  const handle = await openNoFollow(file, flags | constants.O_NONBLOCK, SPOOL_PATH);
  if (!(await handle.stat()).isFile()) {
    await handle.close();
    throw new FerryError('PATH_UNSAFE', `${SPOOL_PATH.what}: ${file} is not a plain file`, {
      location: { file },
      hint: SPOOL_PATH.hint,
    });
  }
  return handle;
}

/** The cursor of a read of `key`; null when there is none (a first read), or one of another read. */
async function readCursor(file: string, key: V1SpoolKey): Promise<Cursor | null> {
  let text: string;
  try {
    const handle = await openSpoolFile(file, constants.O_RDONLY);
    try {
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof FerryError) throw error;
    return null;
  }
  try {
    const parsed = JSON.parse(text) as Cursor;
    if (
      parsed.format === FORMAT &&
      sameKey(parsed.key, key) &&
      Number.isInteger(parsed.bytes) &&
      Number.isInteger(parsed.next)
    )
      return parsed;
  } catch {
    // None, or one cut off (it is replaced whole, so only by hand): the list is read again.
  }
  return null;
}

/** The entries of a spool's bytes from `from` up to `to` (line boundaries both). */
async function* replayEntries(file: string, to: number, from = 0): AsyncGenerator<V1SpoolEntry> {
  if (to <= from) return;
  const stream = (await openSpoolFile(file, constants.O_RDONLY)).createReadStream({ start: from, end: to - 1 });
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

/** Spools open in this process: one writer each. */
const inUse = new Set<string>();

/** The files of the spool at `base`. */
export function v1SpoolFiles(base: string): { records: string; cursor: string } {
  return { records: `${base}.jsonl`, cursor: `${base}.cursor.json` };
}

/**
 * Where in `dir` the spool of a read of `key` is: named by the read, so that the steps of a plan
 * reading the same list (organisations and people both read the parties) share one.
 */
export function v1SpoolBase(dir: string, key: V1SpoolKey): string {
  const digest = createHash('sha256').update(JSON.stringify(key)).digest('hex').slice(0, 12);
  return join(dir, `${key.list}${key.record === null ? '' : `-${key.record}`}-${digest}`);
}

/** Removes the spools in `dir` (a run that read its lists to the end and finished, or a dry run's). */
export async function removeV1Spools(dir: string): Promise<void> {
  const names = await readdir(dir).catch(() => [] as string[]);
  for (const name of names)
    if (/\.(jsonl|cursor\.json|cursor\.json\.tmp)$/.test(name)) await rm(join(dir, name), { force: true });
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
    await makePrivateFolder(dirname(base), SPOOL_PATH);
    let cursor = await readCursor(files.cursor, key);
    const handle = await openSpoolFile(files.records, constants.O_RDWR | constants.O_APPEND | constants.O_CREAT);
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

  /** Bytes of the spool so far, the page being read included. */
  get bytes(): number {
    return this.#bytes;
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
    await writeFileAtomic(file, jsonText(cursor));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    inUse.delete(this.base);
    await this.handle.close();
  }
}

/** How a shared read gets what is not spooled yet: a page of the list, a record completed. */
export interface V1SpoolSource {
  /** The page of the list that starts at `start`, its records parsed as they are taken. */
  page(start: number): Promise<V1PageRecords>;
  /** The record with its sub-lists, or a warning when it was deleted meanwhile. */
  complete(record: RawV1Record): Promise<V1SpoolEntry>;
}

/**
 * The reads of one spool in this process (steps of a plan reading one list side by side). Each
 * reads the spool's entries in order; the first that needs an entry not yet there fetches it, one
 * record (or page) at a time, while the others wait for it. So each page and each record's
 * sub-lists are fetched once, nothing is fetched that no read asked for, and no read waits on the
 * pace of another's consumer (a step whose rows wait for another step's records would otherwise
 * hold that step up).
 */
class V1SpoolShare {
  /** Reads of it under way: counted as they join, before the spool is open. */
  readers = 0;
  #spool: V1Spool | null = null;
  readonly ready: Promise<void>;
  #working: Promise<void> | null = null;
  /** The page being read: its records, taken one at a time, and how many were taken. */
  #page: { read: V1PageRecords; taken: number } | null = null;
  #next = 0;
  #done = false;
  /** Pages fetched in this process, so that a service answering one page forever is stopped. */
  readonly #repeats = new V1PageRepeats();

  constructor(
    readonly base: string,
    key: V1SpoolKey,
  ) {
    this.ready = V1Spool.open(base, key).then((spool) => {
      if (!spool) throw new FerryError('INTERNAL', `the spool ${base} is open twice in this process`);
      this.#spool = spool;
      this.#next = spool.next;
      this.#done = spool.done;
    });
  }

  get spool(): V1Spool {
    return this.#spool as V1Spool;
  }

  async *read(source: V1SpoolSource): AsyncGenerator<V1SpoolEntry> {
    const file = v1SpoolFiles(this.base).records;
    for (let offset = 0; ; ) {
      const end = this.spool.bytes;
      if (offset < end) {
        yield* replayEntries(file, end, offset);
        offset = end;
      } else if (this.#done) return;
      else await (this.#working ??= this.#advance(source).finally(() => (this.#working = null)));
    }
  }

  /** Adds the next record of the page being read (fetching the page first), or records the page at its end. */
  async #advance(source: V1SpoolSource): Promise<void> {
    if (this.#page === null) {
      const read = await source.page(this.#next);
      try {
        // Before any record of it is spooled: a page answered again is refused whole.
        this.#repeats.check(read);
      } catch (error) {
        await read.records.return(undefined);
        await read.dispose();
        throw error;
      }
      this.#page = { read, taken: 0 };
    }
    const page = this.#page;
    const step = await page.read.records.next();
    if (!step.done) {
      await this.spool.add(await source.complete(step.value));
      page.taken += 1;
      return;
    }
    // A page is recorded once every record of it is in the spool; a short page is the last.
    await this.#dropPage();
    const last = page.taken < this.spool.key.pageSize;
    await this.spool.commit(this.#next + page.taken, last);
    this.#next += page.taken;
    this.#done = last;
  }

  async #dropPage(): Promise<void> {
    const page = this.#page;
    this.#page = null;
    if (page) {
      await page.read.records.return(undefined);
      await page.read.dispose();
    }
  }

  /**
   * The last read to leave closes the spool (and lets go of a page it was in). No fetch is under way
   * then: a read awaiting one is a read, and an async generator leaves only between its entries.
   */
  async leave(): Promise<void> {
    this.readers -= 1;
    if (this.readers > 0) return;
    shares.delete(this.base);
    await this.#dropPage();
    await this.#spool?.close();
  }
}

const shares = new Map<string, V1SpoolShare>();

/**
 * A read of the spool at `base` (see V1Spool.open), shared with the other reads of it in this
 * process: the entries recorded, then those fetched by whichever read needs them first.
 */
export async function* readV1Spool(base: string, key: V1SpoolKey, source: V1SpoolSource): AsyncGenerator<V1SpoolEntry> {
  let share = shares.get(base);
  if (!share) {
    share = new V1SpoolShare(base, key);
    shares.set(base, share);
  }
  share.readers += 1;
  try {
    await share.ready;
    yield* share.read(source);
  } finally {
    await share.leave();
  }
}
