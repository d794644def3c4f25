import { setMaxListeners } from 'node:events';
import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { z } from 'zod';
import { ApiError, AmbiguousWriteError, errorFromStatus } from './errors.ts';
import { type Clock, systemClock } from './clock.ts';
import { RateGovernor, RateWaitTooLong } from './governor.ts';
import type { SharedBudget } from './shared-budget.ts';
import { checkSecureTransport } from './secure-transport.ts';
import { Pool, streamRequest } from './undici-pool.ts';
import { Redactor } from './redact.ts';
import { formatDuration } from '../util/index.ts';
import { parseRetryAfter, RETRYABLE_STATUSES, retryDelay, retryOptionsSchema } from './retry.ts';

/** Supplies the bearer token; an OAuth session refreshes it when it expires or is refused. */
export interface TokenSource {
  /** The token to send now (refreshing first when it is about to expire). */
  token(): Promise<string>;
  /**
   * The token to send now when it is at hand without waiting (not about to expire), else null:
   * the transport then awaits token(). Saves a wait on every request.
   */
  tokenNow?(): string | null;
  /** Called after a 401: refresh if possible and return true to try once more. */
  refreshAfterUnauthorized?(): Promise<boolean>;
  /** Every secret this source may hand out, for redaction. */
  secrets(): string[];
}

/** A token that never changes: a personal API token. */
export function staticToken(token: string): TokenSource {
  return { token: async () => token, tokenNow: () => token, secrets: () => [token] };
}

export const transportOptionsSchema = z.object({
  /** Base address of the service, e.g. `https://acme.example.com`; v2 is under `/api/v2`. */
  baseUrl: z.string().url(),
  /** Retries of idempotent requests. */
  retry: retryOptionsSchema.default({ limit: 5, baseDelayMs: 500, maxDelayMs: 30_000, maxRetryAfterMs: 3_900_000 }),
  /** Connections kept open to the service. @default 8 */
  connections: z.number().int().positive().default(8),
  /**
   * How long the service may go without a useful answer (only network failures, 5xx or 408)
   * before a request stops being tried again, in milliseconds: a service that is down or
   * restarting is waited for, with backoff, this long. 0 keeps to `retry.limit` attempts.
   * A request is tried again while either allows it. @default 0
   */
  giveUpAfterMs: z.number().int().min(0).default(0),
  /** Time allowed for the answer's headers and between body chunks, in milliseconds. @default 60000 */
  timeoutMs: z.number().int().positive().default(60_000),
  /** @default 'crm-ferry' */
  userAgent: z.string().default('crm-ferry'),
});

export type TransportOptions = z.input<typeof transportOptionsSchema> & {
  /** The token, or a source that refreshes it. */
  auth: TokenSource | string;
  /**
   * How the token is sent. `bearer`: `Authorization: Bearer TOKEN`, as spec section 5 asks.
   * `basic`: HTTP Basic with the token as the user name and `x` as the password, as the published
   * clients of the legacy v1 interface send it; after a 401 whose `WWW-Authenticate` offers Bearer
   * and not Basic, the transport sends the bearer token from then on. @default 'bearer'
   */
  authScheme?: 'bearer' | 'basic';
  /** Injected for tests: undici's MockAgent, or any dispatcher. @default a keep-alive Pool for the origin */
  dispatcher?: Dispatcher;
  /** Shared by every client using the same token. @default a new governor */
  governor?: RateGovernor;
  /**
   * The account's rate budget shared with other processes (see SharedBudget): the transport's
   * own governor (when `governor` is not given) claims its slots from it. Closed with the
   * transport. @default none: the quota is paced by this process alone
   */
  sharedBudget?: SharedBudget;
  clock?: Clock;
  random?: () => number;
  /** Receives one redacted line per request attempt. */
  log?: (line: string) => void;
  /**
   * The run's stop (Ctrl-C, SIGTERM): ends every wait of every request (pacing, a rate limit's
   * pause, the back-off between retries) and every read that is safe to repeat, whatever signal
   * the request itself was given, so that a stop is honoured in every state. A write under way is
   * still left to finish (its `waitSignal` rule).
   */
  stopSignal?: AbortSignal;
};

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE' | 'HEAD';

