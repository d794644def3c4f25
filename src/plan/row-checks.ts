/**
 * The one row pipeline: what becomes of each mapped row of a step before its links, names and
 * files are looked at (record-to-send.ts does those, for every caller alike). The importer,
 * validate (and with it the workbench's Check and preview) and verify read a step's rows through
 * openStepItems and hand each to RowChecks.check; they only decide what to do with the outcome,
 * so that what validate says of a row is what the run does with it.
 *
 * The checks, in order: a row the mapping's `skip` left out; a row folded into an earlier row of
 * its record (`onDuplicate: first | merge`); a row that does not map (its reasons); a key an earlier
 * row of the step has (the same record named again in a step other steps link to, else a
 * duplicate key); a match value an earlier row has (`onDuplicate: reject`); then the row is ready.
 */
import type { MappedItem, MappedRecord, MatchSpec, OnDuplicate, RejectedRow, SkippedRow } from '../mapping/index.ts';
import { MatchValueCheck } from './duplicates.ts';
import { recordDigest, repeatedKey } from './references.ts';
import { rejectedRow } from './record-to-send.ts';
import { KeySet } from '../util/index.ts';

/** What becomes of one row. */
export type RowOutcome =
  /** The mapping's `skip` left it out. */
  | { kind: 'skipped'; row: SkippedRow }
  /** Folded into the row of `into` (onDuplicate first or merge): its key stands for that row's record. */
  | { kind: 'folded'; row: SkippedRow; key: string; into: string }
  /**
   * Refused. `own`: the row's key is its own (a row that does not map, a match value taken); a
   * duplicate key belongs to the earlier row that had it, whose record stays that row's.
   */
  | { kind: 'rejected'; rejected: RejectedRow; own: boolean }
  /** The record of an earlier row named again with the same values (a step others link to): written once, by that row. */
  | { kind: 'repeated'; mapped: MappedRecord }
  /** On to its links, names and files (recordToSend). */
  | { kind: 'ready'; mapped: MappedRecord };

/** The row checks of one step, in the order its rows are read. */
export class RowChecks {
  /** Keys of the rows read so far (rejected ones with a key included); bytes a key, not a string (a file may have a million rows). */
  readonly seen = new KeySet();
  /** In a step others link to: each key's digest by its slot in `seen` (NaN: none), so a row naming its record again is told from a conflicting one. */
  #digests: Float64Array | null;
  readonly #matches: MatchValueCheck;

  /** `linked`: other steps link to this one (linkedSteps), whose rows may name one record many times. */
  constructor(
    readonly step: string,
    mapping: { match?: MatchSpec | undefined; onDuplicate: OnDuplicate },
    linked: boolean,
  ) {
    this.#digests = linked ? new Float64Array(1024).fill(Number.NaN) : null;
    this.#matches = new MatchValueCheck(mapping.match, mapping.onDuplicate);
  }

  check(item: MappedItem): RowOutcome {
    if (item.kind === 'skipped') {
      if (!item.folded) return { kind: 'skipped', row: item };
      // A row of the same key as the row it folds into may come before that row (under `merge` the
      // first row comes out after its last later row): only another key is seen here.
      if (item.folded.key !== item.folded.into) this.seen.add(item.folded.key);
      return { kind: 'folded', row: item, key: item.folded.key, into: item.folded.into };
    }
    if (item.kind === 'rejected') {
      if (item.key) this.seen.add(item.key);
      return { kind: 'rejected', rejected: item, own: true };
    }
    const digest = this.#digests ? recordDigest(item) : undefined;
    const earlier = this.seen.find(item.key);
    if (earlier >= 0) {
      const problem = repeatedKey(this.step, item.key, digest, this.#digestOf(earlier));
      if (problem === 'repeat') return { kind: 'repeated', mapped: item };
      return { kind: 'rejected', rejected: rejectedRow(item, problem), own: false };
    }
    const slot = this.seen.slotOf(item.key);
    const sameRecord = this.#matches.check(item);
    if (sameRecord) return { kind: 'rejected', rejected: rejectedRow(item, sameRecord), own: true };
    if (digest !== undefined) this.#setDigest(slot, digest);
    return { kind: 'ready', mapped: item };
  }

  #digestOf(slot: number): number | undefined {
    const digest = this.#digests?.[slot];
    return digest === undefined || Number.isNaN(digest) ? undefined : digest;
  }

  #setDigest(slot: number, digest: number): void {
    let digests = this.#digests as Float64Array;
    if (slot >= digests.length) {
      const grown = new Float64Array(Math.max(slot + 1, digests.length * 2)).fill(Number.NaN);
      grown.set(digests);
      digests = this.#digests = grown;
    }
    digests[slot] = digest;
  }
}
