import { z } from 'zod';

/** A client application registered with the sandbox's OAuth server. */
export const oauthClientSchema = z.object({
  clientId: z.string().min(1),
  /** Empty for an installed application. */
  clientSecret: z.string().default(''),
  redirectUri: z.string().url(),
  name: z.string().default('Registered application'),
});

export const faultSchema = z.object({
  /** Share of requests answered with a 5xx before anything is done. @default 0 */
  errorRate: z.number().min(0).max(1).default(0),
  /** Added latency in milliseconds for every request. @default 0 */
  latencyMs: z.number().int().min(0).default(0),
  /** Extra random latency, up to this many milliseconds. @default 0 */
  latencyJitterMs: z.number().int().min(0).default(0),
  /** Share of writes that are applied and then have their connection dropped before the answer. @default 0 */
  dropAfterWriteRate: z.number().min(0).max(1).default(0),
});

export const rateLimitSchema = z.object({
  /** Requests allowed per window and user. */
  limit: z.number().int().positive(),
  /** Window length in seconds; the header `X-RateLimit-Limit` is scaled to requests per hour. */
  windowSeconds: z.number().int().positive(),
});

/** Options of startSandbox(), normalised once here into fully defaulted settings. */
export const sandboxOptionsSchema = z.object({
  /** @default 0 (any free port) */
  port: z.number().int().min(0).max(65535).default(0),
  /** @default '127.0.0.1' */
  host: z.string().default('127.0.0.1'),
  /** Personal tokens of the seeded Administrator. One is generated when none is given. */
  tokens: z.array(z.string().min(8)).default([]),
  /** Registered OAuth clients. */
  clients: z.array(oauthClientSchema).default([]),
  /** Lifetime of OAuth access tokens in seconds. @default 7200 */
  tokenTtlSeconds: z.number().int().positive().default(7200),
  /** Rate limit per user; null turns it off. @default null */
  rateLimit: rateLimitSchema.nullable().default(null),
  /** Fault injection; null turns it off. @default null */
  faults: faultSchema.nullable().default(null),
  /** Seed of the random numbers used by fault injection, so runs repeat. @default 1 */
  seed: z.number().int().default(1),
  /** File the state is kept in between runs; null keeps it in memory only. @default null */
  dataFile: z.string().nullable().default(null),
  /** Start from the seeded account even when the data file exists. @default false */
  reset: z.boolean().default(false),
  /** Largest request body in bytes (uploads included). @default 10 MiB */
  bodyLimitBytes: z
    .number()
    .int()
    .positive()
    .default(10 * 1024 * 1024),
  /** Whether party and entry deletes with dependent data are scheduled (202 + job). @default true */
  scheduledDeletes: z.boolean().default(true),
  /** How long a scheduled delete takes before its job completes, in milliseconds. @default 300 */
  jobDurationMs: z.number().int().min(0).default(300),
  /** Whether the account is a teams edition (activity types can be created). @default true */
  teamsEdition: z.boolean().default(true),
  /** How long close() waits for requests in flight before cutting them off, in milliseconds. @default 3000 */
  closeGraceMs: z.number().int().min(0).default(3000),
  /** Log each request to stderr. @default false */
  log: z.boolean().default(false),
});

export type SandboxOptions = z.input<typeof sandboxOptionsSchema> & {
  /** Clock for timestamps and token expiry. @default () => new Date() */
  now?: () => Date;
  /** Where a failure to save the data file is reported, with or without `log`. @default console.error */
  report?: (message: string) => void;
};
export type SandboxSettings = z.output<typeof sandboxOptionsSchema>;
