import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { Matcher, MATCH_BATCH, type RecordFinder } from './matching.ts';

type Body = Record<string, unknown>;

/** A finder that answers each query with a person per value asked for, and records the queries. */
function finder(): RecordFinder & { queries: string[][]; hold: Promise<void> | null } {
  const queries: string[][] = [];
  const self = {
    queries,
    hold: null as Promise<void> | null,
    async *filter(_entity: string, conditions: unknown[]): AsyncIterable<Body> {
      const values = ((conditions[0] as { orGroup: Array<{ value: string }> }).orGroup ?? []).map((c) => c.value);
      queries.push(values);
      if (self.hold) await self.hold;
      for (const [i, value] of values.entries())
        yield { id: 1000 + queries.length * 100 + i, type: 'person', emailAddresses: [{ address: value }] };
    },
  };
  return self;
}

const email = (i: number) => ({ by: 'email' as const, value: `p${i}@example.org` });

describe('Matcher: look-ups held while more values are coming', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('without a busy rule, values go 15 ms after the first, up to 50 a query', async () => {
    const service = finder();
    const matcher = new Matcher(service, 'party', { by: 'email', onMatch: 'update' }, undefined);
    const answers = Array.from({ length: 60 }, (_, i) => matcher.find(email(i)));
    // The first 50 fill a query at once; the other 10 wait for the gather.
    expect(service.queries.map((q) => q.length)).toEqual([MATCH_BATCH]);
    await vi.advanceTimersByTimeAsync(20);
    expect(service.queries.map((q) => q.length)).toEqual([50, 10]);
    expect((await answers[55])?.[0]?.emailAddresses).toEqual([{ address: 'p55@example.org' }]);
  });

  it('while busy, values short of a query wait past the gather; release sends them together once it is not', async () => {
    const service = finder();
    let busy = true;
    const matcher = new Matcher(service, 'party', { by: 'email', onMatch: 'update' }, undefined, { busy: () => busy });
    const first = Array.from({ length: 10 }, (_, i) => matcher.find(email(i)));
    await vi.advanceTimersByTimeAsync(100);
    expect(service.queries).toEqual([]);
    const more = Array.from({ length: 5 }, (_, i) => matcher.find(email(10 + i)));
    matcher.release();
    await vi.advanceTimersByTimeAsync(100);
    expect(service.queries).toEqual([]);
    busy = false;
    matcher.release();
    await vi.advanceTimersByTimeAsync(20);
    expect(service.queries).toHaveLength(1);
    expect(service.queries[0]).toHaveLength(15);
    const answered = await Promise.all([...first, ...more]);
    expect(
      answered.every((records, i) => (records[0]?.emailAddresses as Body[])[0]?.address === `p${i}@example.org`),
    ).toBe(true);
  });

  it('is querying while a query is under way, and looks at held values again when its answer comes', async () => {
    const service = finder();
    let open!: () => void;
    service.hold = new Promise<void>((resolve) => (open = resolve));
    const matcher: Matcher = new Matcher(service, 'party', { by: 'email', onMatch: 'update' }, undefined, {
      busy: (): boolean => matcher.querying,
    });
    Array.from({ length: MATCH_BATCH }, (_, i) => matcher.find(email(i)));
    await vi.advanceTimersByTimeAsync(0);
    expect(matcher.querying).toBe(true);
    const late = matcher.find(email(99));
    await vi.advanceTimersByTimeAsync(100);
    expect(service.queries).toHaveLength(1);
    service.hold = null;
    open();
    await vi.advanceTimersByTimeAsync(20);
    expect(matcher.querying).toBe(false);
    expect(service.queries.map((q) => q.length)).toEqual([50, 1]);
    expect(await late).toHaveLength(1);
  });
});

describe('Matcher: the account read whole (listUpTo)', () => {
  /** A finder whose account holds `count` people p0..p(count-1), and which counts the lists read. */
  function account(count: number): RecordFinder & { queries: string[][]; lists: number } {
    const self = {
      ...finder(),
      lists: 0,
      async list(_entity: string, upTo: number): Promise<Body[] | null> {
        self.lists += 1;
        if (count > upTo) return null;
        return Array.from({ length: count }, (_, i) => ({
          id: i + 1,
          type: 'person',
          firstName: 'P',
          lastName: String(i),
          emailAddresses: [{ address: `p${i}@example.org` }, { address: `alt${i}@example.org` }],
        }));
      },
    };
    return self;
  }

  it("answers every look-up from one read of the list when it is short, by any of a record's values", async () => {
    const service = account(120);
    const matcher = new Matcher(service, 'party', { by: ['email', 'name'], onMatch: 'update' }, undefined, {
      listUpTo: 200,
    });
    const found = await Promise.all([
      matcher.find(email(3)),
      matcher.find({ by: 'email', value: 'alt7@example.org' }),
      matcher.find(email(500)),
      matcher.find({ by: 'name', value: 'p 9' }),
    ]);
    expect(found.map((records) => records.map((r) => r.id))).toEqual([[4], [8], [], [10]]);
    expect(service.lists).toBe(1);
    expect(service.queries).toEqual([]);
  });

  it('goes by filter queries when the list holds more than listUpTo', async () => {
    const service = account(300);
    const matcher = new Matcher(service, 'party', { by: 'email', onMatch: 'update' }, undefined, { listUpTo: 200 });
    const found = await Promise.all(Array.from({ length: 50 }, (_, i) => matcher.find(email(i))));
    expect(found[7]?.[0]?.emailAddresses).toEqual([{ address: 'p7@example.org' }]);
    expect(service.lists).toBe(1);
    expect(service.queries.map((q) => q.length)).toEqual([50]);
  });
});
