import { constants } from 'node:fs';
import { type FileHandle, lstat } from 'node:fs/promises';
import { basename, dirname } from 'node:path';
import { crc32 } from 'node:zlib';
import { FerryError } from '../errors/index.ts';
import { openNoFollow } from '../util/index.ts';
import { JournalRows, type PendingIntent, RowView, type RowState, readLineAt } from './rows.ts';

export type { RowState } from './rows.ts';

type Body = Record<string, unknown>;

/** One line of a step's journal. `k` is the source row's key within its step. */
export type JournalEntry =
  /** Written and made durable before a request that changes the account is sent. */
  | PendingIntent
  /** The service confirmed the write, or reconciliation found it applied; `match`: the row was given a record the account had. */
  | {
      t: 'done';
      k: string;
      op: 'create' | 'update' | 'delete' | 'match';
      run: string;
      at: string;
      id: number;
      fp: string;
      body?: Body;
      origin?: 'created' | 'matched';
    }
  /** Reconciliation found the intent was not applied: the row is free to be written again. */
  | { t: 'cancel'; k: string; run: string; at: string }
  /** The service (or the importer) refused the row; a later run tries again. */
  | { t: 'reject'; k: string; run: string; at: string; code: string; message: string; status?: number }
  /**
   * A run started or ended. `unread`: at the end of a run that read the whole input, how many of
   * its rows could not be read at all (they have no key, so no reject line of their own). `key`:
   * at the start, the mapping's key as JSON (what the rows' keys were made with).
   */
  | { t: 'run'; run: string; at: string; event: 'start' | 'end' | 'interrupted'; unread?: number; key?: string };

/**
 * What a journal held when its runs last said so: its first `lines` lines, `bytes` long, whose
 * bytes have the CRC-32 `crc` (one checksum chained over every line, so a line changed anywhere
 * in them shows, not only a line cut off). The state folder keeps it for each journal (see
 * StateDir), and a journal that no longer starts with what its seal says is refused: a journal
 * cut short or replaced by an older copy would make the next run write every row it lost again.
 */
export interface JournalSeal {
  lines: number;
  bytes: number;
  crc: string;
}

/** The seal of an empty journal. */
export const EMPTY_SEAL: JournalSeal = Object.freeze({ lines: 0, bytes: 0, crc: '00000000' });

/** The seal of a journal after `bytes` (holding `lines` whole lines) are appended to one sealed as `seal`. */
export function sealAfter(seal: JournalSeal, bytes: Buffer, lines: number): JournalSeal {
  return {
    lines: seal.lines + lines,
    bytes: seal.bytes + bytes.length,
    crc: hex(crc32(bytes, Number.parseInt(seal.crc, 16))),
  };
}

export interface LoadedJournal {
  /** The rows by key, compact (see JournalRows): their bodies are read from the journal when asked for. */
  rows: JournalRows;
  /** Run ids in the order their first line appears. */
  runs: string[];
  lines: number;
  /** Whether a torn or unreadable last line was dropped. */
  tornTail: boolean;
  /** Bytes of whole, checked lines: where the next line goes. */
  validLength: number;
  /** The seal of the whole, checked lines (`seal.bytes` is `validLength`): what a writer goes on from. */
  seal: JournalSeal;
  /** Rows that could not be read in the last run that read the whole input (0 when none did). */
  unread: number;
  /** The mapping's key (as JSON) of the last run that said it, or null. */
  key: string | null;
}

const NEWLINE = 0x0a;
const TAB = 0x09;

function hex(crc: number): string {
  return crc.toString(16).padStart(8, '0');
}

/** CRC-32 of the UTF-8 bytes (a string is encoded by crc32 itself, with no Buffer made for it). */
function checksum(bytes: Buffer | string): string {
  return hex(crc32(bytes));
}

/** A journal line: the entry as JSON, a tab, and the CRC-32 of the JSON, so a torn or garbled line shows. */
export function journalLine(entry: JournalEntry): string {
  let json: string;
  if ((entry.t === 'intent' || entry.t === 'done') && entry.body !== undefined) {
    // The body goes last, so that loading can keep it as text (see parseLine).
    const { body, ...head } = entry;
    json = `${JSON.stringify(head).slice(0, -1)}${BODY_MARK}${JSON.stringify(body)}}`;
  } else {
    json = JSON.stringify(entry);
  }
  return `${json}\t${checksum(json)}\n`;
}

