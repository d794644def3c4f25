/**
 * A backup folder opened for a restore. A backup comes from elsewhere (a customer's folder, a
 * shared drive) and is untrusted: before the restore sends its first request, every file the
 * manifest lists is checked against its SHA-256 and count, every line against a length cap and as
 * JSON, every attachment's path resolved inside the folder (no `..`, no absolute path, no link) and
 * its bytes checked against its SHA-256, and every attachment tied to an entry of the backup. A
 * check that fails is a SOURCE_UNREADABLE (or PATH_UNSAFE) error naming the file and line.
 */
import { createHash, type Hash } from 'node:crypto';
import { join } from 'node:path';
import type { z } from 'zod';
import { FerryError } from '../errors/index.ts';
import type { AccountCatalog, CatalogFieldDefinition, FieldEntity } from '../mapping/index.ts';
import { openInside, formatCount } from '../util/index.ts';
import {
  attachmentLineSchema,
  type AttachmentLine,
  kasePartyLineSchema,
  type Manifest,
  MANIFEST_FILE,
  manifestSchema,
  trackLineSchema,
} from './format.ts';
import { readJsonLines } from './jsonl.ts';
import { type Body, idOf, nameOf } from './record-fields.ts';

/** The largest manifest.json read: one holds a line per file of the folder. */
const MAX_MANIFEST_BYTES = 1024 * 1024;

/** An attachment of the backup, checked: its line and its file's path inside the folder. */
export type BackupAttachment = AttachmentLine & { path: string };

/** A complete backup folder, its manifest read and every file checked against it. */
export interface Backup {
  dir: string;
  manifest: Manifest;
  /** The records of one file of the folder (`parties.jsonl`), in order; none when the manifest lists no such file. */
  read(name: string): Promise<Array<Record<string, unknown>>>;
  /** The attachments, by id, each checked against its bytes. */
  attachments: ReadonlyMap<number, BackupAttachment>;
}

const HINT =
  'The backup was changed or damaged since it was made, or is not one crm-ferry wrote: restore from the folder as `crm-ferry backup` left it, or run the backup again.';

function refuse(
  dir: string,
  message: string,
  location: { file: string; line?: number } = { file: join(dir, MANIFEST_FILE) },
  cause?: unknown,
): FerryError {
  return new FerryError('SOURCE_UNREADABLE', `${dir} is not a backup crm-ferry can restore: ${message}`, {
    location,
    hint: HINT,
    ...(cause === undefined ? {} : { cause }),
  });
}

/** The same error with the line it is about (a refused path names the folder only). */
function atLine(error: unknown, file: string, line: number): unknown {
  if (!(error instanceof FerryError)) return error;
  return new FerryError(error.code, error.message, {
    location: { file, line },
    cause: error,
    ...(error.hint ? { hint: error.hint } : {}),
  });
}

/** Lines the restore reads through a schema of their own (the others are records: any object). */
const LINE_SCHEMAS: Readonly<Record<string, z.ZodType>> = {
  'attachments.jsonl': attachmentLineSchema,
  'kase-parties.jsonl': kasePartyLineSchema,
  'tracks.jsonl': trackLineSchema,
};

/**
 * Reads a file of the folder the manifest lists: every line checked (the cap, JSON, an object, the
 * schema of its kind), and at its end the bytes, lines and SHA-256 against the manifest's, so a
 * file replaced between the check and the read is refused as well. `each` is given every line.
 */
