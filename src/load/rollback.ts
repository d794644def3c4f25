import { accountOf, type CrmClient, RecordService } from '../client/index.ts';
import {
  type AccountIdentity,
  readRollbacks,
  readStateSteps,
  type RowState,
  StateDir,
  type StateStoreOptions,
} from '../journal/index.ts';
import type { Entity } from '../mapping/index.ts';
import { attachmentFilesOf, planAttachments } from './attachments.ts';
import { fingerprint } from './fingerprint.ts';
import { isMadeKey, shownKey } from './made-by-name.ts';
import { planUpdate, signatureOf } from './update-plan.ts';
import { setupRuns, undoSetup } from './setup-undo.ts';
import { WriteSlots } from './write-slots.ts';

type Body = Record<string, unknown>;
/** The records that carry tags. */
type TaggedEntity = 'party' | 'kase' | 'opportunity';
const TAGGED: ReadonlySet<Entity> = new Set<Entity>(['party', 'kase', 'opportunity']);

/** The tag names a written body gave its record. */
function tagNames(body: Body | null | undefined): string[] {
  const tags = body?.tags;
  if (!Array.isArray(tags)) return [];
  return tags
    .map((tag) => (tag as Body | null)?.name)
    .filter((name): name is string => typeof name === 'string' && name !== '');
}

export interface RollbackOptions {
  stateDir: string;
  /** Where the state is kept besides the folder (`--state-store`, its key). @default the folder alone */
  stateStore?: StateStoreOptions | null | undefined;
  /** Undo every run in the state instead of the last one. @default false */
  all?: boolean;
  /** Say what would be done, do nothing. @default false */
  dryRun?: boolean;
  /** Requests under way at once. @default 8 */
  concurrency?: number;
}

export interface RollbackSummary {
  /** The runs undone (or that would be). */
  runs: string[];
  /** Records deleted because those runs created them. */
  deleted: number;
  /** Records whose fields were set back to what they held before those runs. */
  restored: number;
  /** Records those runs deleted (--delete-missing): not brought back; their last values are in the journal. */
  notRestorable: number;
  /** Records already gone from the account. */
  alreadyGone: number;
  interrupted: boolean;
  /**
   * Tags stay: the interface can take a tag off a record but has no request to delete a tag from
   * the account. These are the tags the undone records carried that no record carries after the
   * rollback (on a dry run: every tag the undone records carry), per list.
   */
  tagsLeft: Array<{ entity: TaggedEntity; names: string[] }>;
  /** What the runs' set-up created that the service would not delete (in use by records of other runs). */
  setupKept: Array<{ kind: string; id: number; reason: string }>;
  /**
   * Records the journal says the runs created that were left, because the record in the account
   * is not (or no longer) what they wrote: made at another time, or holding other values.
   */
  kept: Array<{ step: string; key: string; id: number; reason: string }>;
  /** Per step, in the order they were undone. */
  steps: Array<{ step: string; deleted: number; restored: number }>;
  requests: number;
}

interface RowUndo {
  key: string;
  /** The run created the record: delete it. */
  created: boolean;
  /** When the create was announced and confirmed (journal times, ms): the record was made between them. */
  sent: number;
  confirmed: number;
  /** Earlier values of the fields the runs changed, earliest first wins. */
  before: Body | null;
  deletedByRun: boolean;
}

/**
 * Undoes the last import run kept in a state folder (or all of them): deletes what it created,
 * in the reverse order of the plan's steps, and sets fields it updated back to their earlier
 * values. Every undo is journalled like an import's writes, so a rollback that is interrupted is
 * run again to finish, and running it again after it finished goes one run further back.
 */