/**
 * Where a line's body starts. Every property before it is a plain value or \`before\` (whose keys
 * are a record's top-level fields, none named body), and a quote inside a string is escaped, so
 * the first occurrence is the body's.
 */
const BODY_MARK = ',"body":';

/**
 * Where an entry read from disk keeps its body as the JSON text it was read as: a journal of a
 * million rows holds a million bodies, and parsed into objects they would take gigabytes and most
 * of the loading time. Rows parse theirs when asked (Row.body); pending intents and the entries
 * readJournal hands out are parsed.
 */
const BODY_TEXT = Symbol('bodyText');
/** Where the line of an entry with a body is in its journal: byte offset and length (newline included). */
const LINE_AT = Symbol('lineAt');

const BODY_MARK_BYTES = Buffer.from(',"body":');

/**
 * The entry of a line without its newline (read at byte `at` of its journal), or null when the
 * line is damaged. Without `withBody` (loading), a body is not even decoded: the entry says where
 * its line is, and the body is read from there when asked for.
 */
function parseLine(line: Buffer, at = -1, withBody = true): JournalEntry | null {
  const tab = line.lastIndexOf(TAB);
  if (tab < 0 || line.length - tab !== 9) return null;
  const json = line.subarray(0, tab);
  if (checksum(json) !== line.subarray(tab + 1).toString('latin1')) return null;
  try {
    // The mark is ASCII: its first place in the bytes is its first place in the text.
    const mark = json.indexOf(BODY_MARK_BYTES);
    if (mark < 0) {
      const entry = JSON.parse(json.toString('utf8')) as JournalEntry;
      return entry && typeof entry === 'object' && typeof entry.t === 'string' ? entry : null;
    }
    const entry = JSON.parse(`${json.toString('utf8', 0, mark)}}`) as JournalEntry & Located;
    if (withBody || at < 0) entry[BODY_TEXT] = json.toString('utf8', mark + BODY_MARK_BYTES.length, json.length - 1);
    if (at >= 0) entry[LINE_AT] = [at, line.length + 1];
    return typeof entry.t === 'string' ? entry : null;
  } catch {
    return null;
  }
}

interface Scan {
  lines: number;
  tornTail: boolean;
  validLength: number;
  seal: JournalSeal;
}

/** How to refuse a journal that is not what its runs wrote; `what` says how it differs. */
function notWhatWasWritten(file: string, what: string): FerryError {
  return new FerryError('JOURNAL_CORRUPT', `the journal ${file} is not what its runs wrote: ${what}`, {
    location: { file },
    hint: 'It was cut short, replaced by an older copy, or changed by hand. Put back the journal the runs wrote (from a copy), or run the same command with --reconcile: every row the journal does not know is then looked up in the account before it is written, so that nothing is created twice.',
  });
}

/**
 * Opens a journal (or another file of the state folder that crm-ferry names itself) without
 * following a link: neither the file nor its folder may be one, since a link planted there would
 * carry the run's lines (customer data) to a file elsewhere, or read another file as the journal.
 * `flags` are open(2) flags.
 */
export async function openStateFile(file: string, flags: number, what: string): Promise<FileHandle> {
  const hint = `Something replaced part of the state folder with a link. Remove the link and put back what was there (the state folder is written by crm-ferry only), or give another --state-dir.`;
  const folder = await lstat(dirname(file)).catch(() => null);
  if (folder?.isSymbolicLink()) {
    throw new FerryError(
      'PATH_UNSAFE',
      `${what}: the folder ${dirname(file)} is a link, which crm-ferry does not follow`,
      { location: { file }, hint },
    );
  }
  return openNoFollow(file, flags, { what, hint });
}

/**
 * Reads a journal line by line, a chunk's entries at a time, and returns what it found. A damaged
 * line followed by good ones is JOURNAL_CORRUPT (something other than a crash changed the file);
 * a damaged or unfinished last line is what a crash in the middle of an append leaves, and is
 * dropped. With `expected`, the journal must start with the lines that seal says (see JournalSeal).
 */
