import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, open, readdir, readFile, rename, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import { z } from 'zod';
import { type CrmClient, EVERY_TASK_STATUS, parseLinkHeader } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { releaseLock, takeLock } from '../journal/index.ts';
import { jsonText, makeFolders, processAlive, writeFileAtomic } from '../util/index.ts';
import {
  ATTACHMENTS_FOLDER,
  BACKUP_FORMAT,
  BACKUP_VERSION,
  LOCK_FILE,
  MANIFEST_FILE,
  PROGRESS_FILE,
  SINCE_ENTITIES,
  WORK_FOLDER,
  type AttachmentLine,
  type DeletedLine,
  type KasePartyLine,
  type Manifest,
  type ManifestFile,
  type SinceEntity,
  type TrackLine,
} from './format.ts';

type Body = Record<string, unknown>;

/** Clock differences with the service that an incremental backup absorbs by overlapping. */
const OVERLAP_MS = 5 * 60_000;

export const backupOptionsSchema = z.object({
  /** The backup folder: empty, or holding an earlier backup (complete or interrupted) of the same account. */
  out: z.string().min(1),
  /** 'auto': only what changed since the backup in `out` began (everything when there is none); null: everything. */
  since: z.enum(['auto']).nullable().default(null),
});
export type BackupOptions = z.output<typeof backupOptionsSchema>;

export interface BackupDeps {
  client: CrmClient;
  /** What identifies the account; a backup folder is never continued from another one. */
  account: string;
  signal?: AbortSignal;
  now?: () => Date;
  /** After each page or record step: records read so far and requests sent by this run. */
  onProgress?: (progress: { step: string; records: number; requests: number }) => void;
}

export interface BackupSummary {
  /** Records (lines) by file, as the manifest has them. */
  files: Record<string, ManifestFile>;
  attachments: { files: number; bytes: number; downloaded: number };
  since: string | null;
  /** An earlier run killed or stopped half-way was continued. */
  resumed: boolean;
  deleted: Record<SinceEntity, number>;
  /** Requests sent by this process. */
  requests: number;
  /** Stopped by the signal: the folder keeps what was read, and the same command continues. */
  interrupted: boolean;
}

/** A list read page by page into one file. */
interface ListStep {
  kind: 'list';
  name: string;
  path: string;
  key: string;
  query: Record<string, string>;
  /** Listed by `since` in an incremental run (and merged into the previous file by id). */
  since?: SinceEntity;
}

/** Requests made per record of an earlier step (links the lists do not carry). */
interface EachStep {
  kind: 'each';
  name: string;
  /** The targets, read from the files of earlier steps (work files of this run). */
  targets: (ctx: RunContext) => Promise<Target[]>;
  fetch: (ctx: RunContext, target: Target) => Promise<unknown[]>;
}

type Step = ListStep | EachStep;

interface Target {
  entity: string;
  id: number;
  /** Extra data the fetch needs (an attachment's entry and name). */
  extra?: Body;
}

interface StepProgress {
  done: boolean;
  /** List steps: the path of the next page to read; null before the first page. */
  next: string | null;
  /** Each steps: how many targets are done. */
  index: number;
  /** Bytes of the work file that belong to completed pages (the rest is cut on resume). */
  bytes: number;
  records: number;
}

interface Progress {
  format: typeof BACKUP_FORMAT;
  account: string;
  startedAt: string;
  since: string | null;
  phase: 'read' | 'commit';
  steps: Record<string, StepProgress>;
  requests: number;
  downloaded: number;
}

interface RunContext {
  dir: string;
  work: string;
  client: CrmClient;
  since: string | null;
  signal: AbortSignal | undefined;
  /** Attachment files downloaded since the progress was last saved. */
  downloads: number;
}

const progressSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  account: z.string(),
  startedAt: z.string(),
  since: z.string().nullable(),
  phase: z.enum(['read', 'commit']),
  steps: z.record(z.string(), z.object({ done: z.boolean(), next: z.string().nullable(), index: z.number(), bytes: z.number(), records: z.number() })),
  requests: z.number(),
  downloaded: z.number(),
});