export interface ApiRequest {
  method: HttpMethod;
  /** `/parties` (under /api/v2), or an absolute path starting with `/api/` or `/oauth/`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined>;
  /** Sent as JSON. */
  json?: unknown;
  /**
   * Sent as is, with `headers` giving its type (uploads). A stream is given as a function that
   * opens it, so that a request refused before it was read (429, 401) can be sent again.
   */
  body?: Buffer | string | (() => Readable);
  headers?: Record<string, string>;
  /**
   * Whether repeating the request is harmless. Defaults to true for GET, HEAD, PUT and DELETE and
   * false for POST; a POST that only reads (filters) may set it.
   */
  idempotent?: boolean;
  /** Statuses that are answers, not errors (e.g. 404 for "does it exist?"). @default none */
  accept?: number[];
  signal?: AbortSignal;
  /**
   * Ends only the waits before sending (pacing, back-off), never a request under way: for writes
   * whose fate would be unknown if cut off. @default signal
   */
  waitSignal?: AbortSignal;
  /**
   * Longest time one attempt may take from sending to the answer's last byte, in milliseconds,
   * whoever reads the body: a server that sends a byte a second (which the per-chunk `timeoutMs`
   * never catches) is cut off at this point, the body read failing with an AnswerDeadlineError.
   * An attempt cut off before its headers is tried again only while another whole deadline fits
   * in `giveUpAfterMs`. @default none
   */
  deadlineMs?: number;
}

/** What a request is waiting for, for progress displays: `waiting 50 min for the rate limit (Retry-After)`. */
export interface TransportWait {
  /** `rate-limit`: a 429 (its `Retry-After`, or the window's reset); `outage`: backing off from failures. */
  reason: 'rate-limit' | 'outage';
  /** `Retry-After`, `the reset`, or how long the service has been failing. */
  detail: string;
  /** When the wait ends (ms since the epoch). */
  until: number;
}

/** The reason an answer's body read stops when its whole-answer deadline passes (ApiRequest.deadlineMs). */
export class AnswerDeadlineError extends Error {
  readonly code = 'ANSWER_DEADLINE';
  constructor(readonly deadlineMs: number) {
    super(`no whole answer within ${formatDuration(deadlineMs)}`);
    this.name = 'AnswerDeadlineError';
  }
}

export interface ApiResponse<T = unknown> {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON body, or null when empty or not JSON. */
  body: T;
}

/** Network errors raised before anything reached the service: always safe to try again. */
const NOT_SENT = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT', 'UND_ERR_CONNECT']);

function errorCodeOf(error: unknown): string | undefined {
  let current: unknown = error;
  for (let depth = 0; depth < 4 && current; depth += 1) {
    const code = (current as { code?: unknown }).code;
    if (typeof code === 'string' && code !== 'UND_ERR') return code;
    current = (current as { cause?: unknown }).cause;
  }
  return undefined;
}

/**
 * Every request crm-ferry sends goes through here: authentication, pacing, retries, and the
 * classification of failures into typed errors. It never re-sends a write whose fate is unknown.
 */
export class Transport {
  readonly origin: string;
  readonly governor: RateGovernor;
  private readonly sharedBudget: SharedBudget | null;
  readonly redactor = new Redactor();
  private readonly settings: z.output<typeof transportOptionsSchema>;
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  private readonly auth: TokenSource;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly log: ((line: string) => void) | undefined;
  private readonly stopSignal: AbortSignal | undefined;
  #scheme: 'bearer' | 'basic';
  readonly #waits = new Set<TransportWait>();
  #sent = 0;
  /** When the service last gave an answer that was not a failure of its own (ms since the epoch). */
  #heardAt: number;

  /** Requests sent so far, retries included: what counts against the service's quota. */
  get requestsSent(): number {
    return this.#sent;
  }

