/**
 * The sandbox answers the requests published clients of the service send, as they send them
 * (issue 26, items 1 and 3 to 8): legacy v1 clients authenticating with HTTP Basic, a Python v2
 * client creating tags, a declarative connector reading boards, stages, lost reasons and the site,
 * integrations finding a contact by e-mail address, and clients that repeat a query parameter.
 * Requests go out over HTTP with undici, headers and bodies as those clients build them.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';
import { addParty, listOf, parseXml } from './legacy-v1-fixtures.ts';

let sandbox: TestSandbox;
const clock = new Date('2026-03-01T10:00:30Z');

beforeAll(async () => {
  sandbox = await startTestSandbox({ now: () => clock });
});
afterAll(() => sandbox.close());

/** `curl -u TOKEN:x`, `requests.auth.HTTPBasicAuth(token, 'x')`: the token as the user name. */
function basic(token: string, password = 'x'): string {
  return `Basic ${Buffer.from(`${token}:${password}`).toString('base64')}`;
}

interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

/** One request with exactly these headers (no bearer token added). */
async function send(
  box: TestSandbox,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<Sent> {
  const answer = await request(`${box.url}${path}`, { method: method as 'GET', headers, body });
  const text = await answer.body.text();
  const type = String(answer.headers['content-type'] ?? '');
  return {
    status: answer.statusCode,
    headers: answer.headers,
    text,
    json: type.includes('json') && text !== '' ? JSON.parse(text) : undefined,
  };
}

describe('item 1: the legacy interface takes HTTP Basic with the token as user name', () => {
  it('answers curl -u TOKEN:x and a Python client with Basic auth and Accept: application/json', async () => {
    const party = addParty(sandbox.store, { type: 'organisation', name: 'Basic Auth Ltd' });
    // curl sends Accept: */*, which leaves the v1 default, XML.
    const curl = await send(sandbox, 'GET', `/api/party/${party.id}`, {
      authorization: basic(sandbox.token),
      accept: '*/*',
      'user-agent': 'curl/8.5.0',
    });
    expect(curl.status).toBe(200);
    expect(parseXml(curl.text).organisation.name).toBe('Basic Auth Ltd');
    // Any password: the published clients send `x`, some an empty one or the token again.
    for (const password of ['', sandbox.token, 'anything at all']) {
      const other = await send(sandbox, 'GET', '/api/party', {
        authorization: basic(sandbox.token, password),
        accept: 'application/json',
      });
      expect(other.status).toBe(200);
    }
    const python = await send(sandbox, 'GET', `/api/party/${party.id}`, {
      authorization: basic(sandbox.token),
      accept: 'application/json',
      'user-agent': 'python-requests/2.31.0',
    });
    expect(python.status).toBe(200);
    expect(python.json.organisation.id).toBe(String(party.id));
  });

  it('still takes the bearer token, refuses a wrong Basic token with a Basic challenge, and keeps v2 to bearer tokens', async () => {
    expect((await send(sandbox, 'GET', '/api/party', { authorization: `Bearer ${sandbox.token}` })).status).toBe(200);
    const wrong = await send(sandbox, 'GET', '/api/party', { authorization: basic('not-a-token-at-all') });
    expect(wrong.status).toBe(401);
    expect(String(wrong.headers['www-authenticate'])).toMatch(/^Basic realm="crm"/);
    const none = await send(sandbox, 'GET', '/api/party', {});
    expect(none.status).toBe(401);
    expect(parseXml(none.text).error.message).toMatch(/HTTP Basic/);
    const v2 = await send(sandbox, 'GET', '/api/v2/parties', {
      authorization: basic(sandbox.token),
      accept: 'application/json',
    });
    expect(v2.status).toBe(401);
    expect(v2.json.message).toBe('missing bearer token in the Authorization header');
  });
});

describe('item 3: boards, stages, lost reasons and the site, as the connector reads them', () => {
  const connector = (): Record<string, string> => ({
    authorization: `Bearer ${sandbox.token}`,
    accept: 'application/json',
  });

  it('lists the boards and their stages; a project takes a stage of /stages and shows its name', async () => {
    const boards = await send(sandbox, 'GET', '/api/v2/boards?perPage=100', connector());
    expect(boards.status).toBe(200);
    expect(boards.json.boards).toEqual([
      {
        id: 100,
        name: 'Projects',
        description: null,
        createdAt: '2026-03-01T10:00:30Z',
        updatedAt: '2026-03-01T10:00:30Z',
      },
    ]);
    const stages = await send(sandbox, 'GET', '/api/v2/stages?perPage=100', connector());
    expect(stages.json.stages.map((s: any) => [s.name, s.board, s.displayOrder])).toEqual([
      ['Planned', { id: 100, name: 'Projects' }, 0],
      ['In progress', { id: 100, name: 'Projects' }, 1],
      ['Review', { id: 100, name: 'Projects' }, 2],
      ['Done', { id: 100, name: 'Projects' }, 3],
    ]);
    const review = stages.json.stages.find((s: any) => s.name === 'Review');
    expect((await send(sandbox, 'GET', `/api/v2/stages/${review.id}`, connector())).json.stage).toEqual(review);
    expect((await send(sandbox, 'GET', '/api/v2/boards/100/stages', connector())).json.stages).toEqual(
      stages.json.stages,
    );
    expect((await send(sandbox, 'GET', '/api/v2/stages/99999', connector())).status).toBe(404);

    const party = addParty(sandbox.store, { type: 'organisation', name: 'Staged Ltd' });
    const kase = await sandbox.v2('POST', '/kases', {
      kase: { name: 'Staged', party: { id: party.id }, stage: review.id },
    });
    expect(kase.status).toBe(201);
    expect(kase.body.kase.stage).toEqual({ id: review.id, name: 'Review' });
    const unknown = await sandbox.v2('POST', '/kases', {
      kase: { name: 'Nowhere', party: { id: party.id }, stage: 99999 },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].message).toMatch(/no stage with id 99999; the stages are 101 \(Planned\)/);
  });

  it('lists the lost reasons and answers the site', async () => {
    const reasons = await send(sandbox, 'GET', '/api/v2/lostreasons?perPage=100', connector());
    expect(reasons.status).toBe(200);
    expect(reasons.json.lostReasons.map((r: any) => r.name)).toEqual([
      'Price',
      'Competitor',
      'No budget',
      'Timing',
      'No decision',
    ]);
    expect(reasons.json.lostReasons[0]).toEqual({
      id: expect.any(Number),
      name: 'Price',
      includedForConversion: true,
      createdAt: '2026-03-01T10:00:30Z',
      updatedAt: '2026-03-01T10:00:30Z',
    });
    const site = await send(sandbox, 'GET', '/api/v2/site', connector());
    expect(site.json.site).toEqual({ name: 'Sandbox', subdomain: 'sandbox', url: sandbox.url, timezone: 'UTC' });
  });
});

describe('item 4: a tag keeps its description and dataTag', () => {
  it('creates a tag as the Python client does (description and dataTag), and a record creates one the same way', async () => {
    // client.create_tag('parties', name, description, datatag): JSON body, JSON Accept, bearer token.
    const headers = {
      authorization: `Bearer ${sandbox.token}`,
      accept: 'application/json',
      'content-type': 'application/json',
    };
    const body = JSON.stringify({ tag: { name: 'Key account', description: 'Top twenty by revenue', dataTag: true } });
    const made = await send(sandbox, 'POST', '/api/v2/parties/tags', headers, body);
    expect(made.status).toBe(201);
    expect(made.json.tag).toEqual({
      id: expect.any(Number),
      name: 'Key account',
      description: 'Top twenty by revenue',
      dataTag: true,
    });
    // client.list_tag sends its paging as a JSON body on the GET.
    const listed = await send(
      sandbox,
      'GET',
      '/api/v2/parties/tags',
      headers,
      JSON.stringify({ page: 1, perPage: 50 }),
    );
    expect(listed.json.tags).toContainEqual(made.json.tag);

    const party = await sandbox.v2('POST', '/parties', {
      party: {
        type: 'organisation',
        name: 'Tag Keeper',
        tags: [{ name: 'Reseller', description: 'Sells on', dataTag: false }, { name: 'key account' }],
      },
    });
    expect(party.status).toBe(201);
    expect(party.body.party.tags).toEqual([
      { id: made.json.tag.id, name: 'Key account', dataTag: true },
      { id: expect.any(Number), name: 'Reseller', dataTag: false },
    ]);
    const reseller = (await sandbox.v2('GET', '/parties/tags?perPage=100')).body.tags.find(
      (t: any) => t.name === 'Reseller',
    );
    expect(reseller).toMatchObject({ description: 'Sells on', dataTag: false });
    // Saying otherwise about an existing tag is refused, not silently dropped.
    const contradicts = await sandbox.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Liar', tags: [{ name: 'Reseller', dataTag: true }] },
    });
    expect(contradicts.status).toBe(422);
    expect(contradicts.body.errors).toEqual([
      {
        field: 'tags[0].dataTag',
        resource: 'party',
        message: 'tag "Reseller" is not a data tag; a record cannot change that',
      },
    ]);
  });
});

