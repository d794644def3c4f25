import { createReadStream } from 'node:fs';
import { open, stat, type FileHandle } from 'node:fs/promises';
import { crc32 } from 'node:zlib';
import { FerryError } from '../errors/index.ts';

type Body = Record<string, unknown>;

/** One line of a step's journal. `k` is the source row's key within its step. */
export type JournalEntry =
  /** Written and made durable before a request that changes the account is sent. */
  | { t: 'intent'; k: string; op: 'create' | 'update' | 'delete'; run: string; at: string; fp: string; body?: Body; id?: number; before?: Body }
  /** The service confirmed the write, or reconciliation found it applied; `match`: the row was given a record the account had. */
  | { t: 'done'; k: string; op: 'create' | 'update' | 'delete' | 'match'; run: string; at: string; id: number; fp: string; body?: Body; origin?: 'created' | 'matched' }
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

/** What the journal says of one row, folded from all its lines in order. */
export interface RowState {
  key: string;
  /** The record in the account once a create or match was confirmed; null before, and after a confirmed delete. */
  id: number | null;
  /** Fingerprint of what was last confirmed written for the row, or null. */
  fp: string | null;
  /** The body last confirmed written (the intent's for create and update, the done's for match). */
  body: Body | null;
  origin: 'created' | 'matched' | null;
  /** An intent without its done or cancel: reconciled before the row is touched again. */
  pending: Extract<JournalEntry, { t: 'intent' }> | null;
  /** The last reject, cleared by a later done. */
  rejected: { code: string; message: string; status?: number; run: string } | null;
  /** Run of the last done. */
  run: string | null;
}

export interface LoadedJournal {
  rows: Map<string, RowState>;
  /** Run ids in the order their first line appears. */
  runs: string[];
  lines: number;
  /** Whether a torn or unreadable last line was dropped. */
  tornTail: boolean;
  /** Bytes of whole, checked lines: where the next line goes. */
  validLength: number;
  /** Rows that could not be read in the last run that read the whole input (0 when none did). */
  unread: number;
  /** The mapping's key (as JSON) of the last run that said it, or null. */
  key: string | null;
}

const NEWLINE = 0x0a;
const TAB = 0x09;