async function readListed(
  dir: string,
  manifest: Manifest,
  name: string,
  each: (value: Body, line: number) => void,
): Promise<void> {
  const expected = manifest.files[name];
  if (!expected) return;
  const context = { what: `manifest.json lists ${name}`, hint: HINT };
  let opened;
  try {
    opened = await openInside(dir, name, context);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw refuse(dir, `${name}, listed in manifest.json, is missing`, { file: join(dir, name) });
    throw error;
  }
  const file = opened.path;
  const hash: Hash = createHash('sha256');
  let bytes = 0;
  let records = 0;
  const schema = LINE_SCHEMAS[name];
  try {
    for await (const { line, value } of readJsonLines({
      file,
      handle: opened.handle,
      hint: HINT,
      onBytes: (chunk) => ((bytes += chunk.length), hash.update(chunk)),
    })) {
      records += 1;
      if (value === null || typeof value !== 'object' || Array.isArray(value))
        throw refuse(dir, `${name}, line ${line}: not a record (a JSON object)`, { file, line });
      if (schema) {
        const parsed = schema.safeParse(value);
        if (!parsed.success) {
          const issue = parsed.error.issues[0];
          throw refuse(
            dir,
            `${name}, line ${line}: ${issue?.path.join('.') || 'the line'}: ${issue?.message ?? 'not as a backup writes it'}`,
            { file, line },
          );
        }
      }
      each(value as Body, line);
    }
  } finally {
    await opened.handle.close();
  }
  if (bytes !== expected.bytes || hash.digest('hex') !== expected.sha256)
    throw refuse(dir, `${name} does not match its checksum in manifest.json (changed or damaged since the backup)`, {
      file,
    });
  if (records !== expected.records)
    throw refuse(dir, `${name} holds ${records} records, and manifest.json says ${expected.records}`, { file });
}