describe('item 5: a legacy case with a null or empty owner and status takes the defaults', () => {
  it('in JSON (owner: null, status: null) and in XML (<owner/>, <status/>)', async () => {
    const party = addParty(sandbox.store, { type: 'organisation', name: 'Defaults Ltd' });
    const headers = { authorization: basic(sandbox.token), accept: 'application/json' };
    const json = await send(
      sandbox,
      'POST',
      `/api/party/${party.id}/kase`,
      { ...headers, 'content-type': 'application/json' },
      JSON.stringify({ kase: { name: 'From JSON', description: 'd', owner: null, status: null } }),
    );
    expect(json.status).toBe(201);
    const xml = await send(
      sandbox,
      'POST',
      `/api/party/${party.id}/kase`,
      { ...headers, 'content-type': 'application/xml' },
      '<kase><name>From XML</name><owner/><status/></kase>',
    );
    expect(xml.status).toBe(201);
    for (const location of [json.headers.location, xml.headers.location]) {
      const read = await send(sandbox, 'GET', new URL(String(location)).pathname, headers);
      expect(read.json.kase).toMatchObject({ owner: 'admin', status: 'OPEN' });
    }
    // On an update, null leaves the owner and status as they are.
    const path = new URL(String(json.headers.location)).pathname;
    const update = await send(
      sandbox,
      'PUT',
      path,
      { ...headers, 'content-type': 'application/json' },
      JSON.stringify({ kase: { name: 'Renamed', owner: null, status: null } }),
    );
    expect(update.status).toBe(200);
    expect(update.json.kase).toMatchObject({ name: 'Renamed', owner: 'admin', status: 'OPEN' });
  });
});

