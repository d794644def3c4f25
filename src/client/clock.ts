import { setTimeout as delay } from 'node:timers/promises';

/** Time as the client sees it. Tests inject one that records sleeps instead of waiting. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits `ms` milliseconds; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    if (ms <= 0) return;
    await delay(ms, undefined, signal ? { signal } : undefined);
  },
};
