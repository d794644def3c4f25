import { z } from 'zod';
import { ApiError, type ApiRequest, type CrmClient, EVERY_TASK_STATUS } from '../client/index.ts';
import type { Entity } from '../mapping/index.ts';
import type { AttachmentFile } from './attachments.ts';
import { ENTITY_API, signatureOf } from './records.ts';

type Body = Record<string, unknown>;

/** A record of a list as the interface gives it, every field kept. */
const ANY_RECORD = z.record(z.string(), z.unknown());

/** A create whose answer never came: what was sent, and when. */
export interface UnconfirmedCreate {
  key: string;
  body: Body;
  /** When the intent was written (ISO time). */
  at: string;
}

/** How far before an unconfirmed create to look for it: covers clock differences with the service. */
const LOOKBACK_MS = 10 * 60_000;

/** When the service says a record was created (ms), NaN when it does not say. */
function createdTime(record: Body): number {
  return typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN;
}

/**
 * The writes the importer makes, one request each where the interface allows. Requests wait for
 * the rate governor under `stop` (Ctrl-C ends the wait), but a request that has been sent is
 * never cut off: its fate would be unknown.
 */
export class RecordService {
  constructor(
    private readonly client: CrmClient,
    private readonly stop?: AbortSignal,
  ) {}

  get origin(): string {
    return this.client.transport.origin;
  }

  /** The record's address in the interface, for the success file. */
  urlOf(entity: Entity, id: number): string {
    return `${this.origin}/api/v2${ENTITY_API[entity].path}/${id}`;
  }

  /**
   * Waits before looking up a write whose answer was lost for the `attempt`th time: the
   * transport's backoff, so that a service that is failing gets time to come back.
   */
  pause(attempt: number): Promise<void> {
    return this.client.transport.backoff(attempt, this.stop);
  }

  private request(request: ApiRequest) {
    if (this.stop) request.waitSignal = this.stop;
    return this.client.transport.request(request);
  }

  private idFrom(entity: Entity, body: unknown, method: string, path: string): number {
    const record = (body as Body | null)?.[ENTITY_API[entity].one] as Body | undefined;
    const id = record?.id;
    if (typeof id !== 'number') throw new ApiError('API_RESPONSE_INVALID', `the answer has no ${ENTITY_API[entity].one}.id`, { method, path });
    return id;
  }

  /** Uploads each file with its name and content type, and returns the tokens to attach. */
  async upload(files: readonly AttachmentFile[]): Promise<Body[]> {
    const tokens: Body[] = [];
    for (const file of files) tokens.push({ token: await this.client.upload(file.path, { filename: file.filename, contentType: file.contentType }) });
    return tokens;
  }

  async create(entity: Entity, body: Body): Promise<number> {
    const { path, one } = ENTITY_API[entity];
    const answer = await this.request({ method: 'POST', path, json: { [one]: body } });
    return this.idFrom(entity, answer.body, 'POST', path);
  }

  /** Adds and removes a project's additional contacts (adding one it has, or removing one it lacks, is no error). */
  async setContacts(kaseId: number, add: readonly number[], remove: readonly number[]): Promise<void> {
    for (const partyId of add) await this.request({ method: 'POST', path: `/kases/${kaseId}/parties/${partyId}`, idempotent: true });
    for (const partyId of remove) await this.request({ method: 'DELETE', path: `/kases/${kaseId}/parties/${partyId}`, accept: [404] });
  }

  /** The ids of a project's additional contacts, 100 a request. */
  async *contactsOf(kaseId: number): AsyncGenerator<number> {
    for await (const party of this.client.paginate(`/kases/${kaseId}/parties`, 'parties', ANY_RECORD, { signal: this.stop })) if (typeof party.id === 'number') yield party.id;
  }

  async update(entity: Entity, id: number, changes: Body): Promise<void> {
    const { path, one } = ENTITY_API[entity];
    await this.request({ method: 'PUT', path: `${path}/${id}`, json: { [one]: changes } });
  }

  /** The record as the service has it now, or null when it no longer exists. */
  async read(entity: Entity, id: number): Promise<Body | null> {
    const { path, one, embed } = ENTITY_API[entity];
    const answer = await this.request({ method: 'GET', path: `${path}/${id}`, query: embed ? { embed } : {}, accept: [404] });
    if (answer.status === 404) return null;
    return ((answer.body as Body | null)?.[one] as Body | undefined) ?? null;
  }