describe('item 6: finding a person by e-mail address', () => {
  it('v2 search by an address (any case) and by a domain; v1 party list filtered by email', async () => {
    const ada = (
      await sandbox.v2('POST', '/parties', {
        party: {
          type: 'person',
          firstName: 'Ada',
          lastName: 'Mailer',
          emailAddresses: [{ address: 'Ada.Mailer@Engines.example' }],
        },
      })
    ).body.party;
    await sandbox.v2('POST', '/parties', {
      party: {
        type: 'person',
        firstName: 'Bob',
        lastName: 'Other',
        emailAddresses: [{ address: 'bob@other.example' }],
      },
    });
    const find = async (q: string): Promise<number[]> =>
      (
        await send(sandbox, 'GET', `/api/v2/parties/search?q=${encodeURIComponent(q)}`, {
          authorization: `Bearer ${sandbox.token}`,
          accept: 'application/json',
        })
      ).json.parties.map((p: any) => p.id);
    expect(await find('ada.mailer@engines.example')).toEqual([ada.id]);
    expect(await find('@engines.example')).toEqual([ada.id]);
    // A bare word is no address search: "example" is in every address, and in no name.
    expect(await find('example')).toEqual([]);

    const v1 = await send(sandbox, 'GET', '/api/party?email=ADA.MAILER%40engines.example', {
      authorization: basic(sandbox.token),
      accept: 'application/json',
    });
    expect(v1.status).toBe(200);
    expect(listOf(v1.json.parties.person).map((p: any) => p.id)).toEqual([String(ada.id)]);
    const none = await send(sandbox, 'GET', '/api/party?email=nobody%40nowhere.example', {
      authorization: basic(sandbox.token),
    });
    expect(parseXml(none.text).parties.person ?? []).toEqual([]);
    const q = await send(sandbox, 'GET', '/api/party?q=Mailer', {
      authorization: basic(sandbox.token),
      accept: 'application/json',
    });
    expect(listOf(q.json.parties.person).map((p: any) => p.id)).toEqual([String(ada.id)]);
  });
});

