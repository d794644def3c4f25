/**
 * What the target has already on the records a restore matched (found in the account instead of
 * created): their entries and tasks, so that a restore into an account that holds them does not
 * add them again. The interface has no filter for entries or tasks: the entries are read from the
 * account's list when that is short, else record by record; the tasks from the account's list.
 */
import { join } from 'node:path';
import { type CrmClient, RecordService } from '../client/index.ts';
import { loadJournal } from '../journal/index.ts';
import { entryKey, onRecord, type PresentInTarget, type TargetOf, taskKey } from './restore-inputs.ts';
import { RECORD_STEPS } from './restore-plan.ts';

type Body = Record<string, unknown>;

const ENTITY_OF = {
  organisations: 'parties',
  people: 'parties',
  opportunities: 'opportunities',
  kases: 'kases',
} as const;

/** The restore's journals, read: each step's rows by the id in the backed-up account, with the target's id and whether it was matched. */
export async function restoredRows(
  stateDir: string,
  steps: readonly string[],
): Promise<Map<string, { id: number; matched: boolean }>> {
  const rows = new Map<string, { id: number; matched: boolean }>();
  for (const step of steps) {
    const journal = await loadJournal(join(stateDir, 'journal', `${step}.jsonl`)).catch(() => null);
    for (const [key, row] of journal?.rows ?? [])
      if (row.id !== null) rows.set(`${step}/${key}`, { id: row.id, matched: row.origin === 'matched' });
  }
  return rows;
}

/** The target's record of an entry or task of the backup, as `kases:12`, from the ids the record steps got. */
export function targetOfRows(rows: ReadonlyMap<string, { id: number }>): TargetOf {
  return (on) => {
    if (on.kaseId !== null) return key('kases', rows.get(`kases/${on.kaseId}`)?.id);
    if (on.opportunityId !== null) return key('opportunities', rows.get(`opportunities/${on.opportunityId}`)?.id);
    if (on.partyId !== null)
      return key('parties', (rows.get(`organisations/${on.partyId}`) ?? rows.get(`people/${on.partyId}`))?.id);
    return null;
  };
}

const key = (entity: string, id: number | undefined): string | null => (id === undefined ? null : `${entity}:${id}`);

/** The target's key of a record an entry or task read from the target is on (ids already the target's). */
function keyInTarget(record: Body): string | null {
  const on = onRecord(record);
  return on.kaseId !== null
    ? `kases:${on.kaseId}`
    : on.opportunityId !== null
      ? `opportunities:${on.opportunityId}`
      : on.partyId !== null
        ? `parties:${on.partyId}`
        : null;
}

/**
 * Reads the entries of every record the record steps matched, and (when one was matched) the
 * account's tasks, leaving out those the restore itself wrote (its entries' and tasks' journals):
 * a resumed restore keeps its own rows, which the journal knows. Gives also the record steps' rows
 * it read (restoredRows), which the rest of the restore goes by.
 */
export async function presentOnMatched(
  stateDir: string,
  client: CrmClient,
  signal?: AbortSignal,
): Promise<{
  present: PresentInTarget;
  matched: number;
  requests: number;
  rows: Map<string, { id: number; matched: boolean }>;
}> {
  const before = client.transport.requestsSent;
  const records = new RecordService(client);
  const present: PresentInTarget = { entries: new Map(), tasks: new Map() };
  const rows = await restoredRows(
    stateDir,
    RECORD_STEPS.map((s) => s.name),
  );
  // Entries and tasks are numbered apart: an entry and a task may share an id.
  const ownEntries = new Set([...(await restoredRows(stateDir, ['entries'])).values()].map((r) => r.id));
  const ownTasks = new Set([...(await restoredRows(stateDir, ['tasks'])).values()].map((r) => r.id));
  const add = (set: Map<string, number>, k: string) => set.set(k, (set.get(k) ?? 0) + 1);
  const matched = new Set<string>();
  for (const [stepKey, row] of rows) {
    if (!row.matched) continue;
    const entity = ENTITY_OF[stepKey.slice(0, stepKey.indexOf('/')) as keyof typeof ENTITY_OF];
    matched.add(`${entity}:${row.id}`);
  }
  const note = (body: Body): void => {
    if (typeof body.id !== 'number' || ownEntries.has(body.id) || body.type !== 'note') return;
    const on = keyInTarget(body);
    if (on !== null && matched.has(on)) add(present.entries, entryKey(on, String(body.content ?? ''), body.entryAt));
  };
  // The account's whole list of entries (100 a request) when it is shorter than half a request
  // per matched record; else (a large account, few records matched) one request a record.
  const budget = Math.floor(matched.size / 2) * 100;
  const listed: Body[] = [];
  let whole = budget > 0;
  if (whole) {
    for await (const entry of records.listWith('entry', { embed: 'party,kase,opportunity' })) {
      signal?.throwIfAborted();
      if (listed.length >= budget) {
        whole = false;
        break;
      }
      listed.push(entry);
    }
  }
  if (whole) for (const entry of listed) note(entry);
  else {
    const seen = new Set<number>();
    for (const record of matched) {
      signal?.throwIfAborted();
      const [entity, id] = record.split(':') as ['parties' | 'opportunities' | 'kases', string];
      for await (const entry of client.entriesOf(entity, Number(id), { embed: ['party', 'kase', 'opportunity'] })) {
        if (seen.has(entry.id)) continue;
        seen.add(entry.id);
        note(entry as unknown as Body);
      }
    }
  }
  if (matched.size > 0) {
    // Open and completed ones: a pending task is a track's, waiting for the task before it, which
    // the track makes again (and a restore writes no task of a track).
    for await (const task of records.listWith('task', { embed: 'party,kase,opportunity', status: 'open,completed' })) {
      signal?.throwIfAborted();
      if (typeof task.id !== 'number' || ownTasks.has(task.id) || task.hasTrack === true) continue;
      const on = keyInTarget(task);
      if (on !== null && matched.has(on)) add(present.tasks, taskKey(on, task.description, task.dueOn));
    }
  }
  return { present, matched: matched.size, requests: client.transport.requestsSent - before, rows };
}
