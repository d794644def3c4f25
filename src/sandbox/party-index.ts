/**
 * Indexes of the parties by value, so that what the service finds by value costs the same in an
 * account of a million parties as in an empty one: an organisation by name, the people of an
 * organisation, and the candidates of a search (`/parties/search`).
 *
 * The index is told of every record the table stores, deletes, touches or hands out during a
 * write (Table.watch), and reads those records again when it is next asked (`sync`), so it is in
 * step with every write, with loading a data file and with the change log's replay. It answers
 * with candidates, never with a verdict: postings may still hold a record whose values changed
 * (removing an id from a long posting would cost a shift per change), so every caller checks the
 * records it gets with the same predicate a walk would use, and the answers are the walk's.
 */
import { digitsOf, partyName } from './party-text.ts';
import type { PartyRec } from './model.ts';

/** Length of the pieces of text (n-grams) the search indexes; shorter queries walk the table. */
export const GRAM = 4;

/** Ids of the records that hold one value, ascending once `sorted()` has run. */
class Posting {
  ids = new Int32Array(2);
  size = 0;
  ordered = true;

  add(id: number): void {
    if (this.size > 0) {
      const last = this.ids[this.size - 1] as number;
      if (last === id) return;
      if (last > id) this.ordered = false;
    }
    if (this.size === this.ids.length) {
      const grown = new Int32Array(this.ids.length * 2);
      grown.set(this.ids);
      this.ids = grown;
    }
    this.ids[this.size] = id;
    this.size += 1;
  }

  /** The ids, ascending and without repeats. */
  sorted(): Int32Array {
    if (!this.ordered) {
      const ids = this.ids.subarray(0, this.size).sort();
      let kept = 0;
      for (let i = 0; i < ids.length; i++) if (kept === 0 || ids[i] !== ids[kept - 1]) ids[kept++] = ids[i] as number;
      this.size = kept;
      this.ordered = true;
    }
    return this.ids.subarray(0, this.size);
  }
}

class Postings<K extends string | number = string> {
  private readonly map = new Map<K, Posting>();

  add(key: K, id: number): void {
    let posting = this.map.get(key);
    if (!posting) this.map.set(key, (posting = new Posting()));
    posting.add(id);
  }

  get(key: K): Int32Array {
    return this.map.get(key)?.sorted() ?? EMPTY;
  }

  /** The posting of `key` itself (its size read without sorting it), or undefined. */
  posting(key: K): Posting | undefined {
    return this.map.get(key);
  }

  /** Ids held, counting repeats and stale ones (for the docs and tests). */
  entries(): number {
    let total = 0;
    for (const posting of this.map.values()) total += posting.size;
    return total;
  }

  clear(): void {
    this.map.clear();
  }
}

const EMPTY = new Int32Array(0);

/**
 * The piece of `text` at `at` (GRAM characters) as a number: four characters below U+0100 packed
 * into 32 bits, others hashed into the same range. A number is looked up without a string made
 * and hashed for each piece (a third of a search's cost in a large account); two pieces that meet
 * in one number share a posting, which only adds candidates, and every caller checks those.
 */
function gramAt(text: string, at: number): number {
  const a = text.charCodeAt(at);
  const b = text.charCodeAt(at + 1);
  const c = text.charCodeAt(at + 2);
  const d = text.charCodeAt(at + 3);
  if ((a | b | c | d) < 0x100) return (a << 24) | (b << 16) | (c << 8) | d;
  return Math.imul(Math.imul(Math.imul(a, 0x9e3779b1) ^ b, 0x85ebca6b) ^ Math.imul(c, 0xc2b2ae35) ^ d, 0x27d4eb2f);
}

/** The pieces of `text` a search can be narrowed by: every GRAM-long piece. */
function grams(text: string, into: Set<number>): void {
  for (let i = 0; i + GRAM <= text.length; i++) into.add(gramAt(text, i));
}

/** What the index holds of one party. */
interface Keys {
  /** Lower-case name of an organisation; null for a person. */
  organisation: string | null;
  employer: number | null;
  text: Set<number>;
  zips: string[];
  phone: Set<number>;
}

function keysOf(party: PartyRec): Keys {
  const text = new Set<number>();
  grams(partyName(party).toLowerCase(), text);
  for (const email of party.emailAddresses) grams(email.address.toLowerCase(), text);
  const phone = new Set<number>();
  for (const number of party.phoneNumbers) grams(digitsOf(number.number), phone);
  const zips: string[] = [];
  for (const address of party.addresses)
    if (address.zip !== null) zips.push(address.zip.toLowerCase().replace(/\s+/g, ''));
  return {
    organisation: party.type === 'organisation' ? (party.name ?? '').toLowerCase() : null,
    employer: party.organisationId,
    text,
    zips,
    phone,
  };
}