  constructor(options: TransportOptions) {
    const {
      auth,
      authScheme: _scheme,
      dispatcher,
      governor,
      sharedBudget,
      clock,
      random,
      log,
      stopSignal,
      ...rest
    } = options;
    this.stopSignal = stopSignal;
    // Every request under way (and each of its waits) follows the stop signal: many at once is the
    // design, not a leak, and Node's warning about it would land in the consultant's terminal.
    if (stopSignal) setMaxListeners(0, stopSignal);
    this.settings = transportOptionsSchema.parse(rest);
    const url = checkSecureTransport(this.settings.baseUrl);
    this.origin = url.origin;
    this.auth = typeof auth === 'string' ? staticToken(auth) : auth;
    this.#scheme = options.authScheme ?? 'bearer';
    this.clock = clock ?? systemClock;
    this.random = random ?? Math.random;
    this.log = log;
    this.governor = governor ?? new RateGovernor(this.clock, sharedBudget ? { shared: sharedBudget } : {});
    this.sharedBudget = sharedBudget ?? null;
    this.#heardAt = this.clock.now();
    this.ownsDispatcher = dispatcher === undefined;
    this.dispatcher =
      dispatcher ??
      new Pool(this.origin, {
        connections: this.settings.connections,
        keepAliveTimeout: 30_000,
        headersTimeout: this.settings.timeoutMs,
        bodyTimeout: this.settings.timeoutMs,
      });
  }

  /** Path and query as sent, relative to the origin. */
  resolvePath(path: string, query?: ApiRequest['query']): string {
    const base = path.startsWith('/api/') || path.startsWith('/oauth/') ? path : `/api/v2${path}`;
    if (query === undefined || !hasValues(query)) return base;
    const params = new URLSearchParams();
    for (const [key, value] of Object.entries(query)) {
      if (value !== undefined) params.set(key, String(value));
    }
    return `${base}${base.includes('?') ? '&' : '?'}${params.toString()}`;
  }

  private writeLog(line: string): void {
    if (!this.log) return;
    this.log(this.redact(line));
  }

  /** `text` without the secrets in use (the token, and its Basic form): for log lines and what a service says in an error. */
  private redact(text: string): string {
    for (const secret of this.auth.secrets()) {
      this.redactor.add(secret);
      this.redactor.add(basicCredentials(secret));
    }
    return this.redactor.redact(text);
  }

  /** The longest the transport waits for the service at a time (see giveUpAfterMs); 0 for no bound. */
  get giveUpAfterMs(): number {
    return this.settings.giveUpAfterMs;
  }

  /** How the token is sent now (see TransportOptions.authScheme). */
  get authScheme(): 'bearer' | 'basic' {
    return this.#scheme;
  }

