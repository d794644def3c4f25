/**
 * verify's reading: what the account holds for the runs' rows (by id, a filter page at a time
 * where the kind has one) and what was added there by hand since the first run.
 */
import { RecordService } from '../client/index.ts';
import { type LoadedJournal, readJournal, type RowState } from '../journal/index.ts';
import { WriteSlots } from '../load/index.ts';
import { type Entity } from '../mapping/index.ts';
import { IdSet } from '../util/index.ts';
import { type Body, VERIFY_BATCH, type StepCheck } from './types.ts';

/** Kinds the structured filter can fetch by id, a page at a time; the others are read one GET each. */
const FILTERABLE: ReadonlySet<Entity> = new Set(['party', 'kase', 'opportunity']);

/** The requests that reading `count` records of `entity` takes. */
export function requestsToRead(entity: Entity, count: number): number {
  return FILTERABLE.has(entity) ? Math.ceil(count / VERIFY_BATCH) : count;
}

/** The row of `key` when the journal holds a record id for it: what the account should have. */
export function idRow(journal: LoadedJournal, key: string): (RowState & { id: number }) | undefined {
  const row = journal.rows.get(key);
  return row && row.id !== null ? (row as RowState & { id: number }) : undefined;
}

/** How many rows of the journal hold a record id (a walk: the journal's rows are not a list kept twice). */
export function idCount(journal: LoadedJournal): number {
  let count = 0;
  for (const row of journal.rows.values()) if (row.id !== null) count += 1;
  return count;
}

/** When a journal's first run began: its first line's time. */
export async function firstRunTime(file: string): Promise<Date | null> {
  for await (const entry of readJournal(file)) {
    const at = Date.parse(entry.at);
    return Number.isNaN(at) ? null : new Date(at);
  }
  return null;
}

/**
 * How many of the account's notes or tasks are listed when looking for ones added by hand: the
 * interface lists neither by \`since\`, so the whole list is read, 100 a request, but never more
 * than a request for every 100 the runs wrote and one more; reading those records by id costs a
 * request each already, so the look costs at most a hundredth more.
 */
export function listingCap(written: number): number {
  return (Math.ceil(written / VERIFY_BATCH) + 1) * VERIFY_BATCH;
}

/**
 * Whether a record of the account can have been added by a person (or another program) rather
 * than by the service itself: an e-mail entry arrives by mail, a `task` entry is the record of a
 * completed task, and a task with `hasTrack` came with a track applied to its record.
 */
function ownedByPeople(entity: Entity, record: Body): boolean {
  if (entity === 'entry') return record.type === 'note';
  if (entity === 'task') return record.hasTrack !== true;
  return true;
}

/** What readAdded found: records added by hand per kind, and the kinds whose list was cut at the cap. */
interface Added {
  records: Map<Entity, Body[]>;
  /** Notes or tasks listed up to the cap with more perhaps beyond: the number looked at. */
  cut: Map<'entry' | 'task', number>;
}

/**
 * Records of the kinds the steps write that the account created since the first run began and
 * that no run wrote: added by hand, or by something else, while the migration was under way or
 * after it. Parties, projects and opportunities are read with \`since\`, 100 a request; notes and
 * tasks by listing them all, up to listingCap (see ownedByPeople for those the service makes).
 */
export async function readAdded(service: RecordService, checks: readonly StepCheck[]): Promise<Added> {
  const added: Added = { records: new Map(), cut: new Map() };
  for (const entity of ['party', 'kase', 'opportunity', 'entry', 'task'] as const) {
    const mine = checks.filter((check) => check.entity === entity);
    const began = mine
      .map((check) => check.began?.getTime() ?? Number.POSITIVE_INFINITY)
      .reduce((a, b) => Math.min(a, b), Number.POSITIVE_INFINITY);
    if (mine.length === 0 || !Number.isFinite(began)) continue;
    const known = new IdSet();
    for (const check of mine) for (const row of check.journal.rows.values()) if (row.id !== null) known.add(row.id);
    const found: Body[] = [];
    const listed = entity === 'entry' || entity === 'task';
    const cap = listingCap(known.size);
    let seen = 0;
    for await (const record of listed ? service.listAll(entity) : service.changedSince(entity, new Date(began))) {
      seen += 1;
      if (typeof record.id === 'number' && !known.has(record.id) && ownedByPeople(entity, record)) {
        const created = typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN;
        // Changed since, but there before: an edit of the account's own record is not for verify
        // to judge. Compared in whole seconds, as the service gives its times: a record made in the
        // second the run began is reported rather than passed over.
        if (!Number.isNaN(created) && created >= Math.floor(began / 1000) * 1000) found.push(record);
      }
      if (listed && seen >= cap) {
        added.cut.set(entity, seen);
        break;
      }
    }
    added.records.set(entity, found);
  }
  return added;
}

