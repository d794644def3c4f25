/**
 * Sets of keys and of record ids that cost bytes a member, not objects: a run over a million
 * rows keeps one of each per step (the keys it has read, the ids its journal holds), and a Set of
 * a million strings or numbers took 60-100 MB of the heap where these take 20-35.
 *
 * A key is kept as its UTF-8 bytes in one growing buffer and found by a hash in an
 * open-addressing table; a hash shared by two keys never makes them one, since the bytes are
 * compared in full. The few keys whose UTF-8 bytes would not give them back (a lone surrogate,
 * which UTF-8 cannot hold) are kept as themselves, beside the table.
 */

/** A lone half of a surrogate pair: UTF-8 would turn it into U+FFFD, and two such keys into one. */
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

/**
 * Keys, each with a slot: its number in the order keys were added (0, 1, 2, ...), so that a
 * caller can keep what it knows of a key in typed arrays indexed by slot.
 */
export class KeySet {
  #count = 0;
  /** Slot of each key plus one (0: empty), at its hash, probing linearly; at most half full. */
  #table = new Int32Array(2048);
  #hashes = new Uint32Array(1024);
  /** Where each slot's bytes begin in #bytes; slot + 1's beginning is where they end. */
  #starts = new Uint32Array(1025);
  #bytes = Buffer.allocUnsafe(16 * 1024);
  /** Keys that are not their UTF-8 bytes, by key and by slot. */
  #odd = new Map<string, number>();
  #oddSlots = new Map<number, string>();
  /** The key being looked for, as UTF-8. */
  #scratch = Buffer.allocUnsafe(256);

  get size(): number {
    return this.#count;
  }

  /** What the set holds in typed arrays and its byte buffer (odd keys not counted). */
  get bytes(): number {
    return this.#table.byteLength + this.#hashes.byteLength + this.#starts.byteLength + this.#bytes.length;
  }

  has(key: string): boolean {
    return this.find(key) >= 0;
  }

  add(key: string): this {
    this.slotOf(key);
    return this;
  }