const manifestSchema = z.object({
  format: z.literal(BACKUP_FORMAT),
  version: z.literal(BACKUP_VERSION),
  account: z.string(),
  startedAt: z.string(),
  files: z.record(z.string(), z.object({ records: z.number(), bytes: z.number(), sha256: z.string() })),
});

const list = (name: string, path: string, key: string, query: Record<string, string> = {}, since?: SinceEntity): ListStep => ({ kind: 'list', name, path, key, query, ...(since ? { since } : {}) });

/** Reads the JSON Lines of a work file or a file of the folder; a file not there (yet) has none. */
async function* readLines(file: string): AsyncGenerator<Body> {
  try {
    await stat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  const stream = createReadStream(file);
  for await (const line of createInterface({ input: stream, crlfDelay: Infinity })) {
    if (line.trim() !== '') yield JSON.parse(line) as Body;
  }
}

const idOf = (value: unknown): number | null => {
  const id = value && typeof value === 'object' ? (value as Body).id : undefined;
  return typeof id === 'number' ? id : null;
};

/**
 * The steps of a backup, in order: the configuration records refer to, the records, then what
 * needs a request per record (milestones per pipeline, additional parties per project, tracks of
 * the records that have track tasks, attachment files).
 */
function backupSteps(): Step[] {
  const steps: Step[] = [
    list('users', '/users', 'users'),
    list('teams', '/teams', 'teams'),
    // A pipeline read back does not say whether it is archived: the two lists do.
    list('pipelines', '/pipelines', 'pipelines'),
    list('pipelines-all', '/pipelines', 'pipelines', { includeDeleted: 'true' }),
    list('activity-types', '/activitytypes', 'activityTypes'),
    list('track-definitions', '/trackdefinitions', 'trackDefinitions'),
    list('task-categories', '/categories', 'categories'),
  ];
  for (const entity of SINCE_ENTITIES) {
    steps.push(list(`field-definitions-${entity}`, `/${entity}/fields/definitions`, 'definitions'));
    steps.push(list(`tags-${entity}`, `/${entity}/tags`, 'tags'));
  }
  steps.push(
    list('parties', '/parties', 'parties', { embed: 'tags,fields' }, 'parties'),
    list('opportunities', '/opportunities', 'opportunities', { embed: 'tags,fields' }, 'opportunities'),
    list('kases', '/kases', 'kases', { embed: 'tags,fields' }, 'kases'),
    list('entries', '/entries', 'entries', { embed: 'party,kase,opportunity' }),
    list('tasks', '/tasks', 'tasks', { status: EVERY_TASK_STATUS, embed: 'party,opportunity,kase' }),
    {
      kind: 'each',
      name: 'milestones',
      targets: async (ctx) => ids(join(ctx.work, 'pipelines-all.jsonl'), 'pipelines'),
      fetch: (ctx, target) => readAll(ctx, `/pipelines/${target.id}/milestones`, 'milestones'),
    },
    {
      kind: 'each',
      name: 'kase-parties',
      // Only the projects read by this run: in an incremental run, those that changed.
      targets: async (ctx) => ids(join(ctx.work, 'kases.jsonl'), 'kases'),
      fetch: async (ctx, target) => {
        const parties = await readAll(ctx, `/kases/${target.id}/parties`, 'parties');
        return parties.map((party): KasePartyLine => ({ kase: { id: target.id }, party: { id: idOf(party) ?? 0 } }));
      },
    },
    {
      kind: 'each',
      name: 'tracks',
      // A track makes tasks (hasTrack) on its record: the records to ask are those of such tasks,
      // which saves a request on every record without one.
      targets: async (ctx) => {
        const seen = new Map<string, Target>();
        for await (const task of readLines(join(ctx.work, 'tasks.jsonl'))) {
          if (task.hasTrack !== true) continue;
          for (const [key, entity] of [['kase', 'kases'], ['opportunity', 'opportunities'], ['party', 'parties']] as const) {
            const id = idOf(task[key]);
            if (id !== null) {
              seen.set(`${entity}/${id}`, { entity, id });
              break;
            }
          }
        }
        return [...seen.values()].sort((a, b) => (a.entity === b.entity ? a.id - b.id : a.entity < b.entity ? -1 : 1));
      },
      fetch: async (ctx, target) => {
        const tracks = await readAll(ctx, `/${target.entity}/${target.id}/tracks`, 'tracks', { embed: 'task' });
        return tracks.map((track): TrackLine => ({ appliedTo: { entity: target.entity as SinceEntity, id: target.id }, track: track as Body }));
      },
    },
    {
      kind: 'each',
      name: 'attachments',
      targets: async (ctx) => {
        const out: Target[] = [];
        for await (const entry of readLines(join(ctx.work, 'entries.jsonl'))) {
          for (const attachment of (entry.attachments as Body[] | undefined) ?? []) {
            const id = idOf(attachment);
            if (id !== null) out.push({ entity: 'attachments', id, extra: { entryId: entry.id, filename: attachment.filename, contentType: attachment.contentType ?? null } });
          }
        }
        return out;
      },
      fetch: async (ctx, target) => [await downloadAttachment(ctx, target)],
    },
  );
  return steps;
}

async function ids(file: string, entity: string): Promise<Target[]> {
  const out: Target[] = [];
  for await (const record of readLines(file)) {
    const id = idOf(record);
    if (id !== null) out.push({ entity, id });
  }
  return out;
}

async function readAll(ctx: RunContext, path: string, key: string, query: Record<string, string> = {}): Promise<unknown[]> {
  const all: unknown[] = [];
  let next: string | null = null;
  do {
    const page = await readPage(ctx, next ?? path, next === null ? { ...query, perPage: '100' } : undefined, key);
    all.push(...page.records);
    next = page.next;
  } while (next !== null);
  return all;
}

async function readPage(ctx: RunContext, path: string, query: Record<string, string> | undefined, key: string): Promise<{ records: unknown[]; next: string | null }> {
  const answer = await ctx.client.transport.request({ method: 'GET', path, ...(query ? { query } : {}), ...(ctx.signal ? { signal: ctx.signal } : {}) });
  const records = (answer.body as Body | null)?.[key];
  if (!Array.isArray(records)) {
    throw new FerryError('API_RESPONSE_INVALID', `the answer to GET ${path} has no "${key}" list`, { hint: 'The service may have changed its interface; report this with the request shown.' });
  }
  const link = parseLinkHeader(answer.headers.link).next;
  if (!link) return { records, next: null };
  const url = new URL(link, ctx.client.transport.origin);
  if (url.origin !== ctx.client.transport.origin) throw new FerryError('API_RESPONSE_INVALID', `the next-page link of GET ${path} points at another host (${url.origin})`);
  return { records, next: `${url.pathname}${url.search}` };
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** Downloads an attachment once: a file already in the folder (an earlier run) is kept. */
async function downloadAttachment(ctx: RunContext, target: Target): Promise<AttachmentLine> {
  const relative = `${ATTACHMENTS_FOLDER}/${target.id}`;
  const file = join(ctx.dir, relative);
  let exists = true;
  try {
    await stat(file);
  } catch {
    exists = false;
  }
  let contentType = (target.extra?.contentType as string | null | undefined) ?? null;
  if (!exists) {
    const temp = `${file}.${process.pid}.tmp`;
    const got = await ctx.client.download(target.id, temp);
    await rename(temp, file);
    contentType ??= got.contentType ?? null;
    ctx.downloads += 1;
  }
  const bytes = (await stat(file)).size;
  return { id: target.id, entryId: Number(target.extra?.entryId), filename: String(target.extra?.filename ?? target.id), contentType, bytes, sha256: await sha256Of(file), file: relative };
}

/** `NAME.PID.tmp`: a file being written by process PID (writeFileAtomic, commitFile, downloads). */
const TEMP_NAME = /\.(\d+)\.tmp$/;

/** Removes what a killed run was writing; a file of a process still running is left alone. */
async function removeStaleTemps(folder: string): Promise<void> {
  for (const name of await readdir(folder)) {
    const match = TEMP_NAME.exec(name);
    if (match && !processAlive(Number(match[1]))) await rm(join(folder, name), { force: true });
  }
}

/** Appends lines to a work file and makes them durable before the progress says they are there. */
async function appendLines(file: string, lines: unknown[]): Promise<number> {
  const handle = await open(file, 'a');
  try {
    if (lines.length > 0) await handle.write(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
    await handle.sync();
    return (await handle.stat()).size;
  } finally {
    await handle.close();
  }
}

/** Cuts a work file back to what the progress recorded (a page written but not recorded is read again). */
async function truncateTo(file: string, bytes: number): Promise<void> {
  const handle = await open(file, 'a+');
  try {
    await handle.truncate(bytes);
  } finally {
    await handle.close();
  }
}

async function readJson(file: string): Promise<unknown | undefined> {
  try {
    return JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new FerryError('EXPORT_WRITE', `${file} is damaged (${(error as Error).message})`, { location: { file }, hint: 'Give the backup another --out folder, or remove this one to back up everything again.' });
  }
}

function damaged(file: string, message: string): FerryError {
  return new FerryError('EXPORT_WRITE', `${file} is not a backup crm-ferry can continue (${message})`, { location: { file }, hint: 'Give the backup another --out folder, or remove this one to back up everything again.' });
}

/** The key a line is merged on in an incremental run: the record it replaces. */
function mergeKey(step: ListStep | EachStep): ((line: Body) => number | null) | null {
  if (step.kind === 'list' && step.since) return (line) => idOf(line);
  if (step.name === 'kase-parties') return (line) => idOf(line.kase);
  return null;
}

/**
 * Backs up the whole account into a folder: JSON Lines per kind of record, attachment files and a
 * manifest written last. Resumable: a run killed or stopped half-way is continued by the next one
 * (same folder), from the page it stopped at. With `since: 'auto'` over a complete backup, only
 * parties, opportunities and projects changed since it began are read, merged into its files, and
 * those deleted in the account removed.
 */
export async function runBackup(given: BackupOptions, deps: BackupDeps): Promise<BackupSummary> {
  const options = backupOptionsSchema.parse(given);
  const dir = await makeFolders(options.out, { mode: 0o755, what: 'the backup folder', hint: 'Give --out a folder that can be written.' });
  // Two backups into one folder would write the same work files.
  const lock = await takeLock(join(dir, LOCK_FILE));
  try {
    return await backupLocked(options, deps, dir);
  } finally {
    await releaseLock(lock);
  }
}

async function backupLocked(options: BackupOptions, deps: BackupDeps, dir: string): Promise<BackupSummary> {
  const now = deps.now ?? (() => new Date());
  const client = deps.client;
  const requestsAtStart = client.transport.requestsSent;
  const work = join(dir, WORK_FOLDER);
  const progressFile = join(dir, PROGRESS_FILE);
  const manifestFile = join(dir, MANIFEST_FILE);

  const previous = (await readJson(manifestFile)) as Manifest | undefined;
  if (previous !== undefined && !manifestSchema.safeParse(previous).success) throw damaged(manifestFile, 'its manifest.json is not one');
  const saved = await readJson(progressFile);
  let progress: Progress;
  let resumed = false;
  if (saved !== undefined) {
    const parsed = progressSchema.safeParse(saved);
    if (!parsed.success) throw damaged(progressFile, 'its progress file is not one');
    progress = parsed.data;
    if (progress.account !== deps.account) {
      throw new FerryError('EXPORT_WRITE', `the backup under way in ${dir} is of ${progress.account}, and this run is connected to ${deps.account}`, {
        location: { file: progressFile },
        hint: 'Give each account its own backup folder.',
      });
    }
    resumed = true;
  } else {
    if (previous === undefined) {
      const names = (await readdir(dir)).filter((name) => !name.startsWith('.') && name !== ATTACHMENTS_FOLDER);
      if (names.length > 0) throw new FerryError('USAGE', `the backup folder ${dir} holds other files (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}) and no backup`, { hint: 'Give --out an empty or new folder.' });
    } else if (previous.account !== deps.account) {
      throw new FerryError('EXPORT_WRITE', `the backup in ${dir} is of ${previous.account}, and this run is connected to ${deps.account}`, { location: { file: manifestFile }, hint: 'Give each account its own backup folder.' });
    }
    const since = options.since === 'auto' && previous ? new Date(Date.parse(previous.startedAt) - OVERLAP_MS).toISOString() : null;
    progress = { format: BACKUP_FORMAT, account: deps.account, startedAt: now().toISOString(), since, phase: 'read', steps: {}, requests: 0, downloaded: 0 };
    await rm(work, { recursive: true, force: true });
  }
  if (progress.since !== null && previous === undefined) throw damaged(manifestFile, 'an incremental backup under way lost the manifest of the backup it adds to');
  await mkdir(work, { recursive: true });
  await mkdir(join(dir, ATTACHMENTS_FOLDER), { recursive: true });
  await removeStaleTemps(dir);
  await removeStaleTemps(join(dir, ATTACHMENTS_FOLDER));

  const ctx: RunContext = { dir, work, client, since: progress.since, signal: deps.signal, downloads: 0 };
  const requestsBefore = progress.requests;
  const save = async (): Promise<void> => {
    progress.requests = requestsBefore + (client.transport.requestsSent - requestsAtStart);
    progress.downloaded += ctx.downloads;
    ctx.downloads = 0;
    await writeFileAtomic(progressFile, jsonText(progress), { mode: 0o644 });
  };
  const summary: BackupSummary = { files: {}, attachments: { files: 0, bytes: 0, downloaded: 0 }, since: progress.since, resumed, deleted: { parties: 0, opportunities: 0, kases: 0 }, requests: 0, interrupted: false };
  const steps = backupSteps();
  try {
    if (progress.phase === 'read') {
      await save();
      for (const step of steps) {
        const state = (progress.steps[step.name] ??= { done: false, next: null, index: 0, bytes: 0, records: 0 });
        if (state.done) continue;
        const file = join(work, `${step.name}.jsonl`);
        await truncateTo(file, state.bytes);
        if (step.kind === 'list') {
          let first = state.next === null;
          while (first || state.next !== null) {
            deps.signal?.throwIfAborted();
            const query = first ? { ...step.query, perPage: '100', ...(step.since && ctx.since ? { since: ctx.since } : {}) } : undefined;
            const page = await readPage(ctx, state.next ?? step.path, query, step.key);
            state.bytes = await appendLines(file, page.records);
            state.records += page.records.length;
            state.next = page.next;
            first = false;
            await save();
            deps.onProgress?.({ step: step.name, records: state.records, requests: client.transport.requestsSent - requestsAtStart });
          }
        } else {
          const targets = await step.targets(ctx);
          while (state.index < targets.length) {
            deps.signal?.throwIfAborted();
            const lines = await step.fetch(ctx, targets[state.index] as Target);
            state.bytes = await appendLines(file, lines);
            state.records += lines.length;
            state.index += 1;
            await save();
            deps.onProgress?.({ step: step.name, records: state.records, requests: client.transport.requestsSent - requestsAtStart });
          }
        }
        state.done = true;
        await save();
      }
      if (ctx.since !== null) {
        const deleted: DeletedLine[] = [];
        for (const entity of SINCE_ENTITIES) {
          const answer = await client.transport.request({ method: 'GET', path: `/${entity}/deleted`, query: { since: ctx.since }, ...(deps.signal ? { signal: deps.signal } : {}) });
          for (const gone of ((answer.body as Body | null)?.[entity] as Body[] | undefined) ?? []) {
            if (typeof gone.id === 'number') deleted.push({ entity, id: gone.id, deletedAt: String(gone.deletedAt ?? '') });
          }
        }
        await writeFileAtomic(join(work, 'deleted.jsonl'), deleted.map((line) => `${JSON.stringify(line)}\n`).join(''), { mode: 0o644 });
      }
      deps.signal?.throwIfAborted();
      // From here on the folder's files change: no manifest says they are complete until the new one.
      progress.phase = 'commit';
      await save();
    }
    await rm(manifestFile, { force: true });
    const deleted: DeletedLine[] = [];
    for await (const line of readLines(join(work, 'deleted.jsonl'))) deleted.push(line as unknown as DeletedLine);
    for (const entity of SINCE_ENTITIES) summary.deleted[entity] = deleted.filter((d) => d.entity === entity).length;
    const files: Record<string, ManifestFile> = {};
    for (const step of steps) files[`${step.name}.jsonl`] = await commitFile(dir, work, step, ctx.since !== null, deleted);
    if (ctx.since !== null) files['deleted.jsonl'] = await commitFile(dir, work, { kind: 'list', name: 'deleted', path: '', key: '', query: {} }, false, []);
    else await rm(join(dir, 'deleted.jsonl'), { force: true });
    // Attachment files no entry refers to any more (entries deleted or changed) go.
    const kept = new Set<string>();
    for await (const line of readLines(join(dir, 'attachments.jsonl'))) {
      kept.add(String(line.id));
      summary.attachments.files += 1;
      summary.attachments.bytes += Number(line.bytes);
    }
    for (const name of await readdir(join(dir, ATTACHMENTS_FOLDER))) if (!kept.has(name)) await rm(join(dir, ATTACHMENTS_FOLDER, name), { force: true });
    await save();
    const manifest: Manifest = {
      format: BACKUP_FORMAT,
      version: BACKUP_VERSION,
      account: deps.account,
      startedAt: progress.startedAt,
      completedAt: now().toISOString(),
      since: progress.since,
      files,
      attachments: { files: summary.attachments.files, bytes: summary.attachments.bytes },
      deleted: summary.deleted,
      requests: progress.requests,
    };
    await writeFileAtomic(manifestFile, jsonText(manifest), { mode: 0o644 });
    await rm(progressFile, { force: true });
    await rm(work, { recursive: true, force: true });
    summary.files = files;
    summary.attachments.downloaded = progress.downloaded;
  } catch (error) {
    if (deps.signal?.aborted) {
      await save().catch(() => undefined);
      summary.interrupted = true;
    } else if (!(error instanceof FerryError) && typeof (error as NodeJS.ErrnoException).code === 'string' && typeof (error as NodeJS.ErrnoException).syscall === 'string') {
      // The disk, not crm-ferry: full, read-only, gone. What was recorded is kept for the next run.
      throw new FerryError('EXPORT_WRITE', `cannot write the backup in ${dir}: ${(error as Error).message}`, { location: { file: dir }, cause: error, hint: 'Make room or give another --out folder; the same command continues the backup.' });
    } else {
      throw error;
    }
  }
  summary.requests = client.transport.requestsSent - requestsAtStart;
  return summary;
}

/**
 * Puts a step's work file in place in the folder, counted and checksummed. An incremental run
 * keeps the previous file's lines that were neither read again nor deleted. Safe to repeat after
 * a kill: merging the same changes into an already merged file gives the same file.
 */
async function commitFile(dir: string, work: string, step: Step, incremental: boolean, deleted: DeletedLine[]): Promise<ManifestFile> {
  const name = `${step.name}.jsonl`;
  const target = join(dir, name);
  const source = join(work, name);
  const temp = `${target}.${process.pid}.tmp`;
  const out = createWriteStream(temp, { mode: 0o644 });
  const hash = createHash('sha256');
  let records = 0;
  let bytes = 0;
  const write = (line: Body): void => {
    const text = `${JSON.stringify(line)}\n`;
    hash.update(text);
    bytes += Buffer.byteLength(text);
    records += 1;
    out.write(text);
  };
  const key = mergeKey(step);
  if (incremental && key !== null) {
    const entity = step.kind === 'list' && step.since ? step.since : 'kases';
    const replaced = new Set<number>(deleted.filter((d) => d.entity === entity).map((d) => d.id));
    // kase-parties: the projects read again are those in this run's kases file.
    for await (const line of readLines(step.name === 'kase-parties' ? join(work, 'kases.jsonl') : source)) {
      const id = idOf(line);
      if (id !== null) replaced.add(id);
    }
    for await (const line of readLines(target)) {
      const id = key(line);
      if (id === null || !replaced.has(id)) write(line);
    }
  }
  for await (const line of readLines(source)) write(line);
  out.end();
  await finished(out);
  await rename(temp, target);
  return { records, bytes, sha256: hash.digest('hex') };
}