describe('item 7: one error shape per interface, in the format asked for', () => {
  it('the legacy interface answers 401 and unknown routes in XML unless JSON was asked', async () => {
    const xml401 = await send(sandbox, 'GET', '/api/party', {
      authorization: basic('wrong-token-value'),
      accept: 'application/xml',
    });
    expect(xml401.headers['content-type']).toMatch(/^application\/xml/);
    expect(parseXml(xml401.text).error.message).toBe('the access token is invalid');
    const json401 = await send(sandbox, 'GET', '/api/party', {
      authorization: basic('wrong-token-value'),
      accept: 'application/json',
    });
    expect(json401.json).toEqual({ error: { message: 'the access token is invalid' } });
    const suffix401 = await send(sandbox, 'GET', '/api/party.json', {});
    expect(suffix401.json.error.message).toMatch(/missing API token/);

    const unknownXml = await send(sandbox, 'GET', '/api/no-such-thing', { authorization: basic(sandbox.token) });
    expect(unknownXml.status).toBe(404);
    expect(unknownXml.headers['content-type']).toMatch(/^application\/xml/);
    expect(parseXml(unknownXml.text).error.message).toBe('no such endpoint: GET /api/no-such-thing');
    const unknownJson = await send(sandbox, 'GET', '/api/no-such-thing', {
      authorization: basic(sandbox.token),
      accept: 'application/json',
    });
    expect(unknownJson.json).toEqual({ error: { message: 'no such endpoint: GET /api/no-such-thing' } });
    // v2 keeps its JSON shape with a message.
    const v2 = await send(sandbox, 'GET', '/api/v2/no-such-thing', { authorization: `Bearer ${sandbox.token}` });
    expect(v2.json).toEqual({ message: 'no such endpoint: GET /api/v2/no-such-thing' });
  });

  it('429 carries a message on v2 and comes as <error> on the legacy interface', async () => {
    const limited = await startTestSandbox({ rateLimit: { limit: 1, windowSeconds: 60 }, now: () => clock });
    try {
      expect((await send(limited, 'GET', '/api/v2/users', { authorization: `Bearer ${limited.token}` })).status).toBe(
        200,
      );
      const v2 = await send(limited, 'GET', '/api/v2/users', { authorization: `Bearer ${limited.token}` });
      expect(v2.status).toBe(429);
      expect(v2.json).toEqual({ error: 'rate limit reached', message: 'rate limit reached' });
      const v1 = await send(limited, 'GET', '/api/party', { authorization: basic(limited.token) });
      expect(v1.status).toBe(429);
      expect(v1.headers['retry-after']).toBe('30');
      expect(v1.headers['content-type']).toMatch(/^application\/xml/);
      expect(parseXml(v1.text).error.message).toBe('rate limit reached');
      const v1json = await send(limited, 'GET', '/api/party', {
        authorization: basic(limited.token),
        accept: 'application/json',
      });
      expect(v1json.json).toEqual({ error: { message: 'rate limit reached' } });
    } finally {
      await limited.close();
    }
  });
});

describe('item 8: a query parameter given twice counts with its last value', () => {
  it('perPage=100&perPage=1 is perPage=1, on v2 and v1 alike', async () => {
    const headers = { authorization: `Bearer ${sandbox.token}`, accept: 'application/json' };
    const twice = await send(sandbox, 'GET', '/api/v2/users?perPage=100&perPage=1', headers);
    expect(twice.status).toBe(200);
    expect(twice.json.users).toHaveLength(1);
    const same = await send(sandbox, 'GET', '/api/v2/users?perPage=100&perPage=100', headers);
    expect(same.status).toBe(200);
    expect(same.json.users).toHaveLength(3);
    const v1 = await send(sandbox, 'GET', '/api/party?limit=5&limit=1', headers);
    expect(v1.status).toBe(200);
    expect([...listOf(v1.json.parties.person), ...listOf(v1.json.parties.organisation)]).toHaveLength(1);
  });
});
