import { copyFile, link, mkdir, stat } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { z } from 'zod';
import { type CrmClient, readAccountCatalog } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { type Cell, columnsFromMappings, openWriter } from '../export/index.ts';
import { type AccountIdentity, loadJournal } from '../journal/index.ts';
import { runImport, type ImportEvent, type ImportSummary } from '../load/index.ts';
import { type AccountCatalog, loadMapping } from '../mapping/index.ts';
import { makeFolders, writeFileAtomic } from '../util/index.ts';
import { catalogOfBackup, idOf, missingConfiguration, nameOf, openBackup, type Backup, type MissingItem } from './read-backup.ts';

type Body = Record<string, unknown>;

/** The folder of the bundled mappings a restore copies beside its inputs. */
const MAPPINGS = fileURLToPath(new URL('../../mappings/', import.meta.url));

/** The plan a restore runs, step by step: the mapping and the CSV file each reads. */
const STEPS = [
  { name: 'organisations', mapping: 'roundtrip-organisations.yaml', input: 'parties.csv' },
  { name: 'people', mapping: 'roundtrip-people.yaml', input: 'parties.csv' },
  { name: 'opportunities', mapping: 'roundtrip-opportunities.yaml', input: 'opportunities.csv' },
  { name: 'kases', mapping: 'restore-kases.yaml', input: 'kases.csv' },
  { name: 'entries', mapping: 'restore-entries.yaml', input: 'entries.csv' },
  { name: 'tasks', mapping: 'restore-tasks.yaml', input: 'tasks.csv' },
] as const;

