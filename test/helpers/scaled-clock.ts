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

/**
 * A clock that moves `stepMs` forward each time it is read, whatever the machine's speed: time in
 * the sandbox passes with the work it does (a few reads a request), so a token that lives 60 s
 * lives a fixed number of requests on a busy machine as on an idle one.
 */
export function steppingClock(
  stepMs: number,
  start = Date.parse('2026-03-02T09:00:00Z'),
): { now: () => number; date: () => Date } {
  let reads = 0;
  const now = (): number => {
    reads += 1;
    return start + reads * stepMs;
  };
  return { now, date: () => new Date(now()) };
}