export async function runRollback(
  options: RollbackOptions,
  deps: { client: CrmClient; account?: AccountIdentity | undefined; signal?: AbortSignal },
): Promise<RollbackSummary> {
  // The same user check as an import's: a rollback deletes records, in the account it is pointed at.
  const users = async (): Promise<number[]> => (await deps.client.users()).map((user) => user.id);
  const state = await StateDir.open({
    dir: options.stateDir,
    account: deps.account ?? accountOf(deps.client),
    existing: true,
    users,
    keepUsers: !options.dryRun,
    store: options.stateStore ?? undefined,
  });
  const requestsAtStart = deps.client.transport.requestsSent;
  try {
    const { steps } = await readStateSteps(state.dir);
    const rollbacks = await readRollbacks(state.dir);
    // Runs that changed the account; a re-run that found everything unchanged is nothing to undo.
    const runs = new Set<string>();
    // A journal that is not what its runs wrote is refused here, before anything is deleted.
    for (const step of steps) {
      for await (const entry of state.readJournal(step.name)) if (entry.t === 'done') runs.add(entry.run);
    }
    for (const run of await setupRuns(state)) runs.add(run);
    const candidates = [...runs]
      .filter((run) => !rollbacks.undone.includes(run) && !run.startsWith('rollback-'))
      .sort();
    // An interrupted rollback is finished first, under its own run id, whatever this one asks.
    const targets = rollbacks.pending?.targets ?? (options.all ? candidates : candidates.slice(-1));
    const summary: RollbackSummary = {
      runs: targets,
      deleted: 0,
      restored: 0,
      notRestorable: 0,
      alreadyGone: 0,
      interrupted: false,
      tagsLeft: [],
      setupKept: [],
      kept: [],
      steps: [],
      requests: 0,
    };
    if (targets.length === 0) return summary;
    const target = new Set(targets);
    const rollbackRun = rollbacks.pending?.run ?? `rollback-${state.newRunId()}`;
    // Said before the first undo: until it finishes, a run refuses this state.
    if (!options.dryRun && !rollbacks.pending)
      await state.writeRollbacks({
        ...rollbacks,
        pending: { run: rollbackRun, targets, started: new Date().toISOString() },
      });
    const service = new RecordService(deps.client, deps.signal);
    const limit = new WriteSlots(options.concurrency ?? 8);
    // Per tagged list, the tags the undone records carried (lower case -> as first spelled).
    const tagged = new Map<TaggedEntity, Map<string, string>>();

    for (const step of [...steps].reverse()) {
      const undo = new Map<string, RowUndo>();
      const updateBefore = new Map<string, Body>();
      for await (const entry of state.readJournal(step.name)) {
        if (entry.t === 'run' || !target.has(entry.run)) continue;
        const row = undo.get(entry.k) ?? {
          key: entry.k,
          created: false,
          sent: Number.NaN,
          confirmed: Number.NaN,
          before: null,
          deletedByRun: false,
        };
        if (entry.t === 'intent' && entry.op === 'update' && entry.before) updateBefore.set(entry.k, entry.before);
        if (entry.t === 'intent' && entry.op === 'create') row.sent = Date.parse(entry.at);
        if (entry.t === 'done' && entry.op === 'create') {
          row.created = true;
          row.confirmed = Date.parse(entry.at);
        }
        if (entry.t === 'done' && entry.op === 'delete') row.deletedByRun = true;
        if (entry.t === 'done' && (entry.op === 'update' || entry.op === 'match')) {
          const before = updateBefore.get(entry.k);
          if (before) row.before = { ...before, ...(row.before ?? {}) };
        }
        undo.set(entry.k, row);
      }
      const loaded = await state.loadJournal(step.name);
      const current = loaded.rows;
      const counts = { step: step.name, deleted: 0, restored: 0 };
      // Only what the runs made is deleted: each record is looked at first (see checkOwn).
      const toDelete = [...undo.values()].flatMap((row) => {
        const now = current.get(row.key);
        return row.created && now?.id != null ? [{ row, now: now as RowState & { id: number } }] : [];
      });
      const found = await readForCheck(service, step.entity, toDelete, limit, deps.signal);
      const writer = options.dryRun ? null : await state.openJournal(step.name, loaded);
      // An organisation made by name goes after the people of the same runs: it is kept while
      // anyone still belongs to it (see made-by-name.ts).
      const undoRow = (row: RowUndo): Promise<void> =>
        limit.run(async () => {
          if (deps.signal?.aborted) {
            summary.interrupted = true;
            return;
          }
          const now = current.get(row.key);
          const id = now?.id ?? null;
          if (row.deletedByRun && id === null) {
            summary.notRestorable += 1;
            return;
          }
          if (id === null) return;
          if (TAGGED.has(step.entity) && (row.created || row.before)) {
            const names = tagged.get(step.entity as TaggedEntity) ?? new Map<string, string>();
            for (const name of tagNames(now?.body))
              if (!names.has(name.toLowerCase())) names.set(name.toLowerCase(), name);
            tagged.set(step.entity as TaggedEntity, names);
          }
          const at = new Date().toISOString();
          if (row.created) {
            const record = found.get(id);
            if (record === undefined) {
              // Not looked at (stopped meanwhile): not deleted unseen.
              summary.interrupted = true;
              return;
            }
            if (record === null) {
              summary.alreadyGone += 1;
              return;
            }
            // A dry run deletes no one: the people of the runs still belong to what they made by name.
            const reason =
              whyNotOwn(step.entity, record, now ?? null, row) ??
              (isMadeKey(row.key) && !options.dryRun ? await stillBelongs(service, id) : null);
            if (reason !== null) {
              summary.kept.push({ step: step.name, key: shownKey(row.key), id, reason });
              return;
            }
            counts.deleted += 1;
            if (!writer) return;
            await writer.append({ t: 'intent', k: row.key, op: 'delete', run: rollbackRun, at, fp: now?.fp ?? '', id });
            if (!(await service.remove(step.entity, id))) summary.alreadyGone += 1;
            await writer.append({
              t: 'done',
              k: row.key,
              op: 'delete',
              run: rollbackRun,
              at: new Date().toISOString(),
              id,
              fp: now?.fp ?? '',
            });
            return;
          }
          if (!row.before) return;
          counts.restored += 1;
          if (!writer) return;
          const from = now?.body ?? {};
          const to = { ...from, ...row.before };
          for (const [field, value] of Object.entries(row.before)) if (value === null) delete to[field];
          let plan = planUpdate(from, to);
          // Files the runs added to a note go again (a file they replaced cannot come back:
          // its old content is no longer at hand).
          const files = step.entity === 'entry' && 'attachments' in row.before;
          if (plan.needsCurrent || files) {
            const record = await service.read(step.entity, id);
            if (record === null) {
              summary.alreadyGone += 1;
              return;
            }
            plan = planUpdate(from, to, record);
            const added = files
              ? planAttachments(attachmentFilesOf(from), attachmentFilesOf(row.before), record).remove
              : [];
            if (added.length > 0)
              plan.changes.attachments = added.map((attachment) => ({ id: attachment, _delete: true }));
          }
          const fp = fingerprint({ body: to, attachments: [] });
          await writer.append({
            t: 'intent',
            k: row.key,
            op: 'update',
            run: rollbackRun,
            at,
            fp,
            body: to,
            id,
            before: row.before,
          });
          if (Object.keys(plan.changes).length > 0) await service.update(step.entity, id, plan.changes);
          await writer.append({
            t: 'done',
            k: row.key,
            op: 'update',
            run: rollbackRun,
            at: new Date().toISOString(),
            id,
            fp,
          });
        });
      try {
        const rows = [...undo.values()];
        await Promise.all(rows.filter((row) => !isMadeKey(row.key)).map(undoRow));
        await Promise.all(rows.filter((row) => isMadeKey(row.key)).map(undoRow));
      } finally {
        await writer?.close();
      }
      summary.deleted += counts.deleted;
      summary.restored += counts.restored;
      summary.steps.push(counts);
      if (summary.interrupted) break;
    }
    // The plan's set-up ran before the rows, so it is undone after them: a milestone still used by
    // an opportunity could not go.
    if (!summary.interrupted) {
      const undone = await undoSetup(state, target, {
        client: deps.client,
        rollbackRun,
        dryRun: options.dryRun ?? false,
        ...(deps.signal ? { signal: deps.signal } : {}),
      });
      if (deps.signal?.aborted) summary.interrupted = true;
      summary.setupKept = undone.kept;
      if (undone.deleted + undone.alreadyGone > 0) {
        summary.steps.push({ step: 'setup', deleted: undone.deleted, restored: 0 });
        summary.deleted += undone.deleted;
        summary.alreadyGone += undone.alreadyGone;
      }
    }
    if (!summary.interrupted) summary.tagsLeft = await tagsLeft(tagged, options.dryRun ? null : service);
    if (!options.dryRun && !summary.interrupted) {
      await state.writeRollbacks({ undone: [...rollbacks.undone, ...targets] });
    }
    summary.requests = deps.client.transport.requestsSent - requestsAtStart;
    return summary;
  } finally {
    await state.close();
  }
}

