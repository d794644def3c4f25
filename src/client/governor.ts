import type { Clock } from './clock.ts';

/** A header of an answer, as node gives it. */
export type HeaderValue = string | string[] | undefined;

function headerNumber(value: HeaderValue): number | undefined {
  const text = Array.isArray(value) ? value[0] : value;
  if (text === undefined || !/^\s*\d+\s*$/.test(text)) return undefined;
  return Number(text);
}

/** Thrown by `acquire` when the next slot is further away than the caller waits. */
export class RateWaitTooLong extends Error {
  constructor(readonly waitMs: number) {
    super(`the next request may go in ${Math.ceil(waitMs / 1000)} s`);
    this.name = 'RateWaitTooLong';
  }
}

/** What the governor knows, for progress displays. */
export interface GovernorState {
  /** Requests allowed per hour (X-RateLimit-Limit), when the service said. */
  limitPerHour: number | null;
  /** Requests left in the current window, as far as the governor knows. */
  remaining: number | null;
  /** When the current window ends (ms since the epoch). */
  resetAt: number | null;
  /** Everything waits until this time after a 429 (ms since the epoch), or null. */
  pausedUntil: number | null;
  /** Requests sent in the last minute, scaled to an hour. */
  ratePerHour: number;
}

export interface GovernorOptions {
  /**
   * Share of a window's quota that may be used at once at the start of the window before pacing
   * begins: short runs go at full speed, long runs are spread out. @default 0.1
   */
  burstFraction?: number;
  /**
   * Extra wait after a reset time, to absorb clock differences with the service. By default it
   * scales with the window: a hundredth of it, at least 10 ms and at most 1,000 ms, so that a
   * one-second window is not left idle half the time and the hourly one loses 0.03%.
   * @default windowMs / 100, within 10..1000
   */
  safetyMarginMs?: number;
}

/**
 * Paces every request made with one token so that a long run uses the whole hourly quota without
 * being answered 429.
 *
 * It learns the window from the `X-RateLimit-*` headers: the quota of the current window (remaining
 * plus what was used), its end (`X-RateLimit-Reset`), and its length (quota over the hourly
 * limit). Within a window it allows a burst of `burstFraction` of the quota, then spaces requests
 * along a straight line that reaches the whole quota at the reset time. After a 429 everything
 * waits until the reset (or `Retry-After`, which wins).
 */
export class RateGovernor {
  private readonly burstFraction: number;
  private readonly fixedMarginMs: number | undefined;
  private limitPerHour: number | null = null;
  private resetAt: number | null = null;
  private windowQuota: number | null = null;
  private windowMs: number | null = null;
  private used = 0;
  private pausedUntil = 0;
  private queue: Promise<void> = Promise.resolve();
  /** Callers of acquire() not yet served: while there are any, tryAcquire() does not pass them. */
  private waiting = 0;
  private readonly recent: number[] = [];

  constructor(
    private readonly clock: Clock,
    options: GovernorOptions = {},
  ) {
    this.burstFraction = options.burstFraction ?? 0.1;
    this.fixedMarginMs = options.safetyMarginMs;
  }

  /** The wait past a reset time (see GovernorOptions.safetyMarginMs). */
  get safetyMarginMs(): number {
    if (this.fixedMarginMs !== undefined) return this.fixedMarginMs;
    if (this.windowMs === null) return 1000;
    return Math.min(1000, Math.max(10, Math.round(this.windowMs / 100)));
  }

  /**
   * Waits until one more request may be sent, and counts it. Callers are served in order. A slot
   * further away than `maxWaitMs` is not waited for: RateWaitTooLong.
   */
  acquire(signal?: AbortSignal, maxWaitMs = Number.POSITIVE_INFINITY): Promise<void> {
    this.waiting += 1;
    const turn = this.queue.then(() => this.waitForSlot(signal, maxWaitMs));
    const served = (): void => {
      this.waiting -= 1;
    };
    this.queue = turn.then(served, served);
    return turn;
  }

  /**
   * Counts one more request and says true when it may be sent now, with nobody waiting before it;
   * false (nothing counted) when the caller must acquire() instead. Most requests of a run are
   * allowed at once: this spares each of them a chain of promises.
   */
  tryAcquire(): boolean {
    if (this.waiting > 0) return false;
    const now = this.clock.now();
    this.rollWindow(now);
    if (this.nextAllowedAt(now) > now) return false;
    this.take(now);
    return true;
  }

