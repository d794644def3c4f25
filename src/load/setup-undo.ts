/** Set-up, undoing: rollback deletes what the set-up of the runs it undoes created. */
import { type CrmClient } from '../client/index.ts';
import { StateDir, type JournalEntry } from '../journal/index.ts';
import { SETUP_KINDS, type SetupKind } from './setup-kinds.ts';
import { SETUP_API, SETUP_STEP, isIntentBody } from './setup-apply.ts';

export interface UndoSetupResult {
  deleted: number;
  alreadyGone: number;
  /** What the service would not delete (a milestone an opportunity of another run still uses), with its answer. */
  kept: Array<{ kind: SetupKind; id: number; reason: string }>;
}

/**
 * Removes what the set-ups of `runs` created, newest kind first (track definitions, activity
 * types, milestones, then pipelines, which the service archives), journaled under `rollbackRun`.
 */
export async function undoSetup(
  state: StateDir,
  runs: ReadonlySet<string>,
  deps: { client: CrmClient; rollbackRun: string; dryRun: boolean; signal?: AbortSignal },
): Promise<UndoSetupResult> {
  const result: UndoSetupResult = { deleted: 0, alreadyGone: 0, kept: [] };
  const made = new Map<string, { kind: SetupKind; id: number }>();
  const kinds = new Map<string, SetupKind>();
  for await (const entry of state.readJournal(SETUP_STEP)) {
    if (entry.t === 'intent' && isIntentBody(entry.body)) kinds.set(entry.k, entry.body.kind);
    if (entry.t !== 'done' || !runs.has(entry.run)) continue;
    const kind = kinds.get(entry.k);
    if (entry.op === 'create' && kind) made.set(entry.k, { kind, id: entry.id });
  }
  // What a later line says is gone (an earlier rollback) is not deleted twice.
  const loaded = await state.loadJournal(SETUP_STEP);
  const current = loaded.rows;
  const order = [...made.entries()]
    .filter(([key, item]) => current.get(key)?.id === item.id)
    .sort((a, b) => SETUP_KINDS.indexOf(b[1].kind) - SETUP_KINDS.indexOf(a[1].kind));
  if (order.length === 0) return result;
  if (deps.dryRun) return { deleted: order.length, alreadyGone: 0, kept: [] };
  const writer = await state.openJournal(SETUP_STEP, loaded);
  try {
    for (const [key, { kind, id }] of order) {
      if (deps.signal?.aborted) break;
      const at = new Date().toISOString();
      const entry: JournalEntry = { t: 'intent', k: key, op: 'delete', run: deps.rollbackRun, at, fp: '', id };
      await writer.append(entry);
      // Refused (still in use by records no rollback removed): kept and said; the records it holds are not this rollback's to remove.
      const answer = await deps.client.transport.request({
        method: 'DELETE',
        path: `${SETUP_API[kind].path}/${id}`,
        accept: [404, 400, 409, 422],
      });
      if (answer.status !== 404 && answer.status >= 400) {
        const body = answer.body as { message?: unknown; errors?: Array<{ message?: unknown }> } | null;
        const said = body?.errors?.[0]?.message ?? body?.message;
        result.kept.push({
          kind,
          id,
          reason: typeof said === 'string' ? said : `the service answered ${answer.status}`,
        });
        await writer.append({ t: 'cancel', k: key, run: deps.rollbackRun, at: new Date().toISOString() });
        continue;
      }
      if (answer.status === 404) result.alreadyGone += 1;
      else result.deleted += 1;
      await writer.append({
        t: 'done',
        k: key,
        op: 'delete',
        run: deps.rollbackRun,
        at: new Date().toISOString(),
        id,
        fp: '',
      });
    }
  } finally {
    await writer.close();
  }
  return result;
}

/** The runs whose set-up changed the account, for rollback's choice of runs. */
export async function setupRuns(state: StateDir): Promise<string[]> {
  const runs = new Set<string>();
  for await (const entry of state.readJournal(SETUP_STEP))
    if (entry.t === 'done' && entry.op === 'create') runs.add(entry.run);
  return [...runs];
}
