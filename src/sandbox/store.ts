import { randomUUID } from 'node:crypto';
import { mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { FerryError } from '../errors/index.ts';
import type {
  AccessTokenRec,
  ActivityTypeRec,
  AuthCodeRec,
  DeletedRec,
  EntryRec,
  FieldDefinitionRec,
  JobRec,
  KaseRec,
  MilestoneRec,
  OAuthClientRec,
  OpportunityRec,
  PartyRec,
  PipelineRec,
  RefreshTokenRec,
  TagRec,
  TaskCategoryRec,
  TaskRec,
  TeamRec,
  TrackDefinitionRec,
  TrackRec,
  UploadRec,
  UserRec,
} from './model.ts';

/** What a data file holds: the state of the account as written by Store.toJSON(). */
export interface StoreSnapshot {
  format: 'crm-ferry-sandbox/1';
  seq: number;
  teamsEdition: boolean;
  tables: Record<string, { id: number }[]>;
  deleted: Record<'parties' | 'kases' | 'opportunities', DeletedRec[]>;
  jobs: JobRec[];
  uploads: UploadRec[];
  blobs: Record<string, string>;
  accessTokens: AccessTokenRec[];
  refreshTokens: RefreshTokenRec[];
  authCodes: AuthCodeRec[];
  oauthClients: OAuthClientRec[];
}

/** A table of records with integer ids, in insertion order. */
export class Table<T extends { id: number }> {
  private readonly rows = new Map<number, T>();

  constructor(private readonly nextId: () => number) {}

  get(id: number): T | undefined {
    return this.rows.get(id);
  }

  has(id: number): boolean {
    return this.rows.has(id);
  }

  /** Stores a record, giving it a fresh id. */
  insert(record: Omit<T, 'id'>): T {
    const stored = { ...record, id: this.nextId() } as T;
    this.rows.set(stored.id, stored);
    return stored;
  }

  /** Stores a record with the id it carries (seeding, loading). */
  put(record: T): T {
    this.rows.set(record.id, record);
    return record;
  }

  delete(id: number): boolean {
    return this.rows.delete(id);
  }

  all(): T[] {
    return [...this.rows.values()];
  }

  get size(): number {
    return this.rows.size;
  }

  clear(): void {
    this.rows.clear();
  }
}

/**
 * The whole state of one sandbox account. Route modules read and change it directly; the server
 * persists it after every write when a data file is set.
 */
export class Store {
  /** One id sequence for all records, as ids are never reused. */
  private seq = 1000;
  readonly next = (): number => ++this.seq;

  readonly users = new Table<UserRec>(this.next);
  readonly teams = new Table<TeamRec>(this.next);
  readonly tags = new Table<TagRec>(this.next);
  readonly fieldDefinitions = new Table<FieldDefinitionRec>(this.next);
  readonly parties = new Table<PartyRec>(this.next);
  readonly kases = new Table<KaseRec>(this.next);
  readonly opportunities = new Table<OpportunityRec>(this.next);
  readonly entries = new Table<EntryRec>(this.next);
  readonly tasks = new Table<TaskRec>(this.next);
  readonly taskCategories = new Table<TaskCategoryRec>(this.next);
  readonly pipelines = new Table<PipelineRec>(this.next);
  readonly milestones = new Table<MilestoneRec>(this.next);
  readonly trackDefinitions = new Table<TrackDefinitionRec>(this.next);
  readonly tracks = new Table<TrackRec>(this.next);
  readonly activityTypes = new Table<ActivityTypeRec>(this.next);

  /** Deletion log per entity, for the `/deleted` lists. */
  readonly deleted: Record<'parties' | 'kases' | 'opportunities', DeletedRec[]> = {
    parties: [],
    kases: [],
    opportunities: [],
  };

  readonly jobs = new Map<string, JobRec>();
  readonly uploads = new Map<string, UploadRec>();
  /** File contents of uploads and attachments, base64 in the data file. */
  readonly blobs = new Map<string, Buffer>();

  readonly accessTokens = new Map<string, AccessTokenRec>();
  readonly refreshTokens = new Map<string, RefreshTokenRec>();
  readonly authCodes = new Map<string, AuthCodeRec>();
  readonly oauthClients = new Map<string, OAuthClientRec>();

  /** How many scheduled jobs have completed since start; tells the server a read changed state. */
  completedJobs = 0;

  /** Whether the account is a teams edition (activity types can be created). */
  teamsEdition = true;

  newBlobId(): string {
    return randomUUID();
  }

  private tables(): Record<string, Table<{ id: number }>> {
    return {
      users: this.users,
      teams: this.teams,
      tags: this.tags,
      fieldDefinitions: this.fieldDefinitions,
      parties: this.parties,
      kases: this.kases,
      opportunities: this.opportunities,
      entries: this.entries,
      tasks: this.tasks,
      taskCategories: this.taskCategories,
      pipelines: this.pipelines,
      milestones: this.milestones,
      trackDefinitions: this.trackDefinitions,
      tracks: this.tracks,
      activityTypes: this.activityTypes,
    };
  }

  /** A plain-JSON picture of the whole state. */
  toJSON(): StoreSnapshot {
    const tables: Record<string, { id: number }[]> = {};
    for (const [name, table] of Object.entries(this.tables())) tables[name] = table.all();
    return {
      format: 'crm-ferry-sandbox/1',
      seq: this.seq,
      teamsEdition: this.teamsEdition,
      tables,
      deleted: this.deleted,
      jobs: [...this.jobs.values()],
      uploads: [...this.uploads.values()],
      blobs: Object.fromEntries([...this.blobs].map(([k, v]) => [k, v.toString('base64')])),
      accessTokens: [...this.accessTokens.values()],
      refreshTokens: [...this.refreshTokens.values()],
      authCodes: [...this.authCodes.values()],
      oauthClients: [...this.oauthClients.values()],
    };
  }

  /** Replaces the state with one written by toJSON(). */
  load(data: unknown, file: string): void {
    const state = data as StoreSnapshot;
    if (!state || typeof state !== 'object' || state.format !== 'crm-ferry-sandbox/1') {
      throw new FerryError('SANDBOX_STATE', 'the sandbox data file is not one the sandbox wrote', {
        location: { file },
        hint: 'Start with --reset to begin from the seeded account, or point --data at another file.',
      });
    }
    this.seq = state.seq;
    this.teamsEdition = state.teamsEdition;
    for (const [name, table] of Object.entries(this.tables())) {
      table.clear();
      for (const row of state.tables[name] ?? []) table.put(row as never);
    }
    this.deleted.parties = state.deleted.parties;
    this.deleted.kases = state.deleted.kases;
    this.deleted.opportunities = state.deleted.opportunities;
    const fill = <V>(map: Map<string, V>, rows: V[], key: (v: V) => string): void => {
      map.clear();
      for (const row of rows) map.set(key(row), row);
    };
    fill(this.jobs, state.jobs, (j) => j.id);
    fill(this.uploads, state.uploads, (u) => u.token);
    fill(this.accessTokens, state.accessTokens, (t) => t.token);
    fill(this.refreshTokens, state.refreshTokens, (t) => t.token);
    fill(this.authCodes, state.authCodes, (c) => c.code);
    fill(this.oauthClients, state.oauthClients, (c) => c.clientId);
    this.blobs.clear();
    for (const [k, v] of Object.entries(state.blobs)) this.blobs.set(k, Buffer.from(v, 'base64'));
  }
}

/** Writes the state atomically: a temporary file beside the target, then a rename. */
export async function saveStore(store: Store, file: string): Promise<void> {
  await mkdir(dirname(file), { recursive: true });
  const temp = `${file}.${process.pid}.${randomUUID()}.tmp`;
  await writeFile(temp, JSON.stringify(store.toJSON()));
  await rename(temp, file);
}

/** Loads state from a file; returns false when the file does not exist. */
export async function loadStore(store: Store, file: string): Promise<boolean> {
  let text: string;
  try {
    text = await readFile(file, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return false;
    throw new FerryError('SANDBOX_STATE', `cannot read the sandbox data file: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (error) {
    throw new FerryError('SANDBOX_STATE', 'the sandbox data file is not valid JSON', {
      location: { file },
      cause: error,
      hint: 'Start with --reset to begin from the seeded account.',
    });
  }
  store.load(data, file);
  return true;
}