/**
 * A 53-bit hash of what the index holds of a party: two 32-bit FNV-1a hashes of the same text
 * with different seeds. A change whose hash equals the old one would leave the new values out of
 * the postings; at 2^-53 a change that is not a risk worth a copy of every party's keys.
 */
function fingerprint(keys: Keys): number {
  const text = `${keys.organisation}\u0001${keys.employer}\u0001${[...keys.text].join('\u0002')}\u0001${keys.zips.join('\u0002')}\u0001${[...keys.phone].join('\u0002')}`;
  let a = 0x811c9dc5;
  let b = 0x050c5d1f;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    a = Math.imul(a ^ c, 0x01000193);
    b = Math.imul(b ^ c, 0x01000193) ^ (b >>> 15);
  }
  // 0 means "not indexed".
  return (a >>> 0) * 0x200000 + (b & 0x1fffff) || 1;
}

/**
 * Told of every record a table changes (or may change): an index kept beside the table (see
 * PartyIndex) reads the record again when it is next asked, so it stays in step with every write.
 */
export interface TableWatcher {
  /** The record with this id was stored, deleted, touched or fetched during a write. */
  noted(id: number): void;
  /** The table was emptied. */
  cleared(): void;
}

/** The store's table of parties, as the index reads it (the store imports the index, not the other way). */
export interface PartyTable {
  peek(id: number): PartyRec | undefined;
  values(): IterableIterator<PartyRec>;
  watch(watcher: TableWatcher): void;
}

export class PartyIndex implements TableWatcher {
  /** Ids told of since the last sync. */
  private dirty = new Set<number>();
  /** What each indexed party's keys hashed to when it was last read. */
  private readonly indexed = new Map<number, number>();
  /** Postings left behind by changed or deleted parties; past a limit the index is built again. */
  private stale = 0;
  private readonly organisations = new Postings();
  private readonly employers = new Postings();
  private readonly text = new Postings<number>();
  private readonly zips = new Postings();
  private readonly phones = new Postings<number>();

  constructor(private readonly table: PartyTable) {
    table.watch(this);
  }

  noted(id: number): void {
    this.dirty.add(id);
  }

  cleared(): void {
    this.dirty.clear();
    this.indexed.clear();
    this.stale = 0;
    for (const postings of this.all()) postings.clear();
  }

  private all(): Array<Postings<string> | Postings<number>> {
    return [this.organisations, this.employers, this.text, this.zips, this.phones];
  }

  /** Reads again the parties changed since the last call. */
  private sync(): void {
    if (this.dirty.size === 0) return;
    const dirty = this.dirty;
    this.dirty = new Set();
    for (const id of dirty) {
      const party = this.table.peek(id);
      const before = this.indexed.get(id);
      if (!party) {
        if (before !== undefined) {
          this.indexed.delete(id);
          this.stale += 1;
        }
        continue;
      }
      const keys = keysOf(party);
      const hash = fingerprint(keys);
      if (hash === before) continue;
      if (before !== undefined) this.stale += 1;
      this.indexed.set(id, hash);
      this.add(id, keys);
    }
    if (this.stale > 10_000 && this.stale > this.indexed.size) this.rebuild();
  }

  private add(id: number, keys: Keys): void {
    if (keys.organisation !== null) this.organisations.add(keys.organisation, id);
    if (keys.employer !== null) this.employers.add(String(keys.employer), id);
    for (const gram of keys.text) this.text.add(gram, id);
    for (const zip of keys.zips) this.zips.add(zip, id);
    for (const gram of keys.phone) this.phones.add(gram, id);
  }

  private rebuild(): void {
    for (const postings of this.all()) postings.clear();
    this.indexed.clear();
    this.stale = 0;
    for (const party of this.table.values()) {
      const keys = keysOf(party);
      this.indexed.set(party.id, fingerprint(keys));
      this.add(party.id, keys);
    }
  }

  /** The records of `ids` that still exist, in id order. */
  private *records(ids: Int32Array): Generator<PartyRec> {
    for (const id of ids) {
      const party = this.table.peek(id);
      if (party) yield party;
    }
  }

  /** The first organisation (in id order) whose name is `wanted` ignoring case (`wanted` in lower case). */
  organisationNamed(wanted: string): PartyRec | undefined {
    this.sync();
    for (const party of this.records(this.organisations.get(wanted))) {
      if (party.type === 'organisation' && (party.name ?? '').toLowerCase() === wanted) return party;
    }
    return undefined;
  }

  /** The parties whose organisation is `id`, in id order. */
  employees(id: number): PartyRec[] {
    this.sync();
    return [...this.records(this.employers.get(String(id)))].filter((party) => party.organisationId === id);
  }