/** CRC-32 of the UTF-8 bytes (a string is encoded by crc32 itself, with no Buffer made for it). */
function checksum(bytes: Buffer | string): string {
  return crc32(bytes).toString(16).padStart(8, '0');
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

/** The entry of a line without its newline, or null when the line is damaged. */
function parseLine(line: Buffer): JournalEntry | null {
  const tab = line.lastIndexOf(TAB);
  if (tab < 0 || line.length - tab !== 9) return null;
  const json = line.subarray(0, tab);
  if (checksum(json) !== line.subarray(tab + 1).toString('latin1')) return null;
  try {
    const text = json.toString('utf8');
    const mark = text.indexOf(BODY_MARK);
    if (mark < 0) {
      const entry = JSON.parse(text) as JournalEntry;
      return entry && typeof entry === 'object' && typeof entry.t === 'string' ? entry : null;
    }
    const entry = JSON.parse(`${text.slice(0, mark)}}`) as JournalEntry & { [BODY_TEXT]?: string };
    entry[BODY_TEXT] = text.slice(mark + BODY_MARK.length, -1);
    return typeof entry.t === 'string' ? entry : null;
  } catch {
    return null;
  }
}

interface Scan {
  lines: number;
  tornTail: boolean;
  validLength: number;
}

/**
 * Reads a journal line by line, a chunk's entries at a time, and returns what it found. A damaged
 * line followed by good ones is JOURNAL_CORRUPT (something other than a crash changed the file);
 * a damaged or unfinished last line is what a crash in the middle of an append leaves, and is
 * dropped.
 */
async function* scan(file: string): AsyncGenerator<JournalEntry[], Scan> {
  const result: Scan = { lines: 0, tornTail: false, validLength: 0 };
  let stream;
  try {
    if (!(await stat(file)).isFile()) throw new Error('not a regular file');
    stream = createReadStream(file, { highWaterMark: 1 << 20 });
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return result;
    throw new FerryError('JOURNAL_CORRUPT', `cannot read the journal ${file}: ${(error as Error).message}`, { location: { file }, cause: error });
  }
  let rest: Buffer = Buffer.alloc(0);
  let offset = 0;
  let damaged: { line: number } | null = null;
  for await (const chunk of stream as AsyncIterable<Buffer>) {
    const data = rest.length > 0 ? Buffer.concat([rest, chunk]) : chunk;
    const entries: JournalEntry[] = [];
    let start = 0;
    for (let end = data.indexOf(NEWLINE); end >= 0; end = data.indexOf(NEWLINE, start)) {
      const line = data.subarray(start, end);
      result.lines += 1;
      if (damaged) {
        stream.destroy();
        throw new FerryError('JOURNAL_CORRUPT', `line ${damaged.line} of the journal ${file} is damaged, and lines follow it`, {
          location: { file, line: damaged.line },
          hint: 'The file was changed by something other than crm-ferry. Restore it from a copy, or start over with --fresh (records already written stay in the account).',
        });
      }
      const entry = line.length === 0 ? null : parseLine(line);
      if (entry === null) damaged = { line: result.lines };
      else {
        entries.push(entry);
        result.validLength = offset + end + 1;
      }
      start = end + 1;
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
  return result;
}

/** Runs `scan` to its end, handing each entry to `onEntry`, and returns what it found. */
async function scanAll(file: string, onEntry: (entry: JournalEntry) => void): Promise<Scan> {
  const iterator = scan(file);
  for (;;) {
    const next = await iterator.next();
    if (next.done) return next.value;
    for (const entry of next.value) onEntry(entry);
  }
}

/** A row's state; its body stays the JSON text it was read as until someone asks for it. */
class Row implements RowState {
  id: number | null = null;
  fp: string | null = null;
  origin: 'created' | 'matched' | null = null;
  pending: Extract<JournalEntry, { t: 'intent' }> | null = null;
  rejected: RowState['rejected'] = null;
  run: string | null = null;
  #text: string | null = null;
  #body: Body | null = null;

  constructor(readonly key: string) {}

  get body(): Body | null {
    if (this.#body === null && this.#text !== null) this.#body = JSON.parse(this.#text) as Body;
    return this.#body;
  }

  set body(value: Body | null) {
    this.#body = value;
    this.#text = null;
  }

  /** Takes the body of a line, as text when it was read from disk. */
  takeBody(entry: { body?: Body; [BODY_TEXT]?: string }): void {
    const text = entry[BODY_TEXT];
    if (text !== undefined) {
      this.#body = null;
      this.#text = text;
      return;
    }
    this.body = entry.body ?? null;
  }
}

function hasBody(entry: { body?: Body; [BODY_TEXT]?: string }): boolean {
  return entry.body !== undefined || entry[BODY_TEXT] !== undefined;
}

/** Gives an entry read from disk its body as an object. */
function hydrate<T extends JournalEntry>(entry: T): T {
  const holder = entry as T & { body?: Body; [BODY_TEXT]?: string };
  const text = holder[BODY_TEXT];
  if (text !== undefined) {
    holder.body = JSON.parse(text) as Body;
    delete holder[BODY_TEXT];
  }
  return entry;
}

/** A blank state, for rows a run meets for the first time. */
export function blankRow(key: string): RowState {
  return new Row(key);
}

/** Applies one line to the rows. */
function fold(rows: Map<string, RowState>, entry: Exclude<JournalEntry, { t: 'run' }>): void {
  let row = rows.get(entry.k) as Row | undefined;
  if (!row) {
    row = new Row(entry.k);
    rows.set(entry.k, row);
  }
  switch (entry.t) {
    case 'intent':
      row.pending = entry;
      return;
    case 'cancel':
      row.pending = null;
      return;
    case 'reject':
      row.pending = null;
      row.rejected = { code: entry.code, message: entry.message, run: entry.run, ...(entry.status !== undefined ? { status: entry.status } : {}) };
      return;
    case 'done': {
      const intent = row.pending;
      row.pending = null;
      row.rejected = null;
      row.run = entry.run;
      if (entry.op === 'delete') {
        row.id = null;
        row.fp = null;
        row.body = null;
        row.origin = null;
        return;
      }
      row.id = entry.id;
      row.fp = entry.fp;
      if (entry.op === 'match') row.takeBody(hasBody(entry) ? entry : { body: {} });
      else if (intent && hasBody(intent)) row.takeBody(intent);
      if (entry.origin) row.origin = entry.origin;
      else if (entry.op === 'create') row.origin = 'created';
    }
  }
}

/** Reads a step's journal (a missing file is an empty journal) and folds it into a state per row. */
export async function loadJournal(file: string): Promise<LoadedJournal> {
  const rows = new Map<string, RowState>();
  const runs: string[] = [];
  const seen = new Set<string>();
  let unread = 0;
  let key: string | null = null;
  const result = await scanAll(file, (entry) => {
    if (!seen.has(entry.run)) {
      seen.add(entry.run);
      runs.push(entry.run);
    }
    if (entry.t !== 'run') fold(rows, entry);
    else {
      if (entry.unread !== undefined) unread = entry.unread;
      if (entry.key !== undefined) key = entry.key;
    }
  });
  for (const row of rows.values()) if (row.pending) hydrate(row.pending);
  return { rows, runs, unread, key, ...result };
}

/** The entries in order (same rule for a torn last line), for rollback and reports. */
export async function* readJournal(file: string): AsyncGenerator<JournalEntry> {
  for await (const entries of scan(file)) for (const entry of entries) yield hydrate(entry);
}

export interface JournalWriterOptions {
  /** Most lines in one group commit. @default 256 */
  maxBatch?: number;
  /** Opens the file; tests give one whose writes fail. @default fs.promises.open */
  openFile?: (file: string, flags: string, mode: number) => Promise<FileHandle>;
  /** Bytes of good lines, when the caller loaded the journal already (saves a second read). */
  validLength?: number;
}

interface Waiting {
  line: string;
  resolve(): void;
  reject(error: unknown): void;
}

/**
 * Appends to a step's journal, durably: an append resolves once its line is written and
 * fsynced. Lines appended while an fsync runs go out together in the next one (group commit), so
 * concurrent writes share the cost. A torn tail left by a crash is cut off first, so a new line
 * never joins a broken one. After a write or fsync fails, every waiting and later append rejects.
 */
export class JournalWriter {
  #queue: Waiting[] = [];
  #flushing = false;
  #failed: FerryError | null = null;
  #closed = false;
  /** fsyncs done, for tests and benchmarks. */
  syncs = 0;

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    private readonly maxBatch: number,
  ) {}

  static async open(file: string, options: JournalWriterOptions = {}): Promise<JournalWriter> {
    const validLength = options.validLength ?? (await scanAll(file, () => undefined)).validLength;
    let handle: FileHandle;
    try {
      handle = await (options.openFile ?? open)(file, 'a+', 0o600);
      const size = (await handle.stat()).size;
      if (size > validLength) {
        // A crash in the middle of an append: drop what follows the last whole line.
        await handle.truncate(validLength);
        await handle.sync();
      }
    } catch (error) {
      throw new FerryError('JOURNAL_WRITE', `cannot open the journal ${file} for writing: ${(error as Error).message}`, { location: { file }, cause: error });
    }
    return new JournalWriter(file, handle, options.maxBatch ?? 256);
  }

  append(entry: JournalEntry): Promise<void> {
    if (this.#failed) return Promise.reject(this.#failed);
    if (this.#closed) return Promise.reject(new FerryError('INTERNAL', `append to the closed journal ${this.file}`));
    return new Promise<void>((resolve, reject) => {
      this.#queue.push({ line: journalLine(entry), resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  async #flush(): Promise<void> {
    this.#flushing = true;
    // Let the appends of this turn of the event loop join the group.
    await new Promise<void>((resolve) => setImmediate(resolve));
    while (this.#queue.length > 0 && !this.#failed) {
      const group = this.#queue.splice(0, this.maxBatch);
      try {
        await this.handle.write(group.map((w) => w.line).join(''), null, 'utf8');
        await this.handle.datasync();
        this.syncs += 1;
        for (const w of group) w.resolve();
      } catch (error) {
        this.#failed = new FerryError('JOURNAL_WRITE', `cannot write to the journal ${this.file}: ${(error as Error).message}`, {
          location: { file: this.file },
          cause: error,
          hint: 'Nothing more is sent to the service. Free the disk (or fix the folder) and run the same command again: the run goes on from what the journal holds.',
        });
        for (const w of [...group, ...this.#queue.splice(0)]) w.reject(this.#failed);
      }
    }
    this.#flushing = false;
  }

  /** Waits until everything appended so far is durable. */
  async flush(): Promise<void> {
    if (this.#failed) throw this.#failed;
    if (this.#queue.length === 0 && !this.#flushing) return;
    await new Promise<void>((resolve, reject) => {
      this.#queue.push({ line: '', resolve, reject });
      if (!this.#flushing) void this.#flush();
    });
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    await this.flush().catch(() => undefined);
    this.#closed = true;
    await this.handle.close().catch(() => undefined);
  }
}
