/**
 * The rows of a loaded journal, compact: what a run asks of every row (its key, record id,
 * fingerprint, origin, run) in columns of typed arrays behind an open-addressing hash table, and
 * its body not in memory but where it is in the journal, read again when someone asks for it
 * (an update, a delete's before-image, a rollback). A million rows cost a few tens of megabytes
 * instead of the gigabyte or two that a row object with its body as text took.
 *
 * Exactly-once holds by construction: a key is found by its hash and then compared in full with
 * the key kept for the slot, so two keys with the same hash are two rows, never one. A body read
 * again is a whole line checked against its checksum and its key, or the read fails.
 */
import { closeSync, constants, openSync, readSync } from 'node:fs';
import { FerryError } from '../errors/index.ts';
import { KeySet } from '../util/index.ts';

type Body = Record<string, unknown>;

/** The intent of a row not yet settled, as the journal holds it. */
export interface PendingIntent {
  t: 'intent';
  k: string;
  op: 'create' | 'update' | 'delete';
  run: string;
  at: string;
  fp: string;
  body?: Body;
  id?: number;
  before?: Body;
}

export interface RowRejection {
  code: string;
  message: string;
  status?: number;
  run: string;
}

/** Where a body is: a line of the journal (its byte offset and length), none, or an empty object. */
const NO_BODY = -1;
const EMPTY_BODY = -2;
/** Kept in memory (a body that no line holds as it is). */
const HELD_BODY = -3;

const ORIGINS = [null, 'created', 'matched'] as const;
type Origin = (typeof ORIGINS)[number];

/** Reads the line at `at` (`length` bytes, newline included) and gives its body, checked. */
export type LineReader = (key: string, at: number, length: number) => Body;

/** A fingerprint as the importer makes them (fingerprint()): 22 characters of base64url, kept as 22 bytes. */
const FP_LENGTH = 22;
const COMPACT_FP = /^[A-Za-z0-9_-]{22}$/;
/** How a slot's fingerprint is kept: none, as 22 bytes, or as a string beside the columns (any other). */
const FP_NONE = 0;
const FP_BYTES = 1;
const FP_OTHER = 2;

/**
 * The journal's rows by key, with the part of Map's interface the importer uses. Rows handed out
 * (`get`, `values`) are views of their slot: changing one (`Object.assign(row, change)`) changes
 * the row, as with the row objects this replaces.
 */
export class JournalRows implements ReadonlyMap<string, RowState> {
  #capacity = 0;
  /** The keys, each at its slot (a key's slot is its number in the order keys came). */
  #keys = new KeySet();
  /** The fingerprints: FP_LENGTH bytes a slot, and how each is kept. */
  #fpBytes = new Uint8Array(0);
  #fpKind = new Uint8Array(0);
  #otherFps = new Map<number, string>();
  /** Record id, NaN for none. */
  #ids = new Float64Array(0);
  /** Byte offset of the line holding the body, or NO_BODY, EMPTY_BODY, HELD_BODY. */
  #bodyAt = new Float64Array(0);
  #bodyLength = new Int32Array(0);
  #origin = new Uint8Array(0);
  /** Index in #runs plus one (0: none). */
  #run = new Int32Array(0);
  /** Whether the slot is a row (a slot can exist for a line written before its row is folded). */
  #visible = new Uint8Array(0);
  #runs: string[] = [];
  #runIndex = new Map<string, number>();
  /** The few rows with an intent not settled, or a reject, and bodies no line holds as they are. */
  #pending = new Map<number, PendingIntent>();
  #rejected = new Map<number, RowRejection>();
  #held = new Map<number, Body>();
  /** The last lines with a body this run wrote, by key: where a body folded in soon after is. */
  #written = new Map<string, { at: number; length: number; body: Body }>();
  /** Bodies read or set lately, so that a row asked twice is read once. */
  #recent = new Map<number, Body>();

  constructor(private readonly readLine: LineReader) {
    this.#grow(1024);
  }

