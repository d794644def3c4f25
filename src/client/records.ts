/**
 * The records the importer, rollback, verify, matching and restore read and write: parties,
 * projects, opportunities, notes and tasks, as plain bodies (every field the service sends kept),
 * one request each where the interface allows. Lists go through the client's one paginator
 * (`CrmClient.paginate`).
 */
import { z } from 'zod';
import type { Entity } from '../util/index.ts';
import { type CrmClient, EVERY_TASK_STATUS, parse } from './client.ts';
import { ApiError } from './errors.ts';
import { type DeletedRecord, deletedSchema } from './schemas.ts';
import type { ApiRequest } from './transport.ts';

type Body = Record<string, unknown>;

/** A record of a list as the interface gives it, every field kept. */
const ANY_RECORD = z.record(z.string(), z.unknown());

/** How each kind of record travels: its path, the wrapper keys of one record and of a list, and what a read embeds. */
export const ENTITY_API: Record<Entity, { path: string; one: string; many: string; label: string; embed: string }> = {
  party: { path: '/parties', one: 'party', many: 'parties', label: 'party', embed: 'tags,fields' },
  kase: { path: '/kases', one: 'kase', many: 'kases', label: 'project', embed: 'tags,fields' },
  opportunity: {
    path: '/opportunities',
    one: 'opportunity',
    many: 'opportunities',
    label: 'opportunity',
    embed: 'tags,fields',
  },
  entry: { path: '/entries', one: 'entry', many: 'entries', label: 'note', embed: '' },
  task: { path: '/tasks', one: 'task', many: 'tasks', label: 'task', embed: 'party,opportunity,kase' },
};

/** The `since` of a list: whole seconds, as the service gives its times. */
function sinceQuery(since: Date): string {
  return since.toISOString().replace(/\.\d{3}Z$/, 'Z');
}

