import { setTimeout as sleep } from 'node:timers/promises';
import { once } from 'node:events';
import { createReadStream, createWriteStream } from 'node:fs';
import { rm, stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { pipeline } from 'node:stream/promises';
import type { z } from 'zod';
import { ApiError } from './errors.ts';
import { parseLinkHeader } from './pagination.ts';
import * as s from './schemas.ts';
import { type ApiRequest, Transport, type TransportOptions } from './transport.ts';

export type Embed = readonly string[];

/** The `status` query that lists tasks of every status (`/tasks` lists the open ones alone without it). */
export const EVERY_TASK_STATUS = 'open,completed,pending';

/** How a list is read and paged (`CrmClient.paginate`, `CrmClient.pages`): its query, page size, and for a filter the POST body. */
export interface PageOptions {
  query?: Record<string, string>;
  /** Records a page, 1 to 100. @default 100 (fewest requests) */
  perPage?: number | undefined;
  signal?: AbortSignal | undefined;
  /** POST for a filter's results. @default 'GET' */
  method?: 'GET' | 'POST';
  json?: unknown;
}

/** A filter as the service takes it (spec section 4.12). */
export interface Filter {
  conditions: Array<
    | { field: string; operator: string; value?: unknown }
    | { orGroup: Array<{ field: string; operator: string; value?: unknown }> }
  >;
  orderBy?: Array<{ field: string; direction: 'ascending' | 'descending' }>;
}

/** A value of an answer checked against its schema; a value of another shape is API_RESPONSE_INVALID. */
export function parse<T>(schema: z.ZodType<T>, value: unknown, where: { method: string; path: string }): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  throw new ApiError(
    'API_RESPONSE_INVALID',
    `the answer does not have the expected shape (${issue?.path.join('.') || 'body'}: ${issue?.message ?? 'invalid'})`,
    {
      ...where,
      hint: 'The service may have changed its interface; report this with the request shown.',
    },
  );
}

function embedQuery(embed: Embed | undefined): Record<string, string> {
  return embed && embed.length > 0 ? { embed: embed.join(',') } : {};
}

/**
 * Typed access to the v2 interface. One client per token; its transport paces, retries and
 * classifies every request.
 */
export class CrmClient {
  readonly transport: Transport;

  constructor(options: TransportOptions | Transport) {
    this.transport = options instanceof Transport ? options : new Transport(options);
  }

  /**
   * Follows `rel="next"` links from the first page and yields each record. The next page is
   * fetched while the caller works through the current one.
   */
  async *paginate<T>(path: string, key: string, schema: z.ZodType<T>, options: PageOptions = {}): AsyncGenerator<T> {
    const where = { method: options.method ?? 'GET', path };
    // Each record checked as it is reached: the ones before a bad record are handed over first.
    for await (const page of this.rawPages(path, key, options))
      for (const record of page.list) yield parse(schema, record, where);
  }

  /**
   * The pages of a list, each with the address of the page after it (null after the last): a
   * reader that records that address can stop and later go on from it (`from`). The next page is
   * fetched while the caller works through the current one. For callers that go through many
   * records (export, backup): one wait a page instead of one a record.
   */
  async *pages<T>(
    path: string,
    key: string,
    schema: z.ZodType<T>,
    options: PageOptions & { from?: string | null } = {},
  ): AsyncGenerator<{ records: T[]; next: string | null }> {
    const where = { method: options.method ?? 'GET', path };
    for await (const page of this.rawPages(path, key, options)) {
      const records = new Array<T>(page.list.length);
      for (let i = 0; i < page.list.length; i += 1) records[i] = parse(schema, page.list[i], where);
      yield { records, next: page.next };
    }
  }