  private take(now: number): void {
    this.used += 1;
    this.recent.push(now);
    while (this.recent.length > 0 && (this.recent[0] as number) < now - 60_000) this.recent.shift();
  }

  private async waitForSlot(signal: AbortSignal | undefined, maxWaitMs: number): Promise<void> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.clock.now();
      this.rollWindow(now);
      const at = this.nextAllowedAt(now);
      if (at <= now) {
        this.take(now);
        return;
      }
      if (at - now > maxWaitMs) throw new RateWaitTooLong(at - now);
      await this.clock.sleep(at - now, signal);
    }
  }

  /** When the known window is over, predict the next one until the service says otherwise. */
  private rollWindow(now: number): void {
    if (this.resetAt === null || this.windowMs === null) return;
    if (now < this.resetAt + this.safetyMarginMs) return;
    while (this.resetAt + this.safetyMarginMs <= now) this.resetAt += this.windowMs;
    this.used = 0;
  }

  private nextAllowedAt(now: number): number {
    if (now < this.pausedUntil) return this.pausedUntil;
    if (this.resetAt === null || this.windowQuota === null || this.windowMs === null) return now;
    const quota = this.windowQuota;
    if (this.used >= quota) return this.resetAt + this.safetyMarginMs;
    const burst = Math.max(1, Math.floor(quota * this.burstFraction));
    if (this.used + 1 <= burst || quota <= burst) return now;
    const start = this.resetAt - this.windowMs;
    // The last request of the window goes one step before its end, not at it: one sent at the
    // reset would count in the next window.
    const at = start + ((this.used + 1 - burst) / (quota - burst + 1)) * this.windowMs;
    return Math.max(now, Math.ceil(at));
  }

  /** Learns from the rate-limit headers of an answer (any status). */
  observe(headers: Record<string, HeaderValue>): void {
    // An answer without the headers (a service or sandbox that does not limit) says nothing.
    if (headers['x-ratelimit-limit'] === undefined) return;
    const limit = headerNumber(headers['x-ratelimit-limit']);
    const remaining = headerNumber(headers['x-ratelimit-remaining']);
    const reset = headerNumber(headers['x-ratelimit-reset']);
    if (limit === undefined || remaining === undefined || reset === undefined || limit === 0) return;
    const resetAt = reset * 1000;
    // An answer to a request of an earlier window, read after this one began (requests under way
    // at the turn): taking it would move the window back, and the next roll forward would forget
    // what was sent in this one.
    if (this.resetAt !== null && resetAt <= this.resetAt - 1000) return;
    const newWindow = this.resetAt === null || Math.abs(resetAt - this.resetAt) >= 1000;
    if (newWindow) {
      // The quota of a window is what is left plus at least the request this answer is for; it
      // never shrinks while the hourly limit stays the same.
      const known = this.limitPerHour === limit ? (this.windowQuota ?? 0) : 0;
      const quota = Math.max(remaining + 1, known);
      this.windowMs = Math.min(3_600_000, Math.max(1000, Math.round((3_600_000 * quota) / limit)));
      this.windowQuota = quota;
      // A later window starts from what the service counts; our earlier sends belong to the old one.
      if (this.resetAt !== null && resetAt > this.resetAt) this.used = 0;
      this.resetAt = resetAt;
    }
    // Requests still in flight are counted locally; the service may count others made with the
    // same token: keep the larger.
    this.used = Math.max(this.used, (this.windowQuota ?? remaining) - remaining);
    this.limitPerHour = limit;
  }

  /** A 429 arrived: stop everything until the reset, or for `retryAfterMs` when given. */
  onRateLimited(retryAfterMs: number | undefined): number {
    const now = this.clock.now();
    const until =
      retryAfterMs !== undefined
        ? now + retryAfterMs
        : this.resetAt !== null
          ? this.resetAt + this.safetyMarginMs
          : now + 60_000;
    this.pausedUntil = Math.max(this.pausedUntil, until);
    if (this.windowQuota !== null) this.used = this.windowQuota;
    return this.pausedUntil - now;
  }

  state(): GovernorState {
    const now = this.clock.now();
    const recent = this.recent.filter((t) => t >= now - 60_000).length;
    return {
      limitPerHour: this.limitPerHour,
      remaining: this.windowQuota === null ? null : Math.max(0, this.windowQuota - this.used),
      resetAt: this.resetAt,
      pausedUntil: this.pausedUntil > now ? this.pausedUntil : null,
      ratePerHour: recent * 60,
    };
  }
}