  /** What requests are waiting for now (a 429's pause, a back-off from failures), for progress displays. */
  waits(): TransportWait[] {
    return [...this.#waits];
  }

  /** Runs `work` (a wait) with `wait` shown in waits() meanwhile. */
  private async waiting<T>(wait: TransportWait | null, work: () => Promise<T>): Promise<T> {
    if (wait === null) return work();
    this.#waits.add(wait);
    try {
      return await work();
    } finally {
      this.#waits.delete(wait);
    }
  }

  /** Waits `ms` before trying again after failures, shown in waits(). */
  private sleepAfterFailure(ms: number, signal: AbortSignal | undefined): Promise<void> {
    return this.waiting(
      { reason: 'outage', detail: `failing for ${this.silentFor()}`, until: this.clock.now() + ms },
      () => this.clock.sleep(ms, signal),
    );
  }

  /**
   * The longest single wait allowed: `giveUpAfterMs` bounds every wait, whatever asks for it
   * (a `Retry-After`, a window's reset, an outage); `maxRetryAfterMs` bounds what the service may
   * ask for when no budget is set.
   */
  private get longestWaitMs(): number {
    const budget = this.settings.giveUpAfterMs > 0 ? this.settings.giveUpAfterMs : Number.POSITIVE_INFINITY;
    return Math.min(budget, this.settings.retry.maxRetryAfterMs);
  }

  /** Said when a wait the service asks for is longer than the transport waits: what, how long, and when to come back. */
  private tooLongNote(waitMs: number, what: 'retry-after' | 'reset' | 'pace'): string {
    const at = new Date(this.clock.now() + waitMs).toISOString().replace(/\.\d{3}Z$/, 'Z');
    const wait = formatDuration(waitMs);
    const asked =
      what === 'retry-after'
        ? `its Retry-After asks for a wait of ${wait}`
        : what === 'reset'
          ? `the rate limit resets in ${wait}`
          : `the rate limit lets the next request go in ${wait}`;
    const bound =
      this.settings.giveUpAfterMs > 0 && this.settings.giveUpAfterMs <= this.settings.retry.maxRetryAfterMs
        ? `the ${formatDuration(this.settings.giveUpAfterMs)} a wait may take (--give-up-after)`
        : `the ${formatDuration(this.settings.retry.maxRetryAfterMs)} a wait may take`;
    return `; ${asked}, longer than ${bound}: run again after ${at}`;
  }

  /** Whether a request that failed `attempt` times in a row may be tried again (see giveUpAfterMs). */
  private mayRetry(attempt: number): boolean {
    if (attempt <= this.settings.retry.limit) return true;
    return this.settings.giveUpAfterMs > 0 && this.clock.now() - this.#heardAt < this.settings.giveUpAfterMs;
  }

  /** How long the service has been failing or out of reach, for messages. */
  private silentFor(): string {
    return formatDuration(this.clock.now() - this.#heardAt);
  }

  /**
   * Waits before try number `attempt + 1` of something that failed `attempt` times: the same
   * capped, jittered backoff as the transport's own retries. For callers that reconcile a write
   * whose answer was lost before they look it up.
   */
  async backoff(attempt: number, signal?: AbortSignal): Promise<void> {
    // Ended by the caller's signal or the run's stop, like every other wait.
    const either = eitherSignal(signal, this.stopSignal);
    try {
      await this.clock.sleep(retryDelay(attempt, this.settings.retry, this.random), either.signal);
    } finally {
      either.clear();
    }
  }

  /** Sends a request and reads the JSON answer. Throws an ApiError for any failure. */
  async request<T = unknown>(request: ApiRequest): Promise<ApiResponse<T>> {
    const answer = await this.exchange(request, readWhole);
    const text = answer.body.length === 0 ? '' : answer.body.toString('utf8');
    let body: unknown = null;
    const type = String(answer.headers['content-type'] ?? '');
    if (text !== '' && type.includes('json')) {
      try {
        body = JSON.parse(text);
      } catch (error) {
        throw new ApiError('API_RESPONSE_INVALID', 'the service sent a JSON body that does not parse', {
          method: request.method,
          path: this.resolvePath(request.path, request.query),
          status: answer.statusCode,
          cause: error,
        });
      }
    } else if (text !== '') {
      body = text;
    }
    return { status: answer.statusCode, headers: answer.headers, body: body as T };
  }

  /**
   * Sends a request and hands back the undici answer with its body unread (downloads). Success
   * statuses and `accept`ed ones are returned; everything else is thrown as an ApiError.
   */
  send(request: ApiRequest): Promise<Dispatcher.ResponseData> {
    return this.exchange(request, readStream);
  }

  /**
   * The retry loop of every request: pacing, the token, the attempt, and the sorting of what came
   * back. When nothing has to wait (the governor has a slot, the token is at hand) the request is
   * handed to the connection pool before the first `await`, in the caller's own turn: a list's
   * next page leaves before the current one is worked through, and a row's create costs no
   * promise of pacing or of the token.
   */
  private async exchange<A extends Answer>(request: ApiRequest, read: Reader<A>): Promise<A> {
    const idempotent = request.idempotent ?? request.method !== 'POST';
    const waits = eitherSignal(request.waitSignal ?? request.signal, this.stopSignal);
    // A read may be cut off and asked again later; a write under way is left to finish.
    const reads = idempotent
      ? eitherSignal(request.signal, this.stopSignal)
      : { signal: request.signal, clear: () => {} };
    try {
      return await this.attempts(request, read, idempotent, waits.signal, reads.signal);
    } finally {
      waits.clear();
      reads.clear();
    }
  }

  private async attempts<A extends Answer>(
    request: ApiRequest,
    read: Reader<A>,
    idempotent: boolean,
    waitSignal: AbortSignal | undefined,
    readSignal: AbortSignal | undefined,
  ): Promise<A> {
    const method = request.method;
    const path = this.resolvePath(request.path, request.query);
    const where = { method, path };
    const retry = this.settings.retry;
    let attempt = 0;
    let refreshed = false;
    let switchedScheme = false;
    let rateLimitedTimes = 0;
    // The same text for every attempt.
    const json = request.json === undefined ? undefined : JSON.stringify(request.json);
    /** What the next acquire waits for, after a 429. */
    let paused: TransportWait | null = null;

    for (;;) {
      attempt += 1;
      // Most requests find a slot free and nobody waiting: no promise, no turn of the event loop.
      // The window of the request's slot, handed back with its answer (RateGovernor.observe).
      let slotWindow: number | null;
      if (paused === null && !waitSignal?.aborted && this.governor.tryAcquire()) {
        slotWindow = this.governor.slotWindow;
      } else {
        try {
          slotWindow = await this.waiting(paused, () => this.governor.acquire(waitSignal, this.longestWaitMs));
        } catch (error) {
          if (!(error instanceof RateWaitTooLong)) throw error;
          throw new ApiError(
            'API_RATE_LIMITED',
            `the rate limit holds requests back${this.tooLongNote(error.waitMs, 'pace')}`,
            {
              ...where,
              retryAfterMs: error.waitMs,
              hint: WAIT_TOO_LONG_HINT,
            },
          );
        }
      }
      paused = null;
      let token = this.auth.tokenNow?.() ?? null;
      if (token === null) {
        try {
          token = await this.auth.token();
        } catch (error) {
          this.governor.unanswered();
          // A refresh that could not reach the service (down, restarting) waits like a request.
          if (!isOutage(error) || !this.mayRetry(attempt)) throw error;
          await this.sleepAfterFailure(retryDelay(attempt, retry, this.random), waitSignal);
          continue;
        }
      }
      this.#sent += 1;
      const headers: Record<string, string> = { accept: 'application/json', 'user-agent': this.settings.userAgent };
      if (request.headers !== undefined) Object.assign(headers, request.headers);
      headers.authorization = this.#authorization(token);
      let body: string | Buffer | Readable | undefined;
      if (json !== undefined) {
        body = json;
        headers['content-type'] = 'application/json';
      } else {
        body = typeof request.body === 'function' ? request.body() : request.body;
      }
      const deadline = request.deadlineMs === undefined ? null : answerDeadline(request.deadlineMs, readSignal);
      const signal = deadline === null ? readSignal : deadline.signal;
      let answer: A;
      try {
        answer = await read(
          this.dispatcher,
          {
            origin: this.origin,
            path,
            method,
            headers,
            body: body ?? null,
            headersTimeout: this.settings.timeoutMs,
            bodyTimeout: this.settings.timeoutMs,
          },
          signal,
        );
      } catch (error) {
        deadline?.clear();
        this.governor.unanswered();
        if (readSignal?.aborted) throw error;
        const code = errorCodeOf(error);
        const sent = !NOT_SENT.has(code ?? '');
        const reason = `${code ?? 'network error'}: ${(error as Error).message}`;
        this.writeLog(`${method} ${path} failed (${reason})`);
        if (sent && !idempotent) {
          throw new AmbiguousWriteError(`the connection failed after the request was sent (${reason})`, {
            ...where,
            cause: error,
          });
        }
        // Another attempt cut off by its deadline would run past the budget: the wait ends here.
        const past =
          deadline?.signal.aborted === true &&
          this.settings.giveUpAfterMs > 0 &&
          this.clock.now() - this.#heardAt + (request.deadlineMs ?? 0) > this.settings.giveUpAfterMs;
        if (past || !this.mayRetry(attempt)) {
          throw new ApiError(
            deadline?.signal.aborted || code?.includes('TIMEOUT') ? 'API_TIMEOUT' : 'API_NETWORK',
            `cannot reach the service (${reason}) after ${attempt} attempts${this.giveUpNote()}`,
            {
              ...where,
              cause: error,
              hint: 'Check the network and the base address; the run can be resumed.',
            },
          );
        }
        await this.sleepAfterFailure(retryDelay(attempt, retry, this.random), waitSignal);
        continue;
      }

      const status = answer.statusCode;
      this.governor.observe(answer.headers, slotWindow);
      if (!SERVICE_FAILURES.has(status)) this.#heardAt = this.clock.now();
      if (this.log) this.writeLog(`${method} ${path} -> ${status}`);
      if ((status >= 200 && status < 300) || request.accept?.includes(status)) {
        // The deadline goes on while the caller reads a streamed body, and ends with it; a body
        // read whole is in already.
        if (deadline) {
          if (Buffer.isBuffer(answer.body)) deadline.clear();
          else answer.body.once('close', deadline.clear);
        }
        return answer;
      }

      // A service may quote the request back (its Authorization header too): never into an error.
      const errorBody = await readErrorBody(answer, (text) => this.redact(text));
      deadline?.clear();
      if (
        status === 401 &&
        !switchedScheme &&
        this.#scheme === 'basic' &&
        offersOnlyBearer(answer.headers['www-authenticate'])
      ) {
        // A service that takes the token as a bearer token only (the newer service, the sandbox).
        switchedScheme = true;
        this.#scheme = 'bearer';
        attempt -= 1;
        continue;
      }
      if (status === 401 && !refreshed && this.auth.refreshAfterUnauthorized) {
        refreshed = true;
        if (await this.auth.refreshAfterUnauthorized()) {
          attempt -= 1;
          continue;
        }
      }
      if (status === 429) {
        const retryAfterMs = parseRetryAfter(answer.headers['retry-after'], this.clock.now());
        const waitMs = this.governor.onRateLimited(retryAfterMs);
        rateLimitedTimes += 1;
        // A 429 means nothing was done: safe to send again, writes included, within reason.
        if (waitMs <= this.longestWaitMs && rateLimitedTimes <= 10) {
          paused = {
            reason: 'rate-limit',
            detail: retryAfterMs !== undefined ? 'Retry-After' : 'the reset',
            until: this.clock.now() + waitMs,
          };
          attempt -= 1;
          continue;
        }
        if (waitMs <= this.longestWaitMs) throw errorFromStatus(status, errorBody, where, { retryAfterMs: waitMs });
        throw errorFromStatus(status, errorBody, where, {
          retryAfterMs: waitMs,
          note: this.tooLongNote(waitMs, retryAfterMs !== undefined ? 'retry-after' : 'reset'),
          hint: WAIT_TOO_LONG_HINT,
        });
      }
      if (RETRYABLE_STATUSES.has(status)) {
        if (!idempotent && status !== 408) {
          throw new AmbiguousWriteError(`the service answered ${status} after the request was sent`, {
            ...where,
            status,
            serviceMessage: messageOf(errorBody),
          });
        }
        const retryAfterMs = parseRetryAfter(answer.headers['retry-after'], this.clock.now());
        const longer = retryAfterMs !== undefined && retryAfterMs > this.longestWaitMs;
        if (this.mayRetry(attempt) && !longer) {
          await this.sleepAfterFailure(retryDelay(attempt, retry, this.random, retryAfterMs), waitSignal);
          continue;
        }
        if (longer)
          throw errorFromStatus(status, errorBody, where, {
            retryAfterMs,
            note: this.tooLongNote(retryAfterMs, 'retry-after'),
            hint: WAIT_TOO_LONG_HINT,
          });
      }
      const failed = errorFromStatus(status, errorBody, where);
      if (SERVICE_FAILURES.has(status) && this.settings.giveUpAfterMs > 0) failed.message += this.giveUpNote();
      throw failed;
    }
  }

  #authorizationFor = '';
  #authorizationScheme: 'bearer' | 'basic' = 'bearer';
  #authorizationHeader = '';

  /** The Authorization header for `token` in the scheme in use, made again only when either changes. */
  #authorization(token: string): string {
    if (
      token !== this.#authorizationFor ||
      this.#scheme !== this.#authorizationScheme ||
      this.#authorizationHeader === ''
    ) {
      this.#authorizationFor = token;
      this.#authorizationScheme = this.#scheme;
      this.#authorizationHeader = this.#scheme === 'basic' ? `Basic ${basicCredentials(token)}` : `Bearer ${token}`;
    }
    return this.#authorizationHeader;
  }

  /** Said when a request gives up under giveUpAfterMs: how long the service has been failing. */
  private giveUpNote(): string {
    if (this.settings.giveUpAfterMs === 0) return '';
    return `; the service has given no useful answer for ${this.silentFor()} (the budget is ${formatDuration(this.settings.giveUpAfterMs)})`;
  }

  async close(): Promise<void> {
    try {
      if (this.ownsDispatcher) await this.dispatcher.close();
    } finally {
      await this.sharedBudget?.close();
    }
  }
}

const WAIT_TOO_LONG_HINT =
  'Nothing was lost: run the same command again after the time given (a run goes on where it stopped), or give a longer --give-up-after.';

/** `TOKEN:x` in base64: HTTP Basic as the published v1 clients send it (the password is not read). */
function basicCredentials(token: string): string {
  return Buffer.from(`${token}:x`, 'utf8').toString('base64');
}

/** Whether a `WWW-Authenticate` header offers the Bearer scheme and not Basic. */
function offersOnlyBearer(header: string | string[] | undefined): boolean {
  const text = (Array.isArray(header) ? header.join(', ') : (header ?? '')).toLowerCase();
  return /(^|[\s,])bearer\b/.test(text) && !/(^|[\s,])basic\b/.test(text);
}

/** Deadlines following each caller's signal; the signal holds one listener for all of them. */
const followers = new WeakMap<AbortSignal, Set<AbortController>>();

function abortFollowers(this: AbortSignal): void {
  const following = followers.get(this);
  followers.delete(this);
  for (const controller of following ?? []) controller.abort(this.reason);
}

/**
 * A whole-answer deadline (ApiRequest.deadlineMs), which also ends when `outer` (the caller's
 * signal) does: a timer of the event loop, like undici's own header and body timeouts, not the
 * injected clock, whose sleeps tests end at once. Unref'd: it never keeps the process alive.
 * Not `AbortSignal.any`: on Node 20 every signal made from a long-lived one (a run's Ctrl-C
 * signal) stays reachable from it, about a kilobyte a request for the length of the run.
 */
function answerDeadline(ms: number, outer: AbortSignal | undefined): { signal: AbortSignal; clear: () => void } {
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new AnswerDeadlineError(ms)), ms);
  timer.unref();
  const unfollow = follow(controller, outer);
  const clear = (): void => {
    clearTimeout(timer);
    unfollow();
  };
  return { signal: controller.signal, clear };
}

