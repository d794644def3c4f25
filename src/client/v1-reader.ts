/**
 * Reads the legacy v1 interface (`/api/...`, no version segment) over the same transport as every
 * other request: the rate-limit governor, retries with backoff, the redacted log and the transport
 * rule (https, or plain http to a loopback address only). An old account of its own is sent its
 * token as the published v1 clients send it (HTTP Basic, the token as the user name), the account
 * written to its bearer token.
 *
 * Every answer is untrusted: it is read as a stream within a deadline for the whole answer and a
 * cap on its size, and an answer larger than a few megabytes is kept in a private temporary file
 * while it is parsed, not in memory (V1Body).
 */
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { mkdtemp, open, rm, type FileHandle } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Dispatcher } from 'undici';
import { FerryError } from '../errors/index.ts';
import { ApiError } from './errors.ts';
import { AnswerDeadlineError, Transport, type TransportOptions, type TransportWait } from './transport.ts';
import {
  formatDuration,
  isV1LiveInput,
  parseV1LiveInput,
  V1_LIVE_PREFIX,
  V1_LISTS,
  v1FilterTime,
  type V1List,
  type V1LiveAddress,
} from '../util/index.ts';

// The address and time forms are plain text work, in util/ so that sources/ reads them without the client.
export { isV1LiveInput, parseV1LiveInput, V1_LIVE_PREFIX, V1_LISTS, v1FilterTime, type V1List, type V1LiveAddress };

/** The format the v1 interface is asked to answer in. */
export type V1WireFormat = 'xml' | 'json';

export const V1_WIRE_FORMATS: readonly V1WireFormat[] = ['xml', 'json'];

const ACCEPT: Record<V1WireFormat, string> = { xml: 'application/xml', json: 'application/json' };

/** What one answer of the old account may cost. */
export interface V1ReadLimits {
  /**
   * Longest one answer may take, from sending the request to its last byte, in milliseconds; the
   * transport's `giveUpAfterMs` (`--give-up-after`) bounds it too. @default 600000 (10 minutes)
   */
  answerDeadlineMs: number;
  /** Most bytes one answer may have; a larger one is refused (API_RESPONSE_INVALID). @default 536870912 (512 MiB) */
  maxAnswerBytes: number;
  /** An answer larger than this is kept in a private temporary file while it is read, not in memory. @default 16777216 (16 MiB) */
  spillBytes: number;
}

export const V1_READ_LIMITS: Readonly<V1ReadLimits> = {
  answerDeadlineMs: 600_000,
  maxAnswerBytes: 512 * 1024 * 1024,
  spillBytes: 16 * 1024 * 1024,
};

