import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readAccountCatalog } from '../../../src/client/account-catalog.ts';
import { CrmClient } from '../../../src/client/index.ts';
import { FakeClock } from './fake-clock.ts';

const ORIGIN = 'https://acme.example.com';
const JSON_HEADERS = { 'content-type': 'application/json' };
const WANTED = { lists: new Set<never>(), fieldDefinitions: new Set(['parties'] as const) };

describe("the account's custom fields with what each takes", () => {
  let agent: MockAgent;
  let client: CrmClient;
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    client = new CrmClient({ baseUrl: ORIGIN, auth: 'tok-123456789', dispatcher: agent, clock: new FakeClock() });
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/users?perPage=100', method: 'GET' })
      .reply(200, { users: [{ id: 1, username: 'admin' }] }, { headers: JSON_HEADERS });
  });
  afterEach(() => agent.close());

  /** The v2 list as a service gives it that says nothing of choices and patterns. */
  function v2WithoutDetail(): void {
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties/fields/definitions?perPage=100', method: 'GET' })
      .reply(
        200,
        {
          definitions: [
            { id: 11, name: 'Industry', type: 'List', tag: null },
            { id: 12, name: 'Account number', type: 'Text', tag: null },
            { id: 13, name: 'VIP', type: 'Boolean', tag: null },
          ],
        },
        { headers: JSON_HEADERS },
      );
  }

  it('takes the choices and patterns the v2 list leaves out from the v1 list, once, by id', async () => {
    v2WithoutDetail();
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/party/customfield/definitions', method: 'GET' })
      .reply(
        200,
        {
          customFieldDefinitions: {
            customFieldDefinition: [
              { id: '11', label: 'Industry', type: 'List', options: 'Retail;Finance', forClass: null },
              { id: '12', label: 'Account number', type: 'Text', options: '^[A-Z]{2}-\\d+$', forClass: 'ORGANISATION' },
            ],
          },
        },
        { headers: JSON_HEADERS },
      );
    const catalog = await readAccountCatalog(client, WANTED);
    expect(catalog.fieldDefinitions.parties).toEqual([
      { id: 11, name: 'Industry', tag: null, type: 'List', options: ['Retail', 'Finance'], forClass: null },
      { id: 12, name: 'Account number', tag: null, type: 'Text', pattern: '^[A-Z]{2}-\\d+$', forClass: 'ORGANISATION' },
      { id: 13, name: 'VIP', tag: null, type: 'Boolean' },
    ]);
    expect(agent.pendingInterceptors()).toHaveLength(0);
  });

  it('leaves the values to the service where v1 has no such list', async () => {
    v2WithoutDetail();
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/party/customfield/definitions', method: 'GET' })
      .reply(404, { message: 'no such path' }, { headers: JSON_HEADERS });
    const catalog = await readAccountCatalog(client, WANTED);
    expect(catalog.fieldDefinitions.parties.map((d) => [d.name, d.options, d.pattern])).toEqual([
      ['Industry', undefined, undefined],
      ['Account number', undefined, undefined],
      ['VIP', undefined, undefined],
    ]);
  });
});