  /** The one paginator: each page's list as the service sent it, and the address of the next. */
  private async *rawPages(
    path: string,
    key: string,
    options: PageOptions & { from?: string | null },
  ): AsyncGenerator<{ list: unknown[]; next: string | null }> {
    const method = options.method ?? 'GET';
    const fetchPage = (pagePath: string, query?: Record<string, string>) => {
      const request: ApiRequest = { method, path: pagePath, idempotent: true };
      if (query) request.query = query;
      if (options.json !== undefined) request.json = options.json;
      if (options.signal) request.signal = options.signal;
      return this.transport.request(request);
    };
    // A next-page address holds the query of the first page already.
    let pending: ReturnType<typeof fetchPage> | null = options.from
      ? fetchPage(options.from)
      : fetchPage(path, { ...(options.query ?? {}), perPage: String(options.perPage ?? 100) });
    try {
      while (pending) {
        const page = await pending;
        pending = null;
        const link = parseLinkHeader(page.headers.link).next;
        let next: string | null = null;
        if (link) {
          const url = new URL(link, this.transport.origin);
          if (url.origin !== this.transport.origin) {
            throw new ApiError('API_RESPONSE_INVALID', `the next-page link points at another host (${url.origin})`, {
              method,
              path,
            });
          }
          next = `${url.pathname}${url.search}`;
          pending = fetchPage(next);
          // Not awaited yet: keep an early failure from being reported as unhandled.
          pending.catch(() => undefined);
          // undici writes a request only on a later turn of the event loop: on a connection that
          // has answered before, once it has checked that the service did not close it; on a new
          // one, once it is open. The caller's work on this page would hold those turns back, and
          // the service would wait idle for the request: two turns are given here (the first
          // writes it on an open connection; a new one to a near service is open by the second),
          // so that the next page is made while this one is worked through.
          await nextTurn();
          await nextTurn();
        }
        const list = (page.body as Record<string, unknown> | null)?.[key];
        if (!Array.isArray(list)) {
          throw new ApiError('API_RESPONSE_INVALID', `the answer has no "${key}" list`, { method, path });
        }
        yield { list, next };
      }
    } finally {
      // The caller stopped early: let the prefetched page finish quietly.
      if (pending) await pending.catch(() => undefined);
    }
  }

  /** Runs a structured filter and yields every matching record (spec 4.12). */
  filter(entity: 'parties', filter: Filter, options?: { embed?: Embed; perPage?: number }): AsyncGenerator<s.Party>;
  filter(
    entity: 'opportunities',
    filter: Filter,
    options?: { embed?: Embed; perPage?: number },
  ): AsyncGenerator<s.Opportunity>;
  filter(entity: 'kases', filter: Filter, options?: { embed?: Embed; perPage?: number }): AsyncGenerator<s.Kase>;
  filter(
    entity: 'parties' | 'opportunities' | 'kases',
    filter: Filter,
    options: { embed?: Embed; perPage?: number } = {},
  ): AsyncGenerator<unknown> {
    const schema =
      entity === 'parties' ? s.partySchema : entity === 'opportunities' ? s.opportunitySchema : s.kaseSchema;
    return this.paginate(`/${entity}/filters/results`, entity, schema as z.ZodType<unknown>, {
      method: 'POST',
      json: { filter },
      query: embedQuery(options.embed),
      perPage: options.perPage,
    });
  }

  /** Follows a scheduled job until it completes. */
  async waitForJob(jobUrl: string, options: { signal?: AbortSignal; maxWaitMs?: number } = {}): Promise<s.Job> {
    const url = new URL(jobUrl, this.transport.origin);
    const path = `${url.pathname}${url.search}`;
    let delay = 250;
    const started = Date.now();
    for (;;) {
      const request: ApiRequest = { method: 'GET', path };
      if (options.signal) request.signal = options.signal;
      const answer = await this.transport.request(request);
      const job = parse(s.jobSchema, (answer.body as Record<string, unknown> | null)?.job, { method: 'GET', path });
      if (job.status === 'completed') return job;
      if (job.status !== 'in_progress' && job.status !== 'queued' && job.status !== 'pending') {
        throw new ApiError('API_SERVER', `the scheduled job ended as "${job.status}"`, { method: 'GET', path });
      }
      if (Date.now() - started > (options.maxWaitMs ?? 600_000)) {
        throw new ApiError('API_TIMEOUT', 'the scheduled job did not complete in time', { method: 'GET', path });
      }
      // The job's polling pause ends with the caller's stop like the transport's own waits.
      await sleep(delay, undefined, options.signal ? { signal: options.signal } : {});
      delay = Math.min(delay * 2, 5_000);
    }
  }

