/**
 * The inputs of a restore, written beside the backup: the mappings (the bundled ones with the
 * restore's match rules added), the CSV files of the plan's steps, the attachment files and the
 * plan with the configuration set-up creates. The same backup gives the same files, so a resumed
 * restore continues the same plan.
 */
import { constants } from 'node:fs';
import { copyFile, link, lstat, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { stringify } from 'yaml';
import { type Cell, columnsFromMappings, openWriter } from '../export/index.ts';
import { type AccountCatalog, loadMapping, type MatchSpec } from '../mapping/index.ts';
import type { SetupSpec } from '../plan/index.ts';
import { fileNameFor, makePrivateFolder, writeFileAtomic } from '../util/index.ts';
import { type Backup, type BackupAttachment, idOf, nameOf } from './read-backup.ts';

type Body = Record<string, unknown>;

/** The folder of the bundled mappings a restore copies beside its inputs. */
const MAPPINGS = fileURLToPath(new URL('../../mappings/', import.meta.url));

type MatchRule = Omit<MatchSpec, 'onMatch'> & { onMatch: 'update' };

/**
 * The plan a restore runs, step by step: the mapping, the CSV file it reads, and how a record the
 * target has already is found (so that a restore into an account that holds the records, with
 * another state folder, adopts them instead of adding them again). Names match within the record
 * they hang on: an opportunity or project of the same name on another party, a person of the same
 * name at another organisation, is someone else's. Rows of one name are separate records.
 */
export const RESTORE_STEPS = [
  { name: 'organisations', mapping: 'roundtrip-organisations.yaml', input: 'parties.csv', match: { by: 'name', onMatch: 'update' } },
  { name: 'people', mapping: 'roundtrip-people.yaml', input: 'parties.csv', match: { by: ['email', 'name'], within: 'organisation', onMatch: 'update' } },
  { name: 'opportunities', mapping: 'roundtrip-opportunities.yaml', input: 'opportunities.csv', match: { by: 'name', within: 'party', onMatch: 'update' } },
  { name: 'kases', mapping: 'restore-kases.yaml', input: 'kases.csv', match: { by: 'name', within: 'party', onMatch: 'update' } },
  { name: 'entries', mapping: 'restore-entries.yaml', input: 'entries.csv', match: null },
  { name: 'tasks', mapping: 'restore-tasks.yaml', input: 'tasks.csv', match: null },
] as const satisfies ReadonlyArray<{ name: string; mapping: string; input: string; match: MatchRule | null }>;

export type RestoreStep = (typeof RESTORE_STEPS)[number];
/** The steps of the records entries and tasks hang on: run first, so that what they matched is known. */
export const RECORD_STEPS = RESTORE_STEPS.filter((s) => s.match !== null);

/** Writes one CSV of the restore's inputs (plain, raw: read back by the importer as written). */
async function writeCsv(file: string, header: string[], rows: Array<{ cells: Cell[]; record: Body }>): Promise<void> {
  // Never standard output: the file is named.
  const writer = openWriter('csv', file, header, { plain: true, raw: true, stdout: new Writable() });
  try {
    for (const row of rows) await writer.write(row.cells, row.record);
    await writer.commit();
  } catch (error) {
    await writer.abort();
    throw error;
  }
}

/** The record an entry or task is on in the backup: the most specific one (a project or opportunity before its party; an email's first party). */
export function onRecord(record: Body): { partyId: number | null; kaseId: number | null; opportunityId: number | null } {
  const kaseId = idOf(record.kase);
  const opportunityId = kaseId === null ? idOf(record.opportunity) : null;
  const parties = Array.isArray(record.parties) ? (record.parties as unknown[]) : [];
  const partyId = kaseId === null && opportunityId === null ? (idOf(record.party) ?? idOf(parties[0])) : null;
  return { partyId, kaseId, opportunityId };
}

/** The mapping as the restore runs it: the bundled file, with the step's match rules after it. */
async function writeStepMapping(step: RestoreStep, work: string): Promise<void> {
  const text = await readFile(join(MAPPINGS, step.mapping), 'utf8');
  if (step.match === null) {
    await writeFileAtomic(join(work, step.mapping), text, { mode: 0o600 });
    return;
  }
  const rules = stringify({ match: step.match, onDuplicate: 'separate' });
  const added = `\n# Added by crm-ferry restore: a record the account has already is found and brought to the\n# backup's values instead of being added again; rows of one name are separate records.\n${rules}`;
  await writeFileAtomic(join(work, step.mapping), `${text.trimEnd()}\n${added}`, { mode: 0o600 });
}

/** The set-up block of the plan: the configuration of the backup that the interface can create; what the target has is left alone. */
export async function setupOfBackup(backup: Backup, activityTypesNeeded: readonly string[]): Promise<SetupSpec> {
  const pipelines = await backup.read('pipelines.jsonl');
  const active = new Set(pipelines.map((p) => p.id as number));
  const text = (value: unknown): string | undefined => (typeof value === 'string' && value !== '' ? value : undefined);
  const FOR = { PARTY: 'parties', OPPORTUNITY: 'opportunities', KASE: 'kases' } as const;
  const types = (await backup.read('activity-types.jsonl'))
    // The built-in types (negative ids: Note, Meeting, Call) every account has.
    .filter((a) => typeof a.id === 'number' && a.id > 0)
    .map((a) => ({ name: String(a.name), ...(text((a.icon as Body | null)?.id) ? { icon: String((a.icon as Body).id) } : {}), ...(typeof a.updateLastContacted === 'boolean' ? { updateLastContacted: a.updateLastContacted } : {}) }));
  for (const name of activityTypesNeeded) if (!types.some((t) => t.name.toLowerCase() === name.toLowerCase())) types.push({ name, icon: name === 'Email' ? 'MAIL' : 'CLIPBOARD' });
  return {
    derive: false,
    pipelines: pipelines.map((p) => ({ name: String(p.name), ...(text(p.description) ? { description: String(p.description) } : {}) })),
    milestones: (await backup.read('milestones.jsonl'))
      .filter((m) => active.has(idOf(m.pipeline) ?? -1))
      .map((m) => ({
        name: String(m.name),
        pipeline: String((m.pipeline as Body).name),
        ...(typeof m.probability === 'number' ? { probability: m.probability } : {}),
        ...(typeof m.complete === 'boolean' ? { complete: m.complete } : {}),
        ...(text(m.description) ? { description: String(m.description) } : {}),
      })),
    activityTypes: types,
    trackDefinitions: (await backup.read('track-definitions.jsonl')).map((t) => ({
      description: String(t.description),
      ...(FOR[t.captureRule as keyof typeof FOR] ? { for: FOR[t.captureRule as keyof typeof FOR] } : {}),
      tasks: ((t.taskDefinitions as Body[] | undefined) ?? [])
        .slice()
        .sort((x, y) => Number(x.displayOrder ?? 0) - Number(y.displayOrder ?? 0))
        .map((d) => ({ description: String(d.description), daysAfter: typeof d.daysAfter === 'number' ? d.daysAfter : 0, daysAfterRule: d.daysAfterRule === 'LAST_TASK' ? ('LAST_TASK' as const) : ('TRACK_START' as const) })),
    })),
  };
}

/** Writes the plan: its set-up, then the steps given (the records alone first, then all of them). */
export async function writeRestorePlan(work: string, setup: SetupSpec, steps: readonly RestoreStep[]): Promise<string> {
  const plan = join(work, 'plan.yaml');
  const head = [
    "# Written by crm-ferry restore from the backup in this folder's parent; run, verify and roll back",
    '# it like any plan. Each record is keyed by its id in the backed-up account. The set-up creates',
    '# the configuration of the backup that the account lacks (rollback removes what it created).',
    '',
  ].join('\n');
  const body = stringify({ version: 1, setup, steps: steps.map((s) => ({ name: s.name, mapping: s.mapping, input: s.input })) });
  await writeFileAtomic(plan, `${head}${body}`, { mode: 0o600 });
  return plan;
}

/**
 * Writes the mappings and the CSV files of the records (parties, opportunities, projects), their
 * columns filled as `export --mapping` fills them.
 */
export async function writeRecordInputs(backup: Backup, catalog: AccountCatalog, work: string): Promise<void> {
  await makePrivateFolder(work, { what: "the folder of the restore's inputs", hint: 'The restore writes its inputs into DIR/restore; copy the backup to a folder that can be written.' });
  for (const step of RESTORE_STEPS) await writeStepMapping(step, work);
  // An opportunity read back names its milestone without the pipeline, which a milestone name
  // two pipelines share needs: it is taken from the backup's milestones.
  const pipelineOf = new Map(catalog.milestones.map((m) => [m.id, { id: m.pipelineId, name: m.pipelineName }]));
  const withPipeline = (record: Body): Body => {
    const milestone = record.milestone as Body | null | undefined;
    const pipeline = pipelineOf.get(idOf(milestone) ?? -1);
    return milestone && !milestone.pipeline && pipeline ? { ...record, milestone: { ...milestone, pipeline } } : record;
  };
  const mapped = async (entity: 'parties' | 'opportunities' | 'kases', mappings: string[], file: string): Promise<void> => {
    const loaded = await Promise.all(mappings.map(async (name) => ({ file: join(work, name), mapping: await loadMapping(join(work, name)) })));
    const columns = columnsFromMappings(entity, loaded, catalog);
    const records = (await backup.read(`${entity}.jsonl`)).map(entity === 'opportunities' ? withPipeline : (r: Body) => r);
    await writeCsv(join(work, file), columns.map((c) => c.name), records.map((record) => ({ cells: columns.map((c) => c.value(record)), record })));
  };
  await mapped('parties', ['roundtrip-organisations.yaml', 'roundtrip-people.yaml'], 'parties.csv');
  await mapped('opportunities', ['roundtrip-opportunities.yaml'], 'opportunities.csv');
  await mapped('kases', ['restore-kases.yaml'], 'kases.csv');
}

/** A person as an email names them: `Ada Lovelace <ada@example.com>`. */
function participant(p: Body): string {
  const name = typeof p.name === 'string' ? p.name.trim() : '';
  const address = typeof p.address === 'string' ? p.address : '';
  return name && address ? `${name} <${address}>` : name || address;
}

function partyName(p: Body): string {
  return typeof p.name === 'string' ? p.name : [p.firstName, p.lastName].filter((x) => typeof x === 'string' && x !== '').join(' ');
}

/**
 * What a note carries for an entry the interface cannot create: an email (first line saying so,
 * then its sender, recipients, subject and the other parties it was filed on) or the entry of a
 * completed task whose task is not restored completed. Null for a note.
 */
export function carriedContent(entry: Body): string | null {
  const content = typeof entry.content === 'string' ? entry.content : '';
  if (entry.type === 'task') return `Originally the entry of a completed task\n\n${content}`;
  if (entry.type !== 'email') return null;
  const people = (Array.isArray(entry.participants) ? (entry.participants as Body[]) : []);
  const role = (r: string) => people.filter((p) => String(p.role).toUpperCase() === r).map(participant).filter((s) => s !== '');
  const lines = ['Originally an email'];
  const from = role('FROM');
  const to = role('TO');
  if (from.length > 0) lines.push(`From: ${from.join(', ')}`);
  if (to.length > 0) lines.push(`To: ${to.join(', ')}`);
  if (typeof entry.subject === 'string' && entry.subject !== '') lines.push(`Subject: ${entry.subject}`);
  const parties = Array.isArray(entry.parties) ? (entry.parties as Body[]) : [];
  // The note goes on one record; the other parties the email was filed on are named.
  const others = idOf(entry.kase) === null && idOf(entry.opportunity) === null ? parties.slice(1) : parties;
  if (others.length > 0) lines.push(`Also filed on: ${others.map(partyName).join(', ')}`);
  return `${lines.join('\n')}\n\n${content}`;
}

/** The activity type a carried entry gets when it has none: set-up creates it where the account lacks it. */
export const CARRIED_TYPE = { email: 'Email', task: 'Task completed' } as const;

/** A completed task's entry, as the service files it when a task is completed: on the task's record, its description (and detail). */
function taskEntryKey(record: { partyId: number | null; kaseId: number | null; opportunityId: number | null }, content: string): string {
  return `${record.partyId}/${record.kaseId}/${record.opportunityId}\u0000${content}`;
}

/** The entries the service files again when the restore creates their tasks completed (tasks of tracks are made open by their track). */
function refiledTaskEntries(tasks: readonly Body[]): Map<string, number> {
  const refiled = new Map<string, number>();
  for (const task of tasks) {
    if (task.hasTrack === true || task.status !== 'COMPLETED') continue;
    const content = task.detail ? `${String(task.description)}\n\n${String(task.detail)}` : String(task.description);
    const key = taskEntryKey(onRecord(task), content);
    refiled.set(key, (refiled.get(key) ?? 0) + 1);
  }
  return refiled;
}

/**
 * Whether an entry is the entry of a completed task that the service files again when the restore
 * creates that task completed: then it is left out, and takes its task from `refiled`. Both the
 * inputs and the set-up's activity types go by it, entry by entry in the backup's order.
 */
function filedAgain(refiled: Map<string, number>, entry: Body): boolean {
  return entry.type === 'task' && takeOne(refiled, taskEntryKey(onRecord(entry), String(entry.content ?? '')));
}

/** What the target has already on records the restore matched: keys of its entries and tasks, each with how many. */
export interface PresentInTarget {
  /** `recordKey\0content\0entryAt` of notes. */
  entries: Map<string, number>;
  /** `recordKey\0description\0dueOn` of tasks. */
  tasks: Map<string, number>;
}

/** The key of a record in the target: `kases:12`. */
export type TargetOf = (record: { partyId: number | null; kaseId: number | null; opportunityId: number | null }) => string | null;

export const entryKey = (record: string, content: string, entryAt: unknown): string => `${record}\u0000${content}\u0000${typeof entryAt === 'string' ? Date.parse(entryAt) : ''}`;
export const taskKey = (record: string, description: unknown, dueOn: unknown): string => `${record}\u0000${String(description ?? '')}\u0000${String(dueOn ?? '')}`;

/** Takes one of `key` from the multiset: true when the target had one left. */
function takeOne(set: Map<string, number>, key: string): boolean {
  const left = set.get(key) ?? 0;
  if (left <= 0) return false;
  set.set(key, left - 1);
  return true;
}

export interface ActivityInputs {
  /** Emails and completed-task entries carried as notes. */
  carried: { emails: number; taskEntries: number };
  /** Entries of completed tasks left out: restoring the task completed makes the service file them again. */
  leftOut: { taskEntries: number };
  /** Entries and tasks the target has already on records the restore matched: left out. */
  present: { entries: number; tasks: number };
}

/**
 * Writes the entries and tasks (and the attachment files). Notes are written as they are; emails
 * and the entries of completed tasks whose task the restore does not make completed become
 * notes; what `present` says the target has already is left out.
 */
export async function writeActivityInputs(backup: Backup, work: string, present: PresentInTarget, targetOf: TargetOf): Promise<ActivityInputs> {
  const result: ActivityInputs = { carried: { emails: 0, taskEntries: 0 }, leftOut: { taskEntries: 0 }, present: { entries: 0, tasks: 0 } };
  const tasks = await backup.read('tasks.jsonl');
  const refiled = refiledTaskEntries(tasks);

  const entryRows: Array<{ cells: Cell[]; record: Body }> = [];
  for (const entry of await backup.read('entries.jsonl')) {
    if (filedAgain(refiled, entry)) {
      result.leftOut.taskEntries += 1;
      continue;
    }
    const on = onRecord(entry);
    const carried = carriedContent(entry);
    const content = carried ?? ((entry.content as string | null) ?? null);
    const target = targetOf(on);
    if (target !== null && takeOne(present.entries, entryKey(target, content ?? '', entry.entryAt))) {
      result.present.entries += 1;
      continue;
    }
    if (entry.type === 'email') result.carried.emails += 1;
    if (entry.type === 'task') result.carried.taskEntries += 1;
    const type = nameOf(entry.activityType) ?? (entry.type === 'email' || entry.type === 'task' ? CARRIED_TYPE[entry.type] : null);
    const paths: string[] = [];
    for (const attachment of (entry.attachments as Body[] | undefined) ?? []) {
      // openBackup checked that every attachment of an entry is there, with its bytes.
      const line = backup.attachments.get(attachment.id as number) as BackupAttachment;
      const relative = `files/${line.id}/${fileNameFor(line.filename)}`;
      paths.push(relative);
      const file = join(work, relative);
      if (await lstat(file).then(() => true, () => false)) continue;
      await makePrivateFolder(join(work, 'files', String(line.id)), { what: "a folder of the restore's attachment files" });
      await link(line.path, file).catch(() => copyFile(line.path, file, constants.COPYFILE_EXCL));
    }
    entryRows.push({ cells: [entry.id as number, on.partyId, on.kaseId, on.opportunityId, content, type, (entry.entryAt as string | null) ?? null, paths.join(';') || null], record: entry });
  }
  await writeCsv(join(work, 'entries.csv'), ['id', 'partyId', 'kaseId', 'opportunityId', 'content', 'activityType', 'entryAt', 'attachments'], entryRows);

  const taskRows: Array<{ cells: Cell[]; record: Body }> = [];
  for (const task of tasks) {
    // A track makes its tasks again when it is applied.
    if (task.hasTrack === true) continue;
    const on = onRecord(task);
    const target = targetOf(on);
    if (target !== null && takeOne(present.tasks, taskKey(target, task.description, task.dueOn))) {
      result.present.tasks += 1;
      continue;
    }
    const status = task.status === 'COMPLETED' ? 'COMPLETED' : 'OPEN';
    taskRows.push({ cells: [task.id as number, (task.description as string) ?? null, (task.detail as string | null) ?? null, on.partyId, on.kaseId, on.opportunityId, nameOf(task.owner), nameOf(task.category), (task.dueOn as string | null) ?? null, (task.dueTime as string | null) ?? null, status], record: task });
  }
  await writeCsv(join(work, 'tasks.csv'), ['id', 'description', 'detail', 'partyId', 'kaseId', 'opportunityId', 'owner', 'category', 'dueOn', 'dueTime', 'status'], taskRows);
  return result;
}

/** The activity types the carried entries need that the backup may not have (Email, Task completed). */
export async function carriedTypesNeeded(backup: Backup): Promise<string[]> {
  const refiled = refiledTaskEntries(await backup.read('tasks.jsonl'));
  const needed = new Set<string>();
  for (const entry of await backup.read('entries.jsonl')) {
    // Taken in the order the inputs take them, so that both leave out the same entries.
    if (filedAgain(refiled, entry) || (entry.type !== 'email' && entry.type !== 'task') || nameOf(entry.activityType) !== null) continue;
    needed.add(CARRIED_TYPE[entry.type]);
  }
  return [...needed].sort();
}
