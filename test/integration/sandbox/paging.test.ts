import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { recordsVisited } from '../../../src/sandbox/paging.ts';
import { addParty } from '../../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

// Early pages are found by walking the table, deeper ones from a result computed once per query:
// both must give the same list, with the same Link headers.
describe('sandbox paging: walked and cached pages agree', () => {
  let sandbox: TestSandbox;
  let expected: number[];
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    for (let i = 0; i < 2500; i += 1)
      addParty(sandbox.store, { type: 'organisation', name: i % 3 === 0 ? `Third ${i}` : `Other ${i}` });
    expected = sandbox.store.parties.all().map((p) => p.id);
  });
  afterAll(() => sandbox.close());

  it('pages through every party once, in id order, across the walk limit', async () => {
    const seen: number[] = [];
    for (let page = 1; ; page += 1) {
      const answer = await sandbox.v2('GET', `/parties?perPage=100&page=${page}`);
      expect(answer.status).toBe(200);
      seen.push(...answer.body.parties.map((p: { id: number }) => p.id));
      const link = String(answer.headers.link ?? '');
      if (page > 1) expect(link).toMatch(new RegExp(`[?&]page=${page - 1}[&>][^,]*rel="prev"`));
      if (!link.includes('rel="next"')) break;
    }
    expect(seen).toEqual(expected);
  });

  it('answers a search the same way on a walked and a cached page', async () => {
    const thirds = sandbox.store.parties
      .all()
      .filter((p) => p.name?.startsWith('Third'))
      .map((p) => p.id);
    const page2 = await sandbox.v2('GET', '/parties/search?q=Third&perPage=100&page=2');
    const page11 = await sandbox.v2('GET', '/parties/search?q=Third&perPage=50&page=11');
    expect(page2.body.parties.map((p: { id: number }) => p.id)).toEqual(thirds.slice(100, 200));
    expect(page11.body.parties.map((p: { id: number }) => p.id)).toEqual(thirds.slice(500, 550));
  });

  it('sees a change made between two pages of a cached query', async () => {
    const before = await sandbox.v2('GET', '/parties?perPage=100&page=20');
    const created = await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Late Ltd' } });
    const last = await sandbox.v2('GET', `/parties?perPage=100&page=${Math.ceil((expected.length + 4) / 100)}`);
    expect(before.status).toBe(200);
    expect(last.body.parties.map((p: { id: number }) => p.id)).toContain(created.body.party.id);
  });

  it('points prev at the last page when asked for a page past the end', async () => {
    const answer = await sandbox.v2('GET', '/parties?perPage=100&page=400');
    expect(answer.body.parties).toEqual([]);
    const lastPage = Math.ceil(sandbox.store.parties.size / 100);
    expect(String(answer.headers.link)).toMatch(new RegExp(`[?&]page=${lastPage}[&>][^,]*rel="prev"`));
  });
});

// What a page costs, counted in records looked at: never the whole store per page.
describe('sandbox paging: a page costs a page', () => {
  const PARTIES = 20_000;
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    for (let i = 0; i < PARTIES; i += 1)
      addParty(sandbox.store, {
        type: 'organisation',
        firstName: null,
        lastName: null,
        name: i === PARTIES - 7 ? 'Rare Find Ltd' : `Company ${i}`,
      });
    const late = sandbox.store.parties.all().at(-3);
    if (late) late.updatedAt = '2030-01-01T00:00:00Z';
  });
  afterAll(() => sandbox.close());

  /** Records the request made the sandbox look at. */
  async function cost(
    method: 'GET' | 'POST',
    path: string,
    body?: unknown,
  ): Promise<{ visited: number; ids: number[] }> {
    const before = recordsVisited(sandbox.store);
    const answer = await sandbox.v2(method, path, body);
    expect(answer.status).toBe(200);
    return {
      visited: recordsVisited(sandbox.store) - before,
      ids: (answer.body.parties ?? []).map((p: { id: number }) => p.id),
    };
  }

  it('reads the first pages of a list by walking only as far as the page', async () => {
    expect((await cost('GET', '/parties?perPage=100')).visited).toBeLessThanOrEqual(101 + 10);
    expect((await cost('GET', '/parties?perPage=100&page=5')).visited).toBeLessThanOrEqual(501 + 10);
  });

  it.each([
    ['a deep page of a list', 'GET', '/parties?perPage=100&page=150', undefined, '/parties?perPage=100&page=151'],
    [
      'a recent since',
      'GET',
      '/parties?since=2029-06-01T00:00:00Z&perPage=100',
      undefined,
      '/parties?since=2029-06-01T00:00:00Z&perPage=100&page=2',
    ],
    [
      'a narrow filter',
      'POST',
      '/parties/filters/results?perPage=100',
      { filter: { conditions: [{ field: 'name', operator: 'is', value: 'Rare Find Ltd' }] } },
      '/parties/filters/results?perPage=100&page=2',
    ],
  ] as const)(
    'scans the store at most once for %s, and not again for its next page',
    async (_what, method, first, body, next) => {
      const one = await cost(method, first, body);
      expect(one.visited).toBeGreaterThan(0);
      expect(one.visited).toBeLessThanOrEqual(PARTIES + 5000 + 100);
      expect((await cost(method, next, body)).visited).toBe(0);
      expect((await cost(method, first, body)).ids).toEqual(one.ids);
    },
  );

  it('looks only at the candidates the party index gives for a rare search, on every page', async () => {
    const one = await cost('GET', '/parties/search?q=rare+find&perPage=100');
    expect(one.ids).toHaveLength(1);
    expect(one.visited).toBeLessThanOrEqual(5);
    expect((await cost('GET', '/parties/search?q=rare+find&perPage=100&page=2')).visited).toBeLessThanOrEqual(5);
  });

  it('finds the rare records a scan is for', async () => {
    expect((await cost('GET', '/parties/search?q=rare+find')).ids).toHaveLength(1);
    expect((await cost('GET', '/parties?since=2029-06-01T00:00:00Z')).ids).toHaveLength(1);
  });

  it('lists the records hidden from the caller with the deleted ones, scanning once per change', async () => {
    const first = await sandbox.v2('GET', '/parties/deleted');
    expect(first.status).toBe(200);
    const before = recordsVisited(sandbox.store);
    expect((await sandbox.v2('GET', '/parties/deleted')).status).toBe(200);
    expect(recordsVisited(sandbox.store) - before).toBe(0);
  });
});