/** Makes `controller` abort when `outer` does, with one listener on `outer` for all; returns the undoing. */
function follow(controller: AbortController, outer: AbortSignal | undefined): () => void {
  if (!outer) return () => {};
  if (outer.aborted) {
    controller.abort(outer.reason);
    return () => {};
  }
  let following = followers.get(outer);
  if (!following) {
    following = new Set();
    followers.set(outer, following);
    outer.addEventListener('abort', abortFollowers, { once: true });
  }
  const set = following;
  set.add(controller);
  return () => {
    set.delete(controller);
    if (set.size === 0 && followers.get(outer) === set) {
      followers.delete(outer);
      outer.removeEventListener('abort', abortFollowers);
    }
  };
}

/**
 * A signal that aborts when either does: the caller's, and the transport's stop signal (a run's
 * Ctrl-C). Most requests of a run are given the stop signal itself, and need no new one.
 */
function eitherSignal(
  own: AbortSignal | undefined,
  stop: AbortSignal | undefined,
): { signal: AbortSignal | undefined; clear: () => void } {
  if (own === undefined || own === stop) return { signal: stop, clear: () => {} };
  if (stop === undefined) return { signal: own, clear: () => {} };
  const controller = new AbortController();
  const unfollowOwn = follow(controller, own);
  const unfollowStop = follow(controller, stop);
  return {
    signal: controller.signal,
    clear: () => {
      unfollowOwn();
      unfollowStop();
    },
  };
}

