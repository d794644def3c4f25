import type { Clock } from './clock.ts';
import type { SharedBudget, SharedWindow, SlotGrant } from './shared-budget.ts';

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
  /**
   * The account's budget shared with other processes (the PostgreSQL state store's): slots are
   * claimed from it rather than counted here alone, and before the window is known a single
   * request goes, to learn it. @default none: this process paces itself alone
   */
  shared?: SharedBudget;
  /** Most slots claimed from the shared budget at once: what a process that dies may waste. @default 4 */
  leaseSize?: number;
  /**
   * Slots at the end of each window that processes sharing a budget leave unsent: room for a
   * request of the window before that reached the service after its reset (a busy machine), which
   * the service counts in the new window though no claim of it did. @default 1 (none below 10 a window)
   */
  spareSlots?: number;
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
  private readonly shared: SharedBudget | null;
  private readonly leaseSize: number;
  private readonly spareSlots: number;
  /** Whether the shared budget was asked for a window another process knows (once, before the first request). */
  private askedBudget = false;
  /** Slots of the shared budget this process holds and has not sent: `next` to `end - 1` of the window ending at `windowEnd`. */
  private readonly lease = { windowEnd: 0, next: 0, end: 0 };
  /** Requests the service counted in the current window, as its last answer said (the floor of the next claim). */
  private serviceUsed = 0;
  /** The shared count of the current window as last claimed (for state()). */
  private sharedUsed = 0;
  /** Whether any answer has been read: until then, with a shared budget, one request goes at a time. */
  private heard = false;
  /** A request sent to learn the window is under way. */
  private probing = false;
  /**
   * Requests the service counted in a window though no claim of that window covered them (the
   * request sent to learn the window; one claimed in the window before that arrived after its
   * reset), by window end: the next claim in that window takes as many more slots.
   */
  private readonly debts = new Map<number, number>();
  /** The window whose slot the request taken last was sent in (null: none, or no claim). */
  private lastSlotWindow: number | null = null;
  /** Callers waiting for the first answer. */
  private readonly hearing = new Set<() => void>();

  constructor(
    private readonly clock: Clock,
    options: GovernorOptions = {},
  ) {
    this.burstFraction = options.burstFraction ?? 0.1;
    this.fixedMarginMs = options.safetyMarginMs;
    this.shared = options.shared ?? null;
    this.leaseSize = Math.max(1, Math.floor(options.leaseSize ?? 4));
    this.spareSlots = Math.max(0, Math.floor(options.spareSlots ?? 1));
  }

  /** The wait past a reset time (see GovernorOptions.safetyMarginMs). */
  get safetyMarginMs(): number {
    if (this.fixedMarginMs !== undefined) return this.fixedMarginMs;
    if (this.windowMs === null) return 1000;
    return Math.min(1000, Math.max(10, Math.round(this.windowMs / 100)));
  }

  /**
   * Waits until one more request may be sent, and counts it. Callers are served in order. A slot
   * further away than `maxWaitMs` is not waited for: RateWaitTooLong. Resolves with the window
   * the request's slot was claimed in (see slotWindow), to hand back to observe() with its answer.
   */
  acquire(signal?: AbortSignal, maxWaitMs = Number.POSITIVE_INFINITY): Promise<number | null> {
    this.waiting += 1;
    const turn = this.queue.then(() =>
      this.shared ? this.waitForSharedSlot(this.shared, signal, maxWaitMs) : this.waitForSlot(signal, maxWaitMs),
    );
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
    this.lastSlotWindow = null;
    if (this.waiting > 0) return false;
    const now = this.clock.now();
    this.rollWindow(now);
    if (this.shared) return this.trySharedSlot(now);
    if (this.nextAllowedAt(now) > now) return false;
    this.take(now);
    return true;
  }

  /** tryAcquire with a shared budget: a slot of the lease whose time has come, or the request that learns the window. */
  private trySharedSlot(now: number): boolean {
    if (now < this.pausedUntil) return false;
    if (this.resetAt === null) {
      if (!this.heard) {
        // The first request asks the budget first (acquire), the others wait for it.
        if (this.probing || !this.askedBudget) return false;
        this.probing = true;
      }
      this.take(now);
      return true;
    }
    if (this.leaseSlot(now) !== now) return false;
    this.lease.next += 1;
    this.take(now, this.lease.windowEnd);
    return true;
  }

  /**
   * After tryAcquire() said true: the window the request's slot was claimed in, from the shared
   * budget, or null (no budget, or a request sent before the window was known). Handed back to
   * observe() with the answer, it tells a request counted in a window its slot was not of.
   */
  get slotWindow(): number | null {
    return this.lastSlotWindow;
  }

  /**
   * When the lease's next slot may go (at least `now`); `claim` when the lease holds no slot of
   * the current window; `spent` when the window is too near its end for a slot: one sent then
   * might be counted in the next window, whose slots all belong to the next claims.
   */
  private leaseSlot(now: number): number | 'claim' | 'spent' {
    const resetAt = this.resetAt as number;
    const last = resetAt - this.lateGuardMs;
    if (this.lease.windowEnd !== resetAt || this.lease.next >= this.lease.end) return now < last ? 'claim' : 'spent';
    const at = Math.max(now, this.slotTime(this.lease.next));
    return at < last ? at : 'spent';
  }

  /** How near the reset a slot of the shared budget may still go: the safety margin, at most half a pacing step. */
  private get lateGuardMs(): number {
    const quota = this.windowQuota as number;
    const burst = Math.max(1, Math.floor(quota * this.burstFraction));
    const step = (this.windowMs as number) / Math.max(1, quota - burst + 1);
    return Math.min(this.safetyMarginMs, step / 2);
  }

  /** Waits for a slot of the shared budget: the lease's next, or a new lease claimed for the current window. */
  private async waitForSharedSlot(
    shared: SharedBudget,
    signal: AbortSignal | undefined,
    maxWaitMs: number,
  ): Promise<number | null> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.clock.now();
      this.rollWindow(now);
      let at: number;
      if (now < this.pausedUntil) {
        at = this.pausedUntil;
      } else if (this.resetAt === null) {
        if (!this.heard && !this.askedBudget) {
          this.askedBudget = true;
          const known = await shared.current(now);
          if (known !== null && this.resetAt === null) this.adoptWindow(known);
          continue;
        }
        if (this.heard || !this.probing) {
          if (!this.heard) this.probing = true;
          this.take(now);
          return null;
        }
        await this.firstAnswer(signal);
        continue;
      } else {
        const resetAt = this.resetAt;
        const slot = this.leaseSlot(now);
        if (slot === now) {
          this.lease.next += 1;
          this.take(now, resetAt);
          return resetAt;
        }
        if (typeof slot === 'number') at = slot;
        else if (slot === 'claim' && (await this.claimLease(shared, resetAt)) > 0) continue;
        // The window's quota is spent (or its end too near): the next window's slots.
        else at = resetAt + this.safetyMarginMs;
      }
      if (at - now > maxWaitMs) throw new RateWaitTooLong(at - now);
      await this.clock.sleep(at - now, signal);
    }
  }

  /** Claims a lease of the window ending at `windowEnd`: as many slots as callers wait, within leaseSize. Says how many it got. */
  private async claimLease(shared: SharedBudget, windowEnd: number): Promise<number> {
    const quota = this.windowQuota as number;
    const unclaimed = this.debts.get(windowEnd) ?? 0;
    this.debts.delete(windowEnd);
    const wanted = Math.min(this.leaseSize, Math.max(1, this.waiting));
    // Requests the service counted in this window but no claim did are in its count (the floor):
    // claimed now as more slots, the first ones, above the others' claims or within the floor.
    const floor = Math.max(0, this.serviceUsed - unclaimed);
    const grant = await shared.claim({
      windowEnd,
      quota,
      count: wanted + unclaimed,
      floor,
      limitPerHour: this.limitPerHour ?? 0,
    });
    // The window moved on while the claim was on its way: its slots are of no use now.
    if (this.resetAt !== windowEnd) return 0;
    this.learnQuota(grant);
    let first = grant.first;
    let count = grant.count;
    const paid = Math.min(unclaimed, count);
    first += paid;
    count -= paid;
    // The spare slots at the window's end are claimed like any other but left unsent.
    const spare = grant.quota >= 10 ? this.spareSlots : 0;
    count = Math.max(0, Math.min(first + count, grant.quota - spare) - first);
    this.sharedUsed = Math.max(this.sharedUsed, Math.min(grant.quota, grant.first + grant.count));
    if (count === 0) this.sharedUsed = grant.quota;
    this.lease.windowEnd = windowEnd;
    this.lease.next = first;
    this.lease.end = first + count;
    return count;
  }

  /** The window another process is sending in, taken from the budget before this one has sent anything. */
  private adoptWindow(known: SharedWindow): void {
    if (known.limitPerHour <= 0 || known.quota <= 0) return;
    this.limitPerHour = known.limitPerHour;
    this.windowQuota = known.quota;
    this.windowMs = Math.min(3_600_000, Math.max(1000, Math.round((3_600_000 * known.quota) / known.limitPerHour)));
    this.resetAt = known.windowEnd;
  }

  /** A larger quota of the window, which another process has seen: adopted, with the window's length it implies. */
  private learnQuota(grant: SlotGrant): void {
    if (this.windowQuota === null || grant.quota <= this.windowQuota) return;
    this.windowQuota = grant.quota;
    if (this.limitPerHour !== null)
      this.windowMs = Math.min(3_600_000, Math.max(1000, Math.round((3_600_000 * grant.quota) / this.limitPerHour)));
  }

  /** Resolves at the first answer (or when the request sent to learn the window got none), or rejects when `signal` aborts. */
  private firstAnswer(signal: AbortSignal | undefined): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const onAbort = (): void => {
        this.hearing.delete(heard);
        reject(signal?.reason);
      };
      const heard = (): void => {
        signal?.removeEventListener('abort', onAbort);
        resolve();
      };
      this.hearing.add(heard);
      signal?.addEventListener('abort', onAbort, { once: true });
    });
  }

  private wakeHearing(): void {
    const waiting = [...this.hearing];
    this.hearing.clear();
    for (const wake of waiting) wake();
  }

  /**
   * A request went and got no answer (the network failed, the token could not be had): when it
   * was the one sent to learn the window, another may go.
   */
  unanswered(): void {
    if (!this.probing || this.heard) return;
    this.probing = false;
    this.wakeHearing();
  }

  private take(now: number, slotWindow: number | null = null): void {
    this.lastSlotWindow = slotWindow;
    this.used += 1;
    this.recent.push(now);
    while (this.recent.length > 0 && (this.recent[0] as number) < now - 60_000) this.recent.shift();
  }

  private async waitForSlot(signal: AbortSignal | undefined, maxWaitMs: number): Promise<null> {
    for (;;) {
      signal?.throwIfAborted();
      const now = this.clock.now();
      this.rollWindow(now);
      const at = this.nextAllowedAt(now);
      if (at <= now) {
        this.take(now);
        return null;
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
    this.serviceUsed = 0;
    this.sharedUsed = 0;
  }

  private nextAllowedAt(now: number): number {
    if (now < this.pausedUntil) return this.pausedUntil;
    if (this.resetAt === null || this.windowQuota === null || this.windowMs === null) return now;
    if (this.used >= this.windowQuota) return this.resetAt + this.safetyMarginMs;
    return Math.max(now, this.slotTime(this.used));
  }

  /**
   * When slot `slot` (from 0) of the current window may go, on the pacing line: the burst at the
   * window's start, then evenly to its end. The last slot goes one step before the end, not at
   * it: one sent at the reset would count in the next window. Processes sharing a budget send
   * each its own slots at these times, so that together they follow one line.
   */
  private slotTime(slot: number): number {
    const quota = this.windowQuota as number;
    const windowMs = this.windowMs as number;
    const burst = Math.max(1, Math.floor(quota * this.burstFraction));
    const start = (this.resetAt as number) - windowMs;
    if (slot + 1 <= burst || quota <= burst) return start;
    return Math.ceil(start + ((slot + 1 - burst) / (quota - burst + 1)) * windowMs);
  }

  /**
   * Learns from the rate-limit headers of an answer (any status). `slotWindow` is what acquire()
   * (or slotWindow after tryAcquire()) gave for its request: with a shared budget, a request the
   * service counted in another window than its slot's is owed to that window (see debts).
   */
  observe(headers: Record<string, HeaderValue>, slotWindow?: number | null): void {
    if (this.shared && slotWindow !== undefined) this.noteDebt(headers, slotWindow);
    if (!this.heard) {
      this.heard = true;
      this.probing = false;
      this.wakeHearing();
    }
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
      if (this.resetAt !== null && resetAt > this.resetAt) {
        this.used = 0;
        this.serviceUsed = 0;
        this.sharedUsed = 0;
      }
      this.resetAt = resetAt;
    }
    // Requests still in flight are counted locally; the service may count others made with the
    // same token: keep the larger.
    const counted = (this.windowQuota ?? remaining) - remaining;
    this.used = Math.max(this.used, counted);
    if (Math.abs(resetAt - (this.resetAt ?? resetAt)) < 1000) this.serviceUsed = Math.max(this.serviceUsed, counted);
    this.limitPerHour = limit;
  }

  /** A request counted in a later window than its slot's (or sent unclaimed): one more slot owed to that window. */
  private noteDebt(headers: Record<string, HeaderValue>, slotWindow: number | null): void {
    const reset = headerNumber(headers['x-ratelimit-reset']);
    if (reset === undefined || headers['x-ratelimit-limit'] === undefined) return;
    const counted = reset * 1000;
    if (slotWindow !== null && counted - slotWindow < 1000) return;
    // Owed only while that window is not over: a claim in it would come too late.
    if (this.resetAt !== null && counted < this.resetAt - 999) return;
    this.debts.set(counted, (this.debts.get(counted) ?? 0) + 1);
    for (const window of this.debts.keys()) if (window < counted - 1000) this.debts.delete(window);
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
    if (this.shared && this.resetAt !== null && this.windowQuota !== null) {
      // The window is spent for every process: its count raised to the quota, the others claim
      // no more slots in it. Not waited for, and a failure left to the next claim to report: this
      // process pauses anyway.
      const quota = this.windowQuota;
      this.lease.end = this.lease.next;
      this.shared
        .claim({ windowEnd: this.resetAt, quota, count: 0, floor: quota, limitPerHour: this.limitPerHour ?? 0 })
        .catch(() => undefined);
    }
    return this.pausedUntil - now;
  }

  state(): GovernorState {
    const now = this.clock.now();
    const recent = this.recent.filter((t) => t >= now - 60_000).length;
    return {
      limitPerHour: this.limitPerHour,
      remaining:
        this.windowQuota === null ? null : Math.max(0, this.windowQuota - Math.max(this.used, this.sharedUsed)),
      resetAt: this.resetAt,
      pausedUntil: this.pausedUntil > now ? this.pausedUntil : null,
      ratePerHour: recent * 60,
    };
  }
}