/**
 * The step a record added by hand is listed under: the step of its kind whose rows have its party
 * type (a person added by hand is no business of a plan that writes only organisations), else,
 * for kinds without a type, the first step of its kind.
 */
export function stepFor(record: Body, checks: readonly StepCheck[], entity: Entity): StepCheck | undefined {
  const mine = checks.filter((check) => check.entity === entity);
  if (entity === 'entry' || entity === 'task') {
    // A note or task goes under the step that writes them on the kind of record it is on.
    const on = (['party', 'kase', 'opportunity'] as const).find(
      (kind) => record[kind] !== undefined && record[kind] !== null,
    );
    return (
      mine.find((check) => on !== undefined && check.prepared.mapping.fields.some((field) => field.to === on)) ??
      mine[0]
    );
  }
  if (typeof record.type === 'string') return mine.find((check) => check.types.has(record.type as string));
  return mine[0];
}

/** A record's name, as a person would look for it in the account. */
export function nameOf(record: Body): string {
  // A note or task by the start of its text.
  const text =
    typeof record.content === 'string'
      ? record.content
      : typeof record.description === 'string'
        ? record.description
        : null;
  if (text !== null && text.trim() !== '') {
    const line = text.trim().split('\n')[0] as string;
    return `"${line.length > 60 ? `${line.slice(0, 59)}…` : line}"`;
  }
  const name =
    typeof record.name === 'string'
      ? record.name
      : [record.firstName, record.lastName].filter((part) => typeof part === 'string' && part !== '').join(' ');
  return name === '' ? `record ${String(record.id)}` : name;
}

/** Reads the records of the ids, a filter page of 100 at a time where the entity has a filter, else one GET each. */
export async function readRecords(
  service: RecordService,
  entity: Entity,
  ids: number[],
  limit: WriteSlots,
): Promise<Map<number, Body>> {
  const found = new Map<number, Body>();
  if (FILTERABLE.has(entity)) {
    const batches: number[][] = [];
    for (let i = 0; i < ids.length; i += VERIFY_BATCH) batches.push(ids.slice(i, i + VERIFY_BATCH));
    await Promise.all(
      batches.map((batch) =>
        limit.run(async () => {
          const conditions = [{ orGroup: batch.map((id) => ({ field: 'id', operator: 'is', value: id })) }];
          for await (const record of service.filter(entity as 'party', conditions))
            if (typeof record.id === 'number') found.set(record.id, record);
        }),
      ),
    );
    return found;
  }
  await Promise.all(
    ids.map((id) =>
      limit.run(async () => {
        const record = await service.read(entity, id);
        if (record !== null) found.set(id, record);
      }),
    ),
  );
  return found;
}

/** A record asked for: its query sent (or still waiting for more ids), and its answer (undefined: not in the account). */
export interface Wanted {
  id: number;
  sent: boolean;
  record: Promise<Body | undefined>;
}

/**
 * The account's records as a step's comparison asks for them: ids gathered into queries of a
 * page (VERIFY_BATCH) where the kind has a filter, else read one GET each; each record handed to
 * the one row that asked for it and then let go.
 */
export class RecordWindow {
  #batch: Array<{ wanted: Wanted; answer(record: Body | undefined): void; fail(error: unknown): void }> = [];

  constructor(
    private readonly service: RecordService,
    private readonly entity: Entity,
    private readonly limit: WriteSlots,
  ) {}

  want(id: number): Wanted {
    let answer!: (record: Body | undefined) => void;
    let fail!: (error: unknown) => void;
    const record = new Promise<Body | undefined>((ok, no) => ((answer = ok), (fail = no)));
    // Awaited when its row's turn comes: a failure before then is not an unhandled one.
    record.catch(() => undefined);
    const wanted: Wanted = { id, sent: false, record };
    this.#batch.push({ wanted, answer, fail });
    if (this.#batch.length >= (FILTERABLE.has(this.entity) ? VERIFY_BATCH : 1)) this.flush();
    return wanted;
  }

  /** A record asked for and sent at once. */
  wantNow(id: number): Promise<Body | undefined> {
    const wanted = this.want(id);
    this.flush();
    return wanted.record;
  }

  /** Sends the ids gathered. */
  flush(): void {
    const batch = this.#batch;
    if (batch.length === 0) return;
    this.#batch = [];
    for (const item of batch) item.wanted.sent = true;
    readRecords(
      this.service,
      this.entity,
      batch.map((item) => item.wanted.id),
      this.limit,
    ).then(
      (found) => {
        for (const item of batch) item.answer(found.get(item.wanted.id));
      },
      (error: unknown) => {
        for (const item of batch) item.fail(error);
      },
    );
  }
}