  get size(): number {
    let visible = 0;
    for (let slot = 0; slot < this.#keys.size; slot++) visible += this.#visible[slot] as number;
    return visible;
  }

  /** Bodies kept in memory because no line holds them as they are (few: see setBody). */
  get heldBodies(): number {
    return this.#held.size;
  }

  /** What the columns and the keys hold now, in bytes (typed arrays and the keys' bytes). */
  get columnBytes(): number {
    const columns =
      this.#ids.byteLength +
      this.#bodyAt.byteLength +
      this.#bodyLength.byteLength +
      this.#origin.byteLength +
      this.#run.byteLength +
      this.#visible.byteLength;
    return columns + this.#fpBytes.byteLength + this.#fpKind.byteLength + this.#keys.bytes;
  }

  #grow(capacity: number): void {
    const grow = <T extends Float64Array | Int32Array | Uint8Array>(old: T, make: (n: number) => T): T => {
      const next = make(capacity);
      next.set(old);
      return next;
    };
    this.#ids = grow(this.#ids, (n) => new Float64Array(n).fill(Number.NaN));
    this.#bodyAt = grow(this.#bodyAt, (n) => new Float64Array(n).fill(NO_BODY));
    this.#bodyLength = grow(this.#bodyLength, (n) => new Int32Array(n));
    this.#origin = grow(this.#origin, (n) => new Uint8Array(n));
    this.#run = grow(this.#run, (n) => new Int32Array(n));
    this.#visible = grow(this.#visible, (n) => new Uint8Array(n));
    this.#fpKind = grow(this.#fpKind, (n) => new Uint8Array(n));
    const fpBytes = new Uint8Array(capacity * FP_LENGTH);
    fpBytes.set(this.#fpBytes);
    this.#fpBytes = fpBytes;
    this.#capacity = capacity;
  }

  /** The slot of `key`, or -1. The full key is compared (KeySet): a hash shared by two keys never makes one row of them. */
  #find(key: string): number {
    return this.#keys.find(key);
  }