async function readManifest(dir: string): Promise<Manifest> {
  let text: string;
  try {
    const { handle } = await openInside(dir, MANIFEST_FILE, { what: 'the backup', hint: HINT });
    try {
      const size = (await handle.stat()).size;
      if (size > MAX_MANIFEST_BYTES)
        throw refuse(dir, `its manifest.json is ${formatCount(size)} bytes, more than a manifest holds`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (error) {
    if (error instanceof FerryError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') {
      throw new FerryError('SOURCE_UNREADABLE', `${dir} is not a complete backup: it has no manifest.json`, {
        location: { file: join(dir, MANIFEST_FILE) },
        hint: 'Give the folder of a backup that ended (crm-ferry backup --out DIR writes manifest.json last), or run that backup again to finish it.',
      });
    }
    throw refuse(dir, `its manifest.json cannot be read (${(error as Error).message})`, undefined, error);
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw refuse(dir, `its manifest.json is not JSON (${(error as Error).message})`, undefined, error);
  }
  const parsed = manifestSchema.safeParse(value);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    throw refuse(
      dir,
      `its manifest.json is not one of a crm-ferry backup (format crm-ferry-backup, version 1): ${issue?.path.join('.') || 'manifest'}: ${issue?.message ?? 'invalid'}`,
    );
  }
  return parsed.data;
}

/** Checks an attachment's file: inside the folder, a plain file, its bytes those the line says. */
async function checkAttachment(dir: string, line: AttachmentLine, at: { file: string; line: number }): Promise<string> {
  const context = { what: `attachments.jsonl, line ${at.line}`, hint: HINT };
  let opened;
  try {
    opened = await openInside(dir, line.file, context);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT')
      throw refuse(
        dir,
        `attachments.jsonl, line ${at.line}: the file ${line.file} of attachment ${line.id} is missing`,
        at,
      );
    throw atLine(error, at.file, at.line);
  }
  const hash = createHash('sha256');
  let bytes = 0;
  try {
    for await (const chunk of opened.handle.createReadStream({ autoClose: false })) {
      bytes += (chunk as Buffer).length;
      hash.update(chunk as Buffer);
    }
  } finally {
    await opened.handle.close();
  }
  if (bytes !== line.bytes || hash.digest('hex') !== line.sha256) {
    throw refuse(
      dir,
      `attachments.jsonl, line ${at.line}: the file ${line.file} is not the one backed up (its size or SHA-256 differs: changed since the backup)`,
      at,
    );
  }
  return opened.path;
}

/**
 * Opens a backup folder for reading, checking all of it first (see the top of this file): refuses
 * one without a manifest (a backup under way or killed), of another format or version, with a file
 * that does not match the manifest, or whose attachments are not what it says.
 */
export async function openBackup(dir: string): Promise<Backup> {
  const manifest = await readManifest(dir);
  /** Each entry's attachment ids, and the lines of attachments.jsonl. */
  const entries = new Map<number, number[]>();
  const lines: Array<{ line: number; attachment: AttachmentLine }> = [];
  for (const name of Object.keys(manifest.files)) {
    await readListed(dir, manifest, name, (record, line) => {
      if (name === 'attachments.jsonl') lines.push({ line, attachment: record as unknown as AttachmentLine });
      if (name !== 'entries.jsonl') return;
      const id = idOf(record);
      if (id !== null)
        entries.set(
          id,
          ((record.attachments as Body[] | undefined) ?? []).flatMap((a) =>
            idOf(a) === null ? [] : [idOf(a) as number],
          ),
        );
    });
  }
  const attachments = new Map<number, BackupAttachment>();
  const file = join(dir, 'attachments.jsonl');
  for (const { line, attachment } of lines) {
    if (!entries.get(attachment.entryId)?.includes(attachment.id)) {
      throw refuse(
        dir,
        `attachments.jsonl, line ${line}: attachment ${attachment.id} belongs to entry ${attachment.entryId}, which entries.jsonl does not hold with it`,
        { file, line },
      );
    }
    attachments.set(attachment.id, { ...attachment, path: await checkAttachment(dir, attachment, { file, line }) });
  }
  for (const [entry, ids] of entries) {
    const missing = ids.find((id) => !attachments.has(id));
    if (missing !== undefined)
      throw refuse(
        dir,
        `entries.jsonl: entry ${entry} has attachment ${missing}, which attachments.jsonl does not hold`,
        { file: join(dir, 'entries.jsonl') },
      );
  }
  return {
    dir,
    manifest,
    attachments,
    read: async (name) => {
      const out: Body[] = [];
      await readListed(dir, manifest, name, (record) => out.push(record));
      return out;
    },
  };
}

export { idOf, nameOf };

/** The names of the backed-up account, as the importer's catalog holds them (ids are the source account's). */
export async function catalogOfBackup(backup: Backup): Promise<AccountCatalog> {
  const definitions = async (entity: FieldEntity): Promise<CatalogFieldDefinition[]> =>
    (await backup.read(`field-definitions-${entity}.jsonl`)).map((d) => ({
      id: d.id as number,
      name: String(d.name),
      tag: typeof d.tag === 'string' ? d.tag : nameOf(d.tag),
      ...(typeof d.type === 'string' ? { type: d.type } : {}),
    }));
  const pipelines = await backup.read('pipelines.jsonl');
  const active = new Set(pipelines.map((p) => p.id as number));
  return {
    users: (await backup.read('users.jsonl')).map((u) => ({
      id: u.id as number,
      username: String(u.username),
      name: typeof u.name === 'string' ? u.name : undefined,
      email: typeof u.email === 'string' ? u.email : undefined,
    })),
    teams: (await backup.read('teams.jsonl')).map((t) => ({ id: t.id as number, name: String(t.name) })),
    // pipelines.jsonl holds the active ones (pipelines-all.jsonl the archived ones too).
    pipelines: pipelines.map((p) => ({ id: p.id as number, name: String(p.name) })),
    milestones: (await backup.read('milestones.jsonl'))
      .filter((m) => active.has(idOf(m.pipeline) ?? -1))
      .map((m) => {
        const pipeline = (m.pipeline as Body | undefined) ?? {};
        return {
          id: m.id as number,
          name: String(m.name),
          pipelineId: Number(pipeline.id),
          pipelineName: String(pipeline.name ?? ''),
        };
      }),
    activityTypes: (await backup.read('activity-types.jsonl')).map((a) => ({
      id: a.id as number,
      name: String(a.name),
    })),
    taskCategories: (await backup.read('task-categories.jsonl')).map((c) => ({
      id: c.id as number,
      name: String(c.name),
    })),
    fieldDefinitions: {
      parties: await definitions('parties'),
      kases: await definitions('kases'),
      opportunities: await definitions('opportunities'),
    },
    trackDefinitions: (await backup.read('track-definitions.jsonl')).map((t) => ({
      id: t.id as number,
      name: String(t.description),
    })),
  };
}

/** Something the backed-up account has and the target lacks, found by name. */
export interface MissingItem {
  kind:
    | 'user'
    | 'team'
    | 'custom field'
    | 'task category'
    | 'pipeline'
    | 'milestone'
    | 'activity type'
    | 'track definition';
  /** As the target would need it: `Industry (parties)`, `Sales / Won`. */
  name: string;
  /** Whether the interface can create it (set-up, issue 15); custom fields, categories, users and teams it cannot. */
  creatable: boolean;
}

/**
 * The configuration of the backup that the target lacks, by name (names are what records refer
 * to once ids are remapped). Users are found by username, full name or email address.
 */
export function missingConfiguration(source: AccountCatalog, target: AccountCatalog): MissingItem[] {
  const missing: MissingItem[] = [];
  const has = (names: Iterable<string>) => {
    const set = new Set([...names].map((n) => n.toLowerCase()));
    return (name: string) => set.has(name.toLowerCase());
  };
  const userKnown = has(target.users.flatMap((u) => [u.username, u.name ?? '', u.email ?? ''].filter(Boolean)));
  for (const user of source.users)
    if (!userKnown(user.username) && !(user.name && userKnown(user.name)))
      missing.push({
        kind: 'user',
        name: user.name ? `${user.name} (${user.username})` : user.username,
        creatable: false,
      });
  const teamKnown = has((target.teams ?? []).map((t) => t.name));
  if (target.teams !== null)
    for (const team of source.teams ?? [])
      if (!teamKnown(team.name)) missing.push({ kind: 'team', name: team.name, creatable: false });
  for (const entity of ['parties', 'opportunities', 'kases'] as const) {
    const known = has(target.fieldDefinitions[entity].map((d) => `${d.tag ?? ''}\u0000${d.name}`));
    for (const d of source.fieldDefinitions[entity])
      if (!known(`${d.tag ?? ''}\u0000${d.name}`))
        missing.push({
          kind: 'custom field',
          name: `${d.name}${d.tag ? ` (data tag ${d.tag})` : ''} of ${entity}`,
          creatable: false,
        });
  }
  const categoryKnown = has(target.taskCategories.map((c) => c.name));
  for (const c of source.taskCategories)
    if (!categoryKnown(c.name)) missing.push({ kind: 'task category', name: c.name, creatable: false });
  const pipelineKnown = has(target.pipelines.map((p) => p.name));
  for (const p of source.pipelines)
    if (!pipelineKnown(p.name)) missing.push({ kind: 'pipeline', name: p.name, creatable: true });
  const milestoneKnown = has(target.milestones.map((m) => `${m.pipelineName}\u0000${m.name}`));
  for (const m of source.milestones)
    if (!milestoneKnown(`${m.pipelineName}\u0000${m.name}`))
      missing.push({ kind: 'milestone', name: `${m.pipelineName} / ${m.name}`, creatable: true });
  const typeKnown = has(target.activityTypes.map((a) => a.name));
  for (const a of source.activityTypes)
    if (!typeKnown(a.name)) missing.push({ kind: 'activity type', name: a.name, creatable: true });
  const trackKnown = has(target.trackDefinitions.map((t) => t.name));
  for (const t of source.trackDefinitions)
    if (!trackKnown(t.name)) missing.push({ kind: 'track definition', name: t.name, creatable: true });
  return missing;
}
