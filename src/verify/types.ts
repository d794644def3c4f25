/** verify's options, its findings and events, and what a step's check holds. */
import { z } from 'zod';
import { type CrmClient, type V1LiveConnection } from '../client/index.ts';
import { type AccountIdentity, type LoadedJournal, stateStoreSchema } from '../journal/index.ts';
import { type Entity, type NameResolver, type TransformRegistry } from '../mapping/index.ts';
import { type PreparedStep, runSourceSchema } from '../plan/index.ts';

export type Body = Record<string, unknown>;

export const verifyOptionsSchema = z.object({
  /** One mapping over one input, or a whole plan: what the run was made with. */
  source: runSourceSchema,
  /** The state folder of the runs to check. */
  stateDir: z.string().min(1),
  /** Keep the state in a PostgreSQL store too (`--state-store`), under its key. @default null (the folder alone) */
  stateStore: stateStoreSchema.nullable().default(null),
  /**
   * Where the CSV of the differences goes; the rows and values not carried go beside it (its name
   * with `not-carried` for `differences`, or `.not-carried` added). @default `<stateDir>/results/verify.differences.csv`
   */
  differencesFile: z.string().min(1).nullable().default(null),
  /** Requests under way at once. @default 8 */
  concurrency: z.number().int().min(1).max(64).default(8),
});

export type VerifyOptions = z.output<typeof verifyOptionsSchema>;

export type VerifyOptionsInput = z.input<typeof verifyOptionsSchema>;

/** Records read per filter query: one page. */
export const VERIFY_BATCH = 100;

/**
 * What differs between a row and the account:
 * - `missing`: the row's record is not in the account (deleted there since the run, or never
 *   written, though no run refused the row: a row added to the source since);
 * - `extra`: a record a run created whose row the source no longer has, or a party, project or
 *   opportunity created in the account since the first run that no run wrote (added by hand);
 * - `differs`: a field the account holds otherwise than the row maps to, or a row that maps no
 *   more though a run wrote it;
 * - `unresolved`: a link (or a name) of a row that has a record, which does not resolve now.
 */
export type DifferenceKind = 'missing' | 'extra' | 'differs' | 'unresolved';

/**
 * Where a difference came from since the run: the account (a record changed, deleted or added
 * there) or the source (a row changed, added or gone since the run wrote it).
 */
export type ChangedIn = 'account' | 'source';

export interface VerifyDifference {
  step: string;
  kind: DifferenceKind;
  changedIn: ChangedIn;
  /** The row as a spreadsheet shows it (the header is row 1); null for an extra record (its row is gone). */
  row: number | null;
  key: string;
  /** The target (`email`, `fields`), the link's mapping place, or '' for the whole record. */
  field: string;
  /** What the row maps to, as text ('' when it has nothing there). */
  inFile: string;
  /** What the account holds, or why there is nothing. */
  inAccount: string;
  /** The record's id in the account, when it has one. */
  id: number | null;
}

/**
 * Something of the source the runs did not carry, by decision and with its reason: a row they
 * rejected (`rejected`), or a value they left out of a record they wrote (`dropped`: `onInvalid:
 * drop`, a link not made, an owner the account does not know, a file not there). No difference:
 * the account holds what the runs were told to write.
 */
export interface VerifyNotCarried {
  step: string;
  kind: 'rejected' | 'dropped';
  /** The row as a spreadsheet shows it. */
  row: number;
  key: string;
  /** The target or mapping place the reason is about; '' for the whole row. */
  field: string;
  /** The column the value was read from, when one column holds it. */
  column: string;
  /** The value as the source holds it ('' when the reason is not about one value). */
  value: string;
  code: string;
  /** The reason in the words of the person who owns the data (reasonText). */
  reason: string;
  /** Where the rule is in the mapping, for the person who edits it; '' when it is no rule's. */
  rule: string;
  /** The record written without the value; null for a rejected row. */
  id: number | null;
}

export interface VerifyStepSummary {
  step: string;
  entity: Entity;
  inputFile: string;
  mappingFile: string;
  /** Rows read from the source (skipped ones included). */
  rows: number;
  /** Rows the mapping's `skip` left out: not expected in the account. */
  skipped: number;
  /** Rows in the account as in the file: their record found and equal, or named again by a later row (onDuplicate). */
  carried: number;
  /** Rows whose record the account has. */
  found: number;
  missing: number;
  extra: number;
  /** Rows whose record differs in at least one field. */
  differing: number;
  /** Rows with a link or name that did not resolve. */
  unresolved: number;
  /** Records the account had before and the mapping said to leave alone (`onMatch: skip`): found, not compared. */
  notCompared: number;
  /** Rows the runs rejected, each with its reason: not carried, by decision. */
  rejected: number;
  /** Values the runs left out of records they wrote, each with its reason: not carried, by decision. */
  dropped: number;
}

export interface VerifySummary {
  stateDir: string;
  steps: VerifyStepSummary[];
  /** Every difference, in step order, then row order; records added in the account last. */
  differences: VerifyDifference[];
  differencesFile: string;
  /** Rows rejected and values dropped by the runs, with their reasons, in step and row order. */
  notCarried: VerifyNotCarried[];
  notCarriedFile: string;
  /** Requests sent, reads of names included. */
  requests: number;
  /** Of those, the reads of the account's names at the start. */
  requestsForNames: number;
  /** Of those, the listing of records created in the account since the first run. */
  requestsForAdded: number;
  /** The requests announced before the records were read by id (the `plan` event). */
  plannedRequests: number;
  /**
   * Notes and tasks whose list was read only up to its cap (listingCap) when looking for ones added
   * by hand, with how many were looked at: beyond them, one added by hand is not seen.
   */
  notListed: Array<{ entity: 'entry' | 'task'; listed: number }>;
  elapsedMs: number;
  /** True when nothing differs (whatever was not carried by decision). */
  matches: boolean;
}

export type VerifyEvent =
  /** Sent before the records are read: how many requests that takes. */
  | {
      type: 'plan';
      /** Per step: the records the journal holds ids for, and the requests reading them takes. */
      steps: Array<{ step: string; records: number; requests: number }>;
      /** The requests still to come: reading the records by id. */
      requests: number;
      /** Spent already: reading the account's names. */
      requestsForNames: number;
      /** Spent already: listing the records created in the account since the first run. */
      requestsForAdded: number;
    }
  | { type: 'end'; summary: VerifySummary };

export interface VerifyDeps {
  client: CrmClient;
  /** The account the state must belong to. @default accountOf(client): the client's own address */
  account?: AccountIdentity | undefined;
  signal?: AbortSignal;
  onEvent?: (event: VerifyEvent) => void;
  /** Names of the account; read once from the account when absent. */
  resolver?: NameResolver;
  /** How live v1 inputs (`v1+https://HOST`) are reached; a step with one is refused without it. */
  v1Live?: V1LiveConnection;
  /** The transforms the mappings may name: the built-in ones and the caller's (transformRegistry). @default TRANSFORMS */
  transforms?: TransformRegistry;
}

export interface StepCheck {
  prepared: PreparedStep;
  entity: Entity;
  journal: LoadedJournal;
  /** How many of the journal's rows hold a record id: the records verify reads. */
  written: number;
  /** When the step's first run began (its journal's first line), or null for a step never run. */
  began: Date | null;
  /** The party types (person, organisation) the step's rows map to: where a record added by hand belongs. */
  types: Set<string>;
  /** Keys of rows folded into another row's record (onDuplicate) -> that row's key, as the run links them. */
  aliases: Map<string, string>;
}
