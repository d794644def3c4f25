import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addParty } from '../../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

// Early pages are found by walking the table, deeper ones from a result computed once per query:
// both must give the same list, with the same Link headers.
describe('sandbox paging: walked and cached pages agree', () => {
  let sandbox: TestSandbox;
  let expected: number[];
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    for (let i = 0; i < 2500; i += 1) addParty(sandbox.store, { type: 'organisation', name: i % 3 === 0 ? `Third ${i}` : `Other ${i}` });
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
    const thirds = sandbox.store.parties.all().filter((p) => p.name?.startsWith('Third')).map((p) => p.id);
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
