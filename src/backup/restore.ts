/**
 * `crm-ferry restore`: a backup folder into an account, through the importer and the round-trip
 * mappings, at the floor of requests: one write per record, per additional party of a project and
 * per file, one per track of a party (the interface takes the others on their record's create),
 * plus the account's names and the writing user read once; into an account that holds the records, the lists of its
 * records, entries and tasks, not a request per record.
 */
import { join, resolve } from 'node:path';
import { z } from 'zod';
import { accountOf, type CrmClient, readAccountCatalog } from '../client/index.ts';
import { FerryError, guarded, parseOptions } from '../errors/index.ts';
import { type AccountIdentity, stateStoreSchema } from '../journal/index.ts';
import { runImport, type ImportEvent, type ImportSummary } from '../load/index.ts';
import type { AccountCatalog } from '../mapping/index.ts';
import { catalogOfBackup, missingConfiguration, openBackup, type MissingItem } from './read-backup.ts';
import {
  type ActivityInputs,
  carriedTypesNeeded,
  tracksOfBackup,
  writeActivityInputs,
  writeRecordInputs,
} from './restore-inputs.ts';
import { RECORD_STEPS, RESTORE_STEPS, setupOfBackup, writeRestorePlan } from './restore-plan.ts';
import { presentOnMatched, restoredRows, targetOfRows } from './restore-present.ts';
import { restorePartyTracks } from './restore-tracks.ts';

export const restoreOptionsSchema = z.object({
  /** A complete backup folder. */
  from: z.string().min(1),
  /** Where the inputs of the restore (CSV files, attachment files, plan) are written. @default FROM/restore, or STATE-inputs beside a state folder given */
  workDir: z.string().nullable().default(null),
  /** The importer's state folder. @default FROM/restore/state */
  stateDir: z.string().nullable().default(null),
  /** Keep the state in a PostgreSQL store too (`--state-store`), under its key. @default null (the folder alone) */
  stateStore: stateStoreSchema.nullable().default(null),
  /** Restore even when the target lacks configuration the backup refers to and the interface cannot create. @default false */
  allowMissing: z.boolean().default(false),
  /** Requests under way at once. @default 8 */
  concurrency: z.number().int().min(1).max(64).default(8),
});
export type RestoreOptions = z.output<typeof restoreOptionsSchema>;

/** Options of runRestore as a program gives them: the backup folder; the rest is optional. */
export type RestoreOptionsInput = z.input<typeof restoreOptionsSchema>;

export interface RestoreDeps {
  client: CrmClient;
  /** The account the importer's state belongs to. @default accountOf(client) */
  account?: AccountIdentity | undefined;
  /** Stops the restore cleanly: the summary says `interrupted`, and the same call continues. */
  signal?: AbortSignal | undefined;
  /** The importer's events, for both of its runs (the set-up told once). */
  onEvent?: ((event: ImportEvent) => void) | undefined;
}

export interface RestoreSummary {
  plan: string;
  stateDir: string;
  /** What the target lacks and the interface cannot create (only with allowMissing; without it the restore stops before writing). */
  missing: MissingItem[];
  /**
   * The importer over the plan: its set-up (the configuration created), the records' steps as
   * their run wrote them, then the entries' and tasks' steps. Requests of both runs together,
   * with the account's names the restore read once for them.
   */
  import: ImportSummary;
  /**
   * Links: the additional parties of projects the backup holds (the importer adds them to the
   * projects it creates, and to those it finds when the party is one it created), and the tracks:
   * applied on their project's or opportunity's create, applied to parties after the records, on
   * records found in the account (which keep their own), or not carried.
   */
  links: { kaseParties: number; tracks: { onCreate: number; ofParties: number; onFound: number; unresolved: number } };
  /** Emails and completed-task entries carried as notes; entries left out; entries and tasks the target had on matched records. */
  entries: ActivityInputs;
  /** Records found in the target (matched) whose entries and tasks were read, and the requests that took. */
  lookedAt: { records: number; requests: number };
  /** Requests of the whole restore: the importer's (the names read once included), the look at what found records hold, the tracks of parties. */
  requests: number;
  /** Stopped by the signal (during the import or the links): the same restore continues. */
  interrupted: boolean;
}

