/** A step while the importer runs it: its counts, ids awaited by other rows, and its journal. */
import { FerryError } from '../errors/index.ts';
import { JournalWriter, type LoadedJournal } from '../journal/index.ts';
import { type CompiledMapping, emptyWarningCounts, type MatchSpec, RejectsWriter } from '../mapping/index.ts';
import { type Matcher, type NotCarried, type PreparedStep, ReasonCounter, RowChecks } from '../plan/index.ts';
import { SuccessWriter } from './results.ts';
import type { ReconcileIndex } from './reconcile.ts';
import type { LostCreates } from './lost-creates.ts';
import { IdSet } from '../util/index.ts';
import type { StepCounts } from './import-options.ts';

/** An id a row waits for: resolved once, when its row is settled (see StepRun). */
interface Deferred {
  promise: Promise<number | null>;
  resolve(id: number | null): void;
}

function deferred(): Deferred {
  let resolve!: (id: number | null) => void;
  const promise = new Promise<number | null>((r) => (resolve = r));
  return { promise, resolve };
}

/** One step while it runs. */
export class StepRun {
  readonly counts: StepCounts = {
    rowsRead: 0,
    created: 0,
    updated: 0,
    unchanged: 0,
    matched: 0,
    deleted: 0,
    skipped: 0,
    repeated: 0,
    rejected: 0,
    missing: 0,
    notReached: 0,
  };
  /** Rows of this run settled: their record's id, null when not written. */
  readonly #ids = new Map<string, number | null>();
  /** Rows other rows wait for, not yet settled. */
  readonly #awaited = new Map<string, Deferred>();
  /** The row checks every caller shares (keys, repeats, match values), in the order rows are read. */
  readonly checks: RowChecks;
  /** Keys of this run's rows that were rejected: a link to one says so (LINK_BY_NAME), as validate does. */
  readonly rejectedKeys = new Set<string>();
  finished = false;
  /** Opened on first use; held as promises so that concurrent rows share one file. */
  success: Promise<SuccessWriter> | null = null;
  rejects: Promise<RejectsWriter> | null = null;
  header: string[] = [];
  /** Ids of every record the journal holds for this step, so reconciliation never adopts one twice (bytes an id: a million rows). */
  readonly taken = new IdSet();
  /** Finds records the account has already, when the mapping says `match:`. */
  matcher: Matcher | null = null;
  /** Rows past their look-up (or needing none) and not yet written: what keeps the writes busy while look-ups wait to share a query. */
  ready = 0;
  /** The step's reader is reading rows (not waiting for room in the window, not done): more values of `match:` are on their way. */
  reading = false;
  /** Settles the creates whose answers were lost, made on the first. */
  lost: LostCreates | null = null;
  /** --reconcile: the account's records made since the state began, read on the first row the journal does not know. */
  reconcile: ReconcileIndex | null = null;
  /** Rows whose adding of a project's additional contacts was cut off: which of them were added is read, not guessed. */
  readonly contactsUnsure = new Set<string>();
  /** Warnings of the rows written, by code. */
  readonly warnings = emptyWarningCounts();
  /** Rows rejected, by reason. */
  readonly reasons = new ReasonCounter();
  /** Keys of rows folded into another row's record (onDuplicate) -> that row's key. */
  readonly aliases = new Map<string, string>();
  /** Unread columns with values, once the input was read. */
  notCarried: NotCarried[] = [];
  /** Rows the step reads in all, once counted (for progress). */
  total: number | null = null;
  /** Rows of the input that could not be read at all (no key): counted for the journal's run end. */
  unread = 0;
  /** The whole input was read (no --limit cut, no stop). */
  readAll = false;

  constructor(
    readonly prepared: PreparedStep,
    readonly compiled: CompiledMapping,
    readonly journal: LoadedJournal,
    readonly writer: JournalWriter | null,
    linked: boolean,
  ) {
    for (const row of journal.rows.values()) if (row.id !== null) this.taken.add(row.id);
    this.checks = new RowChecks(prepared.name, prepared.mapping, linked);
  }

  /** Keys of the rows read so far. */
  get seen(): { has(key: string): boolean } {
    return this.checks.seen;
  }

  get name(): string {
    return this.prepared.name;
  }

  get match(): MatchSpec | undefined {
    return this.prepared.mapping.match;
  }

  /** The id of a row of this step, once known; null when the row is not written in the end. */
  idOf(key: string): number | null | Promise<number | null> {
    const alias = this.aliases.get(key);
    if (alias !== undefined) return this.idOf(alias);
    // Settled: the id itself, so that a row linking to it goes on in the same turn.
    const settled = this.#ids.get(key);
    if (settled !== undefined) return settled;
    const pending = this.#awaited.get(key);
    if (pending) return pending.promise;
    const known = this.journal.rows.get(key)?.id;
    if (known !== undefined && known !== null) return known;
    if (this.finished) return null;
    const wait = deferred();
    this.#awaited.set(key, wait);
    return wait.promise;
  }

  /** The row of `key` is settled: written as record `id`, or not written (null). Once; later calls change nothing. */
  settle(key: string, id: number | null): void {
    if (this.#ids.has(key)) return;
    // The id the journal holds for the row (written by this run or an earlier one) is found there
    // (idOf): kept twice, every row of a million-row file would cost a map entry more. Any later
    // settling of the row gives that same id (settleUnwritten takes the journal's).
    if (id === null || id !== this.journal.rows.get(key)?.id) this.#ids.set(key, id);
    const waiting = this.#awaited.get(key);
    if (waiting) {
      this.#awaited.delete(key);
      waiting.resolve(id);
    }
  }

  /**
   * The row was not written in this run (rejected, stopped): rows that link to it get the record
   * an earlier run wrote for it, if any.
   */
  settleUnwritten(key: string): void {
    this.settle(key, this.journal.rows.get(key)?.id ?? null);
  }

  /** A row folded into the row of `into` (onDuplicate): rows that link to its key get that row's record. */
  alias(key: string, into: string): void {
    if (key === into) return;
    this.aliases.set(key, into);
    const waiting = this.#awaited.get(key);
    if (waiting) {
      this.#awaited.delete(key);
      void Promise.resolve(this.idOf(into)).then((id) => waiting.resolve(id));
    }
  }

  finish(): void {
    this.finished = true;
    for (const [key, entry] of this.#awaited) entry.resolve(this.journal.rows.get(key)?.id ?? null);
    this.#awaited.clear();
  }
}

/**
 * A row is known to the journal by its key. With the mapping's key changed, no row would find the
 * record an earlier run wrote for it: every row would be created again, beside its record.
 */
export function assertSameKey(step: PreparedStep, journal: LoadedJournal): void {
  const key = JSON.stringify(step.mapping.key);
  if (journal.key === null || journal.key === key || !anyWritten(journal)) return;
  throw new FerryError(
    'MAPPING_INVALID',
    `step ${step.name}: the mapping's key is ${key}, and the records earlier runs wrote in this state were keyed by ${journal.key}; every row would be created again`,
    {
      location: { file: step.mappingFile, yamlPath: 'key' },
      hint: 'Put the key back as it was. To key the rows another way, start over (--fresh, or another --state-dir) with a `match:` in the mapping, so that rows find the records already written instead of creating them again.',
    },
  );
}

/** Whether the journal holds a record for any row (a walk that stops at the first, without a list of every row). */
function anyWritten(journal: LoadedJournal): boolean {
  for (const row of journal.rows.values()) if (row.id !== null) return true;
  return false;
}
