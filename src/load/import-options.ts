/** The importer's options (normalised once by the schema), what it needs, and the summary and events it gives. */
import { z } from 'zod';
import type { AccountCatalog, CrmClient, GovernorState, TransportWait, V1LiveConnection } from '../client/index.ts';

/** A wait of the run's requests, and whose: the account written to, or a live v1 source's old account. */
export type ProgressWait = TransportWait & { of: 'account' | 'old account' };

import type { FerryError } from '../errors/index.ts';
import { type AccountIdentity, stateStoreSchema } from '../journal/index.ts';
import type { NameResolver, RowWarning, TransformRegistry, WarningCounts } from '../mapping/index.ts';
import { type NotCarried, type RejectReason, runSourceSchema } from '../plan/index.ts';
import type { RowAction } from './results.ts';
import type { SetupPlan, SetupReport } from './setup-plan.ts';

type Body = Record<string, unknown>;

export const importOptionsSchema = z.object({
  /** One mapping over one input, or a whole plan. */
  source: runSourceSchema,
  /** Where the journal, the lock and the result files live. */
  stateDir: z.string().min(1),
  /**
   * Keep the state in a PostgreSQL store too (`--state-store`), under `key`: the same plan run
   * from another folder or machine with the same store and key goes on where the last run
   * stopped. @default null (the folder alone)
   */
  stateStore: stateStoreSchema.nullable().default(null),
  /** Requests under way at once. @default 8 */
  concurrency: z.number().int().min(1).max(64).default(8),
  /** Map and resolve names, count the requests a run needs, write nothing. @default false */
  dryRun: z.boolean().default(false),
  /** Only the first N rows of each step: a sample migration. @default null (all) */
  limit: z.number().int().positive().nullable().default(null),
  /** Start over: the earlier state is moved aside. @default false */
  fresh: z.boolean().default(false),
  /** Write every row again, even when unchanged since the last run. @default false */
  full: z.boolean().default(false),
  /** Delete the records of rows that are no longer in the input. @default false */
  deleteMissing: z.boolean().default(false),
  /** Only the rows the last runs rejected. @default false */
  retryRejects: z.boolean().default(false),
  /** With a plan's `setup:`: stop before any write when the account lacks what the interface cannot create. @default false */
  strict: z.boolean().default(false),
  /** A fixed rejects file whose rows replace the input of their step (`--retry-rejects FILE`). @default null */
  retryFile: z.string().nullable().default(null),
  /**
   * Look every row the journal does not know up in the account before creating it, and take a
   * journal that is not what its runs wrote (cut short, an older copy) as it is: the way on after
   * JOURNAL_CORRUPT. @default false
   */
  reconcile: z.boolean().default(false),
  /**
   * A step with `match:` reads the account's whole list of its records (100 a request) instead of
   * sending filter queries (50 rows' values a request), when the list holds at most this many
   * records: a restore that knows the size of what it restores sets it. @default 0 (filter queries)
   */
  matchFromListUpTo: z.number().int().min(0).default(0),
});

export type ImportOptions = z.output<typeof importOptionsSchema>;
export type ImportOptionsInput = z.input<typeof importOptionsSchema>;

export interface ImportDeps {
  client: CrmClient;
  /** The account the state must belong to. @default accountOf(client): the client's own address */
  account?: AccountIdentity | undefined;
  /** Ctrl-C: stop taking rows, let requests under way finish, flush the journal. */
  signal?: AbortSignal;
  onEvent?: (event: ImportEvent) => void;
  /** Names of the account; read once from the account when absent. */
  resolver?: NameResolver;
  /** The account's names, read already by the caller (a restore reads them once for its runs): the run reads none. */
  catalog?: AccountCatalog;
  /**
   * Told the account's names as the plan's set-up left them (what it created added), for a next
   * run's `catalog`. With it the run reads all of the account's names, not only those its
   * mappings can hold, so that the next run's mappings find theirs.
   */
  onCatalog?: (catalog: AccountCatalog) => void;
  now?: () => Date;
  /** How often progress events are sent, in ms. @default 1000 */
  progressEveryMs?: number;
  /** How live v1 inputs (`v1+https://HOST`) are reached; a step with one is refused without it. */
  v1Live?: V1LiveConnection;
  /** The transforms the mappings may name: the built-in ones and the caller's (transformRegistry). @default TRANSFORMS */
  transforms?: TransformRegistry;
}

