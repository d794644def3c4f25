import { z } from 'zod';

export const retryOptionsSchema = z.object({
  /** How many times a failed idempotent request is tried again. @default 5 */
  limit: z.number().int().min(0).default(5),
  /** Delay before the first retry, in milliseconds; it doubles with every attempt. @default 500 */
  baseDelayMs: z.number().int().min(0).default(500),
  /** Upper bound of one computed delay, in milliseconds. @default 30000 */
  maxDelayMs: z.number().int().min(0).default(30_000),
  /**
   * Longest wait the client accepts from a `Retry-After` or a rate-limit reset before it gives up
   * with API_RATE_LIMITED, in milliseconds. @default 3900000 (a little over the hourly window)
   */
  maxRetryAfterMs: z.number().int().min(0).default(3_900_000),
});

export type RetryOptions = z.input<typeof retryOptionsSchema>;
export type RetrySettings = z.output<typeof retryOptionsSchema>;

/** Statuses worth another try for a request that is safe to repeat. */
export const RETRYABLE_STATUSES: ReadonlySet<number> = new Set([408, 429, 500, 502, 503, 504]);

/**
 * The delay before retry number `attempt` (1 for the first retry): capped exponential backoff with
 * full jitter, so that many clients failing together do not retry in step. A `Retry-After` from
 * the service wins and gets no jitter: the service said exactly when.
 */
export function retryDelay(
  attempt: number,
  settings: RetrySettings,
  random: () => number,
  retryAfterMs?: number,
): number {
  if (retryAfterMs !== undefined) return Math.max(0, retryAfterMs);
  const ceiling = Math.min(settings.maxDelayMs, settings.baseDelayMs * 2 ** (attempt - 1));
  // Full jitter, but never less than half the ceiling, so a retry storm still spreads out.
  return Math.round(ceiling / 2 + random() * (ceiling / 2));
}

/** Parses `Retry-After` (seconds or an HTTP date) into milliseconds from `now`. */
export function parseRetryAfter(value: string | string[] | undefined, now: number): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || text.trim() === '') return undefined;
  if (/^\d+$/.test(text.trim())) return Number(text.trim()) * 1000;
  const date = Date.parse(text);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
