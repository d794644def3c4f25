import { setTimeout as delay } from 'node:timers/promises';
import type { Clock } from '../../src/client/clock.ts';

/**
 * A clock that runs `speed` times faster than real time, shared by the sandbox and the client
 * so that hours of rate-limited traffic pass in seconds while both sides agree on the time.
 */
export function scaledClock(speed: number, start = Date.parse('2026-03-02T09:00:00Z')): Clock & { date: () => Date } {
  const realStart = performance.now();
  const now = (): number => start + Math.round((performance.now() - realStart) * speed);
  return {
    now,
    date: () => new Date(now()),
    sleep: async (ms, signal) => {
      if (ms > 0) await delay(ms / speed, undefined, signal ? { signal } : undefined);
    },
  };
}