/** Answers that say the service itself failed: they do not show it is up. */
const SERVICE_FAILURES: ReadonlySet<number> = new Set([408, 500, 502, 503, 504]);

/** A failure to reach the service or of the service, as a token refresh reports it. */
function isOutage(error: unknown): boolean {
  if (!(error instanceof ApiError)) return false;
  return (
    error.code === 'API_NETWORK' ||
    error.code === 'API_TIMEOUT' ||
    (error.status !== undefined && SERVICE_FAILURES.has(error.status))
  );
}

function messageOf(body: unknown): string | undefined {
  if (body && typeof body === 'object' && typeof (body as { message?: unknown }).message === 'string') {
    return (body as { message: string }).message;
  }
  return undefined;
}

/** What one attempt hands back: its status and headers, and its body read whole or as a stream. */
type Answer = Pick<Dispatcher.ResponseData, 'statusCode' | 'headers'> & {
  body: Buffer | Dispatcher.ResponseData['body'];
};

/** An answer read whole: what request() parses. */
interface WholeAnswer {
  statusCode: number;
  headers: Record<string, string | string[] | undefined>;
  body: Buffer;
}

/** Sends one attempt and reads its answer, either whole or as a stream; `signal` ends it. */
type Reader<A extends Answer> = (
  dispatcher: Dispatcher,
  options: Dispatcher.DispatchOptions,
  signal: AbortSignal | undefined,
) => Promise<A>;