/**
 * Reads and writes records of the five kinds. Requests wait for the rate governor under `stop`
 * (Ctrl-C ends the wait), but a write that has been sent is never cut off: its fate would be unknown.
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

  private idFrom(one: string, body: unknown, method: string, path: string): number {
    const record = (body as Body | null)?.[one] as Body | undefined;
    const id = record?.id;
    if (typeof id !== 'number')
      throw new ApiError('API_RESPONSE_INVALID', `the answer has no ${one}.id`, { method, path });
    return id;
  }

  /** Uploads each file with its name and content type, and returns the tokens to attach. */
  async upload(files: ReadonlyArray<{ path: string; filename: string; contentType: string }>): Promise<Body[]> {
    const tokens: Body[] = [];
    for (const file of files)
      tokens.push({
        token: await this.client.upload(file.path, { filename: file.filename, contentType: file.contentType }),
      });
    return tokens;
  }

  async create(entity: Entity, body: Body): Promise<number> {
    return (await this.createRecord(entity, body)).id;
  }

  /** Creates a record and hands back the record as the service answered it (an organisation it made by name is in it). */
  async createRecord(entity: Entity, body: Body): Promise<Body & { id: number }> {
    const { path, one } = ENTITY_API[entity];
    const answer = await this.request({ method: 'POST', path, json: { [one]: body } });
    this.idFrom(one, answer.body, 'POST', path);
    return (answer.body as Body)[one] as Body & { id: number };
  }

  /** Applies a track to a record (`body` names the definition and the record); the id of the applied track. */
  async applyTrack(body: Body): Promise<number> {
    const answer = await this.request({ method: 'POST', path: '/tracks', query: {}, json: { track: body } });
    return this.idFrom('track', answer.body, 'POST', '/tracks');
  }

  /** Adds and removes a project's additional contacts (adding one it has, or removing one it lacks, is no error). */
  async setContacts(kaseId: number, add: readonly number[], remove: readonly number[]): Promise<void> {
    for (const partyId of add)
      await this.request({ method: 'POST', path: `/kases/${kaseId}/parties/${partyId}`, idempotent: true });
    for (const partyId of remove)
      await this.request({ method: 'DELETE', path: `/kases/${kaseId}/parties/${partyId}`, accept: [404] });
  }

  /** The ids of a project's additional contacts, 100 a request. */
  async *contactsOf(kaseId: number): AsyncGenerator<number> {
    for await (const party of this.client.paginate(`/kases/${kaseId}/parties`, 'parties', ANY_RECORD, {
      signal: this.stop,
    }))
      if (typeof party.id === 'number') yield party.id;
  }

  async update(entity: Entity, id: number, changes: Body): Promise<void> {
    const { path, one } = ENTITY_API[entity];
    await this.request({ method: 'PUT', path: `${path}/${id}`, json: { [one]: changes } });
  }

  /** The record as the service has it now, or null when it no longer exists. */
  async read(entity: Entity, id: number): Promise<Body | null> {
    const { path, one, embed } = ENTITY_API[entity];
    const answer = await this.request({
      method: 'GET',
      path: `${path}/${id}`,
      query: embed ? { embed } : {},
      accept: [404],
    });
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
   * Records that may be the result of creates of `bodies`, newest included: of a kind listed by
   * `since`, those changed since then (with their tags and custom fields when `embed`); notes,
   * those on the records the bodies are on; tasks, all.
   */
  async *candidates(
    entity: Entity,
    creates: ReadonlyArray<{ body: Body }>,
    since: Date,
    options: { embed?: boolean } = {},
  ): AsyncGenerator<Body> {
    const { path, many, embed } = ENTITY_API[entity];
    if (entity === 'party' || entity === 'kase' || entity === 'opportunity') {
      yield* this.pages(path, many, { since: sinceQuery(since), ...(options.embed && embed ? { embed } : {}) });
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
    yield* this.pages(path, many, { since: sinceQuery(since), embed });
  }

  /**
   * Every note and e-mail of the account (`GET /entries`, newest `entryAt` first), or every task
   * whatever its status: the interface lists neither by `since`.
   */
  async *listAll(entity: 'entry' | 'task'): AsyncGenerator<Body> {
    const { path, many, embed } = ENTITY_API[entity];
    yield* this.pages(path, many, entity === 'task' ? { status: EVERY_TASK_STATUS, embed } : {});
  }

  /** Every record of a kind as the account lists it with `query` (what to embed, a task status), 100 a request. */
  async *listWith(entity: 'entry' | 'task', query: Record<string, string>): AsyncGenerator<Body> {
    const { path, many } = ENTITY_API[entity];
    yield* this.pages(path, many, query);
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
        for await (const record of this.client.paginate(path, many, ANY_RECORD, {
          query: { embed },
          signal: this.stop,
        })) {
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

  /** The records of a list deleted after `since` (spec: `/{list}/deleted`). */
  async deleted(list: 'parties' | 'opportunities' | 'kases', since: string): Promise<DeletedRecord[]> {
    const path = `/${list}/deleted`;
    const answer = await this.client.transport.request({ method: 'GET', path, query: { since } });
    return parse(deletedSchema.array(), (answer.body as Body | null)?.[list] ?? [], { method: 'GET', path });
  }

  /** How many people belong to an organisation, counting up to one page (`GET /parties/{id}/people`). */
  async peopleOf(organisationId: number): Promise<number> {
    const answer = await this.request({
      method: 'GET',
      path: `/parties/${organisationId}/people`,
      query: { page: 1, perPage: 1 },
      accept: [404],
    });
    if (answer.status === 404) return 0;
    const list = (answer.body as Body | null)?.parties;
    return Array.isArray(list) ? list.length : 0;
  }

  /** Whether any record passes a structured filter: one request for the first page of one. */
  async anyPasses(entity: 'party' | 'kase' | 'opportunity', conditions: unknown[]): Promise<boolean> {
    const { path, many } = ENTITY_API[entity];
    const answer = await this.request({
      method: 'POST',
      path: `${path}/filters/results`,
      query: { page: 1, perPage: 1 },
      json: { filter: { conditions } },
      idempotent: true,
    });
    const list = (answer.body as Body | null)?.[many];
    return Array.isArray(list) && list.length > 0;
  }

  /** A list through the client's paginator; a list that is not there (its parent is gone) is empty. */
  private async *pages(
    path: string,
    key: string,
    query: Record<string, string>,
    filter?: unknown,
  ): AsyncGenerator<Body> {
    const options: Parameters<CrmClient['paginate']>[3] = { query, signal: this.stop };
    if (filter !== undefined) {
      options.method = 'POST';
      options.json = filter;
    }
    try {
      yield* this.client.paginate(path, key, ANY_RECORD, options);
    } catch (error) {
      if (error instanceof ApiError && error.code === 'API_NOT_FOUND') return;
      throw error;
    }
  }
}