/** 512 MiB, 16 MiB, 900 KiB: for messages. */
function formatBytes(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${+(bytes / (1024 * 1024)).toFixed(1)} MiB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KiB`;
  return `${bytes} bytes`;
}

/**
 * The body of one answer, read whole (within the deadline and the cap) before anything of it is
 * parsed: in memory when small, else in a file of a private temporary folder (0700, the file
 * 0600), which `dispose` removes. Its chunks can be read more than once.
 */
export class V1Body {
  private constructor(
    /** Bytes of the answer. */
    readonly size: number,
    /** sha256 of the bytes, hexadecimal: a page answered twice is told by it. */
    readonly digest: string,
    private memory: Buffer[] | null,
    private readonly folder: string | null,
  ) {}

  /** The bytes, in chunks. */
  async *chunks(): AsyncGenerator<Buffer> {
    if (this.memory) {
      yield* this.memory;
      return;
    }
    if (this.folder === null) throw new FerryError('INTERNAL', 'a v1 answer was read after it was disposed');
    const stream = createReadStream(join(this.folder, 'answer'), { highWaterMark: 64 * 1024 });
    try {
      for await (const chunk of stream) yield chunk as Buffer;
    } finally {
      stream.destroy();
    }
  }

  /** Lets go of the bytes (removes the temporary file). */
  async dispose(): Promise<void> {
    this.memory = [];
    if (this.folder !== null) await rm(this.folder, { recursive: true, force: true });
  }

  /**
   * Reads `answer`'s body to its end: `limits.maxAnswerBytes` at most (a Content-Length over it
   * is refused before a byte is read), in memory up to `limits.spillBytes`. The whole-answer
   * deadline is the transport's (the request's `deadlineMs`).
   */
  static async read(
    answer: Dispatcher.ResponseData,
    where: { method: string; path: string },
    limits: V1ReadLimits,
  ): Promise<V1Body> {
    const tooLarge = (): ApiError =>
      new ApiError(
        'API_RESPONSE_INVALID',
        `the answer is larger than ${formatBytes(limits.maxAnswerBytes)}, the most one answer of the old account may have`,
        {
          ...where,
          status: answer.statusCode,
          hint: "Read the list in smaller pages (pageSize in the mapping's source; 100 records by default), or read an export file of it.",
        },
      );
    const declared = Number(answer.headers['content-length']);
    if (Number.isFinite(declared) && declared > limits.maxAnswerBytes) {
      answer.body.destroy();
      throw tooLarge();
    }
    const hash = createHash('sha256');
    let size = 0;
    let memory: Buffer[] | null = [];
    let folder: string | null = null;
    let file: FileHandle | null = null;
    try {
      try {
        for await (const piece of answer.body) {
          const chunk = piece as Buffer;
          size += chunk.length;
          if (size > limits.maxAnswerBytes) {
            answer.body.destroy();
            throw tooLarge();
          }
          hash.update(chunk);
          if (file) await file.write(chunk);
          else {
            (memory as Buffer[]).push(chunk);
            if (size > limits.spillBytes) {
              folder = await mkdtemp(join(tmpdir(), 'crm-ferry-v1-'));
              file = await open(join(folder, 'answer'), 'wx', 0o600);
              for (const held of memory as Buffer[]) await file.write(held);
              memory = null;
            }
          }
        }
      } catch (error) {
        if (error instanceof ApiError) throw error;
        const deadline =
          error instanceof AnswerDeadlineError
            ? error
            : (error as { cause?: unknown }).cause instanceof AnswerDeadlineError
              ? (error as { cause: AnswerDeadlineError }).cause
              : null;
        if (deadline) {
          throw new ApiError(
            'API_TIMEOUT',
            `the answer did not come whole within ${formatDuration(deadline.deadlineMs)} (${formatBytes(size)} had come)`,
            {
              ...where,
              status: answer.statusCode,
              cause: error,
              hint: 'The old account (or the network to it) sends too slowly: run again later (the run goes on where it stopped), or give a longer --give-up-after.',
            },
          );
        }
        throw new ApiError(
          'API_NETWORK',
          `the answer broke off after ${formatBytes(size)} (${(error as Error).message})`,
          {
            ...where,
            status: answer.statusCode,
            cause: error,
            hint: 'Check the network to the old account; the run can be resumed.',
          },
        );
      } finally {
        await file?.close();
      }
    } catch (error) {
      if (folder !== null) await rm(folder, { recursive: true, force: true });
      throw error;
    }
    return new V1Body(size, hash.digest('hex'), memory, folder);
  }
}

/** What one GET of the v1 interface answered. */
export interface V1Page {
  /** Path and query as sent, relative to the service's address (no credentials in it). */
  path: string;
  /** The answer, read whole; the caller disposes it. */
  body: V1Body;
}

export interface V1ReaderOptions {
  /** Counts the reads of a connection's readers together (see V1LiveConnection.reads). */
  tally?: { reads: number };
  /** What one answer may cost. @default V1_READ_LIMITS */
  limits?: Partial<V1ReadLimits>;
}

export class V1Reader {
  private readonly tally: { reads: number };
  readonly limits: Readonly<V1ReadLimits>;

  constructor(
    readonly transport: Transport,
    readonly format: V1WireFormat,
    options: V1ReaderOptions = {},
  ) {
    this.tally = options.tally ?? { reads: 0 };
    this.limits = { ...V1_READ_LIMITS, ...(options.limits ?? {}) };
  }

  /** GETs `/api/...` in the chosen format and hands back the body read whole, unparsed. Throws an ApiError on failure. */
  async get(
    path: string,
    query: Record<string, string | number | undefined> = {},
    signal?: AbortSignal,
  ): Promise<V1Page> {
    return (await this.fetch(path, query, signal, false)) as V1Page;
  }

  /** The same, but null when the service answers 404 (a record deleted since its list was read). */
  async getIfFound(
    path: string,
    query: Record<string, string | number | undefined> = {},
    signal?: AbortSignal,
  ): Promise<V1Page | null> {
    return this.fetch(path, query, signal, true);
  }

  /** The whole-answer deadline: the reader's own, or the transport's budget for a wait when that is shorter. */
  get deadlineMs(): number {
    const budget = this.transport.giveUpAfterMs;
    return budget > 0 ? Math.min(budget, this.limits.answerDeadlineMs) : this.limits.answerDeadlineMs;
  }

  private async fetch(
    path: string,
    query: Record<string, string | number | undefined>,
    signal: AbortSignal | undefined,
    gone: boolean,
  ): Promise<V1Page | null> {
    this.tally.reads += 1;
    const answer = await this.transport.send({
      method: 'GET',
      path,
      query,
      headers: { accept: ACCEPT[this.format] },
      deadlineMs: this.deadlineMs,
      ...(gone ? { accept: [404] } : {}),
      ...(signal ? { signal } : {}),
    });
    const sent = this.transport.resolvePath(path, query);
    if (answer.statusCode === 404) {
      await answer.body.dump().catch(() => undefined);
      return null;
    }
    return { path: sent, body: await V1Body.read(answer, { method: 'GET', path: sent }, this.limits) };
  }

  /** Requests sent through this reader's transport so far, retries included. */
  get requestsSent(): number {
    return this.transport.requestsSent;
  }
}

/** How the steps of a run reach live v1 sources: a reader per account, and how to read. */
export interface V1LiveConnection {
  /** A reader for the account at `baseUrl` (its transport: credentials, governor, retries), asking for `format` (default the connection's). */
  readerFor(baseUrl: string, format?: V1WireFormat): V1Reader;
  /** The format asked for when the step's `source:` does not say. @default 'xml' */
  format: V1WireFormat;
  /** Only records changed after this moment (`lastmodified`). */
  since: Date | undefined;
  /** GETs its readers asked for so far (a retry of one is not counted again): what reading the old account cost. */
  readonly reads: number;
  /** What the transports it opened wait for now (the old account's rate limit, an outage of it), for progress displays. */
  waits(): TransportWait[];
  /** Closes the transports it opened (not the one it shares). */
  close(): Promise<void>;
}

export interface V1LiveConnectionOptions {
  /** The transport of the account written to: shared (token, governor) when the source is the same address and no token of its own is given. */
  target?: Transport;
  /** The old account's token (CRM_FERRY_V1_TOKEN). */
  token?: string | undefined;
  format?: V1WireFormat;
  since?: Date | undefined;
  /** Settings of the transports opened for other accounts (retries, timeouts, `giveUpAfterMs`, log, dispatcher in tests). */
  transport?: Omit<TransportOptions, 'baseUrl' | 'auth' | 'authScheme'>;
  /** What one answer of the old account may cost. @default V1_READ_LIMITS */
  limits?: Partial<V1ReadLimits>;
}

/**
 * The live sources of a run. A source at the address being written to is read with that
 * connection (one governor for one token's quota); any other needs its own token, read over a
 * transport of its own with the same settings, and the transport rule checked before anything is
 * sent. That token goes as the published v1 clients send it, HTTP Basic with the token as the user
 * name and `x` as the password, which is what the legacy service takes; an address that answers
 * 401 offering Bearer only (the newer service, the sandbox) is sent the bearer token instead.
 */
export function v1LiveConnection(options: V1LiveConnectionOptions): V1LiveConnection {
  const opened = new Map<string, Transport>();
  const format = options.format ?? 'xml';
  const tally = { reads: 0 };
  const reading = { tally, ...(options.limits ? { limits: options.limits } : {}) };
  return {
    format,
    since: options.since,
    get reads() {
      return tally.reads;
    },
    waits() {
      return [...opened.values()].flatMap((transport) => transport.waits());
    },
    readerFor(baseUrl, wanted) {
      const wire = wanted ?? format;
      const origin = new URL(baseUrl).origin;
      if (!options.token) {
        if (options.target && options.target.origin === origin) return new V1Reader(options.target, wire, reading);
        throw new FerryError(
          'CONFIG_MISSING',
          `the live v1 source ${V1_LIVE_PREFIX}${origin} is another account than the one written to, and no token for it was given`,
          {
            hint: "Set CRM_FERRY_V1_TOKEN to an API token of the old account (its user's preferences, API authentication tokens).",
          },
        );
      }
      let transport = opened.get(origin);
      if (!transport) {
        transport = new Transport({
          ...(options.transport ?? {}),
          baseUrl: origin,
          auth: options.token,
          authScheme: 'basic',
        });
        opened.set(origin, transport);
      }
      return new V1Reader(transport, wire, reading);
    },
    async close() {
      for (const transport of opened.values()) await transport.close();
      opened.clear();
    },
  };
}
