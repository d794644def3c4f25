import type { Clock } from '../../../src/client/clock.ts';

/** A clock whose sleeps return at once, move time forward and are recorded. */
export class FakeClock implements Clock {
  readonly sleeps: number[] = [];
  constructor(public time = Date.parse('2026-01-01T00:00:00Z')) {}
  now(): number {
    return this.time;
  }
  async sleep(ms: number): Promise<void> {
    this.sleeps.push(ms);
    this.time += Math.max(0, ms);
  }
}
