import { randomUUID } from 'node:crypto';
import { FerryError } from '../errors/index.ts';
import type {
  AccessTokenRec,
  ActivityTypeRec,
  BoardRec,
  LostReasonRec,
  StageRec,
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
import { PartyIndex, type TableWatcher } from './party-index.ts';
import { BlobStore } from './storage/blobs.ts';

/** What a data file holds: the state of the account as written by Store.toJSON(). */
export interface StoreSnapshot {
  format: 'crm-ferry-sandbox/2' | 'crm-ferry-sandbox/1';
  seq: number;
  teamsEdition: boolean;
  tables: Record<string, { id: number }[]>;
  deleted: Record<'parties' | 'kases' | 'opportunities', DeletedRec[]>;
  jobs: JobRec[];
  uploads: UploadRec[];
  /** Ids of the blob files beside the state; an older format held the contents here, base64. */
  blobs: string[] | Record<string, string>;
  accessTokens: AccessTokenRec[];
  refreshTokens: RefreshTokenRec[];
  authCodes: AuthCodeRec[];
  oauthClients: OAuthClientRec[];
}

/**
 * Which records changed since the last commit to the change log. Inserts, puts and deletes are
 * always noted; a record fetched with `get()` is noted while a write is under way (`writes > 0`),
 * because route code changes the records it fetched in place. Code that changes a record it found
 * by walking a table calls `touch()`.
 */
export class ChangeTracker {
  /** Whether changes are noted at all: only a sandbox with a data file keeps a change log. */
  enabled = false;
  /** Writes (requests, job completions) under way; while above 0, fetched records count as changed. */
  writes = 0;
  /** Goes up with every change (or possible change) to any table: cached list results are keyed by it. */
  version = 0;
}

/** A table of records with integer ids, in insertion order (ids ascending). */
export class Table<T extends { id: number }> {
  private readonly rows = new Map<number, T>();
  private readonly changed = new Set<number>();
  private watcher: TableWatcher | null = null;

  constructor(
    private readonly nextId: () => number,
    private readonly tracker: ChangeTracker = new ChangeTracker(),
  ) {}

  get(id: number): T | undefined {
    const row = this.rows.get(id);
    if (row !== undefined && this.tracker.writes > 0) {
      this.tracker.version += 1;
      if (this.tracker.enabled) this.changed.add(id);
      this.watcher?.noted(id);
    }
    return row;
  }

  /** The record with this id, without counting it as changed (indexes reading what they were told of). */
  peek(id: number): T | undefined {
    return this.rows.get(id);
  }

  /** Tells `watcher` of every change from now on (one watcher per table). */
  watch(watcher: TableWatcher): void {
    this.watcher = watcher;
  }

  has(id: number): boolean {
    return this.rows.has(id);
  }

  /** Stores a record, giving it a fresh id. */
  insert(record: Omit<T, 'id'>): T {
    const stored = { ...record, id: this.nextId() } as T;
    this.rows.set(stored.id, stored);
    this.note(stored.id);
    return stored;
  }

  /** Stores a record with the id it carries (seeding, loading). */
  put(record: T): T {
    this.rows.set(record.id, record);
    this.note(record.id);
    return record;
  }

  delete(id: number): boolean {
    this.note(id);
    return this.rows.delete(id);
  }

  /** Marks a record found by walking the table as changed, so the change log carries it. */
  touch(record: T): void {
    this.note(record.id);
  }

  all(): T[] {
    return [...this.rows.values()];
  }

  /** The records in id order, without copying the table; stop early to pay only for what is read. */
  values(): IterableIterator<T> {
    return this.rows.values();
  }

  get size(): number {
    return this.rows.size;
  }

  clear(): void {
    this.rows.clear();
    this.changed.clear();
    this.watcher?.cleared();
  }

  /** The records changed since the last call (null: deleted), and forgets them. */
  takeChanges(): { upserts: T[]; deletes: number[] } | null {
    if (this.changed.size === 0) return null;
    const upserts: T[] = [];
    const deletes: number[] = [];
    for (const id of this.changed) {
      const row = this.rows.get(id);
      if (row === undefined) deletes.push(id);
      else upserts.push(row);
    }
    this.changed.clear();
    return { upserts, deletes };
  }

  private note(id: number): void {
    this.tracker.version += 1;
    if (this.tracker.enabled) this.changed.add(id);
    this.watcher?.noted(id);
  }
}

/** A keyed map of records (jobs, uploads, tokens) that notes its changes like Table does. */
export class TrackedMap<V> extends Map<string, V> {
  private readonly changed = new Set<string>();
  private tracker: ChangeTracker | undefined;

  /** Connects the map to the store's tracker (Map's constructor calls set() before fields exist). */
  track(tracker: ChangeTracker): this {
    this.tracker = tracker;
    return this;
  }

  override get(key: string): V | undefined {
    const value = super.get(key);
    if (value !== undefined && this.tracker?.enabled && this.tracker.writes > 0) this.changed.add(key);
    return value;
  }

  override set(key: string, value: V): this {
    super.set(key, value);
    if (this.tracker?.enabled) this.changed.add(key);
    return this;
  }

  override delete(key: string): boolean {
    if (this.tracker?.enabled) this.changed.add(key);
    return super.delete(key);
  }

  override clear(): void {
    super.clear();
    this.changed.clear();
  }

  /** Marks an entry found by walking the map as changed. */
  touch(key: string): void {
    if (this.tracker?.enabled) this.changed.add(key);
  }

  takeChanges(): { upserts: V[]; deletes: string[] } | null {
    if (this.changed.size === 0) return null;
    const upserts: V[] = [];
    const deletes: string[] = [];
    for (const key of this.changed) {
      const value = super.get(key);
      if (value === undefined) deletes.push(key);
      else upserts.push(value);
    }
    this.changed.clear();
    return { upserts, deletes };
  }
}

type DeletedTable = 'parties' | 'kases' | 'opportunities';
const DELETED_TABLES: DeletedTable[] = ['parties', 'kases', 'opportunities'];
const MAP_NAMES = ['jobs', 'uploads', 'accessTokens', 'refreshTokens', 'authCodes', 'oauthClients'] as const;
type MapName = (typeof MAP_NAMES)[number];

/** One record of the change log: what one commit changed. */
export interface ChangeRecord {
  seq: number;
  tables?: Record<string, { u: { id: number }[]; d: number[] }>;
  maps?: Partial<Record<MapName, { u: unknown[]; d: string[] }>>;
  deleted?: Partial<Record<DeletedTable, DeletedRec[]>>;
  blobs?: { added: string[]; removed: string[] };
}

/**
 * The whole state of one sandbox account. Route modules read and change it directly; with a data
 * file, the server writes what changed to the change log before answering a write.
 */
export class Store {
  /** One id sequence for all records, as ids are never reused. */
  private seq = 1000;
  readonly next = (): number => ++this.seq;
  readonly tracker = new ChangeTracker();

  readonly users = new Table<UserRec>(this.next, this.tracker);
  readonly teams = new Table<TeamRec>(this.next, this.tracker);
  readonly tags = new Table<TagRec>(this.next, this.tracker);
  readonly fieldDefinitions = new Table<FieldDefinitionRec>(this.next, this.tracker);
  readonly parties = new Table<PartyRec>(this.next, this.tracker);
  /** Finds parties by value (organisation by name, search, people of an organisation) without a walk. */
  readonly partyIndex = new PartyIndex(this.parties);
  readonly kases = new Table<KaseRec>(this.next, this.tracker);
  readonly opportunities = new Table<OpportunityRec>(this.next, this.tracker);
  readonly entries = new Table<EntryRec>(this.next, this.tracker);
  readonly tasks = new Table<TaskRec>(this.next, this.tracker);
  readonly taskCategories = new Table<TaskCategoryRec>(this.next, this.tracker);
  readonly pipelines = new Table<PipelineRec>(this.next, this.tracker);
  readonly milestones = new Table<MilestoneRec>(this.next, this.tracker);
  readonly trackDefinitions = new Table<TrackDefinitionRec>(this.next, this.tracker);
  readonly tracks = new Table<TrackRec>(this.next, this.tracker);
  readonly activityTypes = new Table<ActivityTypeRec>(this.next, this.tracker);
  readonly boards = new Table<BoardRec>(this.next, this.tracker);
  readonly stages = new Table<StageRec>(this.next, this.tracker);
  readonly lostReasons = new Table<LostReasonRec>(this.next, this.tracker);

  /** Deletion log per entity, for the `/deleted` lists. Only ever appended to. */
  readonly deleted: Record<DeletedTable, DeletedRec[]> = {
    parties: [],
    kases: [],
    opportunities: [],
  };
  /** How much of each deletion list the change log already holds. */
  private readonly deletedLogged: Record<DeletedTable, number> = { parties: 0, kases: 0, opportunities: 0 };

  readonly jobs = new TrackedMap<JobRec>().track(this.tracker);
  readonly uploads = new TrackedMap<UploadRec>().track(this.tracker);
  /** File contents of uploads and attachments, kept beside the data file (never inside it). */
  readonly blobs = new BlobStore();

  readonly accessTokens = new TrackedMap<AccessTokenRec>().track(this.tracker);
  readonly refreshTokens = new TrackedMap<RefreshTokenRec>().track(this.tracker);
  readonly authCodes = new TrackedMap<AuthCodeRec>().track(this.tracker);
  readonly oauthClients = new TrackedMap<OAuthClientRec>().track(this.tracker);

  /** How many scheduled jobs have completed since start; tells the server a read changed state. */
  completedJobs = 0;

  /** Whether the account is a teams edition (activity types can be created). */
  teamsEdition = true;

  newBlobId(): string {
    return randomUUID();
  }

  /** The last id given out. */
  get lastId(): number {
    return this.seq;
  }

  /** Moves the id sequence forward (never back), e.g. past ids a crashed run may have shown. */
  skipIds(to: number): void {
    if (to > this.seq) this.seq = to;
  }

  /** Runs a change that is not a request (a scheduled job) with fetched records counted as changed. */
  writing<T>(change: () => T): T {
    this.tracker.writes += 1;
    try {
      return change();
    } finally {
      this.tracker.writes -= 1;
    }
  }

  tables(): Record<string, Table<{ id: number }>> {
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
      boards: this.boards,
      stages: this.stages,
      lostReasons: this.lostReasons,
    };
  }

  private maps(): Record<MapName, TrackedMap<unknown>> {
    return {
      jobs: this.jobs,
      uploads: this.uploads,
      accessTokens: this.accessTokens,
      refreshTokens: this.refreshTokens,
      authCodes: this.authCodes,
      oauthClients: this.oauthClients,
    } as Record<MapName, TrackedMap<unknown>>;
  }

  /** What changed since the last call, as one change-log record; null when nothing did. */
  takeChanges(): ChangeRecord | null {
    const record: ChangeRecord = { seq: this.seq };
    let any = false;
    for (const [name, table] of Object.entries(this.tables())) {
      const changes = table.takeChanges();
      if (!changes) continue;
      (record.tables ??= {})[name] = { u: changes.upserts, d: changes.deletes };
      any = true;
    }
    for (const [name, map] of Object.entries(this.maps()) as [MapName, TrackedMap<unknown>][]) {
      const changes = map.takeChanges();
      if (!changes) continue;
      (record.maps ??= {})[name] = { u: changes.upserts, d: changes.deletes };
      any = true;
    }
    for (const name of DELETED_TABLES) {
      const list = this.deleted[name];
      if (list.length === this.deletedLogged[name]) continue;
      (record.deleted ??= {})[name] = list.slice(this.deletedLogged[name]);
      this.deletedLogged[name] = list.length;
      any = true;
    }
    const blobs = this.blobs.takeChanges();
    if (blobs) {
      record.blobs = blobs;
      any = true;
    }
    return any ? record : null;
  }

  /** Forgets pending changes (after a snapshot that holds them, or after loading). */
  forgetChanges(): void {
    const enabled = this.tracker.enabled;
    this.tracker.enabled = true;
    this.takeChanges();
    this.tracker.enabled = enabled;
  }

  /** Applies one change-log record on top of the loaded state (replay after a restart). */
  apply(record: ChangeRecord): void {
    this.skipIds(record.seq);
    const tables = this.tables();
    for (const [name, change] of Object.entries(record.tables ?? {})) {
      const table = tables[name];
      if (!table) throw new Error(`unknown table ${JSON.stringify(name)}`);
      for (const row of change.u) table.put(row);
      for (const id of change.d) table.delete(id);
    }
    const maps = this.maps();
    for (const [name, change] of Object.entries(record.maps ?? {}) as [MapName, { u: unknown[]; d: string[] }][]) {
      const map = maps[name];
      if (!map) throw new Error(`unknown map ${JSON.stringify(name)}`);
      for (const value of change.u) map.set(keyOf(name, value), value);
      for (const key of change.d) map.delete(key);
    }
    for (const [name, rows] of Object.entries(record.deleted ?? {}) as [DeletedTable, DeletedRec[]][]) {
      this.deleted[name].push(...rows);
      this.deletedLogged[name] = this.deleted[name].length;
    }
    for (const id of record.blobs?.added ?? []) this.blobs.adopt(id);
    for (const id of record.blobs?.removed ?? []) this.blobs.delete(id);
  }

  /**
   * The state as a JSON document, in pieces, so that a large store is written without building
   * one string of its whole size. Blob contents are not in it (they are files beside it).
   */
  *snapshotChunks(): Generator<string> {
    yield `{"format":${JSON.stringify(SNAPSHOT_FORMAT)},"seq":${this.seq},"teamsEdition":${this.teamsEdition},"tables":{`;
    let firstTable = true;
    for (const [name, table] of Object.entries(this.tables())) {
      yield `${firstTable ? '' : ','}${JSON.stringify(name)}:[`;
      firstTable = false;
      let batch: string[] = [];
      let first = true;
      for (const row of table.values()) {
        batch.push(JSON.stringify(row));
        if (batch.length === 1000) {
          yield (first ? '' : ',') + batch.join(',');
          first = false;
          batch = [];
        }
      }
      if (batch.length > 0) yield (first ? '' : ',') + batch.join(',');
      yield ']';
    }
    yield `},"deleted":${JSON.stringify(this.deleted)}`;
    for (const [name, map] of Object.entries(this.maps()))
      yield `,${JSON.stringify(name)}:${JSON.stringify([...map.values()])}`;
    yield `,"blobs":${JSON.stringify(this.blobs.ids())}}`;
  }

  /** A plain-JSON picture of the whole state (small stores, tests). */
  toJSON(): StoreSnapshot {
    return JSON.parse([...this.snapshotChunks()].join('')) as StoreSnapshot;
  }

  /** Replaces the state with one written by snapshotChunks() (or by an older sandbox, with blobs inside). */
  load(data: unknown, file: string): void {
    const state = checkSnapshot(data, file);
    this.seq = state.seq;
    this.teamsEdition = state.teamsEdition;
    for (const [name, table] of Object.entries(this.tables())) {
      table.clear();
      for (const row of state.tables[name] ?? []) table.put(row as never);
    }
    for (const name of DELETED_TABLES) {
      this.deleted[name] = [...(state.deleted[name] ?? [])];
      this.deletedLogged[name] = this.deleted[name].length;
    }
    const maps = this.maps();
    for (const name of MAP_NAMES) {
      maps[name].clear();
      for (const value of (state[name] ?? []) as unknown[]) maps[name].set(keyOf(name, value), value);
    }
    this.blobs.clear();
    if (Array.isArray(state.blobs)) for (const id of state.blobs) this.blobs.adopt(id);
    else
      for (const [id, base64] of Object.entries(state.blobs ?? {})) this.blobs.set(id, Buffer.from(base64, 'base64'));
  }
}

