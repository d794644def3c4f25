/**
 * What a backup reads, step by step: the configuration records refer to, the records, then what
 * needs a request per record (milestones per pipeline, additional parties per project, tracks of
 * the records that have track tasks, attachment files). A list step is read page by page through
 * the client's paginator; an each step asks one thing per target of an earlier step's file.
 */
import { join } from 'node:path';
import { z } from 'zod';
import { type CrmClient, EVERY_TASK_STATUS } from '../client/index.ts';
import { downloadAttachment } from './download.ts';
import { type KasePartyLine, SINCE_ENTITIES, type SinceEntity, type TrackLine } from './format.ts';
import { type Body, idOf } from './record-fields.ts';
import { readWorkFile } from './jsonl.ts';

/** A record of a list, kept as the interface gives it (every field, known or not). */
export const RECORD = z.record(z.string(), z.unknown());

/** What the steps of one run share. */
export interface StepContext {
  /** The backup folder. */
  dir: string;
  /** Its work folder (`.work`), where this run's pages are. */
  work: string;
  client: CrmClient;
  /** The time asked for as `since`, or null for a full read. */
  since: string | null;
  signal: AbortSignal | undefined;
  /** Attachment files downloaded since the progress was last saved. */
  downloads: number;
}

/** A list read page by page into one file. */
export interface ListStep {
  kind: 'list';
  name: string;
  path: string;
  /** The key of the list in the answer (`parties`). */
  key: string;
  query: Record<string, string>;
  /** Listed by `since` in an incremental run (and merged into the previous file by id). */
  since?: SinceEntity;
}

/** Requests made per record of an earlier step (links the lists do not carry). */
export interface EachStep {
  kind: 'each';
  name: string;
  /** The targets, read from the files of earlier steps (work files of this run). */
  targets: (ctx: StepContext) => Promise<Target[]>;
  fetch: (ctx: StepContext, target: Target) => Promise<unknown[]>;
}

export type Step = ListStep | EachStep;

export interface Target {
  entity: string;
  id: number;
  /** Extra data the fetch needs (an attachment's entry and name). */
  extra?: Body;
}

const list = (
  name: string,
  path: string,
  key: string,
  query: Record<string, string> = {},
  since?: SinceEntity,
): ListStep => ({ kind: 'list', name, path, key, query, ...(since ? { since } : {}) });

/** Every record of a list, through the client's paginator. */
async function readAll(
  ctx: StepContext,
  path: string,
  key: string,
  query: Record<string, string> = {},
): Promise<Body[]> {
  const all: Body[] = [];
  for await (const record of ctx.client.paginate(path, key, RECORD, { query, signal: ctx.signal })) all.push(record);
  return all;
}

/** The ids of the records of a work file, as targets. */
async function ids(file: string, entity: string): Promise<Target[]> {
  const out: Target[] = [];
  for await (const record of readWorkFile(file)) {
    const id = idOf(record);
    if (id !== null) out.push({ entity, id });
  }
  return out;
}

/** The steps of a backup, in order. */
export function backupSteps(): Step[] {
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
        return parties.flatMap((party): KasePartyLine[] => {
          const id = idOf(party);
          return id === null ? [] : [{ kase: { id: target.id }, party: { id } }];
        });
      },
    },
    {
      kind: 'each',
      name: 'tracks',
      // A track makes tasks (hasTrack) on its record: the records to ask are those of such tasks,
      // which saves a request on every record without one.
      targets: async (ctx) => {
        const seen = new Map<string, Target>();
        for await (const task of readWorkFile(join(ctx.work, 'tasks.jsonl'))) {
          if (task.hasTrack !== true) continue;
          for (const [key, entity] of [
            ['kase', 'kases'],
            ['opportunity', 'opportunities'],
            ['party', 'parties'],
          ] as const) {
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
        return tracks.map(
          (track): TrackLine => ({
            appliedTo: { entity: target.entity as SinceEntity, id: target.id },
            track: track as TrackLine['track'],
          }),
        );
      },
    },
    {
      kind: 'each',
      name: 'attachments',
      targets: async (ctx) => {
        const out: Target[] = [];
        for await (const entry of readWorkFile(join(ctx.work, 'entries.jsonl'))) {
          for (const attachment of (entry.attachments as Body[] | undefined) ?? []) {
            const id = idOf(attachment);
            if (id !== null)
              out.push({
                entity: 'attachments',
                id,
                extra: {
                  entryId: entry.id,
                  filename: attachment.filename,
                  contentType: attachment.contentType ?? null,
                },
              });
          }
        }
        return out;
      },
      fetch: async (ctx, target) => {
        const extra = target.extra ?? {};
        const { line, downloaded } = await downloadAttachment(ctx.client, ctx.dir, {
          id: target.id,
          entryId: Number(extra.entryId),
          filename: typeof extra.filename === 'string' ? extra.filename : String(target.id),
          contentType: typeof extra.contentType === 'string' ? extra.contentType : null,
        });
        if (downloaded) ctx.downloads += 1;
        return [line];
      },
    },
  );
  return steps;
}