async function* scan(
  file: string,
  expected: JournalSeal | null = null,
  withBodies = true,
): AsyncGenerator<JournalEntry[], Scan> {
  const result: Scan = { lines: 0, tornTail: false, validLength: 0, seal: EMPTY_SEAL };
  let handle: FileHandle;
  try {
    // Non-blocking: a FIFO planted under the journal's name is refused, not waited on.
    handle = await openStateFile(file, constants.O_RDONLY | constants.O_NONBLOCK, `the journal ${basename(file)}`);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') {
      if (expected && expected.lines > 0)
        throw notWhatWasWritten(file, `it is missing, and its runs wrote ${expected.lines} lines`);
      return result;
    }
    if (error instanceof FerryError) throw error;
    throw new FerryError('JOURNAL_CORRUPT', `cannot read the journal ${file}: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  try {
    if (!(await handle.stat()).isFile()) throw new Error('not a regular file');
  } catch (error) {
    await handle.close();
    throw new FerryError('JOURNAL_CORRUPT', `cannot read the journal ${file}: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  const stream = handle.createReadStream({ highWaterMark: 1 << 20 });
  let rest: Buffer = Buffer.alloc(0);
  let offset = 0;
  let damaged: { line: number } | null = null;
  // The chained checksum of the whole lines read so far, and up to where it reaches.
  let crc = 0;
  let crcAt = 0;
  let sealLines = -1;
  let sealPending = expected !== null && expected.bytes > 0;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    const entries: JournalEntry[] = [];
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end >= 0; end = data.indexOf(NEWLINE, start)) {
      const line = data.subarray(start, end);
      result.lines += 1;
      if (damaged) {
        stream.destroy();
        throw new FerryError(
          'JOURNAL_CORRUPT',
          `line ${damaged.line} of the journal ${file} is damaged, and lines follow it`,
          {
            location: { file, line: damaged.line },
            hint: 'The file was changed by something other than crm-ferry. Restore it from a copy, or start over with --fresh (records already written stay in the account).',
          },
        );
      }
      const entry = line.length === 0 ? null : parseLine(line, offset + start, withBodies);
      if (entry === null) damaged = { line: result.lines };
      else {
        entries.push(entry);
        result.validLength = offset + end + 1;
        if (expected && result.validLength === expected.bytes) sealLines = result.lines;
      }
      start = end + 1;
    }
    // The checksum goes as far as the good lines; the seal's point is checked on the way.
    if (expected && sealPending && expected.bytes <= result.validLength && crcAt >= offset) {
      crc = crc32(data.subarray(crcAt - offset, expected.bytes - offset), crc);
      crcAt = expected.bytes;
      sealPending = false;
      if (sealLines !== expected.lines || hex(crc) !== expected.crc) {
        stream.destroy();
        throw notWhatWasWritten(
          file,
          `its first ${expected.lines} lines are not the lines its runs wrote (changed, or replaced by another journal)`,
        );
      }
    }
    if (result.validLength > crcAt && crcAt >= offset) {
      crc = crc32(data.subarray(crcAt - offset, result.validLength - offset), crc);
      crcAt = result.validLength;
    }
    offset += start;
    // A copy: the chunk's buffer is not kept alive by a small remainder.
    rest = Buffer.from(data.subarray(start));
    if (entries.length > 0) yield entries;
  }
  if (damaged) {
    result.lines -= 1;
    result.tornTail = true;
  }
  if (rest.length > 0) result.tornTail = true;
  if (expected && sealPending) {
    throw notWhatWasWritten(
      file,
      `it holds ${result.lines} whole lines (${result.validLength} bytes), and its runs wrote ${expected.lines} (${expected.bytes} bytes)`,
    );
  }
  result.seal = { lines: result.lines, bytes: result.validLength, crc: hex(crc) };
  return result;
}