  /** Deletes a record, following a scheduled delete to its end. False when it was already gone. */
  async remove(entity: Entity, id: number): Promise<boolean> {
    const { path } = ENTITY_API[entity];
    const answer = await this.request({ method: 'DELETE', path: `${path}/${id}`, accept: [404] });
    if (answer.status === 404) return false;
    if (answer.status === 202) {
      const location = answer.headers.location;
      const jobUrl = Array.isArray(location) ? location[0] : location;
      if (jobUrl) await this.client.waitForJob(jobUrl, this.stop ? { signal: this.stop } : {});
    }
    return true;
  }

  /**
   * Looks for the records that unconfirmed creates may have made: records of the same kind
   * changed since shortly before the earliest of them, compared by what the service keeps as sent
   * (signatureOf). `taken` says whether an id already belongs to another row. Returns the id found
   * for each key; a key missing from the answer was certainly not created.
   */
  async findCreated(entity: Entity, creates: readonly UnconfirmedCreate[], taken: (id: number) => boolean): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    if (creates.length === 0) return found;
    const wanted = new Map<string, UnconfirmedCreate[]>();
    for (const create of creates) {
      const signature = signatureOf(entity, create.body);
      wanted.set(signature, [...(wanted.get(signature) ?? []), create]);
    }
    const earliest = Math.min(...creates.map((c) => Date.parse(c.at)));
    const matching = new Map<string, Body[]>();
    for await (const record of this.candidates(entity, creates, new Date(earliest - LOOKBACK_MS))) {
      if (typeof record.id !== 'number' || taken(record.id)) continue;
      const signature = signatureOf(entity, record);
      if (wanted.has(signature)) matching.set(signature, [...(matching.get(signature) ?? []), record]);
    }
    // The account may hold an older record with the same values (the same contacts imported
    // before, by another state or by hand). The create's own record is the newest of them: taking
    // an older one would make a rollback delete a record this run never wrote.
    for (const [signature, records] of matching) {
      records.sort((a, b) => createdTime(b) - createdTime(a) || (b.id as number) - (a.id as number));
      for (const create of wanted.get(signature) ?? []) {
        const index = records.findIndex((record) => Number.isNaN(createdTime(record)) || createdTime(record) >= Date.parse(create.at) - LOOKBACK_MS);
        if (index < 0) continue;
        found.set(create.key, records.splice(index, 1)[0]?.id as number);
      }
    }
    return found;
  }

  /**
   * Records that may be the result of the creates, newest included: of a kind listed by `since`,
   * those changed since then (with their tags and custom fields when `embed`); notes, those on the
   * records the creates are on; tasks, all.
   */
  async *candidates(entity: Entity, creates: readonly UnconfirmedCreate[], since: Date, options: { embed?: boolean } = {}): AsyncGenerator<Body> {
    const { path, many, embed } = ENTITY_API[entity];
    if (entity === 'party' || entity === 'kase' || entity === 'opportunity') {
      yield* this.pages(path, many, { since: since.toISOString().replace(/\.\d{3}Z$/, 'Z'), ...(options.embed && embed ? { embed } : {}) });
      return;
    }
    if (entity === 'entry') {
      // Notes are listed per record they are on; read each parent's once.
      const parents = new Set<string>();
      for (const create of creates) {
        for (const kind of ['party', 'kase', 'opportunity'] as const) {
          const link = create.body[kind] as Body | undefined;
          if (link && typeof link.id === 'number') parents.add(`${ENTITY_API[kind].path}/${link.id}/entries`);
        }
      }
      for (const parent of parents) yield* this.pages(parent, 'entries', {});
      return;
    }
    yield* this.pages(path, many, { status: EVERY_TASK_STATUS, embed });
  }

  /** Records of a kind changed since a time (spec: `since`), with their tags and custom fields. */
  async *changedSince(entity: 'party' | 'kase' | 'opportunity', since: Date): AsyncGenerator<Body> {
    const { path, many, embed } = ENTITY_API[entity];
    yield* this.pages(path, many, { since: since.toISOString().replace(/\.\d{3}Z$/, 'Z'), embed });
  }

  /**
   * Every note and e-mail of the account (`GET /entries`, newest `entryAt` first), or every task
   * whatever its status: the interface lists neither by `since`.
   */
  async *listAll(entity: 'entry' | 'task'): AsyncGenerator<Body> {
    const { path, many, embed } = ENTITY_API[entity];
    yield* this.pages(path, many, entity === 'task' ? { status: EVERY_TASK_STATUS, embed } : {});
  }

  /** Records passing a structured filter (spec 4.12), with their tags and custom fields. */
  async *filter(entity: 'party' | 'kase' | 'opportunity', conditions: unknown[]): AsyncGenerator<Body> {
    const { path, many, embed } = ENTITY_API[entity];
    yield* this.pages(`${path}/filters/results`, many, { embed }, { filter: { conditions } });
  }

  /**
   * Every record of the account of a kind, with its tags and custom fields (a match looks among
   * them), or null when there are more than `upTo`. Read once a run: the steps matching one kind
   * (organisations and people) share it.
   */
  list(entity: 'party' | 'kase' | 'opportunity', upTo: number): Promise<Body[] | null> {
    let read = this.#lists.get(entity);
    if (!read) {
      read = (async () => {
        const { path, many, embed } = ENTITY_API[entity];
        const all: Body[] = [];
        for await (const record of this.client.paginate(path, many, ANY_RECORD, { query: { embed }, signal: this.stop })) {
          if (all.length >= upTo) return null;
          all.push(record);
        }
        return all;
      })();
      this.#lists.set(entity, read);
      // A failed read is told to the steps waiting for it; the next asks again.
      read.catch(() => this.#lists.delete(entity));
    }
    return read;
  }

  readonly #lists = new Map<string, Promise<Body[] | null>>();

  /** Whether any record passes a structured filter: one request for the first page of one. */
  async anyPasses(entity: 'party' | 'kase' | 'opportunity', conditions: unknown[]): Promise<boolean> {
    const { path, many } = ENTITY_API[entity];
    const answer = await this.request({ method: 'POST', path: `${path}/filters/results`, query: { page: 1, perPage: 1 }, json: { filter: { conditions } }, idempotent: true });
    const list = (answer.body as Body | null)?.[many];
    return Array.isArray(list) && list.length > 0;
  }

  private async *pages(path: string, key: string, query: Record<string, string>, filter?: unknown): AsyncGenerator<Body> {
    let page = 1;
    for (;;) {
      const request: ApiRequest = { method: filter ? 'POST' : 'GET', path, query: { ...query, page, perPage: 100 }, accept: [404] };
      if (filter) {
        request.json = filter;
        request.idempotent = true;
      }
      const answer = await this.request(request);
      if (answer.status === 404) return;
      const list = ((answer.body as Body | null)?.[key] as Body[] | undefined) ?? [];
      yield* list;
      const link = String(answer.headers.link ?? '');
      if (list.length < 100 || !link.includes('rel="next"')) return;
      page += 1;
    }
  }
}