/** Ids in the target of the records a restore wrote or matched, as `STEP/SOURCE_ID` (e.g. `kases/12`), from its journals. */
export async function restoredIds(
  stateDir: string,
  steps: readonly string[] = RESTORE_STEPS.map((s) => s.name),
): Promise<Map<string, number>> {
  const rows = await restoredRows(stateDir, steps);
  return new Map([...rows].map(([key, row]) => [key, row.id]));
}

/** The summary of the two runs of a restore: the records' steps of the first, the others of the second. */
function joinRuns(first: ImportSummary, second: ImportSummary): ImportSummary {
  const records = new Set<string>(RECORD_STEPS.map((s) => s.name));
  const setup =
    first.setup && second.setup
      ? { ...first.setup, created: [...first.setup.created, ...second.setup.created] }
      : (first.setup ?? second.setup);
  return {
    ...second,
    steps: [...first.steps, ...second.steps.filter((s) => !records.has(s.step))],
    requests: first.requests + second.requests,
    requestsForNames: first.requestsForNames + second.requestsForNames,
    requestsForSetup: first.requestsForSetup + second.requestsForSetup,
    elapsedMs: first.elapsedMs + second.elapsedMs,
    reconciled: {
      applied: first.reconciled.applied + second.reconciled.applied,
      notApplied: first.reconciled.notApplied + second.reconciled.notApplied,
    },
    setup,
  };
}

/** How many records of the account a record step reads whole rather than by filter queries: twice the backup's (see Matcher). */
function listUpTo(files: Record<string, { records: number }>): number {
  return (
    2 *
    Math.max(
      files['parties.jsonl']?.records ?? 0,
      files['opportunities.jsonl']?.records ?? 0,
      files['kases.jsonl']?.records ?? 0,
    )
  );
}

/**
 * Restores a backup folder into the account of `client`. The whole backup is checked before the
 * first request (openBackup). Stops with CONFIG_MISSING (unless allowMissing) when the target
 * lacks configuration the interface cannot create; what it can (pipelines, milestones, activity
 * types, track definitions) the plan's set-up creates, journaled so that a rollback removes it.
 * The records (parties, opportunities, projects, with their additional parties and tracks) run
 * first through the importer: each is matched to a record the target has already (by name, people
 * by e-mail address then name) or created. Then the entries and tasks of the matched records that
 * the target has already are left out, and the rest run through the same plan; last the tracks of
 * the parties it created. A restore into an account that holds the backup's records, with any
 * state folder, adds nothing.
 */
export function runRestore(given: RestoreOptionsInput, deps: RestoreDeps): Promise<RestoreSummary> {
  return guarded('runRestore', () =>
    restore(parseOptions(restoreOptionsSchema.strict(), given, 'runRestore'), {
      ...deps,
      account: deps.account ?? accountOf(deps.client),
    }),
  );
}