  /** The slot of `key`, made (not yet a row) when there is none. */
  slotOf(key: string): number {
    const slot = this.#keys.slotOf(key);
    if (slot >= this.#capacity) this.#grow(this.#capacity * 2);
    return slot;
  }

  has(key: string): boolean {
    const slot = this.#find(key);
    return slot >= 0 && this.#visible[slot] === 1;
  }

  get(key: string): RowState | undefined {
    const slot = this.#find(key);
    return slot >= 0 && this.#visible[slot] === 1 ? new RowView(key, this, slot) : undefined;
  }

  /** Makes `row` (from blankRow, or a row of another journal) the row of `key`; a blank row given is bound to it. */
  set(key: string, row: RowState): this {
    const slot = this.slotOf(key);
    this.#visible[slot] = 1;
    const fields = {
      id: row.id,
      fp: row.fp,
      origin: row.origin,
      pending: row.pending,
      rejected: row.rejected,
      run: row.run,
      body: row.body,
    };
    if (row instanceof RowView) row.bind(this, slot);
    Object.assign(new RowView(key, this, slot), fields);
    return this;
  }

  *values(): IterableIterator<RowState> {
    for (let slot = 0; slot < this.#keys.size; slot++)
      if (this.#visible[slot] === 1) yield new RowView(this.#keys.keyAt(slot), this, slot);
  }

  /** The rows with an intent not settled, in the order of `values()`, without a look at the others. */
  *pendingRows(): IterableIterator<RowState> {
    for (const slot of [...this.#pending.keys()].sort((a, b) => a - b))
      yield new RowView(this.#keys.keyAt(slot), this, slot);
  }

  *keys(): IterableIterator<string> {
    for (let slot = 0; slot < this.#keys.size; slot++) if (this.#visible[slot] === 1) yield this.#keys.keyAt(slot);
  }

  *entries(): IterableIterator<[string, RowState]> {
    for (const row of this.values()) yield [row.key, row];
  }

  [Symbol.iterator](): IterableIterator<[string, RowState]> {
    return this.entries();
  }

  forEach(
    callback: (row: RowState, key: string, rows: ReadonlyMap<string, RowState>) => void,
    thisArg?: unknown,
  ): void {
    for (const row of this.values()) callback.call(thisArg, row, row.key, this);
  }

  // --- Columns, for RowView and the journal's fold.

  show(slot: number): void {
    this.#visible[slot] = 1;
  }

  id(slot: number): number | null {
    const id = this.#ids[slot] as number;
    return Number.isNaN(id) ? null : id;
  }

  setId(slot: number, id: number | null): void {
    this.#ids[slot] = id ?? Number.NaN;
  }

  fp(slot: number): string | null {
    const kind = this.#fpKind[slot];
    if (kind === FP_BYTES)
      return String.fromCharCode(...this.#fpBytes.subarray(slot * FP_LENGTH, (slot + 1) * FP_LENGTH));
    return kind === FP_OTHER ? (this.#otherFps.get(slot) as string) : null;
  }

  setFp(slot: number, fp: string | null): void {
    this.#otherFps.delete(slot);
    if (fp === null) {
      this.#fpKind[slot] = FP_NONE;
    } else if (COMPACT_FP.test(fp)) {
      this.#fpKind[slot] = FP_BYTES;
      const at = slot * FP_LENGTH;
      for (let i = 0; i < FP_LENGTH; i++) this.#fpBytes[at + i] = fp.charCodeAt(i);
    } else {
      // Fingerprints of another form (a delete's empty one, a journal of older code): as they are.
      this.#fpKind[slot] = FP_OTHER;
      this.#otherFps.set(slot, fp);
    }
  }

  origin(slot: number): Origin {
    return ORIGINS[this.#origin[slot] as number] ?? null;
  }

  setOrigin(slot: number, origin: Origin): void {
    this.#origin[slot] = ORIGINS.indexOf(origin);
  }

  run(slot: number): string | null {
    const index = this.#run[slot] as number;
    return index === 0 ? null : (this.#runs[index - 1] as string);
  }

  setRun(slot: number, run: string | null): void {
    if (run === null) {
      this.#run[slot] = 0;
      return;
    }
    let index = this.#runIndex.get(run);
    if (index === undefined) {
      this.#runs.push(run);
      index = this.#runs.length;
      this.#runIndex.set(run, index);
    }
    this.#run[slot] = index;
  }

  pending(slot: number): PendingIntent | null {
    return this.#pending.get(slot) ?? null;
  }

  setPending(slot: number, intent: PendingIntent | null): void {
    if (intent) this.#pending.set(slot, intent);
    else this.#pending.delete(slot);
  }

  /** The slots with an intent not settled. */
  pendingSlots(): number[] {
    return [...this.#pending.keys()];
  }

  rejected(slot: number): RowRejection | null {
    return this.#rejected.get(slot) ?? null;
  }

  setRejected(slot: number, rejection: RowRejection | null): void {
    if (rejection) this.#rejected.set(slot, rejection);
    else this.#rejected.delete(slot);
  }

  /** The body is the one of the line at `at`, `length` bytes long. */
  setBodyLine(slot: number, at: number, length: number): void {
    this.#bodyAt[slot] = at;
    this.#bodyLength[slot] = length;
    this.#held.delete(slot);
    this.#recent.delete(slot);
  }

  /** Whether the row has a body (without reading it). */
  hasBody(slot: number): boolean {
    return this.#bodyAt[slot] !== NO_BODY;
  }

  body(slot: number): Body | null {
    const at = this.#bodyAt[slot] as number;
    if (at === NO_BODY) return null;
    if (at === EMPTY_BODY) return {};
    if (at === HELD_BODY) return this.#held.get(slot) ?? null;
    const recent = this.#recent.get(slot);
    if (recent) return recent;
    const body = this.readLine(this.#keys.keyAt(slot), at, this.#bodyLength[slot] as number);
    this.#remember(slot, body);
    return body;
  }

  /**
   * Sets a row's body as a run folds it in: where the line this run wrote with that body is, when
   * there is one (the usual case: the intent or match written just before); held in memory
   * otherwise (a body a run changed after writing it, which the next run reads from its line).
   */
  setBody(slot: number, body: Body | null): void {
    this.#recent.delete(slot);
    if (body === null) {
      this.#bodyAt[slot] = NO_BODY;
      this.#held.delete(slot);
      return;
    }
    const written = this.#written.get(this.#keys.keyAt(slot));
    if (written && (written.body === body || JSON.stringify(written.body) === JSON.stringify(body))) {
      this.setBodyLine(slot, written.at, written.length);
      this.#remember(slot, body);
      return;
    }
    if (Object.keys(body).length === 0) {
      this.#bodyAt[slot] = EMPTY_BODY;
      this.#held.delete(slot);
      return;
    }
    this.#bodyAt[slot] = HELD_BODY;
    this.#held.set(slot, body);
  }

  /** A body the journal's fold found empty (a match without a body). */
  setEmptyBody(slot: number): void {
    this.#bodyAt[slot] = EMPTY_BODY;
    this.#held.delete(slot);
    this.#recent.delete(slot);
  }

  /**
   * A line with a body this run wrote (told by the journal's writer as it queues the line): a
   * body folded into the row soon after is found there. Only the last lines are kept, as many as
   * a run has rows under way many times over.
   */
  wrote(key: string, at: number, length: number, body: Body): void {
    this.#written.delete(key);
    this.#written.set(key, { at, length, body });
    if (this.#written.size > WRITTEN_KEPT) this.#written.delete(this.#written.keys().next().value as string);
  }

  #remember(slot: number, body: Body): void {
    this.#recent.set(slot, body);
    if (this.#recent.size > RECENT_KEPT) this.#recent.delete(this.#recent.keys().next().value as number);
  }
}

const WRITTEN_KEPT = 8192;
const RECENT_KEPT = 256;

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
  pending: PendingIntent | null;
  /** The last reject, cleared by a later done. */
  rejected: RowRejection | null;
  /** Run of the last done. */
  run: string | null;
}

/** A row: a view of its slot in the rows, or (made by blankRow and not yet set) fields of its own. */
export class RowView implements RowState {
  #rows: JournalRows | null;
  #slot: number;
  #own: Omit<RowState, 'key'> | null;

  constructor(
    readonly key: string,
    rows: JournalRows | null = null,
    slot = -1,
  ) {
    this.#rows = rows;
    this.#slot = slot;
    this.#own = rows
      ? null
      : { id: null, fp: null, body: null, origin: null, pending: null, rejected: null, run: null };
  }

  /** Makes a blank row a view of its slot (JournalRows.set). */
  bind(rows: JournalRows, slot: number): void {
    this.#rows = rows;
    this.#slot = slot;
    this.#own = null;
  }

  get id(): number | null {
    return this.#own ? this.#own.id : (this.#rows as JournalRows).id(this.#slot);
  }
  set id(value: number | null) {
    if (this.#own) this.#own.id = value;
    else (this.#rows as JournalRows).setId(this.#slot, value);
  }

  get fp(): string | null {
    return this.#own ? this.#own.fp : (this.#rows as JournalRows).fp(this.#slot);
  }
  set fp(value: string | null) {
    if (this.#own) this.#own.fp = value;
    else (this.#rows as JournalRows).setFp(this.#slot, value);
  }

  get body(): Body | null {
    return this.#own ? this.#own.body : (this.#rows as JournalRows).body(this.#slot);
  }
  set body(value: Body | null) {
    if (this.#own) this.#own.body = value;
    else (this.#rows as JournalRows).setBody(this.#slot, value);
  }

  get origin(): Origin {
    return this.#own ? this.#own.origin : (this.#rows as JournalRows).origin(this.#slot);
  }
  set origin(value: Origin) {
    if (this.#own) this.#own.origin = value;
    else (this.#rows as JournalRows).setOrigin(this.#slot, value);
  }

  get pending(): PendingIntent | null {
    return this.#own ? this.#own.pending : (this.#rows as JournalRows).pending(this.#slot);
  }
  set pending(value: PendingIntent | null) {
    if (this.#own) this.#own.pending = value;
    else (this.#rows as JournalRows).setPending(this.#slot, value);
  }

  get rejected(): RowRejection | null {
    return this.#own ? this.#own.rejected : (this.#rows as JournalRows).rejected(this.#slot);
  }
  set rejected(value: RowRejection | null) {
    if (this.#own) this.#own.rejected = value;
    else (this.#rows as JournalRows).setRejected(this.#slot, value);
  }

  get run(): string | null {
    return this.#own ? this.#own.run : (this.#rows as JournalRows).run(this.#slot);
  }
  set run(value: string | null) {
    if (this.#own) this.#own.run = value;
    else (this.#rows as JournalRows).setRun(this.#slot, value);
  }

  /** The fields as a plain object (tests, reports): a view's getters are not its own properties. */
  toJSON(): RowState {
    return {
      key: this.key,
      id: this.id,
      fp: this.fp,
      body: this.body,
      origin: this.origin,
      pending: this.pending,
      rejected: this.rejected,
      run: this.run,
    };
  }
}

/** Reads one line of a journal file by its offset, without following a link. */
export function readLineAt(file: string, at: number, length: number): Buffer {
  let fd: number;
  try {
    fd = openSync(file, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (error) {
    throw new FerryError('JOURNAL_CORRUPT', `cannot read the journal ${file} again: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  try {
    const buffer = Buffer.alloc(length);
    let read = 0;
    while (read < length) {
      const n = readSync(fd, buffer, read, length - read, at + read);
      if (n === 0) break;
      read += n;
    }
    return buffer.subarray(0, read);
  } finally {
    closeSync(fd);
  }
}
