/**
 * crm-ferry/sandbox: the local copy of the service, as its own door, so that a program that only
 * migrates data (`crm-ferry`) never loads the sandbox's web server. docs/library.md and
 * docs/sandbox.md show it in use.
 */
import { asFerryError, FerryError, parseOptions } from './errors/index.ts';
import { type SandboxOptions as SchemaOptions, sandboxOptionsSchema, startSandbox as start } from './sandbox/index.ts';

/** A client application registered with the sandbox's OAuth server. */
export interface SandboxOAuthClient {
  clientId: string;
  /** Empty (the default) for an installed application. */
  clientSecret?: string;
  redirectUri: string;
  name?: string;
}

/** Faults the sandbox makes up, to try a migration's resilience. Each share is from 0 to 1. */
export interface SandboxFaults {
  /** Share of requests answered with a 5xx before anything is done. @default 0 */
  errorRate?: number;
  /** Added latency in milliseconds for every request. @default 0 */
  latencyMs?: number;
  /** Extra random latency, up to this many milliseconds. @default 0 */
  latencyJitterMs?: number;
  /** Share of writes applied and then cut off before the answer. @default 0 */
  dropAfterWriteRate?: number;
}

/**
 * Options of startSandbox: the flags of `crm-ferry sandbox` (docs/sandbox.md). Every one is
 * optional; a wrong one is a FerryError of kind `input` naming it.
 */
export interface SandboxOptions {
  /** @default 0 (a free port) */
  port?: number;
  /** @default '127.0.0.1' */
  host?: string;
  /** Personal tokens of the seeded Administrator (8 characters or more). One is made when none is given. */
  tokens?: string[];
  clients?: SandboxOAuthClient[];
  /** Lifetime of OAuth access tokens in seconds. @default 7200 */
  tokenTtlSeconds?: number;
  /** Requests allowed per user and window; null (the default) for none. */
  rateLimit?: { limit: number; windowSeconds: number } | null;
  /** @default null (none) */
  faults?: SandboxFaults | null;
  /** Seed of the fault injection's random numbers, so that runs repeat. @default 1 */
  seed?: number;
  /** File the state is kept in between runs; null (the default) keeps it in memory only. */
  dataFile?: string | null;
  /** Start from the seeded account even when the data file exists. @default false */
  reset?: boolean;
  /** Largest request body in bytes. @default 10 MiB */
  bodyLimitBytes?: number;
  /** Whether deletes with dependent data are scheduled (202 and a job). @default true */
  scheduledDeletes?: boolean;
  /** How long a scheduled delete takes, in milliseconds. @default 300 */
  jobDurationMs?: number;
  /** Whether the account is a teams edition (activity types can be made). @default true */
  teamsEdition?: boolean;
  /** How long close() waits for requests in flight, in milliseconds. @default 3000 */
  closeGraceMs?: number;
  /** Log each request to standard error. @default false */
  log?: boolean;
  /** Clock for timestamps and token expiry. @default () => new Date() */
  now?: () => Date;
  /** Where a failure to save the data file is reported. @default console.error */
  report?: (message: string) => void;
}

// These options are the schema's, written out so that the door's declarations hold no zod type:
// a difference either way is a type error here.
type Same<A, B> = [A] extends [B] ? ([B] extends [A] ? true : false) : false;
const sameOptions: Same<Required<SandboxOptions>, Required<SchemaOptions>> = true;
void sameOptions;

/** A sandbox listening for requests. */
export interface Sandbox {
  /** Base address, e.g. `http://127.0.0.1:8787`: give it to `connect({ baseUrl })`. */
  readonly url: string;
  /** A personal token of the seeded Administrator: give it to `connect({ token })`. */
  readonly token: string;
  /** Every personal token the sandbox accepts. */
  readonly tokens: readonly string[];
  /**
   * Stops taking connections, lets requests in flight finish (up to `closeGraceMs`) and saves the
   * data file when there is one. Rejects with SANDBOX_STATE when saving had failed.
   */
  close(): Promise<void>;
}

/**
 * Starts a sandbox of the service (by default on 127.0.0.1, on a free port, its state in memory).
 * Its options are the flags of `crm-ferry sandbox`; a wrong one is a FerryError of kind `input`
 * naming it.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const { now: _now, report: _report, ...settings } = options;
  parseOptions(sandboxOptionsSchema.strict(), settings, 'startSandbox');
  let running: Awaited<ReturnType<typeof start>>;
  try {
    running = await start(options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new FerryError(
        'CONFIG_INVALID',
        `startSandbox: cannot listen on ${settings.host ?? '127.0.0.1'}:${settings.port ?? 0} (${code})`,
        {
          cause: error,
          hint: 'Choose another `port` (0 takes a free one) or `host`.',
        },
      );
    }
    throw asFerryError(error, 'startSandbox');
  }
  return { url: running.url, token: running.token, tokens: running.tokens, close: () => running.close() };
}
