import { describe, expect, it } from 'vitest';
import { WriteSlots } from '../../../src/load/write-slots.ts';

function gate(): { promise: Promise<void>; open: () => void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

describe('WriteSlots', () => {
  it('runs at most size tasks at once, the others in the order they asked', async () => {
    const slots = new WriteSlots(2);
    const gates = [gate(), gate(), gate(), gate()];
    const started: number[] = [];
    const runs = gates.map((g, i) =>
      slots.run(async () => {
        started.push(i);
        await g.promise;
        return i;
      }),
    );
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1]);
    expect(slots.free).toBe(0);
    gates[1]?.open();
    await runs[1];
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual([0, 1, 2]);
    gates[0]?.open();
    gates[2]?.open();
    gates[3]?.open();
    expect(await Promise.all(runs)).toEqual([0, 1, 2, 3]);
    expect(started).toEqual([0, 1, 2, 3]);
    expect(slots.free).toBe(2);
  });

  it('frees the slot of a task that fails, and passes its error on', async () => {
    const slots = new WriteSlots(1);
    await expect(slots.run(async () => Promise.reject(new Error('refused')))).rejects.toThrow('refused');
    expect(slots.free).toBe(1);
    expect(await slots.run(async () => 'next')).toBe('next');
  });

  it('takes a whole number of slots of at least one', () => {
    expect(() => new WriteSlots(0)).toThrow(RangeError);
    expect(() => new WriteSlots(1.5)).toThrow(RangeError);
  });
});