  /** The slot of `key`, or -1. */
  find(key: string): number {
    const length = this.#encode(key);
    if (length < 0) return this.#odd.get(key) ?? -1;
    const hash = this.#hash(length);
    const mask = this.#table.length - 1;
    for (let at = hash & mask; ; at = (at + 1) & mask) {
      const entry = this.#table[at] as number;
      if (entry === 0) return -1;
      if (this.#hashes[entry - 1] === hash && this.#same(entry - 1, length)) return entry - 1;
    }
  }

  /** The slot of `key`, added when it is not in the set. */
  slotOf(key: string): number {
    const found = this.find(key);
    if (found >= 0) return found;
    // find left the key's bytes in #scratch.
    const slot = this.#count;
    if (slot + 1 >= this.#hashes.length) this.#growSlots();
    const length = this.#encode(key);
    const start = this.#starts[slot] as number;
    if (length < 0) {
      this.#odd.set(key, slot);
      this.#oddSlots.set(slot, key);
      this.#starts[slot + 1] = start;
      this.#count += 1;
      return slot;
    }
    if (start + length > this.#bytes.length) this.#growBytes(start + length);
    this.#scratch.copy(this.#bytes, start, 0, length);
    this.#starts[slot + 1] = start + length;
    const hash = this.#hash(length);
    this.#hashes[slot] = hash;
    this.#count += 1;
    if (this.#count * 2 > this.#table.length) this.#growTable();
    else this.#place(slot, hash);
    return slot;
  }

  /** The key of `slot`. */
  keyAt(slot: number): string {
    const start = this.#starts[slot] as number;
    const end = this.#starts[slot + 1] as number;
    if (start === end) return this.#oddSlots.get(slot) ?? '';
    return this.#bytes.toString('utf8', start, end);
  }

  *[Symbol.iterator](): IterableIterator<string> {
    for (let slot = 0; slot < this.#count; slot++) yield this.keyAt(slot);
  }

  /** Puts `key` in #scratch as UTF-8 and gives its length; -1 for a key UTF-8 cannot hold. */
  #encode(key: string): number {
    const length = key.length;
    if (this.#scratch.length < length * 3) this.#scratch = Buffer.allocUnsafe(length * 3 + 64);
    const scratch = this.#scratch;
    // Most keys are ASCII: copied by hand, which for a short key costs less than a call to write.
    for (let i = 0; i < length; i++) {
      const code = key.charCodeAt(i);
      if (code >= 0x80) return LONE_SURROGATE.test(key) ? -1 : scratch.write(key, 0, 'utf8');
      scratch[i] = code;
    }
    return length;
  }

  /** FNV-1a of the first `length` bytes of #scratch. */
  #hash(length: number): number {
    const scratch = this.#scratch;
    let hash = 0x811c9dc5;
    for (let i = 0; i < length; i++) hash = Math.imul(hash ^ (scratch[i] as number), 0x01000193);
    return hash >>> 0;
  }

  #same(slot: number, length: number): boolean {
    const start = this.#starts[slot] as number;
    if ((this.#starts[slot + 1] as number) - start !== length) return false;
    const bytes = this.#bytes;
    const scratch = this.#scratch;
    for (let i = 0; i < length; i++) if (bytes[start + i] !== scratch[i]) return false;
    return true;
  }

  #place(slot: number, hash: number): void {
    const mask = this.#table.length - 1;
    let at = hash & mask;
    while (this.#table[at] !== 0) at = (at + 1) & mask;
    this.#table[at] = slot + 1;
  }

  #growTable(): void {
    this.#table = new Int32Array(this.#table.length * 2);
    for (let slot = 0; slot < this.#count; slot++) {
      // An odd key has no place in the table.
      if (this.#starts[slot] === this.#starts[slot + 1] && this.#oddSlots.has(slot)) continue;
      this.#place(slot, this.#hashes[slot] as number);
    }
  }

  #growSlots(): void {
    const hashes = new Uint32Array(this.#hashes.length * 2);
    hashes.set(this.#hashes);
    this.#hashes = hashes;
    const starts = new Uint32Array(hashes.length + 1);
    starts.set(this.#starts);
    this.#starts = starts;
  }

  #growBytes(needed: number): void {
    const bytes = Buffer.allocUnsafe(Math.max(needed, this.#bytes.length * 2));
    this.#bytes.copy(bytes, 0, 0, this.#starts[this.#count] as number);
    this.#bytes = bytes;
  }
}

/** 2^32, to take a record id apart into two 32-bit halves. */
const HALF = 2 ** 32;

/** Record ids (numbers), in an open-addressing table of doubles: 8-16 bytes an id. */
export class IdSet {
  #size = 0;
  /** The ids, NaN where there is none; at most half full. */
  #table = new Float64Array(2048).fill(Number.NaN);
  /** NaN itself is the table's mark of an empty place, so it is a member on its own. */
  #nan = false;

  constructor(ids: Iterable<number> = []) {
    for (const id of ids) this.add(id);
  }

  get size(): number {
    return this.#size;
  }

  has(id: number): boolean {
    if (Number.isNaN(id)) return this.#nan;
    const table = this.#table;
    const mask = table.length - 1;
    for (let at = hashId(id) & mask; ; at = (at + 1) & mask) {
      const entry = table[at] as number;
      if (entry === id) return true;
      if (Number.isNaN(entry)) return false;
    }
  }

  add(id: number): this {
    if (Number.isNaN(id)) {
      if (!this.#nan) this.#size += 1;
      this.#nan = true;
      return this;
    }
    if (this.has(id)) return this;
    this.#size += 1;
    if (this.#size * 2 > this.#table.length) {
      const old = this.#table;
      this.#table = new Float64Array(old.length * 2).fill(Number.NaN);
      for (const entry of old) if (!Number.isNaN(entry)) this.#place(entry);
    }
    this.#place(id);
    return this;
  }

  #place(id: number): void {
    const table = this.#table;
    const mask = table.length - 1;
    let at = hashId(id) & mask;
    while (!Number.isNaN(table[at] as number)) at = (at + 1) & mask;
    table[at] = id;
  }
}

/** A hash of a number, ids from 1 up spread over the table (an id is usually a whole number below 2^53). */
function hashId(id: number): number {
  const low = (id % HALF) | 0;
  const high = Math.floor(id / HALF) | 0;
  let hash = Math.imul(low ^ Math.imul(high, 0x9e3779b1), 0x85ebca6b);
  hash ^= hash >>> 15;
  return Math.imul(hash, 0xc2b2ae35) ^ (hash >>> 13);
}
