/**
 * `crm-ferry backup`: the whole account into a folder, resumable. Runs the steps of
 * backup-steps.ts into work files (progress.ts records how far each got), then puts the files in
 * place (work-files.ts) and writes the manifest last. The folder, its work folder and its
 * attachments folder are 0700 and every file 0600, whatever the umask: a backup holds an account.
 */
import { readdir, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { z } from 'zod';
import { accountOf, type CrmClient, RecordService } from '../client/index.ts';
import { asFerryError, FerryError, guarded, parseOptions } from '../errors/index.ts';
import {
  type AccountIdentity,
  releaseLock,
  type StateStoreOptions,
  StoreState,
  stateStoreSchema,
  takeLock,
} from '../journal/index.ts';
import { jsonText, writeFileAtomic } from '../files/index.ts';
import { makeFolders, makePrivateFolder, removeStaleTemps } from '../util/index.ts';
import { backupSteps, RECORD, type StepContext, type Target } from './backup-steps.ts';
import {
  ATTACHMENTS_FOLDER,
  BACKUP_FILE_MODE,
  BACKUP_FORMAT,
  BACKUP_VERSION,
  type DeletedLine,
  LOCK_FILE,
  type Manifest,
  MANIFEST_FILE,
  type ManifestFile,
  manifestSchema,
  PROGRESS_FILE,
  SINCE_ENTITIES,
  type SinceEntity,
  WORK_FOLDER,
} from './format.ts';
import { jsonLine, readWorkFile } from './jsonl.ts';
import { damaged, type Progress, progressSchema, readChecked, saveProgress } from './progress.ts';
import { appendLines, commitFile, truncateTo } from './work-files.ts';

/** Clock differences with the service that an incremental backup absorbs by overlapping. */
const OVERLAP_MS = 5 * 60_000;

export const backupOptionsSchema = z.object({
  /** The backup folder: empty, or holding an earlier backup (complete or interrupted) of the same account. */
  out: z.string().min(1),
  /** 'auto': only what changed since the backup in `out` began (everything when there is none); null: everything. */
  since: z.enum(['auto']).nullable().default(null),
  /**
   * A state store whose run lock (under `key`) every backup into the folder takes first: a folder
   * lock left by another machine (a pod that died, on a shared volume) is then taken over rather
   * than refused. @default null
   */
  stateStore: stateStoreSchema.nullable().default(null),
});
export type BackupOptions = z.output<typeof backupOptionsSchema>;

/** Options of runBackup as a program gives them: the folder, and whether to add to the backup in it. */
export interface BackupOptionsInput {
  /** The backup folder: empty or new, or holding an earlier backup (complete or interrupted) of the same account. */
  out: string;
  /** 'auto': only what changed since the backup in `out` began (everything when there is none); null (the default): everything. */
  since?: 'auto' | null | undefined;
  /** A state store whose lock every backup into the folder takes (see backupOptionsSchema). @default null */
  stateStore?: StateStoreOptions | null | undefined;
}

/** What a backup tells as it goes: after each page or record step, the records read and requests sent so far. */
export type BackupEvent = { type: 'progress'; step: string; records: number; requests: number };

export interface BackupDeps {
  client: CrmClient;
  /** The account the folder belongs to (a backup folder is never continued from another). @default accountOf(client) */
  account?: AccountIdentity | undefined;
  /** Stops the backup cleanly: the folder keeps what was read, the summary says `interrupted`, and the same call continues. */
  signal?: AbortSignal | undefined;
  now?: (() => Date) | undefined;
  onEvent?: ((event: BackupEvent) => void) | undefined;
}

/** The dependencies of a run, the account as the folder's files name it. */
type RunDeps = Omit<BackupDeps, 'account'> & { account: string };

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

/**
 * Backs up the whole account into a folder: JSON Lines per kind of record, attachment files and a
 * manifest written last. Resumable: a run killed or stopped half-way is continued by the next one
 * (same folder), from the page it stopped at. With `since: 'auto'` over a complete backup, only
 * parties, opportunities and projects changed since it began are read, merged into its files, and
 * those deleted in the account removed.
 */
export function runBackup(given: BackupOptionsInput, deps: BackupDeps): Promise<BackupSummary> {
  return guarded('runBackup', () =>
    backup(parseOptions(backupOptionsSchema.strict(), given, 'runBackup'), {
      ...deps,
      account: (deps.account ?? accountOf(deps.client)).account,
    }),
  );
}

async function backup(options: BackupOptions, deps: RunDeps): Promise<BackupSummary> {
  const dir = await makeFolders(options.out, {
    mode: 0o700,
    what: 'the backup folder',
    hint: 'Give --out a folder that can be written.',
  });
  // Two backups into one folder would write the same work files.
  const stored = options.stateStore ? await StoreState.open(options.stateStore) : null;
  try {
    const lock = await takeLock(join(dir, LOCK_FILE), { otherHostsGone: stored !== null });
    try {
      return await backupLocked(options, deps, dir);
    } finally {
      await releaseLock(lock);
    }
  } finally {
    await stored?.close().catch(() => undefined);
  }
}

/** Where the run starts: a new backup, or the one a killed or stopped run left. */
async function startOrResume(
  options: BackupOptions,
  deps: RunDeps,
  dir: string,
  previous: Manifest | undefined,
): Promise<{ progress: Progress; resumed: boolean }> {
  const progressFile = join(dir, PROGRESS_FILE);
  const manifestFile = join(dir, MANIFEST_FILE);
  const saved = await readChecked(progressFile, progressSchema, 'progress file');
  if (saved !== undefined) {
    if (saved.account !== deps.account) {
      throw new FerryError(
        'EXPORT_WRITE',
        `the backup under way in ${dir} is of ${saved.account}, and this run is connected to ${deps.account}`,
        { location: { file: progressFile }, hint: 'Give each account its own backup folder.' },
      );
    }
    if (saved.since !== null && previous === undefined)
      throw damaged(manifestFile, 'an incremental backup under way lost the manifest of the backup it adds to');
    return { progress: saved, resumed: true };
  }
  if (previous === undefined) {
    const names = (await readdir(dir)).filter((name) => !name.startsWith('.') && name !== ATTACHMENTS_FOLDER);
    if (names.length > 0)
      throw new FerryError(
        'USAGE',
        `the backup folder ${dir} holds other files (${names.slice(0, 3).join(', ')}${names.length > 3 ? ', ...' : ''}) and no backup`,
        { hint: 'Give --out an empty or new folder.' },
      );
  } else if (previous.account !== deps.account) {
    throw new FerryError(
      'EXPORT_WRITE',
      `the backup in ${dir} is of ${previous.account}, and this run is connected to ${deps.account}`,
      { location: { file: manifestFile }, hint: 'Give each account its own backup folder.' },
    );
  }
  const since =
    options.since === 'auto' && previous ? new Date(Date.parse(previous.startedAt) - OVERLAP_MS).toISOString() : null;
  await rm(join(dir, WORK_FOLDER), { recursive: true, force: true });
  const now = deps.now ?? (() => new Date());
  return {
    progress: {
      format: BACKUP_FORMAT,
      account: deps.account,
      startedAt: now().toISOString(),
      since,
      phase: 'read',
      steps: {},
      requests: 0,
      downloaded: 0,
    },
    resumed: false,
  };
}

async function backupLocked(options: BackupOptions, deps: RunDeps, dir: string): Promise<BackupSummary> {
  const now = deps.now ?? (() => new Date());
  const client = deps.client;
  const requestsAtStart = client.transport.requestsSent;
  const work = join(dir, WORK_FOLDER);
  const progressFile = join(dir, PROGRESS_FILE);
  const manifestFile = join(dir, MANIFEST_FILE);

  const previous = await readChecked(manifestFile, manifestSchema, 'manifest.json');
  const { progress, resumed } = await startOrResume(options, deps, dir, previous);
  // Folders of earlier versions (0755) are made private too: they are crm-ferry's own.
  await makePrivateFolder(work, { what: "the backup's work folder" }, { tighten: true });
  await makePrivateFolder(
    join(dir, ATTACHMENTS_FOLDER),
    { what: "the backup's attachments folder" },
    { tighten: true },
  );
  await removeStaleTemps(dir);
  await removeStaleTemps(join(dir, ATTACHMENTS_FOLDER));

  const ctx: StepContext = { dir, work, client, since: progress.since, signal: deps.signal, downloads: 0 };
  const requestsBefore = progress.requests;
  const save = async (): Promise<void> => {
    progress.requests = requestsBefore + (client.transport.requestsSent - requestsAtStart);
    progress.downloaded += ctx.downloads;
    ctx.downloads = 0;
    await saveProgress(progressFile, progress);
  };
  const told = (step: string, records: number): void =>
    deps.onEvent?.({ type: 'progress', step, records, requests: client.transport.requestsSent - requestsAtStart });
  const summary: BackupSummary = {
    files: {},
    attachments: { files: 0, bytes: 0, downloaded: 0 },
    since: progress.since,
    resumed,
    deleted: { parties: 0, opportunities: 0, kases: 0 },
    requests: 0,
    interrupted: false,
  };
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
          const query = { ...step.query, ...(step.since && ctx.since ? { since: ctx.since } : {}) };
          // A page is on disk, and the progress says so, before the next one counts.
          for await (const page of client.pages(step.path, step.key, RECORD, {
            query,
            signal: deps.signal,
            from: state.next,
          })) {
            state.bytes = await appendLines(file, page.records);
            state.records += page.records.length;
            state.next = page.next;
            // Done with its last page, in the same save: a run killed after it reads no page again.
            state.done = page.next === null;
            await save();
            told(step.name, state.records);
            deps.signal?.throwIfAborted();
          }
        } else {
          const targets = await step.targets(ctx);
          while (state.index < targets.length) {
            deps.signal?.throwIfAborted();
            const lines = await step.fetch(ctx, targets[state.index] as Target);
            state.bytes = await appendLines(file, lines);
            state.records += lines.length;
            state.index += 1;
            state.done = state.index >= targets.length;
            await save();
            told(step.name, state.records);
          }
        }
        state.done = true;
        await save();
      }
      if (ctx.since !== null) {
        const deleted: DeletedLine[] = [];
        for (const entity of SINCE_ENTITIES) {
          deps.signal?.throwIfAborted();
          for (const gone of await new RecordService(client).deleted(entity, ctx.since))
            deleted.push({ entity, id: gone.id, deletedAt: String(gone.deletedAt ?? '') });
        }
        await writeFileAtomic(join(work, 'deleted.jsonl'), deleted.map(jsonLine).join(''), { mode: BACKUP_FILE_MODE });
      }
      deps.signal?.throwIfAborted();
      // From here on the folder's files change: no manifest says they are complete until the new one.
      progress.phase = 'commit';
      await save();
    }
    await rm(manifestFile, { force: true });
    const deleted: DeletedLine[] = [];
    for await (const line of readWorkFile(join(work, 'deleted.jsonl'))) deleted.push(line as unknown as DeletedLine);
    for (const entity of SINCE_ENTITIES) summary.deleted[entity] = deleted.filter((d) => d.entity === entity).length;
    const files: Record<string, ManifestFile> = {};
    for (const step of steps)
      files[`${step.name}.jsonl`] = await commitFile(dir, work, step, ctx.since !== null, deleted);
    if (ctx.since !== null)
      files['deleted.jsonl'] = await commitFile(dir, work, { kind: 'list', name: 'deleted' }, false, []);
    else await rm(join(dir, 'deleted.jsonl'), { force: true });
    // Attachment files no entry refers to any more (entries deleted or changed) go.
    const kept = new Set<string>();
    for await (const line of readWorkFile(join(dir, 'attachments.jsonl'))) {
      kept.add(String(line.id));
      summary.attachments.files += 1;
      summary.attachments.bytes += Number(line.bytes);
    }
    for (const name of await readdir(join(dir, ATTACHMENTS_FOLDER)))
      if (!kept.has(name)) await rm(join(dir, ATTACHMENTS_FOLDER, name), { recursive: true, force: true });
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
    await writeFileAtomic(manifestFile, jsonText(manifest), { mode: BACKUP_FILE_MODE });
    await rm(progressFile, { force: true });
    await rm(work, { recursive: true, force: true });
    summary.files = files;
    summary.attachments.downloaded = progress.downloaded;
  } catch (error) {
    if (deps.signal?.aborted) {
      await save().catch(() => undefined);
      summary.interrupted = true;
    } else if (
      !(error instanceof FerryError) &&
      typeof (error as NodeJS.ErrnoException).code === 'string' &&
      typeof (error as NodeJS.ErrnoException).syscall === 'string'
    ) {
      // The disk, not crm-ferry: full, read-only, gone. What was recorded is kept for the next run.
      const failure = new FerryError('EXPORT_WRITE', `cannot write the backup in ${dir}: ${(error as Error).message}`, {
        location: { file: dir },
        cause: error,
        hint: 'Make room or give another --out folder; the same command continues the backup.',
      });
      failure.partial = { ...summary, requests: client.transport.requestsSent - requestsAtStart };
      throw failure;
    } else {
      // What was read before the failure is kept in the folder; the same call continues it.
      const failure = asFerryError(error, 'runBackup');
      failure.partial = { ...summary, requests: client.transport.requestsSent - requestsAtStart };
      throw failure;
    }
  }
  summary.requests = client.transport.requestsSent - requestsAtStart;
  return summary;
}