/** Runs `scan` to its end, handing each entry to `onEntry`, and returns what it found. */
async function scanAll(
  file: string,
  onEntry: (entry: JournalEntry) => void,
  expected: JournalSeal | null = null,
): Promise<Scan> {
  // Bodies stay on disk: the rows read them again from their lines when asked for.
  const iterator = scan(file, expected, false);
  for (;;) {
    const next = await iterator.next();
    if (next.done) return next.value;
    for (const entry of next.value) onEntry(entry);
  }
}

type Located = { body?: Body; [BODY_TEXT]?: string; [LINE_AT]?: [number, number] };

function hasBody(entry: Located): boolean {
  return entry.body !== undefined || entry[BODY_TEXT] !== undefined || entry[LINE_AT] !== undefined;
}

/** Gives an entry read from disk its body as an object. */
function hydrate<T extends JournalEntry>(entry: T): T {
  const holder = entry as T & Located;
  const text = holder[BODY_TEXT];
  if (text !== undefined) {
    holder.body = JSON.parse(text) as Body;
    delete holder[BODY_TEXT];
  }
  delete holder[LINE_AT];
  return entry;
}

/** A blank state, for rows a run meets for the first time (bound to its slot by `rows.set`). */
export function blankRow(key: string): RowState {
  return new RowView(key);
}

/** Takes the body of a line read from disk: where its line is. */
function takeBody(rows: JournalRows, slot: number, entry: Located): void {
  const line = entry[LINE_AT];
  if (line) rows.setBodyLine(slot, line[0], line[1]);
  else rows.setBody(slot, entry.body ?? null);
}

/** Applies one line to the rows. */
function fold(rows: JournalRows, entry: Exclude<JournalEntry, { t: 'run' }>): void {
  const slot = rows.slotOf(entry.k);
  rows.show(slot);
  switch (entry.t) {
    case 'intent':
      rows.setPending(slot, entry);
      return;
    case 'cancel':
      rows.setPending(slot, null);
      return;
    case 'reject':
      rows.setPending(slot, null);
      rows.setRejected(slot, {
        code: entry.code,
        message: entry.message,
        run: entry.run,
        ...(entry.status !== undefined ? { status: entry.status } : {}),
      });
      return;
    case 'done': {
      const intent = rows.pending(slot) as (PendingIntent & Located) | null;
      rows.setPending(slot, null);
      rows.setRejected(slot, null);
      rows.setRun(slot, entry.run);
      if (entry.op === 'delete') {
        rows.setId(slot, null);
        rows.setFp(slot, null);
        rows.setBody(slot, null);
        rows.setOrigin(slot, null);
        return;
      }
      rows.setId(slot, entry.id);
      rows.setFp(slot, entry.fp);
      if (entry.op === 'match') {
        if (hasBody(entry)) takeBody(rows, slot, entry);
        else rows.setEmptyBody(slot);
      } else if (intent && hasBody(intent)) takeBody(rows, slot, intent);
      if (entry.origin) rows.setOrigin(slot, entry.origin);
      else if (entry.op === 'create') rows.setOrigin(slot, 'created');
    }
  }
}

/** Reads the body of a row again from the line the rows say holds it, checking the line and its key. */
function bodyReader(file: string): (key: string, at: number, length: number) => Body {
  return (key, at, length) => {
    const bytes = readLineAt(file, at, length);
    const entry =
      bytes.length === length && bytes[length - 1] === NEWLINE
        ? (parseLine(bytes.subarray(0, length - 1)) as (JournalEntry & Located) | null)
        : null;
    if (!entry || entry.t === 'run' || entry.k !== key || !hasBody(entry)) {
      throw new FerryError(
        'JOURNAL_CORRUPT',
        `the journal ${file} changed while the run read it: the line at byte ${at} is not the one of the row ${JSON.stringify(key)}`,
        {
          location: { file },
          hint: 'Only one run may use a state folder at a time, and nothing else may write its journals. Run the command again.',
        },
      );
    }
    return hydrate(entry).body as Body;
  };
}

export interface ReadJournalOptions {
  /** What the journal held when its runs last said so: a journal that does not start with it is JOURNAL_CORRUPT. @default null (not checked) */
  seal?: JournalSeal | null;
}