export const restoreOptionsSchema = z.object({
  /** A complete backup folder. */
  from: z.string().min(1),
  /** Where the inputs of the restore (CSV files, mappings, plan) are written. @default FROM/restore */
  workDir: z.string().nullable().default(null),
  /** The importer's state folder. @default FROM/restore/state */
  stateDir: z.string().nullable().default(null),
  /** Restore even when the target lacks configuration the backup refers to. @default false */
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
  /** What the target lacks (only with allowMissing; without it the restore stops before writing). */
  missing: MissingItem[];
  /** The importer's run over the plan. */
  import: ImportSummary;
  /** Links made after the records: additional parties of projects, tracks. */
  links: { kaseParties: { added: number; present: number; unresolved: number }; tracks: { added: number; present: number; unresolved: number } };
  /** What the interface cannot create, left out: entries that are not notes (emails, completed-task entries). */
  leftOut: { entries: number };
  /** Stopped by the signal (during the import or the links): the same restore continues. */
  interrupted: boolean;
}

/** Writes one CSV of the restore's inputs (plain, raw: read back by the importer as written). */
async function writeCsv(file: string, header: string[], rows: Array<{ cells: Cell[]; record: Body }>): Promise<void> {
  const writer = openWriter('csv', file, header, { plain: true, raw: true, stdout: process.stdout });
  try {
    for (const row of rows) await writer.write(row.cells, row.record);
    await writer.commit();
  } catch (error) {
    await writer.abort();
    throw error;
  }
}

/** The record an entry or task is on: the most specific one (a project or opportunity before its party). */
function onRecord(record: Body): { partyId: number | null; kaseId: number | null; opportunityId: number | null } {
  const kaseId = idOf(record.kase);
  const opportunityId = kaseId === null ? idOf(record.opportunity) : null;
  const partyId = kaseId === null && opportunityId === null ? idOf(record.party) : null;
  return { partyId, kaseId, opportunityId };
}

/** A file name an attachment can keep on disk: its last path part, never `.` or `..`. */
function safeFilename(name: string, id: number): string {
  const base = basename(name.replace(/\\/g, '/')).replace(/[\u0000-\u001f]/g, '_');
  return base === '' || base === '.' || base === '..' ? `attachment-${id}` : base;
}

/**
 * Writes the inputs of a restore into `work`: the CSV files of the plan's steps (read from the
 * backup's JSON Lines, columns filled as `export --mapping` fills them), the attachment files
 * under their names, the mappings and plan.yaml. Written again whole on every run; the same backup
 * gives the same files, so a resumed restore continues the same plan.
 */
export async function writeRestoreInputs(backup: Backup, catalog: AccountCatalog, work: string): Promise<{ plan: string; leftOut: { entries: number } }> {
  await makeFolders(work, { mode: 0o755, what: 'the folder of the restore\'s inputs', hint: 'The restore writes its inputs into DIR/restore; copy the backup to a folder that can be written.' });
  for (const step of STEPS) await copyFile(join(MAPPINGS, step.mapping), join(work, step.mapping));
  const mapped = async (entity: 'parties' | 'opportunities' | 'kases', mappings: string[], file: string): Promise<void> => {
    const loaded = await Promise.all(mappings.map(async (name) => ({ file: join(work, name), mapping: await loadMapping(join(work, name)) })));
    const columns = columnsFromMappings(entity, loaded, catalog);
    const records = await backup.read(`${entity}.jsonl`);
    await writeCsv(join(work, file), columns.map((c) => c.name), records.map((record) => ({ cells: columns.map((c) => c.value(record)), record })));
  };
  await mapped('parties', ['roundtrip-organisations.yaml', 'roundtrip-people.yaml'], 'parties.csv');
  await mapped('opportunities', ['roundtrip-opportunities.yaml'], 'opportunities.csv');
  await mapped('kases', ['restore-kases.yaml'], 'kases.csv');

  const attachments = new Map<number, Body>();
  for (const line of await backup.read('attachments.jsonl')) attachments.set(line.id as number, line);
  const entries = await backup.read('entries.jsonl');
  let leftOut = 0;
  const entryRows: Array<{ cells: Cell[]; record: Body }> = [];
  for (const entry of entries) {
    if (entry.type !== 'note') {
      leftOut += 1;
      continue;
    }
    const paths: string[] = [];
    for (const attachment of (entry.attachments as Body[] | undefined) ?? []) {
      const line = attachments.get(attachment.id as number);
      if (!line) continue;
      const relative = `files/${line.id}/${safeFilename(String(line.filename), line.id as number)}`;
      const target = join(work, relative);
      await mkdir(join(work, 'files', String(line.id)), { recursive: true });
      const exists = await stat(target).then(() => true, () => false);
      if (!exists) await link(join(backup.dir, String(line.file)), target).catch(() => copyFile(join(backup.dir, String(line.file)), target));
      paths.push(relative);
    }
    const on = onRecord(entry);
    entryRows.push({ cells: [entry.id as number, on.partyId, on.kaseId, on.opportunityId, (entry.content as string | null) ?? null, nameOf(entry.activityType), (entry.entryAt as string | null) ?? null, paths.join(';') || null], record: entry });
  }
  await writeCsv(join(work, 'entries.csv'), ['id', 'partyId', 'kaseId', 'opportunityId', 'content', 'activityType', 'entryAt', 'attachments'], entryRows);

  const taskRows: Array<{ cells: Cell[]; record: Body }> = [];
  for (const task of await backup.read('tasks.jsonl')) {
    // A track makes its tasks again when it is applied.
    if (task.hasTrack === true) continue;
    const on = onRecord(task);
    const status = task.status === 'COMPLETED' ? 'COMPLETED' : 'OPEN';
    taskRows.push({ cells: [task.id as number, (task.description as string) ?? null, (task.detail as string | null) ?? null, on.partyId, on.kaseId, on.opportunityId, nameOf(task.owner), nameOf(task.category), (task.dueOn as string | null) ?? null, (task.dueTime as string | null) ?? null, status], record: task });
  }
  await writeCsv(join(work, 'tasks.csv'), ['id', 'description', 'detail', 'partyId', 'kaseId', 'opportunityId', 'owner', 'category', 'dueOn', 'dueTime', 'status'], taskRows);

  const plan = join(work, 'plan.yaml');
  const yaml = [
    '# Written by crm-ferry restore from the backup in this folder\'s parent; run, verify and roll back',
    '# it like any plan. Each record is keyed by its id in the backed-up account.',
    'version: 1',
    'steps:',
    ...STEPS.flatMap((step) => [`  - name: ${step.name}`, `    mapping: ${step.mapping}`, `    input: ${step.input}`]),
    '',
  ].join('\n');
  await writeFileAtomic(plan, yaml, { mode: 0o644 });
  return { plan, leftOut: { entries: leftOut } };
}

/** Ids in the target of the records a restore wrote, as `STEP/SOURCE_ID` (e.g. `kases/12`), from its journals. */
export async function restoredIds(stateDir: string, steps: readonly string[] = STEPS.map((s) => s.name)): Promise<Map<string, number>> {
  const ids = new Map<string, number>();
  for (const step of steps) {
    const journal = await loadJournal(join(stateDir, 'journal', `${step}.jsonl`)).catch(() => null);
    for (const [key, row] of journal?.rows ?? []) if (row.id !== null) ids.set(`${step}/${key}`, row.id);
  }
  return ids;
}

/**
 * Restores a backup folder into the account of `client`: lists what the target lacks (and stops
 * with CONFIG_MISSING unless allowMissing), writes the inputs, runs them through the importer
 * (journal, exactly once, resume, rollback, verify), then adds the additional parties of projects
 * and the tracks, each after looking whether the target already has it: a second restore changes
 * nothing.
 */
export async function runRestore(given: z.input<typeof restoreOptionsSchema>, deps: RestoreDeps): Promise<RestoreSummary> {
  const options = restoreOptionsSchema.parse(given);
  const from = resolve(options.from);
  const work = options.workDir ?? join(from, 'restore');
  const stateDir = options.stateDir ?? join(work, 'state');
  const backup = await openBackup(from);
  const source = await catalogOfBackup(backup);
  const target = await readAccountCatalog(deps.client);
  const missing = missingConfiguration(source, target);
  if (missing.length > 0 && !options.allowMissing) {
    const shown = missing.slice(0, 12).map((m) => `${m.kind} ${m.name}${m.creatable ? ' (set-up can create it)' : ''}`);
    throw new FerryError('CONFIG_MISSING', `the target account lacks ${missing.length} item${missing.length === 1 ? '' : 's'} of configuration the backup refers to: ${shown.join('; ')}${missing.length > 12 ? '; ...' : ''}`, {
      hint: "Create them in the target account (custom fields, task categories, users and teams in its settings; set-up can create pipelines, milestones, activity types and track definitions), or give --allow-missing to go ahead: owners and teams the target lacks are left out with a warning, and the importer reports whatever else a row needs and the target lacks.",
    });
  }
  const { plan, leftOut } = await writeRestoreInputs(backup, source, work);
  const summary = await runImport(
    { source: { kind: 'plan', planFile: plan }, stateDir, concurrency: options.concurrency },
    { client: deps.client, account: deps.account, ...(deps.signal ? { signal: deps.signal } : {}), ...(deps.onEvent ? { onEvent: deps.onEvent } : {}) },
  );
  const links = { kaseParties: { added: 0, present: 0, unresolved: 0 }, tracks: { added: 0, present: 0, unresolved: 0 } };
  const result: RestoreSummary = { plan, stateDir, missing, import: summary, links, leftOut, interrupted: summary.interrupted };
  if (summary.stopped || summary.interrupted) return result;
  try {
    await restoreLinks(backup, stateDir, target, deps, links);
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
async function restoreLinks(backup: Backup, stateDir: string, target: AccountCatalog, deps: RestoreDeps, links: RestoreSummary['links']): Promise<void> {

  const ids = await restoredIds(stateDir);
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

