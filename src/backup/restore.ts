import { join, resolve } from 'node:path';
import { z } from 'zod';
import { type CrmClient, readAccountCatalog } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import type { AccountIdentity } from '../journal/index.ts';
import { runImport, type ImportEvent, type ImportSummary } from '../load/index.ts';
import type { AccountCatalog } from '../mapping/index.ts';
import { catalogOfBackup, idOf, missingConfiguration, openBackup, type Backup, type MissingItem } from './read-backup.ts';
import { type ActivityInputs, carriedTypesNeeded, RECORD_STEPS, RESTORE_STEPS, setupOfBackup, writeActivityInputs, writeRecordInputs, writeRestorePlan } from './restore-inputs.ts';
import { presentOnMatched, restoredRows, targetOfRows } from './restore-present.ts';

type Body = Record<string, unknown>;

export const restoreOptionsSchema = z.object({
  /** A complete backup folder. */
  from: z.string().min(1),
  /** Where the inputs of the restore (CSV files, mappings, plan) are written. @default FROM/restore, or STATE-inputs beside a state folder given */
  workDir: z.string().nullable().default(null),
  /** The importer's state folder. @default FROM/restore/state */
  stateDir: z.string().nullable().default(null),
  /** Restore even when the target lacks configuration the backup refers to and the interface cannot create. @default false */
  allowMissing: z.boolean().default(false),
  /** Requests under way at once. @default 8 */
  concurrency: z.number().int().min(1).max(64).default(8),
});
export type RestoreOptions = z.output<typeof restoreOptionsSchema>;

export interface RestoreDeps {
  client: CrmClient;
  account: AccountIdentity;
  signal?: AbortSignal;
  onEvent?: (event: ImportEvent) => void;
}

export interface RestoreSummary {
  plan: string;
  stateDir: string;
  /** What the target lacks and the interface cannot create (only with allowMissing; without it the restore stops before writing). */
  missing: MissingItem[];
  /**
   * The importer over the plan: its set-up (the configuration created), the records' steps as
   * their run wrote them, then the entries' and tasks' steps. Requests of both runs together.
   */
  import: ImportSummary;
  /** Links made after the records: additional parties of projects, tracks. */
  links: { kaseParties: { added: number; present: number; unresolved: number }; tracks: { added: number; present: number; unresolved: number } };
  /** Emails and completed-task entries carried as notes; entries left out; entries and tasks the target had on matched records. */
  entries: ActivityInputs;
  /** Records found in the target (matched) whose entries and tasks were read, and the requests that took. */
  lookedAt: { records: number; requests: number };
  /** Stopped by the signal (during the import or the links): the same restore continues. */
  interrupted: boolean;
}

/** Ids in the target of the records a restore wrote or matched, as `STEP/SOURCE_ID` (e.g. `kases/12`), from its journals. */
export async function restoredIds(stateDir: string, steps: readonly string[] = RESTORE_STEPS.map((s) => s.name)): Promise<Map<string, number>> {
  const rows = await restoredRows(stateDir, steps);
  return new Map([...rows].map(([key, row]) => [key, row.id]));
}

/** The summary of the two runs of a restore: the records' steps of the first, the others of the second. */
function joinRuns(first: ImportSummary, second: ImportSummary): ImportSummary {
  const records = new Set<string>(RECORD_STEPS.map((s) => s.name));
  const setup = first.setup && second.setup ? { ...first.setup, created: [...first.setup.created, ...second.setup.created] } : (first.setup ?? second.setup);
  return {
    ...second,
    steps: [...first.steps, ...second.steps.filter((s) => !records.has(s.step))],
    requests: first.requests + second.requests,
    requestsForNames: first.requestsForNames + second.requestsForNames,
    requestsForSetup: first.requestsForSetup + second.requestsForSetup,
    elapsedMs: first.elapsedMs + second.elapsedMs,
    reconciled: { applied: first.reconciled.applied + second.reconciled.applied, notApplied: first.reconciled.notApplied + second.reconciled.notApplied },
    setup,
  };
}

