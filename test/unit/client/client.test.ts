import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CrmClient } from '../../../src/client/client.ts';
import { RecordService } from '../../../src/client/records.ts';
import { kaseSchema, partySchema } from '../../../src/client/schemas.ts';
import { parseLinkHeader } from '../../../src/client/pagination.ts';
import { FakeClock } from './fake-clock.ts';

const ORIGIN = 'https://acme.crm.example';
const JSON_HEADERS = { 'content-type': 'application/json' };

describe('parseLinkHeader', () => {
  it.each([
    ['', {}],
    [
      '<https://x/api/v2/parties?page=2&perPage=100>; rel="next"',
      { next: 'https://x/api/v2/parties?page=2&perPage=100' },
    ],
    [
      '<https://x/a?page=3>; rel="next", <https://x/a?page=1>; rel="prev"',
      { next: 'https://x/a?page=3', prev: 'https://x/a?page=1' },
    ],
    ['<https://x/parties/1,2,3?page=2>; rel=next', { next: 'https://x/parties/1,2,3?page=2' }],
  ])('%s', (header, expected) => {
    expect(parseLinkHeader(header)).toEqual(expected);
  });
});

describe('CrmClient', () => {
  let agent: MockAgent;
  let client: CrmClient;
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    client = new CrmClient({ baseUrl: ORIGIN, auth: 'tok-123456789', dispatcher: agent, clock: new FakeClock() });
  });
  afterEach(() => agent.close());

  it('follows Link rel="next" across pages with perPage 100', async () => {
    const pool = agent.get(ORIGIN);
    const person = (id: number) => ({ id, type: 'person', firstName: `P${id}` });
    pool
      .intercept({ path: '/api/v2/parties?embed=tags&perPage=100', method: 'GET' })
      .reply(
        200,
        { parties: [person(1), person(2)] },
        { headers: { ...JSON_HEADERS, link: `<${ORIGIN}/api/v2/parties?embed=tags&page=2&perPage=100>; rel="next"` } },
      );
    pool
      .intercept({ path: '/api/v2/parties?embed=tags&page=2&perPage=100', method: 'GET' })
      .reply(
        200,
        { parties: [person(3)] },
        { headers: { ...JSON_HEADERS, link: `<${ORIGIN}/api/v2/parties?embed=tags&page=1&perPage=100>; rel="prev"` } },
      );
    const ids: number[] = [];
    for await (const party of client.paginate('/parties', 'parties', partySchema, { query: { embed: 'tags' } }))
      ids.push(party.id);
    expect(ids).toEqual([1, 2, 3]);
    expect(agent.pendingInterceptors()).toHaveLength(0);
  });

  it('refuses a next link to another host', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/kases?perPage=100', method: 'GET' })
      .reply(
        200,
        { kases: [] },
        { headers: { ...JSON_HEADERS, link: '<https://evil.example/api/v2/kases?page=2>; rel="next"' } },
      );
    const run = async () => {
      for await (const _ of client.paginate('/kases', 'kases', kaseSchema)) void _;
    };
    await expect(run()).rejects.toMatchObject({ code: 'API_RESPONSE_INVALID' });
  });

  it('reads the notes of records through the paginator, a record that is gone (404) having none', async () => {
    const pool = agent.get(ORIGIN);
    pool
      .intercept({ path: '/api/v2/parties/7/entries?perPage=100', method: 'GET' })
      .reply(404, { message: 'not found' }, { headers: JSON_HEADERS });
    pool
      .intercept({ path: '/api/v2/kases/8/entries?perPage=100', method: 'GET' })
      .reply(
        200,
        { entries: [{ id: 1 }] },
        { headers: { ...JSON_HEADERS, link: `<${ORIGIN}/api/v2/kases/8/entries?page=2&perPage=100>; rel="next"` } },
      );
    pool
      .intercept({ path: '/api/v2/kases/8/entries?page=2&perPage=100', method: 'GET' })
      .reply(200, { entries: [{ id: 2 }] }, { headers: JSON_HEADERS });
    const records = new RecordService(client);
    const found: unknown[] = [];
    for await (const entry of records.candidates(
      'entry',
      [{ body: { party: { id: 7 } } }, { body: { kase: { id: 8 } } }],
      new Date(),
    ))
      found.push(entry.id);
    expect(found).toEqual([1, 2]);
    expect(agent.pendingInterceptors()).toHaveLength(0);
  });

  it('reports an answer of the wrong shape as API_RESPONSE_INVALID', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties', method: 'POST' })
      .reply(201, { party: { id: 'five' } }, { headers: JSON_HEADERS });
    await expect(new RecordService(client).create('party', { type: 'person', lastName: 'Five' })).rejects.toMatchObject(
      { code: 'API_RESPONSE_INVALID', message: expect.stringMatching(/id/) },
    );
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties?perPage=100', method: 'GET' })
      .reply(200, { parties: [{ id: 'five' }] }, { headers: JSON_HEADERS });
    const list = async () => {
      for await (const _ of client.paginate('/parties', 'parties', partySchema)) void _;
    };
    await expect(list()).rejects.toMatchObject({ code: 'API_RESPONSE_INVALID', message: expect.stringMatching(/id/) });
  });

  it('keeps properties it does not know', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties?perPage=100', method: 'GET' })
      .reply(200, { parties: [{ id: 5, type: 'person', shoeSize: 44 }] }, { headers: JSON_HEADERS });
    const found: unknown[] = [];
    for await (const party of client.paginate('/parties', 'parties', partySchema)) found.push(party);
    expect(found).toEqual([{ id: 5, type: 'person', shoeSize: 44 }]);
  });
});
