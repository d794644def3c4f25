import { describe, expect, it } from 'vitest';
import { untilFailure } from './xlsx-race.ts';

/** Yields its values, then waits forever, like exceljs when its input fails under a pipe. */
async function* stuckAfter(values: number[]): AsyncGenerator<number> {
  yield* values;
  await new Promise(() => {});
}

describe('untilFailure', () => {
  it('passes values through and ends with the iterable', async () => {
    const seen: number[] = [];
    const source = (async function* () {
      yield* [1, 2, 3];
    })();
    for await (const value of untilFailure(source, new AbortController().signal)) seen.push(value);
    expect(seen).toEqual([1, 2, 3]);
  });

  it('rejects with the failure when the iterable would wait forever', async () => {
    const failure = new AbortController();
    const seen: number[] = [];
    const run = (async () => {
      for await (const value of untilFailure(stuckAfter([1, 2]), failure.signal)) {
        seen.push(value);
        if (value === 2) setImmediate(() => failure.abort(new Error('input broke')));
      }
    })();
    await expect(run).rejects.toThrow('input broke');
    expect(seen).toEqual([1, 2]);
  });

  it('leaves no listener behind on the signal between items', async () => {
    const failure = new AbortController();
    let added = 0;
    let removed = 0;
    const signal = failure.signal;
    const add = signal.addEventListener.bind(signal);
    const remove = signal.removeEventListener.bind(signal);
    signal.addEventListener = ((...args: Parameters<typeof add>) => {
      added++;
      add(...args);
    }) as typeof signal.addEventListener;
    signal.removeEventListener = ((...args: Parameters<typeof remove>) => {
      removed++;
      remove(...args);
    }) as typeof signal.removeEventListener;
    const source = (async function* () {
      for (let i = 0; i < 100; i++) yield i;
    })();
    let count = 0;
    for await (const _ of untilFailure(source, signal)) count++;
    expect(count).toBe(100);
    expect(added).toBe(101);
    expect(removed).toBe(added);
  });
});