/** Counts of one step. */
export interface StepCounts {
  rowsRead: number;
  created: number;
  updated: number;
  unchanged: number;
  matched: number;
  deleted: number;
  skipped: number;
  /**
   * Rows that name the record of an earlier row again: with the same values in a step others link
   * to, or folded into that row by `onDuplicate: first | merge`.
   */
  repeated: number;
  rejected: number;
  /** Rows the journal knows that this run's input no longer has. */
  missing: number;
  /** Rows not reached because the run stopped. */
  notReached: number;
}

export interface StepSummary extends StepCounts {
  step: string;
  inputFile: string;
  mappingFile: string;
  successFile: string | null;
  rejectsFile: string | null;
  /** Warnings of the rows written (or found unchanged or matched), by code; each row's are in its success file line. */
  warnings: WarningCounts;
  /** Source columns no field reads that hold values, with how many rows have one; empty when the input was not read to the end. */
  notCarried: NotCarried[];
  /** Rows rejected, by reason (code and field), the most frequent first, each with its first row's reason. */
  reasons: RejectReason[];
}

export interface DryRunReport {
  /**
   * Requests the run would send, as the run's own `requests` counts them: reading the account's
   * names, the set-up's creates, and the rows' (look-ups of `match:`, creates, uploads, updates,
   * reads before list updates). Exact but for the look-ups (see `lookUps`) and what a run going on
   * after an interruption sends to settle the writes whose answer never came.
   */
  requests: number;
  /** Of those, reading the account's names (users, pipelines, fields, ...) at the start. */
  requestsForNames: number;
  /** Of those, the set-up's creates: one a thing to create. */
  requestsForSetup: number;
  /**
   * Of those, the look-ups of rows' records (`match:`), as this dry run sent them: up to 50 values
   * a request, held back as the run holds them, so that the run sends as many (a step whose rows
   * wait for another step's records may send a few more).
   */
  lookUps: number;
  /** Values looked up, each once a run. */
  lookUpValues: number;
  /** Requests per hour the account allows, from the rate-limit headers; null when it never said. */
  limitPerHour: number | null;
  /** How long the requests take at that rate, in seconds; null without a limit. */
  estimatedSeconds: number | null;
  /** Up to three bodies the run would send, with their step and key. */
  samples: Array<{ step: string; key: string; action: 'create' | 'update'; body: Body }>;
}

export interface ImportSummary {
  run: string;
  stateDir: string;
  steps: StepSummary[];
  /** Requests sent during the run, reads of names included. */
  requests: number;
  /** Of those, the reads of the account's names (users, pipelines, fields, ...) at the start. */
  requestsForNames: number;
  /** Of those, what the plan's set-up sent (its creates). */
  requestsForSetup: number;
  elapsedMs: number;
  /** Stopped by the signal. */
  interrupted: boolean;
  /** The error that stopped the run (service unreachable, refused), or null. The state is kept: a re-run goes on. */
  stopped: FerryError | null;
  /** Writes found applied (or not) while reconciling unconfirmed ones. */
  reconciled: { applied: number; notApplied: number };
  /** Some step had more rows than --limit: the rest were not read. */
  limited: boolean;
  /** Only rows earlier runs rejected were taken (--retry-rejects). */
  retryRejects: boolean;
  dryRun: DryRunReport | null;
  /** What the plan's `setup:` created and listed; null without one. */
  setup: SetupReport | null;
}

export type ImportEvent =
  | { type: 'start'; run: string; stateDir: string; steps: string[]; dryRun: boolean }
  /** The plan's set-up, before anything is written: what it creates, and the checklist of what it cannot. */
  | { type: 'setup'; plan: SetupPlan }
  | {
      type: 'row';
      step: string;
      row: number;
      key: string | null;
      action: RowAction | 'rejected' | 'skipped' | 'repeated';
      id?: number;
      code?: string;
      message?: string;
      /** A rejected row's reason in the data owner's words (reasonText): what a person reads. */
      reason?: string;
      /** What the written record goes without or carries as typed (see MappedRecord.warnings). */
      warnings?: RowWarning[];
    }
  | {
      type: 'progress';
      /** `total`: rows the step will read (its input's, or --limit), once counted; null until then. */
      steps: Array<{ step: string; total: number | null } & StepCounts>;
      requests: number;
      elapsedMs: number;
      governor: GovernorState;
      /** What requests wait for now: the account's (`account`) or a live source's (`old account`). */
      waits: ProgressWait[];
    }
  | { type: 'end'; summary: ImportSummary };
