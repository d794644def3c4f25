/**
 * The inputs of a restore: the CSV files the plan's round-trip mappings read, filled from the
 * backup's JSON Lines as `export --mapping` fills them (the columns come from the same mappings),
 * and the attachment files beside them. A project carries its additional parties and its tracks,
 * an opportunity its tracks (applied on create); entries the interface cannot create become notes
 * that say what they were; entries and tasks the account holds already on records the restore
 * found there are left out.
 */
import { constants } from 'node:fs';
import { copyFile, link, lstat } from 'node:fs/promises';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { FerryError } from '../errors/index.ts';
import { type Cell, type Column, columnsFromMappings, openWriter } from '../export/index.ts';
import type { CatalogUser, WritingUser } from '../client/index.ts';
import { type AccountCatalog, isWritingUser, loadMapping } from '../mapping/index.ts';
import { fileNameFor } from '../files/index.ts';
import { makePrivateFolder } from '../util/index.ts';
import { type TrackLine } from './format.ts';
import type { Backup } from './read-backup.ts';
import { type Body, idOf, nameOf } from './record-fields.ts';
import { MAPPINGS, RESTORE_STEPS } from './restore-plan.ts';

type ExportEntity = 'parties' | 'opportunities' | 'kases' | 'entries' | 'tasks';

/** Writes one CSV of the restore's inputs through the columns its step's mappings read. */
async function writeCsv(
  work: string,
  file: string,
  entity: ExportEntity,
  catalog: AccountCatalog,
  records: Iterable<Body>,
): Promise<void> {
  const mappings = RESTORE_STEPS.filter((s) => s.input === file).map((s) => join(MAPPINGS, s.mapping));
  const loaded = await Promise.all(mappings.map(async (name) => ({ file: name, mapping: await loadMapping(name) })));
  const columns: Column[] = columnsFromMappings(entity, loaded, catalog);
  // Never standard output: the file is named.
  const writer = openWriter(
    'csv',
    join(work, file),
    columns.map((c) => c.name),
    { plain: true, raw: true, stdout: new Writable() },
  );
  try {
    for (const record of records)
      await writer.write(
        columns.map((c): Cell => c.value(record)),
        record,
      );
    await writer.commit();
  } catch (error) {
    await writer.abort();
    throw error;
  }
}

/** The record an entry or task is on in the backup: the most specific one (a project or opportunity before its party; an email's first party). */
export function onRecord(record: Body): {
  partyId: number | null;
  kaseId: number | null;
  opportunityId: number | null;
} {
  const kaseId = idOf(record.kase);
  const opportunityId = kaseId === null ? idOf(record.opportunity) : null;
  const parties = Array.isArray(record.parties) ? (record.parties as unknown[]) : [];
  const partyId = kaseId === null && opportunityId === null ? (idOf(record.party) ?? idOf(parties[0])) : null;
  return { partyId, kaseId, opportunityId };
}

/** The record with only its most specific link (the interface files an entry or task on one record). */
function linkedOnce(record: Body): Body {
  const on = onRecord(record);
  return {
    ...record,
    party: on.partyId === null ? null : { id: on.partyId },
    kase: on.kaseId === null ? null : { id: on.kaseId },
    opportunity: on.opportunityId === null ? null : { id: on.opportunityId },
  };
}

/** The tracks of the backup by the record they are applied to (`kases/12`), and whether each can be applied by its definition's name. */
export interface BackupTracks {
  /** By `entity/id`: the tracks a project's or opportunity's create applies, by definition name. */
  onCreate: Map<string, string[]>;
  /** The tracks of parties (the interface takes no tracks on a party's create), applied after the records. */
  ofParties: TrackLine[];
  /** Tracks whose definition the backup does not name (renamed since applied): not carried. */
  unresolved: number;
}

/** Sorts the backup's tracks by how they are restored. */
export async function tracksOfBackup(backup: Backup, catalog: AccountCatalog): Promise<BackupTracks> {
  const definitions = new Set(catalog.trackDefinitions.map((d) => d.name.toLowerCase()));
  const out: BackupTracks = { onCreate: new Map(), ofParties: [], unresolved: 0 };
  for (const line of (await backup.read('tracks.jsonl')) as unknown as TrackLine[]) {
    const name = line.track.description;
    // A track read back names no definition: its description is the definition's unless changed.
    // A `;` would split it in the tracks column, which lists them all.
    if (!definitions.has(name.toLowerCase()) || name.includes(';')) {
      out.unresolved += 1;
      continue;
    }
    if (line.appliedTo.entity === 'parties') {
      out.ofParties.push(line);
      continue;
    }
    const key = `${line.appliedTo.entity}/${line.appliedTo.id}`;
    out.onCreate.set(key, [...(out.onCreate.get(key) ?? []), name]);
  }
  return out;
}

/**
 * Writes the CSV files of the records (parties, opportunities, projects), their columns filled as
 * `export --mapping` fills them: a project with its additional parties (kase-parties.jsonl) and its
 * tracks, an opportunity with its tracks, each track by its definition's name. Gives how many
 * additional parties the projects carry.
 */
