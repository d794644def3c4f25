/** Time as the client sees it. Tests inject one that records sleeps instead of waiting. */
export interface Clock {
  /** Milliseconds since the epoch. */
  now(): number;
  /** Waits `ms` milliseconds; rejects with the signal's reason when aborted. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/** Sleepers waiting on each signal; the signal holds one listener for all of them. */
const sleepers = new WeakMap<AbortSignal, Set<(reason: unknown) => void>>();

/** What `timers/promises` rejects with: callers tell a stop from a failure by the name. */
function abortError(reason: unknown): Error {
  return Object.assign(new Error('The operation was aborted', { cause: reason }), {
    name: 'AbortError',
    code: 'ABORT_ERR',
  });
}

function wakeAll(this: AbortSignal): void {
  const waiting = sleepers.get(this);
  sleepers.delete(this);
  for (const wake of waiting ?? []) wake(this.reason);
}

/**
 * Waits `ms` milliseconds, ended early by `signal`. Every request of a run waits under the same
 * signal (Ctrl-C), many at once: one listener per sleeper (as `timers/promises` adds) would pile
 * up past Node's warning threshold at --concurrency 16 under faults, so the signal gets a single
 * listener that wakes every sleeper, removed when the last one is done.
 */
function sleepUnder(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.reject(abortError(signal.reason));
  return new Promise<void>((resolve, reject) => {
    let waiting = sleepers.get(signal);
    if (!waiting) {
      waiting = new Set();
      sleepers.set(signal, waiting);
      signal.addEventListener('abort', wakeAll, { once: true });
    }
    const set = waiting;
    const done = (): void => {
      set.delete(onAbort);
      if (set.size === 0 && sleepers.get(signal) === set) {
        sleepers.delete(signal);
        signal.removeEventListener('abort', wakeAll);
      }
    };
    const timer = setTimeout(() => {
      done();
      resolve();
    }, ms);
    const onAbort = (reason: unknown): void => {
      clearTimeout(timer);
      reject(abortError(reason));
    };
    set.add(onAbort);
  });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    if (ms <= 0) return;
    if (signal) return sleepUnder(ms, signal);
    await new Promise<void>((resolve) => setTimeout(resolve, ms));
  },
};