/**
 * Reads a step's journal (a missing file is an empty journal) and folds it into a state per row.
 * Refuses a journal that is a link, or whose folder is one (PATH_UNSAFE), and one that does not
 * start with the lines `options.seal` says (JOURNAL_CORRUPT).
 */
export async function loadJournal(file: string, options: ReadJournalOptions = {}): Promise<LoadedJournal> {
  const rows = new JournalRows(bodyReader(file));
  const runs: string[] = [];
  const seen = new Set<string>();
  let unread = 0;
  let key: string | null = null;
  const result = await scanAll(
    file,
    (entry) => {
      if (!seen.has(entry.run)) {
        seen.add(entry.run);
        runs.push(entry.run);
      }
      if (entry.t !== 'run') fold(rows, entry);
      else {
        if (entry.unread !== undefined) unread = entry.unread;
        if (entry.key !== undefined) key = entry.key;
      }
    },
    options.seal ?? null,
  );
  // The few intents left pending are handed out with their bodies, read from their lines.
  const read = bodyReader(file);
  for (const slot of rows.pendingSlots()) {
    const intent = rows.pending(slot) as PendingIntent & Located;
    const line = intent[LINE_AT];
    if (line && intent[BODY_TEXT] === undefined && intent.body === undefined)
      intent.body = read(intent.k, line[0], line[1]);
    hydrate(intent);
  }
  return { rows, runs, unread, key, ...result };
}

/** The entries in order (same rules as loadJournal), for rollback and reports. */
export async function* readJournal(file: string, options: ReadJournalOptions = {}): AsyncGenerator<JournalEntry> {
  for await (const entries of scan(file, options.seal ?? null)) for (const entry of entries) yield hydrate(entry);
}

export interface JournalWriterOptions {
  /** Most lines in one group commit. @default 256 */
  maxBatch?: number;
  /** Opens the file (open(2) flags); tests give one whose writes fail. @default fs.promises.open, refusing a link */
  openFile?: (file: string, flags: number, mode: number) => Promise<FileHandle>;
  /** The seal of the journal's good lines, when the caller loaded it already (saves a second read). */
  seal?: JournalSeal;
  /**
   * Told the seal of what is on disk: after every `sealEvery` lines made durable, and when the
   * writer closes. The state folder keeps it (StateDir). A failure stops the writer like a failed
   * write. @default none
   */
  onSeal?: (seal: JournalSeal) => Promise<void>;
  /** @default 1000 */
  sealEvery?: number;
  /**
   * Told of every group once it is on disk, before anyone waiting for its lines is told they are
   * durable: the group's bytes, and the seal before and after it. A state kept in PostgreSQL too
   * commits the group there (StoreState.appendGroup), so that a line is durable only when both
   * hold it. A failure stops the writer like a failed write. @default none
   */
  onGroup?: (group: Buffer, before: JournalSeal, after: JournalSeal) => Promise<void>;
  /**
   * Told of every line with a body as it is queued: its key, where it will be (byte offset and
   * length) and the body. The loaded rows take it (JournalRows.wrote), so that a body folded in
   * by the run is read from its line when asked for, not kept in memory. @default none
   */
  onBody?: (key: string, at: number, length: number, body: Body) => void;
  /**
   * How long a queued line (`enqueue`) may wait for a group someone else starts before one is
   * started for it: what a crash can lose of lines nobody waits for. @default 1000
   */
  queuedUpToMs?: number;
}