export async function writeRecordInputs(
  backup: Backup,
  catalog: AccountCatalog,
  tracks: BackupTracks,
  work: string,
): Promise<{ kaseParties: number }> {
  await makePrivateFolder(work, {
    what: "the folder of the restore's inputs",
    hint: 'The restore writes its inputs into DIR/restore; copy the backup to a folder that can be written, or give --state-dir.',
  });
  const named = (entity: string, id: unknown): Body[] =>
    (tracks.onCreate.get(`${entity}/${String(id)}`) ?? []).map((description) => ({ description }));
  // An opportunity read back names its milestone without the pipeline, which a milestone name
  // two pipelines share needs: it is taken from the backup's milestones.
  const pipelineOf = new Map(catalog.milestones.map((m) => [m.id, { id: m.pipelineId, name: m.pipelineName }]));
  const opportunity = (record: Body): Body => {
    const milestone = record.milestone as Body | null | undefined;
    const pipeline = pipelineOf.get(idOf(milestone) ?? -1);
    return {
      ...record,
      ...(milestone && !milestone.pipeline && pipeline ? { milestone: { ...milestone, pipeline } } : {}),
      tracks: named('opportunities', record.id),
    };
  };
  const contacts = new Map<number, Body[]>();
  let kaseParties = 0;
  for (const line of await backup.read('kase-parties.jsonl')) {
    const kase = idOf(line.kase) as number;
    contacts.set(kase, [...(contacts.get(kase) ?? []), { id: idOf(line.party) }]);
    kaseParties += 1;
  }
  await writeCsv(work, 'parties.csv', 'parties', catalog, await backup.read('parties.jsonl'));
  await writeCsv(
    work,
    'opportunities.csv',
    'opportunities',
    catalog,
    (await backup.read('opportunities.jsonl')).map(opportunity),
  );
  await writeCsv(
    work,
    'kases.csv',
    'kases',
    catalog,
    (await backup.read('kases.jsonl')).map((kase) => ({
      ...kase,
      parties: contacts.get(kase.id as number) ?? [],
      tracks: named('kases', kase.id),
    })),
  );
  return { kaseParties };
}

/** A person as an email names them: `Ada Lovelace <ada@example.com>`. */
function participant(p: Body): string {
  const name = typeof p.name === 'string' ? p.name.trim() : '';
  const address = typeof p.address === 'string' ? p.address : '';
  return name && address ? `${name} <${address}>` : name || address;
}

