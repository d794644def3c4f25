import { describe, expect, it } from 'vitest';
import { RateGovernor } from '../../../src/client/governor.ts';
import { FakeClock } from './fake-clock.ts';

/** A fixed-window limiter like the service's: `quota` requests per `windowMs`, headers per hour. */
class FakeService {
  private windowEnd = 0;
  private count = 0;
  answered429 = 0;
  constructor(
    private readonly quota: number,
    private readonly windowMs: number,
    private readonly clock: FakeClock,
    /** Windows on whole multiples of their length, like the sandbox's (else from the first request). */
    private readonly aligned = false,
  ) {}
  handle(): { status: number; headers: Record<string, string> } {
    const now = this.clock.now();
    if (now >= this.windowEnd) {
      this.windowEnd = this.aligned ? (Math.floor(now / this.windowMs) + 1) * this.windowMs : now + this.windowMs;
      this.count = 0;
    }
    this.count += 1;
    const headers = {
      'x-ratelimit-limit': String(Math.round((this.quota * 3_600_000) / this.windowMs)),
      'x-ratelimit-remaining': String(Math.max(0, this.quota - this.count)),
      'x-ratelimit-reset': String(Math.ceil(this.windowEnd / 1000)),
    };
    if (this.count > this.quota) {
      this.answered429 += 1;
      return { status: 429, headers };
    }
    return { status: 200, headers };
  }
}

/**
 * Sends `requests` through the governor. Each answer is read `inFlight - 1` requests later, as
 * with that many requests under way: the governor decides on the next ones before it has heard
 * how the last ones were counted.
 */
async function run(
  governor: RateGovernor,
  service: FakeService,
  clock: FakeClock,
  requests: number,
  costMs = 50,
  inFlight = 1,
): Promise<number[]> {
  const sentAt: number[] = [];
  const unread: Array<{ status: number; headers: Record<string, string> }> = [];
  const read = (): void => {
    const answer = unread.shift();
    if (!answer) return;
    governor.observe(answer.headers);
    if (answer.status === 429) governor.onRateLimited(undefined);
  };
  while (sentAt.length < requests) {
    await governor.acquire();
    const answer = service.handle();
    if (answer.status !== 429) sentAt.push(clock.now());
    unread.push(answer);
    if (unread.length >= inFlight) read();
    clock.time += costMs; // each request takes this long
  }
  return sentAt;
}

describe('RateGovernor', () => {
  it('lets a short run through at full speed (burst)', async () => {
    const clock = new FakeClock();
    const governor = new RateGovernor(clock);
    const service = new FakeService(4000, 3_600_000, clock);
    const sentAt = await run(governor, service, clock, 300);
    expect(clock.sleeps).toEqual([]);
    expect(service.answered429).toBe(0);
    expect((sentAt.at(-1) as number) - (sentAt[0] as number)).toBe(299 * 50);
  });

  it('uses the whole quota of a long run within 5% of the allowed rate and never hits 429 after the first window', async () => {
    const clock = new FakeClock();
    const governor = new RateGovernor(clock);
    const service = new FakeService(100, 60_000, clock);
    const sentAt = await run(governor, service, clock, 2000);
    expect(service.answered429).toBe(0);
    const hours = ((sentAt.at(-1) as number) - (sentAt[0] as number)) / 3_600_000;
    const rate = (sentAt.length - 1) / hours;
    expect(rate).toBeGreaterThan(6000 * 0.95);
    expect(rate).toBeLessThanOrEqual(6000 * 1.0);
  });

  it('with the real service figures paces 4,000 per hour', async () => {
    const clock = new FakeClock();
    const governor = new RateGovernor(clock);
    const service = new FakeService(4000, 3_600_000, clock);
    // Three whole windows: a partial last window would count its burst as extra rate.
    const sentAt = await run(governor, service, clock, 12_000);
    expect(service.answered429).toBe(0);
    const rate = (sentAt.length - 1) / (((sentAt.at(-1) as number) - (sentAt[0] as number)) / 3_600_000);
    expect(rate).toBeGreaterThan(4000 * 0.95);
    expect(rate).toBeLessThanOrEqual(4000);
  });

  it('pauses everything after a 429 until the reset, or for Retry-After when given', async () => {
    const clock = new FakeClock();
    const governor = new RateGovernor(clock);
    const reset = Math.floor(clock.now() / 1000) + 30;
    governor.observe({ 'x-ratelimit-limit': '4000', 'x-ratelimit-remaining': '0', 'x-ratelimit-reset': String(reset) });
    // One request left of 4,000 an hour: a window of about a second, so a margin of 10 ms.
    expect(governor.onRateLimited(undefined)).toBe(30_010);
    await governor.acquire();
    expect(clock.sleeps).toEqual([30_010]);

    const other = new RateGovernor(clock);
    expect(other.onRateLimited(5_000)).toBe(5_000);
    expect(other.state().pausedUntil).toBe(clock.now() + 5_000);
  });

  it.each([
    ['a one-second window (--rate-limit 40/s)', 40, 1000, 5, 40, 0.97],
    ['the hourly window', 4000, 3_600_000, 50, 4, 0.999],
  ])(
    'uses %s to the margin it allows, with no 429, 8 requests under way',
    async (_label, quota, windowMs, costMs, windows, share) => {
      const clock = new FakeClock(Date.parse('2026-01-01T00:00:00.500Z'));
      const governor = new RateGovernor(clock);
      const service = new FakeService(quota, windowMs, clock, true);
      const sentAt = await run(governor, service, clock, quota * windows, costMs, 8);
      expect(service.answered429).toBe(0);
      const perWindow = new Map<number, number>();
      for (const at of sentAt)
        perWindow.set(Math.floor(at / windowMs), (perWindow.get(Math.floor(at / windowMs)) ?? 0) + 1);
      // Whole windows only: the first starts mid-window, the last is cut by the count of requests.
      const full = [...perWindow.entries()].sort((a, b) => a[0] - b[0]).slice(1, -1);
      expect(full.length).toBeGreaterThan(0);
      const used = full.reduce((sum, [, n]) => sum + n, 0) / (full.length * quota);
      expect(used).toBeGreaterThanOrEqual(share);
    },
  );

  it('counts requests made with the same token by someone else', () => {
    const clock = new FakeClock();
    const governor = new RateGovernor(clock);
    const reset = String(Math.floor(clock.now() / 1000) + 3600);
    governor.observe({ 'x-ratelimit-limit': '4000', 'x-ratelimit-remaining': '3999', 'x-ratelimit-reset': reset });
    governor.observe({ 'x-ratelimit-limit': '4000', 'x-ratelimit-remaining': '2500', 'x-ratelimit-reset': reset });
    expect(governor.state()).toMatchObject({ limitPerHour: 4000, remaining: 2500 });
  });

  it('ignores answers without rate-limit headers', async () => {
    const clock = new FakeClock();
    const governor = new RateGovernor(clock);
    governor.observe({ 'content-type': 'application/json' });
    for (let i = 0; i < 50; i += 1) await governor.acquire();
    expect(clock.sleeps).toEqual([]);
    expect(governor.state().remaining).toBeNull();
  });
});