/**
 * Restores a backup folder into the account of `client`. Stops with CONFIG_MISSING (unless
 * allowMissing) when the target lacks configuration the interface cannot create; what it can
 * (pipelines, milestones, activity types, track definitions) the plan's set-up creates, journaled
 * so that a rollback removes it. The records (parties, opportunities, projects) run first through
 * the importer: each is matched to a record the target has already (by name, people by e-mail
 * address then name) or created. Then the entries and tasks of the matched records that the
 * target has already are left out, and the rest run through the same plan; last the additional
 * parties of projects and the tracks, each after looking whether the target has it. A restore
 * into an account that holds the backup's records, with any state folder, adds nothing.
 */
export async function runRestore(given: z.input<typeof restoreOptionsSchema>, deps: RestoreDeps): Promise<RestoreSummary> {
  const options = restoreOptionsSchema.parse(given);
  const from = resolve(options.from);
  // A restore's inputs describe that restore (its entries and tasks leave out what the target held):
  // with a state folder of its own they go beside it, so another restore does not rewrite them.
  // (The default state folder given by name is still the default: its inputs stay in FROM/restore.)
  const ownState = options.stateDir !== null && resolve(options.stateDir) !== join(from, 'restore', 'state');
  const work = options.workDir ?? (ownState ? `${resolve(options.stateDir as string)}-inputs` : join(from, 'restore'));
  const stateDir = options.stateDir ?? join(work, 'state');
  const backup = await openBackup(from);
  const source = await catalogOfBackup(backup);
  const target = await readAccountCatalog(deps.client);
  const missing = missingConfiguration(source, target).filter((m) => !m.creatable);
  if (missing.length > 0 && !options.allowMissing) {
    const shown = missing.slice(0, 12).map((m) => `${m.kind} ${m.name}`);
    throw new FerryError('CONFIG_MISSING', `the target account lacks ${missing.length} item${missing.length === 1 ? '' : 's'} of configuration the backup refers to that the interface cannot create: ${shown.join('; ')}${missing.length > 12 ? '; ...' : ''}`, {
      hint: "Create them in the target account (custom fields and task categories in its settings, users and teams by inviting them), or give --allow-missing to go ahead: owners and teams the target lacks are left out with a warning, and the importer reports whatever else a row needs and the target lacks. Pipelines, milestones, activity types and track definitions the restore creates itself.",
    });
  }
  const setup = await setupOfBackup(backup, await carriedTypesNeeded(backup));
  await writeRecordInputs(backup, source, work);
  const run = (plan: string, onEvent = deps.onEvent) =>
    runImport(
      { source: { kind: 'plan', planFile: plan }, stateDir, concurrency: options.concurrency },
      { client: deps.client, account: deps.account, ...(deps.signal ? { signal: deps.signal } : {}), ...(onEvent ? { onEvent } : {}) },
    );
  // The records first, through the plan of their steps alone: what they matched decides which
  // entries and tasks the target has already. The same plan file grows to all steps after.
  const first = await run(await writeRestorePlan(work, setup, RECORD_STEPS));
  const links = { kaseParties: { added: 0, present: 0, unresolved: 0 }, tracks: { added: 0, present: 0, unresolved: 0 } };
  const entries: ActivityInputs = { carried: { emails: 0, taskEntries: 0 }, leftOut: { taskEntries: 0 }, present: { entries: 0, tasks: 0 } };
  const result: RestoreSummary = { plan: join(work, 'plan.yaml'), stateDir, missing, import: first, links, entries, lookedAt: { records: 0, requests: 0 }, interrupted: first.interrupted };
  if (first.stopped || first.interrupted) return result;
  try {
    const looked = await presentOnMatched(stateDir, deps.client, deps.signal);
    result.lookedAt = { records: looked.matched, requests: looked.requests };
    result.entries = await writeActivityInputs(backup, work, looked.present, targetOfRows(looked.rows));
  } catch (error) {
    if (!deps.signal?.aborted) throw error;
    result.interrupted = true;
    return result;
  }
  // The set-up was told by the first run; the second finds it done.
  const told = deps.onEvent;
  const second = await run(await writeRestorePlan(work, setup, RESTORE_STEPS), told && ((event) => (event.type === 'setup' ? undefined : told(event))));
  result.import = joinRuns(first, second);
  result.interrupted = second.interrupted;
  if (second.stopped || second.interrupted) return result;
  try {
    // Track definitions the set-up created are found by name like the others.
    const catalog = (result.import.setup?.created.length ?? 0) > 0 ? await readAccountCatalog(deps.client) : target;
    // Read again: the second run retries the records the first rejected, and may write them.
    await restoreLinks(backup, await restoredIds(stateDir, RECORD_STEPS.map((s) => s.name)), catalog, deps, links);
  } catch (error) {
    if (!deps.signal?.aborted) throw error;
    result.interrupted = true;
  }
  return result;
}

