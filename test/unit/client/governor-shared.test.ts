import { describe, expect, it } from 'vitest';
import type { Clock } from '../../../src/client/clock.ts';
import { RateGovernor } from '../../../src/client/governor.ts';
import type { SharedBudget, SharedWindow, SlotClaim, SlotGrant } from '../../../src/client/shared-budget.ts';

/**
 * The governor with a budget shared by several processes (issue 42), on a virtual clock: the
 * governors of two "processes" claim slots from one budget (in memory here, with the PostgreSQL
 * budget's rules; that one is tested against a real server in test/integration) and together
 * follow one pacing line: no 429, the whole quota used.
 */

/** Time that moves only when every waiter is asleep: to the next sleeper's wake-up. */
class VirtualClock implements Clock {
  private readonly timers: Array<{ at: number; wake: () => void }> = [];
  constructor(public time: number) {}
  now(): number {
    return this.time;
  }
  sleep(ms: number): Promise<void> {
    return new Promise((wake) => this.timers.push({ at: this.time + Math.max(0, ms), wake }));
  }
  /** Runs until `work` settles: lets everything that can go on do so, then wakes the next sleeper. */
  async run<T>(work: Promise<T>): Promise<T> {
    let done = false;
    const settled = work.finally(() => {
      done = true;
    });
    for (;;) {
      await new Promise((resolve) => setImmediate(resolve));
      if (done) return settled;
      this.timers.sort((a, b) => a.at - b.at);
      const next = this.timers.shift();
      if (!next) throw new Error('stuck: nobody asleep and the work not done');
      this.time = Math.max(this.time, next.at);
      next.wake();
    }
  }
}

/** The PostgreSQL budget's rules in memory: a count per window, from the floor, within the largest quota. */
class MemoryBudget implements SharedBudget {
  readonly windows = new Map<number, { used: number; quota: number; limitPerHour: number }>();
  claims = 0;
  async claim(claim: SlotClaim): Promise<SlotGrant> {
    this.claims += 1;
    const row = this.windows.get(claim.windowEnd);
    if (row && row.used >= Math.max(row.quota, claim.quota)) return { first: claim.quota, count: 0, quota: row.quota };
    const quota = Math.max(row?.quota ?? 0, claim.quota);
    const used = Math.max(row?.used ?? 0, claim.floor) + claim.count;
    this.windows.set(claim.windowEnd, { used, quota, limitPerHour: claim.limitPerHour });
    const first = used - claim.count;
    return { first, count: Math.max(0, Math.min(used, quota) - first), quota };
  }
  async current(now: number): Promise<SharedWindow | null> {
    const ends = [...this.windows.keys()].filter((end) => end > now).sort((a, b) => a - b);
    const end = ends[0];
    if (end === undefined) return null;
    const row = this.windows.get(end) as { quota: number; limitPerHour: number };
    return { windowEnd: end, quota: row.quota, limitPerHour: row.limitPerHour };
  }
  async close(): Promise<void> {}
}

/** The sandbox's limiter: `quota` requests per window aligned to the epoch. */
class AlignedService {
  private readonly counts = new Map<number, number>();
  readonly sentAt: number[] = [];
  answered429 = 0;
  constructor(
    private readonly quota: number,
    private readonly windowMs: number,
    private readonly clock: VirtualClock,
  ) {}
  handle(): Record<string, string> {
    const now = this.clock.now();
    const window = Math.floor(now / this.windowMs);
    const count = (this.counts.get(window) ?? 0) + 1;
    this.counts.set(window, count);
    if (count > this.quota) this.answered429 += 1;
    else this.sentAt.push(now);
    return {
      'x-ratelimit-limit': String(Math.round((this.quota * 3_600_000) / this.windowMs)),
      'x-ratelimit-remaining': String(Math.max(0, this.quota - count)),
      'x-ratelimit-reset': String(((window + 1) * this.windowMs) / 1000),
    };
  }
}