/** Someone waiting for the lines up to `upTo` (counted from the writer's opening) to be on disk. */
interface Waiting {
  upTo: number;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Where the system has it, the journal is opened for synchronised writes (O_DSYNC): a group of
 * lines is one write that returns once the lines are on disk, as a write and an fdatasync would,
 * with one trip to the file system's threads instead of two.
 */
const DSYNC = constants.O_DSYNC ?? 0;

/**
 * Appends to a step's journal, durably: an append resolves once its line is on disk. Lines
 * appended while a group is being written go out together in the next one (group commit): one
 * synchronised write covers every line that arrived while the previous one ran, so concurrent
 * rows share the cost. A line can also be queued without waiting (`enqueue`): it goes out with
 * the next group someone waits for, and `durable` waits for it later, when what it announces is
 * about to happen. A torn tail left by a crash is cut off first, so a new line never joins a
 * broken one. After a write fails, every waiting and later append rejects.
 */
export class JournalWriter {
  /** Lines queued and not yet written, in order. */
  #lines: string[] = [];
  /** Lines queued since the writer opened, and of them those on disk. */
  #queued = 0;
  #written = 0;
  #waiting: Waiting[] = [];
  #flushing = false;
  #failed: FerryError | null = null;
  #closed = false;
  /** What is on disk, and what the state was last told of. */
  #seal: JournalSeal;
  #sealed: number;
  /** Groups made durable (synchronised writes or fdatasyncs), for tests and benchmarks. */
  syncs = 0;
  /** Where the next line queued will start: the bytes on disk and queued. */
  #queuedEnd: number;

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    private readonly options: {
      maxBatch: number;
      dsync: boolean;
      onSeal: JournalWriterOptions['onSeal'];
      sealEvery: number;
      queuedUpToMs: number;
      onBody: JournalWriterOptions['onBody'];
      onGroup: JournalWriterOptions['onGroup'];
    },
    seal: JournalSeal,
  ) {
    this.#seal = seal;
    this.#queuedEnd = seal.bytes;
    this.#sealed = seal.lines;
  }

  static async open(file: string, options: JournalWriterOptions = {}): Promise<JournalWriter> {
    const seal = options.seal ?? (await scanAll(file, () => undefined)).seal;
    const flags = constants.O_RDWR | constants.O_APPEND | constants.O_CREAT;
    let handle: FileHandle;
    let dsync = DSYNC !== 0;
    try {
      handle = options.openFile
        ? await options.openFile(file, flags | DSYNC | constants.O_NOFOLLOW, 0o600)
        : await openStateFile(file, flags | DSYNC, `the journal ${basename(file)}`).catch(
            async (error: NodeJS.ErrnoException) => {
              // A file system that does not take O_DSYNC: write, then fdatasync.
              if (error.code !== 'EINVAL' || !dsync) throw error;
              dsync = false;
              return openStateFile(file, flags, `the journal ${basename(file)}`);
            },
          );
    } catch (error) {
      if (error instanceof FerryError) throw error;
      throw new FerryError(
        'JOURNAL_WRITE',
        `cannot open the journal ${file} for writing: ${(error as Error).message}`,
        { location: { file }, cause: error },
      );
    }
    try {
      const info = await handle.stat();
      if (!info.isFile()) throw new Error('not a regular file');
      if (info.size > seal.bytes) {
        // A crash in the middle of an append: drop what follows the last whole line.
        await handle.truncate(seal.bytes);
        await handle.sync();
      }
    } catch (error) {
      await handle.close().catch(() => undefined);
      throw new FerryError(
        'JOURNAL_WRITE',
        `cannot open the journal ${file} for writing: ${(error as Error).message}`,
        { location: { file }, cause: error },
      );
    }
    return new JournalWriter(
      file,
      handle,
      {
        maxBatch: options.maxBatch ?? 256,
        dsync,
        onSeal: options.onSeal,
        sealEvery: options.sealEvery ?? 1000,
        queuedUpToMs: options.queuedUpToMs ?? 1000,
        onBody: options.onBody,
        onGroup: options.onGroup,
      },
      seal,
    );
  }

  /** What is on disk so far. */
  get seal(): JournalSeal {
    return this.#seal;
  }

  /** Appends a line and resolves once it is on disk. */
  append(entry: JournalEntry): Promise<void> {
    let line: number;
    try {
      line = this.enqueue(entry);
    } catch (error) {
      return Promise.reject(error);
    }
    return this.durable(line);
  }

