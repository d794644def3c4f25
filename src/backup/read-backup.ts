import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { createInterface } from 'node:readline';
import { FerryError } from '../errors/index.ts';
import type { AccountCatalog, CatalogFieldDefinition, FieldEntity } from '../mapping/index.ts';
import { BACKUP_FORMAT, BACKUP_VERSION, MANIFEST_FILE, type Manifest } from './format.ts';

type Body = Record<string, unknown>;

/** A complete backup folder, its manifest read and every file checked against it. */
export interface Backup {
  dir: string;
  manifest: Manifest;
  /** The records of one file of the folder (`parties.jsonl`), in order. */
  read(name: string): Promise<Body[]>;
}

function refuse(dir: string, message: string, file = join(dir, MANIFEST_FILE)): FerryError {
  return new FerryError('SOURCE_UNREADABLE', `${dir} is not a complete backup: ${message}`, { location: { file }, hint: 'Give the folder of a backup that ended (crm-ferry backup --out DIR writes manifest.json last), or run that backup again to finish it.' });
}

async function linesOf(file: string): Promise<Body[]> {
  const out: Body[] = [];
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    line += 1;
    if (text.trim() === '') continue;
    try {
      out.push(JSON.parse(text) as Body);
    } catch (error) {
      throw new FerryError('SOURCE_UNREADABLE', `${file}, line ${line}: not JSON (${(error as Error).message})`, { location: { file, row: line } });
    }
  }
  return out;
}

/**
 * Opens a backup folder for reading: refuses one without a manifest (a backup under way or
 * killed), of another format or version, or whose files do not match their checksums.
 */
export async function openBackup(dir: string): Promise<Backup> {
  let manifest: Manifest;
  try {
    manifest = JSON.parse(await readFile(join(dir, MANIFEST_FILE), 'utf8')) as Manifest;
  } catch (error) {
    throw refuse(dir, (error as NodeJS.ErrnoException).code === 'ENOENT' ? 'it has no manifest.json' : `its manifest.json cannot be read (${(error as Error).message})`);
  }
  if (manifest?.format !== BACKUP_FORMAT || manifest.version !== BACKUP_VERSION || typeof manifest.files !== 'object') {
    throw refuse(dir, `its manifest.json is not of format ${BACKUP_FORMAT} version ${BACKUP_VERSION}`);
  }
  for (const [name, expected] of Object.entries(manifest.files)) {
    const hash = createHash('sha256');
    try {
      for await (const chunk of createReadStream(join(dir, name))) hash.update(chunk as Buffer);
    } catch (error) {
      throw refuse(dir, `${name} cannot be read (${(error as Error).message})`, join(dir, name));
    }
    if (hash.digest('hex') !== expected.sha256) throw refuse(dir, `${name} does not match its checksum in manifest.json (changed or damaged since the backup)`, join(dir, name));
  }
  return {
    dir,
    manifest,
    read: async (name) => {
      if (!manifest.files[name]) return [];
      return linesOf(join(dir, name));
    },
  };
}

/** The id of a linked record as the interface gives it (`{id, ...}`), or null. */
export const idOf = (value: unknown): number | null => {
  const id = value && typeof value === 'object' ? (value as Body).id : undefined;
  return typeof id === 'number' ? id : null;
};

/** The name of a linked record as the interface gives it (`{name, ...}`), or null. */
export const nameOf = (value: unknown): string | null => {
  const name = value && typeof value === 'object' ? (value as Body).name : undefined;
  return typeof name === 'string' ? name : null;
};

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
    users: (await backup.read('users.jsonl')).map((u) => ({ id: u.id as number, username: String(u.username), name: typeof u.name === 'string' ? u.name : undefined, email: typeof u.email === 'string' ? u.email : undefined })),
    teams: (await backup.read('teams.jsonl')).map((t) => ({ id: t.id as number, name: String(t.name) })),
    // pipelines.jsonl holds the active ones (pipelines-all.jsonl the archived ones too).
    pipelines: pipelines.map((p) => ({ id: p.id as number, name: String(p.name) })),
    milestones: (await backup.read('milestones.jsonl')).filter((m) => active.has(idOf(m.pipeline) ?? -1)).map((m) => {
      const pipeline = (m.pipeline as Body | undefined) ?? {};
      return { id: m.id as number, name: String(m.name), pipelineId: Number(pipeline.id), pipelineName: String(pipeline.name ?? '') };
    }),
    activityTypes: (await backup.read('activity-types.jsonl')).map((a) => ({ id: a.id as number, name: String(a.name) })),
    taskCategories: (await backup.read('task-categories.jsonl')).map((c) => ({ id: c.id as number, name: String(c.name) })),
    fieldDefinitions: { parties: await definitions('parties'), kases: await definitions('kases'), opportunities: await definitions('opportunities') },
    trackDefinitions: (await backup.read('track-definitions.jsonl')).map((t) => ({ id: t.id as number, name: String(t.description) })),
  };
}

/** Something the backed-up account has and the target lacks, found by name. */
export interface MissingItem {
  kind: 'user' | 'team' | 'custom field' | 'task category' | 'pipeline' | 'milestone' | 'activity type' | 'track definition';
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
  for (const user of source.users) if (!userKnown(user.username) && !(user.name && userKnown(user.name))) missing.push({ kind: 'user', name: user.name ? `${user.name} (${user.username})` : user.username, creatable: false });
  const teamKnown = has((target.teams ?? []).map((t) => t.name));
  if (target.teams !== null) for (const team of source.teams ?? []) if (!teamKnown(team.name)) missing.push({ kind: 'team', name: team.name, creatable: false });
  for (const entity of ['parties', 'opportunities', 'kases'] as const) {
    const known = has(target.fieldDefinitions[entity].map((d) => `${d.tag ?? ''}\u0000${d.name}`));
    for (const d of source.fieldDefinitions[entity]) if (!known(`${d.tag ?? ''}\u0000${d.name}`)) missing.push({ kind: 'custom field', name: `${d.name}${d.tag ? ` (data tag ${d.tag})` : ''} of ${entity}`, creatable: false });
  }
  const categoryKnown = has(target.taskCategories.map((c) => c.name));
  for (const c of source.taskCategories) if (!categoryKnown(c.name)) missing.push({ kind: 'task category', name: c.name, creatable: false });
  const pipelineKnown = has(target.pipelines.map((p) => p.name));
  for (const p of source.pipelines) if (!pipelineKnown(p.name)) missing.push({ kind: 'pipeline', name: p.name, creatable: true });
  const milestoneKnown = has(target.milestones.map((m) => `${m.pipelineName}\u0000${m.name}`));
  for (const m of source.milestones) if (!milestoneKnown(`${m.pipelineName}\u0000${m.name}`)) missing.push({ kind: 'milestone', name: `${m.pipelineName} / ${m.name}`, creatable: true });
  const typeKnown = has(target.activityTypes.map((a) => a.name));
  for (const a of source.activityTypes) if (!typeKnown(a.name)) missing.push({ kind: 'activity type', name: a.name, creatable: true });
  const trackKnown = has(target.trackDefinitions.map((t) => t.name));
  for (const t of source.trackDefinitions) if (!trackKnown(t.name)) missing.push({ kind: 'track definition', name: t.name, creatable: true });
  return missing;
}