/** How far a record's creation time may lie outside the run's journal times: the service's clock and this machine's differ. */
const CLOCK_MARGIN_MS = 10 * 60_000;

/** A record of a kind that is listed by time of change (one request for 100 records). */
const LISTED_BY_TIME: ReadonlySet<Entity> = new Set<Entity>(['party', 'kase', 'opportunity']);

/**
 * The records to delete as the account has them now (null: gone), read before anything is
 * deleted: records listed by time of change are read 100 a request (those changed since the
 * earliest create), the others (and any not in that list) one by one. An id missing from the map
 * was not read (the rollback was interrupted).
 */
async function readForCheck(
  service: RecordService,
  entity: Entity,
  rows: ReadonlyArray<{ row: RowUndo; now: RowState & { id: number } }>,
  limit: WriteSlots,
  signal: AbortSignal | undefined,
): Promise<Map<number, Body | null>> {
  const found = new Map<number, Body | null>();
  if (rows.length === 0) return found;
  const wanted = new Set(rows.map((r) => r.now.id));
  const times = rows
    .map((r) => (Number.isNaN(r.row.sent) ? r.row.confirmed : r.row.sent))
    .filter((t) => !Number.isNaN(t));
  // Listing pays when it spares reading records one by one; a few are read directly.
  if (LISTED_BY_TIME.has(entity) && rows.length > 20 && times.length > 0) {
    const since = new Date(Math.min(...times) - CLOCK_MARGIN_MS);
    for await (const record of service.candidates(entity, [], since)) {
      if (typeof record.id === 'number' && wanted.has(record.id)) found.set(record.id, record);
      if (signal?.aborted) return found;
    }
  }
  await Promise.all(
    [...wanted]
      .filter((id) => !found.has(id))
      .map((id) =>
        limit.run(async () => {
          if (signal?.aborted) return;
          found.set(id, await service.read(entity, id));
        }),
      ),
  );
  return found;
}