/**
 * Adds the links the importer does not make: the additional parties of projects and the tracks
 * (with their date and description), each only when the target does not have it yet.
 */
async function restoreLinks(backup: Backup, ids: ReadonlyMap<string, number>, target: AccountCatalog, deps: RestoreDeps, links: RestoreSummary['links']): Promise<void> {
  const partyIn = (id: number): number | undefined => ids.get(`organisations/${id}`) ?? ids.get(`people/${id}`);
  const byKase = new Map<number, Set<number>>();
  for (const line of await backup.read('kase-parties.jsonl')) {
    const kase = ids.get(`kases/${idOf(line.kase)}`);
    const party = partyIn(idOf(line.party) ?? -1);
    if (kase === undefined || party === undefined) {
      links.kaseParties.unresolved += 1;
      continue;
    }
    let set = byKase.get(kase);
    if (!set) byKase.set(kase, (set = new Set()));
    set.add(party);
  }
  for (const [kase, parties] of byKase) {
    deps.signal?.throwIfAborted();
    const present = new Set<number>();
    for await (const party of deps.client.partiesOf('kases', kase)) present.add(party.id);
    for (const party of parties) {
      if (present.has(party)) {
        links.kaseParties.present += 1;
        continue;
      }
      await deps.client.addKaseParty(kase, party);
      links.kaseParties.added += 1;
    }
  }

  const definitionOf = new Map(target.trackDefinitions.map((t) => [t.name.toLowerCase(), t.id]));
  for (const line of await backup.read('tracks.jsonl')) {
    deps.signal?.throwIfAborted();
    const applied = line.appliedTo as { entity: 'parties' | 'opportunities' | 'kases'; id: number };
    const track = line.track as Body;
    const step = applied.entity === 'kases' ? ['kases'] : applied.entity === 'opportunities' ? ['opportunities'] : ['organisations', 'people'];
    const recordId = step.map((s) => ids.get(`${s}/${applied.id}`)).find((id) => id !== undefined);
    // A track read back names no definition; its description is the definition's unless changed.
    const definition = definitionOf.get(String(track.description ?? '').toLowerCase());
    if (recordId === undefined || definition === undefined) {
      links.tracks.unresolved += 1;
      continue;
    }
    let present = false;
    for await (const existing of deps.client.tracksOf(applied.entity, recordId)) {
      if (existing.description === track.description && (existing as Body).trackDateOn === track.trackDateOn) present = true;
    }
    if (present) {
      links.tracks.present += 1;
      continue;
    }
    const key = applied.entity === 'kases' ? 'kase' : applied.entity === 'opportunities' ? 'opportunity' : 'party';
    await deps.client.transport.request({ method: 'POST', path: '/tracks', json: { track: { definition, description: track.description, trackDateOn: track.trackDateOn, [key]: { id: recordId } } } });
    links.tracks.added += 1;
  }
}