  /** Uploads a file (streamed from disk) and returns the token to attach it to an entry. */
  async upload(file: string, options: { filename?: string; contentType?: string } = {}): Promise<string> {
    const size = (await stat(file)).size;
    const filename = options.filename ?? basename(file);
    const answer = await this.transport.request({
      method: 'POST',
      path: '/attachments/upload',
      // Sent again when its answer is lost: an upload nothing is attached to is discarded by the
      // service, and only the token answered is ever attached.
      idempotent: true,
      body: () => createReadStream(file),
      headers: {
        'content-type': options.contentType ?? 'application/octet-stream',
        'content-length': String(size),
        'x-attachment-filename': encodeURIComponent(filename),
      },
    });
    const token = (answer.body as { upload?: { token?: unknown } } | null)?.upload?.token;
    if (typeof token !== 'string') {
      throw new ApiError('API_RESPONSE_INVALID', 'the upload answer has no token', {
        method: 'POST',
        path: '/api/v2/attachments/upload',
      });
    }
    return token;
  }

  /**
   * Downloads an attachment to `file`, streaming; a partial file is removed on failure. The file
   * is created (0600: it is the account's data), never written through something already there:
   * when `file` exists (a file, or a link planted to send the bytes elsewhere) the download fails
   * with EEXIST, so callers download to a name of their own and rename it into place.
   */
  async download(attachmentId: number, file: string): Promise<{ bytes: number; contentType: string | undefined }> {
    // The file is made before the request is sent: a name already taken fails before any byte moves.
    const out = createWriteStream(file, { flags: 'wx', mode: 0o600 });
    await once(out, 'open');
    let answer;
    try {
      answer = await this.transport.send({ method: 'GET', path: `/attachments/${attachmentId}` });
    } catch (error) {
      out.destroy();
      await rm(file, { force: true });
      throw error;
    }
    let bytes = 0;
    answer.body.on('data', (chunk: Buffer) => (bytes += chunk.length));
    try {
      await pipeline(answer.body, out);
    } catch (error) {
      await rm(file, { force: true });
      throw new ApiError('API_NETWORK', `the download broke off after ${bytes} bytes`, {
        method: 'GET',
        path: `/api/v2/attachments/${attachmentId}`,
        cause: error,
      });
    }
    const type = answer.headers['content-type'];
    return { bytes, contentType: Array.isArray(type) ? type[0] : type };
  }

  private async getList<T>(path: string, key: string, schema: z.ZodType<T>, signal?: AbortSignal): Promise<T[]> {
    const all: T[] = [];
    for await (const item of this.paginate(path, key, schema, signal ? { signal } : {})) all.push(item);
    return all;
  }

  /** The account's users; `signal` ends the reading (a caller that will not wait for an account that does not answer). */
  users(options: { signal?: AbortSignal } = {}): Promise<s.User[]> {
    return this.getList('/users', 'users', s.userSchema, options.signal);
  }

  /**
   * The user the token belongs to (`GET /users/current`, which the service answers beyond the
   * spec); null when the service says it has no such endpoint.
   */
  async currentUser(): Promise<s.User | null> {
    const path = '/users/current';
    try {
      const answer = await this.transport.request({ method: 'GET', path, idempotent: true });
      return parse(s.userSchema, (answer.body as Record<string, unknown> | null)?.user, { method: 'GET', path });
    } catch (error) {
      if (error instanceof ApiError && error.code === 'API_NOT_FOUND') return null;
      throw error;
    }
  }

  countries(): Promise<s.Country[]> {
    return this.getList('/countries', 'countries', s.countrySchema);
  }

  currencies(): Promise<s.Currency[]> {
    return this.getList('/currencies', 'currencies', s.currencySchema);
  }

  /** Custom field definitions of an entity (sandbox path `/{entity}/fields/definitions`). */
  fieldDefinitions(entity: 'parties' | 'opportunities' | 'kases'): Promise<s.FieldDefinition[]> {
    return this.getList(`/${entity}/fields/definitions`, 'definitions', s.fieldDefinitionSchema);
  }