interface LostCreate {
  create: UnconfirmedCreate;
  resolve(id: number | undefined): void;
  reject(error: unknown): void;
}

/**
 * The creates of one step whose answers were lost during the run, settled the way a resumed run
 * settles them (findCreated) without stopping it: the first lost answer starts a pause (the
 * transport's backoff), and every create lost meanwhile is looked up with it in one listing of
 * the records changed since the earliest, instead of one listing each.
 */
export class LostCreates {
  #waiting: LostCreate[] = [];
  #round: Promise<void> | null = null;

  constructor(
    private readonly service: RecordService,
    private readonly entity: Entity,
    /** Whether an id belongs to a row already. */
    private readonly taken: (id: number) => boolean,
  ) {}

  /**
   * The id of the record the create made, or undefined when it was certainly not made (it may
   * be sent again). `attempt`: how many times this row's create has been lost.
   */
  find(create: UnconfirmedCreate, attempt: number): Promise<number | undefined> {
    const found = new Promise<number | undefined>((resolve, reject) => this.#waiting.push({ create, resolve, reject }));
    this.#round ??= this.#settle(attempt);
    return found;
  }

  async #settle(attempt: number): Promise<void> {
    let batch: LostCreate[] | null = null;
    const take = (): LostCreate[] => {
      // Creates lost from here on start a round of their own, after a pause of their own.
      batch = this.#waiting;
      this.#waiting = [];
      this.#round = null;
      return batch;
    };
    try {
      await this.service.pause(attempt);
      const creates = take();
      const found = await this.service.findCreated(
        this.entity,
        creates.map((lost) => lost.create),
        this.taken,
      );
      for (const lost of creates) lost.resolve(found.get(lost.create.key));
    } catch (error) {
      for (const lost of batch ?? take()) lost.reject(error);
    }
  }
}