/**
 * Why `record` is not the record the runs made for the row, or null when it is: a journal line's
 * id changed to another record's (by hand, or a journal mixed with another's) must not make the
 * rollback delete that record. The record must have been made while the run wrote it (between
 * the create's intent and its confirmation, give or take the clocks' difference) and still hold
 * what the journal says was last written (the values the service keeps as sent: names, first
 * e-mail address, links, content). A record changed in the account since is left too: deleting
 * it would lose what someone did there.
 */
function whyNotOwn(entity: Entity, record: Body, row: RowState | null, undo: RowUndo): string | null {
  const created = typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN;
  const from = Number.isNaN(undo.sent) ? undo.confirmed : undo.sent;
  const to = Number.isNaN(undo.confirmed) ? undo.sent : undo.confirmed;
  if (
    !Number.isNaN(created) &&
    !Number.isNaN(from) &&
    (created < from - CLOCK_MARGIN_MS || created > to + CLOCK_MARGIN_MS)
  ) {
    return `it was made ${String(record.createdAt)}, not while the run created the row's record (${new Date(from).toISOString()})`;
  }
  const body = row?.body;
  if (
    body &&
    signatureOf(entity, entity === 'entry' && body.type === undefined ? { type: 'note', ...body } : body) !==
      signatureOf(entity, record)
  ) {
    return 'it does not hold what the run wrote (changed in the account since, or another record)';
  }
  return null;
}

/** Why an organisation made by name stays: people of the account still belong to it. */
async function stillBelongs(service: RecordService, id: number): Promise<string | null> {
  return (await service.peopleOf(id)) > 0
    ? 'people of the account still belong to it (it was made for a link by name, and stays while it is in use)'
    : null;
}

/**
 * The tags of `tagged` that no record carries now, asked with one filter request per tag; without
 * a service (a dry run, which deletes nothing) every tag is listed.
 */
async function tagsLeft(
  tagged: Map<TaggedEntity, Map<string, string>>,
  service: RecordService | null,
): Promise<RollbackSummary['tagsLeft']> {
  const left: RollbackSummary['tagsLeft'] = [];
  for (const [entity, byLower] of tagged) {
    const names: string[] = [];
    for (const name of byLower.values()) {
      if (service === null || !(await service.anyPasses(entity, [{ field: 'tag', operator: 'is', value: name }])))
        names.push(name);
    }
    if (names.length > 0) left.push({ entity, names: names.sort((a, b) => a.localeCompare(b)) });
  }
  return left;
}