export const SNAPSHOT_FORMAT = 'crm-ferry-sandbox/2';
const OLD_FORMAT = 'crm-ferry-sandbox/1';

function keyOf(name: MapName, value: unknown): string {
  const v = value as Record<string, unknown>;
  const key = {
    jobs: v.id,
    uploads: v.token,
    accessTokens: v.token,
    refreshTokens: v.token,
    authCodes: v.code,
    oauthClients: v.clientId,
  }[name];
  if (typeof key !== 'string') throw new Error(`a ${name} entry without its key`);
  return key;
}

function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  return typeof value === 'object' ? 'an object' : `a ${typeof value}`;
}

/** Checks the shape of a state document, saying what is wrong and where. */
function checkSnapshot(data: unknown, file: string): StoreSnapshot {
  const damaged = (where: string, what: string): FerryError =>
    new FerryError('SANDBOX_STATE', `the sandbox data file is damaged: ${where} ${what}`, {
      location: { file, elementPath: where },
      hint: 'Restore the file from a copy, or start with --reset to begin from the seeded account.',
    });
  if (!data || typeof data !== 'object' || Array.isArray(data)) throw notOurs(file);
  const state = data as Record<string, unknown>;
  if (state.format !== SNAPSHOT_FORMAT && state.format !== OLD_FORMAT) throw notOurs(file);
  if (typeof state.seq !== 'number' || !Number.isInteger(state.seq))
    throw damaged('seq', `is ${describe(state.seq)}, not a whole number`);
  if (typeof state.teamsEdition !== 'boolean')
    throw damaged('teamsEdition', `is ${describe(state.teamsEdition)}, not true or false`);
  const list = (value: unknown, where: string, check: (row: Record<string, unknown>, at: string) => void): void => {
    if (!Array.isArray(value)) throw damaged(where, `is ${describe(value)}, not a list`);
    value.forEach((row: unknown, i) => {
      const at = `${where}[${i}]`;
      if (!row || typeof row !== 'object' || Array.isArray(row)) throw damaged(at, `is ${describe(row)}, not a record`);
      check(row as Record<string, unknown>, at);
    });
  };
  const withId = (row: Record<string, unknown>, at: string): void => {
    if (typeof row.id !== 'number' || !Number.isInteger(row.id))
      throw damaged(`${at}.id`, `is ${describe(row.id)}, not a whole number`);
  };
  const withKey =
    (key: string) =>
    (row: Record<string, unknown>, at: string): void => {
      if (typeof row[key] !== 'string') throw damaged(`${at}.${key}`, `is ${describe(row[key])}, not a string`);
    };
  const object = (value: unknown, where: string): Record<string, unknown> => {
    if (!value || typeof value !== 'object' || Array.isArray(value))
      throw damaged(where, `is ${describe(value)}, not an object`);
    return value as Record<string, unknown>;
  };
  const tables = object(state.tables, 'tables');
  const seq = state.seq;
  for (const [name, rows] of Object.entries(tables)) {
    const seen = new Map<number, number>();
    list(rows, `tables.${name}`, (row, at) => {
      withId(row, at);
      const id = row.id as number;
      // A record past the sequence would have its id given again to a new record.
      if (id > seq)
        throw damaged(`${at}.id`, `is ${id}, past the id sequence (seq ${seq}): a new record would get the same id`);
      const first = seen.get(id);
      if (first !== undefined) throw damaged(`${at}.id`, `repeats the id ${id} of tables.${name}[${first}]`);
      seen.set(id, seen.size);
    });
  }
  const deleted = object(state.deleted, 'deleted');
  for (const name of DELETED_TABLES) if (deleted[name] !== undefined) list(deleted[name], `deleted.${name}`, withId);
  const keys: Record<MapName, string> = {
    jobs: 'id',
    uploads: 'token',
    accessTokens: 'token',
    refreshTokens: 'token',
    authCodes: 'code',
    oauthClients: 'clientId',
  };
  for (const name of MAP_NAMES) if (state[name] !== undefined) list(state[name], name, withKey(keys[name]));
  if (state.format === OLD_FORMAT) {
    const blobs = object(state.blobs, 'blobs');
    for (const [id, value] of Object.entries(blobs)) {
      if (typeof value !== 'string' || !/^[A-Za-z0-9+/]*={0,2}$/.test(value))
        throw damaged(`blobs.${id}`, 'is not base64 text');
    }
  } else {
    if (!Array.isArray(state.blobs)) throw damaged('blobs', `is ${describe(state.blobs)}, not a list of blob ids`);
    state.blobs.forEach((id: unknown, i) => {
      if (typeof id !== 'string' || !BLOB_ID.test(id)) throw damaged(`blobs[${i}]`, 'is not a blob id');
    });
  }
  return state as unknown as StoreSnapshot;
}

/** Blob ids are UUIDs; checking them keeps a damaged file from naming paths outside the blob folder. */
export const BLOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

function notOurs(file: string): FerryError {
  return new FerryError('SANDBOX_STATE', 'the sandbox data file is not one the sandbox wrote', {
    location: { file },
    hint: 'Start with --reset to begin from the seeded account, or point --data at another file.',
  });
}