  /**
   * Queues a line without starting a group for it: it is written with the next group someone
   * waits for (or once `maxBatch` lines are queued). Returns its number for `durable`; throws
   * when the writer has failed or is closed.
   */
  enqueue(entry: JournalEntry): number {
    if (this.#failed) throw this.#failed;
    if (this.#closed) throw new FerryError('INTERNAL', `append to the closed journal ${this.file}`);
    const line = journalLine(entry);
    const length = Buffer.byteLength(line, 'utf8');
    if (this.options.onBody && (entry.t === 'intent' || entry.t === 'done') && entry.body !== undefined)
      this.options.onBody(entry.k, this.#queuedEnd, length, entry.body);
    this.#queuedEnd += length;
    this.#lines.push(line);
    this.#queued += 1;
    if (this.#lines.length >= this.options.maxBatch && !this.#flushing) void this.#flush();
    else this.#writeLater ??= setTimeout(this.#writeQueued, this.options.queuedUpToMs).unref();
    return this.#queued;
  }

  /** Writes what is queued when nothing else did in time (see `queuedUpToMs`). */
  #writeLater: NodeJS.Timeout | null = null;
  readonly #writeQueued = (): void => {
    this.#writeLater = null;
    // A failure is reported to the next append or wait, as any failed group is.
    if (!this.#failed && !this.#closed && this.#queued > this.#written)
      this.durable(this.#queued).catch(() => undefined);
  };

  /** Whether line `line` (from `enqueue`) is on disk. */
  isDurable(line: number): boolean {
    return line <= this.#written;
  }

  /** Resolves once line `line` (from `enqueue`) and every line before it are on disk. */
  durable(line: number): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (line <= this.#written) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      this.#waiting.push({ upTo: line, resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  /** Whether a group is due: someone waits for a line not yet written, or a full batch is queued. */
  #due(): boolean {
    if (this.#lines.length === 0 || this.#failed) return false;
    if (this.#lines.length >= this.options.maxBatch) return true;
    for (const waiting of this.#waiting) if (waiting.upTo > this.#written) return true;
    return false;
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    // Let the appends of this turn of the event loop join the group.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#due()) {
      const group = this.#lines.splice(0, this.options.maxBatch);
      try {
        const bytes = Buffer.from(group.join(''), 'utf8');
        for (let written = 0; written < bytes.length; ) {
          const { bytesWritten } = await this.handle.write(bytes, written, bytes.length - written, null);
          written += bytesWritten;
        }
        if (!this.options.dsync) await this.handle.datasync();
        const seal = sealAfter(this.#seal, bytes, group.length);
        await this.options.onGroup?.(bytes, this.#seal, seal);
        this.syncs += 1;
        this.#written += group.length;
        this.#seal = seal;
        this.#wake();
        if (this.options.onSeal && this.#seal.lines - this.#sealed >= this.options.sealEvery) await this.#tellSeal();
      } catch (error) {
        // A store's own error (its server gone, another process's lines) says what it is; a disk's is said here.
        this.#failed =
          error instanceof FerryError
            ? error
            : new FerryError('JOURNAL_WRITE', `cannot write to the journal ${this.file}: ${(error as Error).message}`, {
                location: { file: this.file },
                cause: error,
                hint: 'Nothing more is sent to the service. Free the disk (or fix the folder) and run the same command again: the run goes on from what the journal holds.',
              });
        this.#lines = [];
        for (const waiting of this.#waiting.splice(0)) waiting.reject(this.#failed);
      }
    }
    this.#flushing = false;
  }

  /** Resolves those waiting for lines now on disk. */
  #wake(): void {
    const still: Waiting[] = [];
    for (const waiting of this.#waiting) {
      if (waiting.upTo <= this.#written) waiting.resolve();
      else still.push(waiting);
    }
    this.#waiting = still;
  }

  /** Tells the state what is on disk. */
  async #tellSeal(): Promise<void> {
    const seal = this.#seal;
    await this.options.onSeal?.(seal);
    this.#sealed = seal.lines;
  }

  /** Waits until everything appended or queued so far is durable. */
  async flush(): Promise<void> {
    if (this.#failed) throw this.#failed;
    await this.durable(this.#queued);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush().catch(() => undefined);
    this.#closed = true;
    // Nothing can be queued now: the timer of a line queued before has nothing left to write.
    if (this.#writeLater) clearTimeout(this.#writeLater);
    this.#writeLater = null;
    // What is on disk is what the runs wrote, even after a failed write.
    if (this.#seal.lines !== this.#sealed) await this.#tellSeal().catch(() => undefined);
    await this.handle.close().catch(() => undefined);
  }
}