function partyName(p: Body): string {
  return typeof p.name === 'string'
    ? p.name
    : [p.firstName, p.lastName].filter((x) => typeof x === 'string' && x !== '').join(' ');
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
  const people = Array.isArray(entry.participants) ? (entry.participants as Body[]) : [];
  const role = (r: string) =>
    people
      .filter((p) => String(p.role).toUpperCase() === r)
      .map(participant)
      .filter((s) => s !== '');
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
function taskEntryKey(
  record: { partyId: number | null; kaseId: number | null; opportunityId: number | null },
  content: string,
): string {
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
export type TargetOf = (record: {
  partyId: number | null;
  kaseId: number | null;
  opportunityId: number | null;
}) => string | null;

/**
 * A note's text without the line that names its first author (`Originally by Ann Smith`), which
 * the round trip adds: a note the account had before and one an earlier restore wrote compare alike.
 */
const withoutAuthor = (content: string): string => content.replace(/^Originally by [^\n]*\n\n/, '');

export const entryKey = (record: string, content: string, entryAt: unknown): string =>
  `${record}\u0000${withoutAuthor(content)}\u0000${typeof entryAt === 'string' ? Date.parse(entryAt) : ''}`;
export const taskKey = (record: string, description: unknown, dueOn: unknown): string =>
  `${record}\u0000${String(description ?? '')}\u0000${String(dueOn ?? '')}`;

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
 * Links the backup's attachment files into `files/ID/NAME` beside the CSV (a copy where the file
 * system takes no hard link), NAME the attachment's name as one file name fits (fileNameFor).
 * Gives the entry's attachments with their paths, relative to the CSV.
 */
async function attachmentFiles(backup: Backup, work: string, entry: Body): Promise<Body[]> {
  const out: Body[] = [];
  for (const attachment of (entry.attachments as Body[] | undefined) ?? []) {
    // openBackup checked that every attachment of an entry is there, with its bytes.
    const line = backup.attachments.get(attachment.id as number);
    if (!line)
      throw new FerryError(
        'INTERNAL',
        `attachment ${String(attachment.id)} of entry ${String(entry.id)} was not checked when the backup was opened`,
      );
    const relative = `files/${line.id}/${fileNameFor(line.filename)}`;
    out.push({ ...attachment, filename: line.filename, contentType: line.contentType, file: relative });
    const file = join(work, relative);
    if (
      await lstat(file).then(
        () => true,
        () => false,
      )
    )
      continue;
    await makePrivateFolder(join(work, 'files', String(line.id)), {
      what: "a folder of the restore's attachment files",
    });
    await link(line.path, file).catch(() => copyFile(line.path, file, constants.COPYFILE_EXCL));
  }
  return out;
}

/**
 * Whether a note's author is the user the restore writes as, by the rule of every note import
 * (isWritingUser): the backed-up account's user of the author's id gives the e-mail address.
 * Such a note keeps its text as it was; another author's note is headed with the author's name.
 */
export function writtenByWriter(
  creator: unknown,
  writer: WritingUser | null | undefined,
  users: readonly CatalogUser[] = [],
): boolean {
  if (creator === null || typeof creator !== 'object') return false;
  const { id, name, username } = creator as Body;
  return isWritingUser({ name, username, email: users.find((u) => u.id === id)?.email }, writer);
}

/**
 * A note's creator as the restore's entries file names it, for the round-trip mapping's `author`
 * (which compares the name alone with the writing user): none for the writing user's note, whose
 * text stays as it was; another user of the writing user's full name (another e-mail address) is
 * named with their username too, so that their note is headed still.
 */
export function creatorAsWritten(
  creator: unknown,
  writer: WritingUser | null | undefined,
  users: readonly CatalogUser[] = [],
): unknown {
  if (writtenByWriter(creator, writer, users)) return null;
  if (creator === null || typeof creator !== 'object') return creator;
  const { name, username } = creator as Body;
  if (!isWritingUser({ name }, writer)) return creator;
  return {
    ...(creator as Body),
    name: `${String(name)} (${typeof username === 'string' && username !== '' ? username : 'another user'})`,
  };
}

/**
 * Writes the entries and tasks (and the attachment files). Notes are written as they are (a note
 * of an author other than `writer` headed with the author's name by the mapping); emails
 * and the entries of completed tasks whose task the restore does not make completed become
 * notes; what `present` says the target has already is left out. Entries of completed tasks the
 * service files again, and tasks of tracks, stay in the files for the mappings to skip.
 */
export async function writeActivityInputs(
  backup: Backup,
  catalog: AccountCatalog,
  work: string,
  present: PresentInTarget,
  targetOf: TargetOf,
  writer: WritingUser | null | undefined = null,
): Promise<ActivityInputs> {
  const result: ActivityInputs = {
    carried: { emails: 0, taskEntries: 0 },
    leftOut: { taskEntries: 0 },
    present: { entries: 0, tasks: 0 },
  };
  const tasks = await backup.read('tasks.jsonl');
  const refiled = refiledTaskEntries(tasks);
  const entries: Body[] = [];
  for (const entry of await backup.read('entries.jsonl')) {
    if (filedAgain(refiled, entry)) {
      result.leftOut.taskEntries += 1;
      entries.push({ ...linkedOnce(entry), attachments: [] });
      continue;
    }
    const carried = carriedContent(entry);
    const content = carried ?? (typeof entry.content === 'string' ? entry.content : '');
    const target = targetOf(onRecord(entry));
    if (target !== null && takeOne(present.entries, entryKey(target, content, entry.entryAt))) {
      result.present.entries += 1;
      continue;
    }
    if (entry.type === 'email') result.carried.emails += 1;
    if (entry.type === 'task') result.carried.taskEntries += 1;
    const activityType =
      nameOf(entry.activityType) ?? (entry.type === 'email' || entry.type === 'task' ? CARRIED_TYPE[entry.type] : null);
    entries.push({
      ...linkedOnce(entry),
      // A carried entry is a note; its head says who wrote it (an email's sender), not the author line.
      // A note of the writing user names no author: the round-trip mapping then keeps its text as it was.
      ...(carried === null
        ? { creator: creatorAsWritten(entry.creator, writer, catalog.users) }
        : { type: 'note', content: carried, creator: null }),
      activityType: activityType === null ? null : { name: activityType },
      attachments: await attachmentFiles(backup, work, entry),
    });
  }
  await writeCsv(work, 'entries.csv', 'entries', catalog, entries);

  const kept: Body[] = [];
  for (const task of tasks) {
    const target = task.hasTrack === true ? null : targetOf(onRecord(task));
    if (target !== null && takeOne(present.tasks, taskKey(target, task.description, task.dueOn))) {
      result.present.tasks += 1;
      continue;
    }
    kept.push(linkedOnce(task));
  }
  await writeCsv(work, 'tasks.csv', 'tasks', catalog, kept);
  return result;
}

/** The activity types the carried entries need that the backup may not have (Email, Task completed). */
export async function carriedTypesNeeded(backup: Backup): Promise<string[]> {
  const refiled = refiledTaskEntries(await backup.read('tasks.jsonl'));
  const needed = new Set<string>();
  for (const entry of await backup.read('entries.jsonl')) {
    // Taken in the order the inputs take them, so that both leave out the same entries.
    if (
      filedAgain(refiled, entry) ||
      (entry.type !== 'email' && entry.type !== 'task') ||
      nameOf(entry.activityType) !== null
    )
      continue;
    needed.add(CARRIED_TYPE[entry.type]);
  }
  return [...needed].sort();
}