/** The answer as a stream, through undici's request(): downloads, and reads that parse as they go. */
const readStream: Reader<Dispatcher.ResponseData> = (dispatcher, options, signal) =>
  streamRequest(dispatcher, { ...options, signal: signal ?? null });

/**
 * The answer read whole into one buffer, straight from undici's dispatch: a JSON answer needs no
 * stream, and undici's request() gave every answer a readable stream, an async resource and their
 * events, which cost more than parsing the answer. `signal` (the caller's, or a whole-answer
 * deadline) ends it while the headers or the body are on their way.
 */
const readWhole: Reader<WholeAnswer> = (dispatcher, options, signal) =>
  new Promise<WholeAnswer>((resolve, reject) => {
    const chunks: Buffer[] = [];
    let statusCode = 0;
    let headers: WholeAnswer['headers'] = {};
    let controller: Dispatcher.DispatchController | null = null;
    const onAbort = (): void => controller?.abort(signal?.reason);
    const settle = (): void => signal?.removeEventListener('abort', onAbort);
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      dispatcher.dispatch(options, {
        onRequestStart(started) {
          controller = started;
          if (signal?.aborted) started.abort(signal.reason);
        },
        onResponseStart(_started, status, received) {
          statusCode = status;
          headers = received;
          // A 1xx answer (100 Continue) comes before the real one.
          chunks.length = 0;
        },
        onResponseData(_started, chunk) {
          chunks.push(chunk);
        },
        onResponseEnd() {
          settle();
          resolve({ statusCode, headers, body: chunks.length === 1 ? (chunks[0] as Buffer) : Buffer.concat(chunks) });
        },
        onResponseError(_started, error) {
          settle();
          reject(error);
        },
      });
    } catch (error) {
      settle();
      reject(error);
    }
  });

/** Whether a query has a value to send. */
function hasValues(query: NonNullable<ApiRequest['query']>): boolean {
  for (const key in query) if (query[key] !== undefined) return true;
  return false;
}

async function readErrorBody(answer: Answer, redact: (text: string) => string): Promise<unknown> {
  const text = redact(
    Buffer.isBuffer(answer.body) ? answer.body.toString('utf8') : await answer.body.text().catch(() => ''),
  );
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return { message: text.slice(0, 500) };
  }
}