async function restore(
  options: RestoreOptions,
  deps: RestoreDeps & { account: AccountIdentity },
): Promise<RestoreSummary> {
  const requestsAtStart = deps.client.transport.requestsSent;
  const from = resolve(options.from);
  // A restore's inputs describe that restore (its entries and tasks leave out what the target held):
  // with a state folder of its own they go beside it, so another restore does not rewrite them.
  // (The default state folder given by name is still the default: its inputs stay in FROM/restore.)
  const ownState = options.stateDir !== null && resolve(options.stateDir) !== join(from, 'restore', 'state');
  const work = options.workDir ?? (ownState ? `${resolve(options.stateDir as string)}-inputs` : join(from, 'restore'));
  const stateDir = options.stateDir ?? join(work, 'state');
  const backup = await openBackup(from);
  const source = await catalogOfBackup(backup);
  // The account's names, read once for the whole restore.
  let names: AccountCatalog = await readAccountCatalog(deps.client);
  // The user the restore writes as (read with the names): their own notes keep their text, others' are headed with the author.
  const writer = names.writer;
  const requestsForNames = deps.client.transport.requestsSent - requestsAtStart;
  const missing = missingConfiguration(source, names).filter((m) => !m.creatable);
  if (missing.length > 0 && !options.allowMissing) {
    const shown = missing.slice(0, 12).map((m) => `${m.kind} ${m.name}`);
    throw new FerryError(
      'CONFIG_MISSING',
      `the target account lacks ${missing.length} item${missing.length === 1 ? '' : 's'} of configuration the backup refers to that the interface cannot create: ${shown.join('; ')}${missing.length > 12 ? '; ...' : ''}`,
      {
        hint: 'Create them in the target account (custom fields and task categories in its settings, users and teams by inviting them), or give --allow-missing to go ahead: owners and teams the target lacks are left out with a warning, and the importer reports whatever else a row needs and the target lacks. Pipelines, milestones, activity types and track definitions the restore creates itself.',
      },
    );
  }
  const setup = await setupOfBackup(backup, await carriedTypesNeeded(backup));
  const tracks = await tracksOfBackup(backup, source);
  const { kaseParties } = await writeRecordInputs(backup, source, tracks, work);
  const matchFromListUpTo = listUpTo(backup.manifest.files);
  const run = (plan: string, onEvent = deps.onEvent) =>
    runImport(
      {
        source: { kind: 'plan', planFile: plan },
        stateDir,
        stateStore: options.stateStore,
        concurrency: options.concurrency,
        matchFromListUpTo,
      },
      {
        client: deps.client,
        account: deps.account,
        catalog: names,
        onCatalog: (catalog) => (names = catalog),
        ...(deps.signal ? { signal: deps.signal } : {}),
        ...(onEvent ? { onEvent } : {}),
      },
    );
  // The records first, through the plan of their steps alone: what they matched decides which
  // entries and tasks the target has already. The same plan file grows to all steps after.
  const first = await run(await writeRestorePlan(work, setup, RECORD_STEPS));
  const links: RestoreSummary['links'] = {
    kaseParties,
    tracks: { onCreate: 0, ofParties: 0, onFound: 0, unresolved: tracks.unresolved },
  };
  const entries: ActivityInputs = {
    carried: { emails: 0, taskEntries: 0 },
    leftOut: { taskEntries: 0 },
    present: { entries: 0, tasks: 0 },
  };
  const result: RestoreSummary = {
    plan: join(work, 'plan.yaml'),
    stateDir,
    missing,
    import: first,
    links,
    entries,
    lookedAt: { records: 0, requests: 0 },
    requests: 0,
    interrupted: first.interrupted,
  };
  // The importer's summary counts the names the restore read for its runs.
  const done = (): RestoreSummary => ({
    ...result,
    import: {
      ...result.import,
      requests: result.import.requests + requestsForNames,
      requestsForNames: result.import.requestsForNames + requestsForNames,
    },
    requests: deps.client.transport.requestsSent - requestsAtStart,
  });
  if (first.stopped || first.interrupted) return done();
  try {
    const looked = await presentOnMatched(stateDir, deps.client, deps.signal);
    result.lookedAt = { records: looked.matched, requests: looked.requests };
    result.entries = await writeActivityInputs(backup, source, work, looked.present, targetOfRows(looked.rows), writer);
  } catch (error) {
    if (!deps.signal?.aborted) throw error;
    result.interrupted = true;
    return done();
  }
  // The set-up was told by the first run; the second finds it done.
  const told = deps.onEvent;
  const second = await run(
    await writeRestorePlan(work, setup, RESTORE_STEPS),
    told && ((event) => (event.type === 'setup' ? undefined : told(event))),
  );
  result.import = joinRuns(first, second);
  result.interrupted = second.interrupted;
  if (second.stopped || second.interrupted) return done();
  // Read again: the second run retries the records the first rejected, and may write them.
  const rows = await restoredRows(
    stateDir,
    RECORD_STEPS.map((s) => s.name),
  );
  for (const [key, applied] of tracks.onCreate) {
    const row = rows.get(key);
    if (row === undefined) links.tracks.unresolved += applied.length;
    else if (row.matched) links.tracks.onFound += applied.length;
    else links.tracks.onCreate += applied.length;
  }
  const parties = new Map<number, { id: number; matched: boolean }>();
  for (const [key, row] of rows) {
    const [step, id] = key.split('/') as [string, string];
    if (step === 'organisations' || step === 'people') parties.set(Number(id), row);
  }
  try {
    const ofParties = await restorePartyTracks(tracks.ofParties, {
      client: deps.client,
      account: deps.account,
      stateDir,
      stateStore: options.stateStore,
      catalog: names,
      parties,
      ...(deps.signal ? { signal: deps.signal } : {}),
    });
    links.tracks.ofParties = ofParties.applied;
    links.tracks.onFound += ofParties.onFound;
    links.tracks.unresolved += ofParties.unresolved;
  } catch (error) {
    if (!deps.signal?.aborted) throw error;
    result.interrupted = true;
  }
  return done();
}