  tags(entity: 'parties' | 'opportunities' | 'kases'): Promise<s.Tag[]> {
    return this.getList(`/${entity}/tags`, 'tags', s.tagSchema);
  }

  taskCategories(): Promise<s.TaskCategory[]> {
    return this.getList('/categories', 'categories', s.categorySchema);
  }

  pipelineMilestones(pipelineId: number): Promise<s.Milestone[]> {
    return this.getList(`/pipelines/${pipelineId}/milestones`, 'milestones', s.milestoneSchema);
  }

  /** Archived pipelines too when `includeDeleted`. */
  pipelinesIncludingArchived(): Promise<s.Pipeline[]> {
    return this.getList('/pipelines?includeDeleted=true', 'pipelines', s.pipelineSchema);
  }

  async duplicatePipeline(pipelineId: number): Promise<s.Pipeline> {
    const path = `/pipelines/${pipelineId}/duplicate`;
    const answer = await this.transport.request({ method: 'POST', path });
    return parse(s.pipelineSchema, (answer.body as Record<string, unknown> | null)?.pipeline, { method: 'POST', path });
  }

  async restorePipeline(pipelineId: number): Promise<s.Pipeline> {
    const path = `/pipelines/${pipelineId}/restore`;
    // Restoring twice leaves the same state: safe to retry.
    const answer = await this.transport.request({ method: 'POST', path, idempotent: true });
    return parse(s.pipelineSchema, (answer.body as Record<string, unknown> | null)?.pipeline, { method: 'POST', path });
  }

  /** The people of an organisation. */
  people(organisationId: number, options: { embed?: Embed } = {}): AsyncGenerator<s.Party> {
    return this.paginate(`/parties/${organisationId}/people`, 'parties', s.partySchema, {
      query: embedQuery(options.embed),
    });
  }

  /** Entries (notes, emails, completed tasks) of a party, opportunity or project. */
  entriesOf(
    entity: 'parties' | 'opportunities' | 'kases',
    id: number,
    options: { embed?: Embed } = {},
  ): AsyncGenerator<s.Entry> {
    return this.paginate(`/${entity}/${id}/entries`, 'entries', s.entrySchema, { query: embedQuery(options.embed) });
  }

  /** Tracks applied to a party, opportunity or project. */
  tracksOf(entity: 'parties' | 'opportunities' | 'kases', id: number): AsyncGenerator<s.Track> {
    return this.paginate(`/${entity}/${id}/tracks`, 'tracks', s.trackSchema);
  }

  /** Projects or opportunities of a party. */
  kasesOf(partyId: number, options: { embed?: Embed } = {}): AsyncGenerator<s.Kase> {
    return this.paginate(`/parties/${partyId}/kases`, 'kases', s.kaseSchema, { query: embedQuery(options.embed) });
  }

  opportunitiesOf(partyId: number, options: { embed?: Embed } = {}): AsyncGenerator<s.Opportunity> {
    return this.paginate(`/parties/${partyId}/opportunities`, 'opportunities', s.opportunitySchema, {
      query: embedQuery(options.embed),
    });
  }

  /** Additional contacts of a project or an opportunity. */
  partiesOf(entity: 'kases' | 'opportunities', id: number): AsyncGenerator<s.Party> {
    return this.paginate(`/${entity}/${id}/parties`, 'parties', s.partySchema);
  }

  /** Adds a party to a project as an additional contact (harmless to repeat). */
  async addKaseParty(kaseId: number, partyId: number): Promise<void> {
    await this.transport.request({ method: 'POST', path: `/kases/${kaseId}/parties/${partyId}`, idempotent: true });
  }

  async removeKaseParty(kaseId: number, partyId: number): Promise<void> {
    await this.transport.request({ method: 'DELETE', path: `/kases/${kaseId}/parties/${partyId}` });
  }

  activityTypeIcons(): Promise<s.ActivityTypeIcon[]> {
    return this.getList('/activitytypes/icons', 'activityTypeIcons', s.activityTypeIconSchema);
  }

  close(): Promise<void> {
    return this.transport.close();
  }
}

/** Resolves after the event loop's next turn (its I/O and its check phase). */
function nextTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
