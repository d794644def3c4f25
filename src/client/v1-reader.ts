/**
 * Reads the legacy v1 interface (`/api/...`, no version segment) over the same transport as every
 * other request: the bearer token, the rate-limit governor, retries with backoff, the redacted log
 * and the transport rule (https, or plain http to a loopback address only).
 */
import { FerryError } from '../errors/index.ts';
import { Transport, type TransportOptions } from './transport.ts';
import { isV1LiveInput, parseV1LiveInput, V1_LIVE_PREFIX, V1_LISTS, v1FilterTime, type V1List, type V1LiveAddress } from '../util/index.ts';

// The address and time forms are plain text work, in util/ so that sources/ reads them without the client.
export { isV1LiveInput, parseV1LiveInput, V1_LIVE_PREFIX, V1_LISTS, v1FilterTime, type V1List, type V1LiveAddress };

/** The format the v1 interface is asked to answer in. */
export type V1WireFormat = 'xml' | 'json';

export const V1_WIRE_FORMATS: readonly V1WireFormat[] = ['xml', 'json'];

const ACCEPT: Record<V1WireFormat, string> = { xml: 'application/xml', json: 'application/json' };

/** What one GET of the v1 interface answered. */
export interface V1Page {
  /** Path and query as sent, relative to the service's address (no credentials in it). */
  path: string;
  bytes: Buffer;
}

export class V1Reader {
  constructor(
    readonly transport: Transport,
    readonly format: V1WireFormat,
    /** Counts the reads of a connection's readers together (see V1LiveConnection.reads). */
    private readonly tally: { reads: number } = { reads: 0 },
  ) {}

  /** GETs `/api/...` in the chosen format and hands back the body unparsed. Throws an ApiError on failure. */
  async get(path: string, query: Record<string, string | number | undefined> = {}, signal?: AbortSignal): Promise<V1Page> {
    return (await this.fetch(path, query, signal, false)) as V1Page;
  }

  /** The same, but null when the service answers 404 (a record deleted since its list was read). */
  async getIfFound(path: string, query: Record<string, string | number | undefined> = {}, signal?: AbortSignal): Promise<V1Page | null> {
    return this.fetch(path, query, signal, true);
  }

  private async fetch(path: string, query: Record<string, string | number | undefined>, signal: AbortSignal | undefined, gone: boolean): Promise<V1Page | null> {
    this.tally.reads += 1;
    const answer = await this.transport.send({ method: 'GET', path, query, headers: { accept: ACCEPT[this.format] }, ...(gone ? { accept: [404] } : {}), ...(signal ? { signal } : {}) });
    const bytes = Buffer.from(await answer.body.arrayBuffer());
    if (answer.statusCode === 404) return null;
    return { path: this.transport.resolvePath(path, query), bytes };
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
  /** Settings of the transports opened for other accounts (retries, timeouts, log, dispatcher in tests). */
  transport?: Omit<TransportOptions, 'baseUrl' | 'auth'>;
}

/**
 * The live sources of a run. A source at the address being written to is read with that
 * connection (one governor for one token's quota); any other needs its own token, read over a
 * transport of its own with the same settings, and the transport rule checked before anything is sent.
 */
export function v1LiveConnection(options: V1LiveConnectionOptions): V1LiveConnection {
  const opened = new Map<string, Transport>();
  const format = options.format ?? 'xml';
  const tally = { reads: 0 };
  return {
    format,
    since: options.since,
    get reads() {
      return tally.reads;
    },
    readerFor(baseUrl, wanted) {
      const wire = wanted ?? format;
      const origin = new URL(baseUrl).origin;
      if (!options.token) {
        if (options.target && options.target.origin === origin) return new V1Reader(options.target, wire, tally);
        throw new FerryError('CONFIG_MISSING', `the live v1 source ${V1_LIVE_PREFIX}${origin} is another account than the one written to, and no token for it was given`, {
          hint: "Set CRM_FERRY_V1_TOKEN to an API token of the old account (its user's preferences, API authentication tokens).",
        });
      }
      let transport = opened.get(origin);
      if (!transport) {
        transport = new Transport({ ...(options.transport ?? {}), baseUrl: origin, auth: options.token });
        opened.set(origin, transport);
      }
      return new V1Reader(transport, wire, tally);
    },
    async close() {
      for (const transport of opened.values()) await transport.close();
      opened.clear();
    },
  };
}