/** `workers` requests under way at once through `governor`, each taking `costMs`, `requests` in all. */
async function process_(
  governor: RateGovernor,
  service: AlignedService,
  clock: VirtualClock,
  requests: number,
  workers: number,
  costMs: number,
): Promise<void> {
  let left = requests;
  const worker = async (): Promise<void> => {
    while (left > 0) {
      left -= 1;
      // As the transport does: the slot's window handed back with the answer.
      const slot = governor.tryAcquire() ? governor.slotWindow : await governor.acquire();
      const headers = service.handle();
      await clock.sleep(costMs);
      governor.observe(headers, slot);
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
}

const START = Date.parse('2026-01-01T00:00:00.300Z');

describe('RateGovernor with a shared budget', () => {
  it.each([
    ['at 40/s (the sandbox)', 40, 1000, 3, 400, 15, 0.95],
    ['at 4,000 an hour (the service)', 4000, 3_600_000, 3, 6000, 50, 0.99],
  ])(
    'processes on one account %s follow one line: no 429, and the limit used in whole windows (but one spare slot a window)',
    async (_label, quota, windowMs, processes, requests, costMs, share) => {
      const clock = new VirtualClock(START);
      const budget = new MemoryBudget();
      const service = new AlignedService(quota, windowMs, clock);
      const governors = Array.from({ length: processes }, () => new RateGovernor(clock, { shared: budget }));
      await clock.run(
        Promise.all(governors.map((governor) => process_(governor, service, clock, requests, 4, costMs))),
      );
      expect(service.answered429).toBe(0);
      const perWindow = new Map<number, number>();
      for (const at of service.sentAt)
        perWindow.set(Math.floor(at / windowMs), (perWindow.get(Math.floor(at / windowMs)) ?? 0) + 1);
      const full = [...perWindow.entries()].sort((a, b) => a[0] - b[0]).slice(1, -1);
      expect(full.length).toBeGreaterThanOrEqual(2);
      const used = full.reduce((sum, [, n]) => sum + n, 0) / (full.length * quota);
      expect(used).toBeGreaterThanOrEqual(share);
    },
  );

  it('each alone (no budget), the same two processes are answered 429', async () => {
    const clock = new VirtualClock(START);
    const service = new AlignedService(40, 1000, clock);
    const governors = [1, 2].map(() => new RateGovernor(clock));
    await clock.run(Promise.all(governors.map((governor) => process_(governor, service, clock, 200, 4, 15))));
    expect(service.answered429).toBeGreaterThan(0);
  });

  it('asks the budget first, then sends one request to learn the window, and the others once it is answered', async () => {
    const clock = new VirtualClock(START);
    const budget = new MemoryBudget();
    const governor = new RateGovernor(clock, { shared: budget });
    // Nothing goes before the budget was asked whether another process knows the window.
    expect(governor.tryAcquire()).toBe(false);
    const probe = await clock.run(governor.acquire());
    expect(probe).toBe(null);
    expect(governor.tryAcquire()).toBe(false);
    let second = false;
    const waiting = governor.acquire().then(() => {
      second = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(second).toBe(false);
    governor.observe(
      {
        'x-ratelimit-limit': '144000',
        'x-ratelimit-remaining': '39',
        'x-ratelimit-reset': '1767225601',
      },
      probe,
    );
    await clock.run(waiting);
    expect(second).toBe(true);
    // The first request's slot was claimed with the second's: slots 0 and 1 of the window.
    expect(budget.windows.get(1_767_225_601_000)).toMatchObject({ used: 2, quota: 40 });
  });

  it('learns the window from the budget when another process has claimed in it: its first request is claimed too', async () => {
    const clock = new VirtualClock(START);
    const budget = new MemoryBudget();
    const windowEnd = Date.parse('2026-01-01T00:00:01Z');
    await budget.claim({ windowEnd, quota: 40, count: 39, floor: 0, limitPerHour: 144_000 });
    const governor = new RateGovernor(clock, { shared: budget });
    let sent = false;
    const first = governor.acquire().then(() => {
      sent = true;
    });
    await clock.run(first);
    // Slot 39 (the window's spare) is not sent: the first request waits for the next window.
    expect(sent).toBe(true);
    expect(clock.now()).toBeGreaterThanOrEqual(windowEnd);
    expect(budget.windows.get(windowEnd)).toMatchObject({ used: 40 });
    expect(budget.windows.get(windowEnd + 1000)).toMatchObject({ used: 1 });
  });

  it('owes a window the request claimed in the window before that the service counted in it', async () => {
    const clock = new VirtualClock(Date.parse('2026-01-01T00:00:00.900Z'));
    const budget = new MemoryBudget();
    const r0 = Date.parse('2026-01-01T00:00:01Z');
    await budget.claim({ windowEnd: r0, quota: 40, count: 10, floor: 0, limitPerHour: 144_000 });
    const governor = new RateGovernor(clock, { shared: budget });
    const slot = await clock.run(governor.acquire());
    expect(slot).toBe(r0);
    // It reached the service after the reset: counted in the next window, where no claim covers it.
    clock.time = r0 + 20;
    governor.observe(
      { 'x-ratelimit-limit': '144000', 'x-ratelimit-remaining': '39', 'x-ratelimit-reset': String(r0 / 1000 + 1) },
      slot,
    );
    const next = await clock.run(governor.acquire());
    expect(next).toBe(r0 + 1000);
    // The next claim took one slot more, the first, for it: two counted, one sent.
    expect(budget.windows.get(r0 + 1000)).toMatchObject({ used: 2 });
  });

  it('lets the next request learn the window when the first got no answer', async () => {
    const clock = new VirtualClock(START);
    const governor = new RateGovernor(clock, { shared: new MemoryBudget() });
    await clock.run(governor.acquire());
    const waiting = governor.acquire();
    governor.unanswered();
    await clock.run(waiting);
    expect(governor.tryAcquire()).toBe(false);
  });

  it('claims nothing from a service that sends no rate-limit headers', async () => {
    const clock = new VirtualClock(START);
    const budget = new MemoryBudget();
    const governor = new RateGovernor(clock, { shared: budget });
    await clock.run(governor.acquire());
    governor.observe({});
    for (let i = 0; i < 100; i += 1) expect(governor.tryAcquire()).toBe(true);
    expect(budget.claims).toBe(0);
  });

  it('a process that holds a lease and stops leaves the rest of the window and the whole next one to the other', async () => {
    const clock = new VirtualClock(START);
    const budget = new MemoryBudget();
    // The window [0.0 s, 1.0 s) of the service; a dead process claimed 4 of its slots.
    await budget.claim({
      windowEnd: Date.parse('2026-01-01T00:00:01Z'),
      quota: 40,
      count: 4,
      floor: 0,
      limitPerHour: 144_000,
    });
    const service = new AlignedService(40, 1000, clock);
    const governor = new RateGovernor(clock, { shared: budget });
    await clock.run(process_(governor, service, clock, 35 + 39, 4, 5));
    expect(service.answered429).toBe(0);
    // The 36 slots left in the first window (its own request to learn it among them), 40 in the
    // next: each but its spare slot.
    expect(service.sentAt.length).toBe(74);
    expect(clock.now()).toBeLessThan(Date.parse('2026-01-01T00:00:02Z'));
  });

  it('after a 429, fills the window in the budget: the other processes claim no more slots in it', async () => {
    const clock = new VirtualClock(START);
    const budget = new MemoryBudget();
    const governor = new RateGovernor(clock, { shared: budget });
    governor.tryAcquire();
    governor.observe({
      'x-ratelimit-limit': '144000',
      'x-ratelimit-remaining': '39',
      'x-ratelimit-reset': '1767225601',
    });
    governor.onRateLimited(undefined);
    await new Promise((resolve) => setImmediate(resolve));
    const other = await budget.claim({
      windowEnd: 1_767_225_601_000,
      quota: 40,
      count: 1,
      floor: 0,
      limitPerHour: 144_000,
    });
    expect(other.count).toBe(0);
  });
});