  /**
   * The parties a search for `q` can match (see partyMatches), in id order: a superset of the
   * matches, which the caller checks. Null when the query is too short to narrow (the caller walks
   * the table, where such a query usually fills its page soon).
   */
  searchCandidates(q: string): Iterable<PartyRec> | null {
    const needle = q.trim().toLowerCase();
    if (needle === '') return [];
    if (needle.length < GRAM) return null;
    const squeezed = needle.replace(/\s+/g, '');
    const digits = digitsOf(needle);
    const phoneLike = digits.length >= 3 && digits.length >= squeezed.replace(/[^0-9a-z]/g, '').length;
    if (phoneLike && digits.length < GRAM) return null;
    this.sync();
    // A name or an address holding the needle holds each of its pieces: the rarest one narrows most.
    const lists = [this.narrowest(this.text, needle), this.zips.get(squeezed)];
    if (phoneLike) lists.push(this.narrowest(this.phones, digits));
    return this.records(union(lists));
  }

  /**
   * The parties a structured filter can match by the texts its conditions name (see
   * CompiledFilter.texts), in id order: a superset, which the caller checks. Null when none is
   * long enough to narrow (GRAM), and the caller walks the table.
   */
  filterCandidates(texts: ReadonlyArray<{ on: 'text' | 'phone'; value: string }>): Iterable<PartyRec> | null {
    const usable = texts.filter((text) => text.value.length >= GRAM);
    if (usable.length === 0) return null;
    this.sync();
    let ids: Int32Array | null = null;
    for (const text of usable) {
      const holding = this.narrowest(text.on === 'phone' ? this.phones : this.text, text.value);
      ids = ids === null ? holding : intersect(ids, holding);
    }
    return this.records(ids ?? EMPTY);
  }

  /**
   * The ids whose postings hold every piece of `text`, or a superset: the rarest piece's posting,
   * narrowed by the next rarest while that pays (a few merges of sorted lists, each far shorter
   * than the table), so that a piece common in a large account does not make the search long.
   */
  private narrowest(postings: Postings<number>, text: string): Int32Array {
    // The three rarest pieces, by their postings' sizes: only those are read.
    const rarest: Posting[] = [];
    for (let i = 0; i + GRAM <= text.length; i++) {
      const posting = postings.posting(gramAt(text, i));
      // A piece no party holds: no party holds the text.
      if (!posting || posting.size === 0) return EMPTY;
      if (rarest.includes(posting)) continue;
      if (rarest.length < 3) rarest.push(posting);
      else if (posting.size < (rarest[2] as Posting).size) rarest[2] = posting;
      else continue;
      rarest.sort((a, b) => a.size - b.size);
    }
    let ids = rarest[0]?.sorted() ?? EMPTY;
    for (let i = 1; i < rarest.length && ids.length > 8; i++) ids = intersect(ids, (rarest[i] as Posting).sorted());
    return ids;
  }

  /** Ids held across the postings, repeats and stale ones included (what the index costs). */
  entries(): number {
    this.sync();
    return this.all().reduce((sum, postings) => sum + postings.entries(), 0);
  }
}

/** The ids of sorted lists, ascending and without repeats. */
function union(lists: Int32Array[]): Int32Array {
  const nonEmpty = lists.filter((list) => list.length > 0);
  if (nonEmpty.length === 0) return EMPTY;
  if (nonEmpty.length === 1) return nonEmpty[0] as Int32Array;
  const all = new Int32Array(nonEmpty.reduce((sum, list) => sum + list.length, 0));
  let at = 0;
  for (const list of nonEmpty) {
    all.set(list, at);
    at += list.length;
  }
  all.sort();
  let kept = 0;
  for (let i = 0; i < all.length; i++) if (kept === 0 || all[i] !== all[kept - 1]) all[kept++] = all[i] as number;
  return all.subarray(0, kept);
}

/** The ids in both sorted lists: a merge, or a binary search of the longer one when it is much longer. */
function intersect(a: Int32Array, b: Int32Array): Int32Array {
  const out = new Int32Array(Math.min(a.length, b.length));
  let kept = 0;
  if (b.length > a.length * 4) {
    let low = 0;
    for (const id of a) {
      let high = b.length;
      while (low < high) {
        const mid = (low + high) >>> 1;
        if ((b[mid] as number) < id) low = mid + 1;
        else high = mid;
      }
      if (low < b.length && b[low] === id) out[kept++] = id;
    }
    return out.subarray(0, kept);
  }
  for (let i = 0, j = 0; i < a.length && j < b.length; ) {
    const x = a[i] as number;
    const y = b[j] as number;
    if (x === y) {
      out[kept++] = x;
      i++;
      j++;
    } else if (x < y) i++;
    else j++;
  }
  return out.subarray(0, kept);
}
