import { describe, expect, it } from 'vitest';
import { RowWindow } from '../../../src/load/row-window.ts';

function deferred(): { promise: Promise<void>; resolve: () => void; reject: (error: Error) => void } {
  let resolve!: () => void;
  let reject!: (error: Error) => void;
  const promise = new Promise<void>((res, rej) => {
    resolve = res;
    reject = rej;
  });
  return { promise, resolve, reject };
}

/** Whether `promise` has settled once the microtasks queued so far have run. */
async function settled(promise: Promise<void>): Promise<boolean> {
  let done = false;
  void promise.then(() => {
    done = true;
  });
  await new Promise<void>((resolve) => setImmediate(resolve));
  return done;
}

describe('RowWindow', () => {
  it('has room until size rows are under way, and again once one ends', async () => {
    const window = new RowWindow(2);
    const rows = [deferred(), deferred(), deferred()];
    window.add(rows[0]!.promise);
    expect(window.full).toBe(false);
    expect(await settled(window.room())).toBe(true);
    window.add(rows[1]!.promise);
    expect(window.full).toBe(true);
    const room = window.room();
    expect(await settled(room)).toBe(false);
    rows[1]!.resolve();
    expect(await settled(room)).toBe(true);
    expect(window.count).toBe(1);
  });

  it('drains only once every row has ended, a rejected row included', async () => {
    const window = new RowWindow(4);
    const rows = [deferred(), deferred(), deferred()];
    for (const row of rows) window.add(row.promise);
    const drained = window.drained();
    rows[0]!.resolve();
    rows[2]!.reject(new Error('handled by the row'));
    expect(await settled(drained)).toBe(false);
    expect(window.count).toBe(1);
    rows[1]!.resolve();
    expect(await settled(drained)).toBe(true);
    expect(window.count).toBe(0);
  });

  it('is drained at once with nothing under way', async () => {
    expect(await settled(new RowWindow(1).drained())).toBe(true);
  });

  it('refuses a second waiter, which would never be woken', () => {
    const window = new RowWindow(1);
    window.add(new Promise<void>(() => undefined));
    void window.room();
    expect(() => window.drained()).toThrow(/one waiter/);
  });
});
