/**
 * The v1 party writes and lists the published v1 clients send (issue 40): people and
 * organisations created (201, `Location: .../api/party/{id}`, no body) and updated (200, no body)
 * from XML and JSON bodies, parties and opportunities deleted (200, then 404), an opportunity made
 * on a party (201 + `Location`), the lists of people and of organisations; the v1 JSON shapes (one
 * item as the object itself, an empty contact kind left out) and the XML element order of the
 * recorded answers. Requests go out over HTTP with undici, with the clients' headers and bodies.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';
import { addOpportunity, addParty, listOf, parseXml } from './legacy-v1-fixtures.ts';

let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

interface Sent {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  json: any;
}

async function send(method: string, path: string, headers: Record<string, string>, body?: string): Promise<Sent> {
  const answer = await request(`${sandbox.url}${path}`, { method: method as 'GET', headers, body });
  const text = await answer.body.text();
  const type = String(answer.headers['content-type'] ?? '');
  return {
    status: answer.statusCode,
    headers: answer.headers,
    text,
    json: type.includes('json') && text !== '' ? JSON.parse(text) : undefined,
  };
}

/** A Node v1 client: Basic auth with the token as user name, JSON both ways. */
const node = (): Record<string, string> => ({
  authorization: `Basic ${Buffer.from(`${sandbox.token}:x`).toString('base64')}`,
  accept: 'application/json',
  'content-type': 'application/json',
  'user-agent': 'node-capsule/1.2.0',
});
/** A Python v1 client: bearer token, XML bodies, XML answers. */
const python = (): Record<string, string> => ({
  authorization: `Bearer ${sandbox.token}`,
  'content-type': 'text/xml; charset=utf-8',
  accept: 'application/xml',
  'user-agent': 'python-requests/2.31.0',
});

/** The id a `Location` of a create names, checking its form. */
function createdId(answer: Sent, kind: 'party' | 'opportunity'): number {
  expect(answer.status, answer.text).toBe(201);
  expect(answer.text).toBe('');
  const location = String(answer.headers.location);
  expect(location).toMatch(new RegExp(`^${sandbox.url}/api/${kind}/\\d+$`));
  return Number(location.slice(location.lastIndexOf('/') + 1));
}

describe('POST /api/person and /api/organisation', () => {
  it('creates a person from an XML body: 201, Location of the party, no body; v2 sees the same person', async () => {
    const xml =
      '<?xml version="1.0" encoding="UTF-8"?><person><title>Dr</title><firstName>Ada</firstName><lastName>Lovelace</lastName><jobTitle>Analyst</jobTitle>' +
      '<organisationName>Engines Ltd</organisationName><about>Met at the fair</about><contacts>' +
      '<address><type>Office</type><street>1 Loom St</street><city>London</city><zip>N1 1AA</zip><country>United Kingdom</country></address>' +
      '<email><type>Work</type><emailAddress>ada@engines.example</emailAddress></email><email><type>Home</type><emailAddress>ada@home.example</emailAddress></email>' +
      '<phone><type>Mobile</type><phoneNumber>+44 7700 900123</phoneNumber></phone>' +
      '<website><type>Work</type><webService>URL</webService><webAddress>engines.example</webAddress></website></contacts></person>';
    const id = createdId(await send('POST', '/api/person', python(), xml), 'party');
    const v2 = (await sandbox.v2('GET', `/parties/${id}`)).body.party;
    expect(v2).toMatchObject({
      type: 'person',
      title: 'Dr',
      firstName: 'Ada',
      lastName: 'Lovelace',
      jobTitle: 'Analyst',
      about: 'Met at the fair',
      organisation: { name: 'Engines Ltd' },
    });
    expect(v2.emailAddresses.map((e: any) => [e.type, e.address])).toEqual([
      ['Work', 'ada@engines.example'],
      ['Home', 'ada@home.example'],
    ]);
    expect(v2.addresses).toMatchObject([
      { type: 'Office', street: '1 Loom St', city: 'London', zip: 'N1 1AA', country: 'United Kingdom' },
    ]);
    expect(v2.phoneNumbers).toMatchObject([{ type: 'Mobile', number: '+44 7700 900123' }]);
    expect(v2.websites).toMatchObject([{ type: 'Work', service: 'URL', address: 'engines.example' }]);
    // The organisation named was made, as a v2 create by name makes it.
    expect((await sandbox.v2('GET', `/parties/${v2.organisation.id}`)).body.party).toMatchObject({
      type: 'organisation',
      name: 'Engines Ltd',
    });
    // The owner is the token's user, as on a v2 create.
    expect(v2.owner.username).toBe('admin');
  });

  it('creates an organisation from a JSON body (one email as the object itself), with Basic auth', async () => {
    const body = JSON.stringify({
      organisation: {
        name: 'Difference Co',
        about: 'Gears',
        contacts: {
          email: { type: 'Work', emailAddress: 'info@difference.example' },
          phone: [{ phoneNumber: '+44 20 7946 0000' }],
        },
      },
    });
    const id = createdId(await send('POST', '/api/organisation', node(), body), 'party');
    const read = await send('GET', `/api/party/${id}`, node());
    expect(read.status).toBe(200);
    expect(read.json.organisation).toMatchObject({ id: String(id), name: 'Difference Co', about: 'Gears' });
    // One item of a kind is the object itself; a kind without items is left out.
    expect(read.json.organisation.contacts).toEqual({
      email: { id: expect.any(String), type: 'Work', emailAddress: 'info@difference.example' },
      phone: { id: expect.any(String), phoneNumber: '+44 20 7946 0000' },
    });
  });

  it('keeps the v2 rules: a person needs a name, an organisation takes no firstName (422 in the v1 error shape); no token is 401', async () => {
    const nameless = await send('POST', '/api/person', node(), JSON.stringify({ person: { jobTitle: 'Nobody' } }));
    expect(nameless.status).toBe(422);
    expect(listOf(nameless.json.error.fieldErrors.fieldError).map((e: any) => e.field)).toEqual(['firstName']);
    const wrong = await send(
      'POST',
      '/api/organisation',
      python(),
      '<organisation><name>X</name><firstName>Y</firstName></organisation>',
    );
    expect(wrong.status).toBe(422);
    expect(parseXml(wrong.text).error.fieldErrors.fieldError.field).toBe('firstName');
    // The v2 rule refuses it, named as the v1 body names it.
    const badEmail = await send(
      'POST',
      '/api/person',
      node(),
      JSON.stringify({
        person: {
          lastName: 'Z',
          contacts: { email: [{ emailAddress: 'z@ok.example' }, { emailAddress: 'not an address' }] },
        },
      }),
    );
    expect(badEmail.status).toBe(422);
    expect(badEmail.json.error.fieldErrors.fieldError).toEqual({
      field: 'contacts.email[1].emailAddress',
      message: 'is not an email address: "not an address"',
    });
    const noOrganisation = await send(
      'POST',
      '/api/person',
      python(),
      '<person><lastName>Z</lastName><organisationId>99999999</organisationId></person>',
    );
    expect(parseXml(noOrganisation.text).error.fieldErrors.fieldError.field).toBe('organisationId');
    const before = sandbox.store.parties.size;
    const anonymous = await send(
      'POST',
      '/api/person',
      { 'content-type': 'application/json' },
      JSON.stringify({ person: { lastName: 'Anon' } }),
    );
    expect(anonymous.status).toBe(401);
    expect(sandbox.store.parties.size).toBe(before);
  });
});

describe('PUT /api/person/{id} and /api/organisation/{id}', () => {
  it('changes only the fields given: 200 and no body; a contact with its id is changed, one without is added', async () => {
    const person = addParty(sandbox.store, {
      type: 'person',
      firstName: 'Grace',
      lastName: 'Hopper',
      emailAddresses: [{ id: 9001, type: 'Work', address: 'grace@old.example' }],
    });
    const xml = `<person><jobTitle>Admiral</jobTitle><contacts><email><id>9001</id><emailAddress>grace@navy.example</emailAddress></email><phone><type>Work</type><phoneNumber>555-0100</phoneNumber></phone></contacts></person>`;
    const answer = await send('PUT', `/api/person/${person.id}`, python(), xml);
    expect(answer.status, answer.text).toBe(200);
    expect(answer.text).toBe('');
    const v2 = (await sandbox.v2('GET', `/parties/${person.id}`)).body.party;
    expect(v2).toMatchObject({ firstName: 'Grace', lastName: 'Hopper', jobTitle: 'Admiral' });
    expect(v2.emailAddresses).toEqual([{ id: 9001, type: 'Work', address: 'grace@navy.example' }]);
    expect(v2.phoneNumbers).toMatchObject([{ type: 'Work', number: '555-0100' }]);

    const organisation = addParty(sandbox.store, {
      type: 'organisation',
      firstName: null,
      lastName: null,
      name: 'Old Name Ltd',
    });
    const renamed = await send(
      'PUT',
      `/api/organisation/${organisation.id}`,
      node(),
      JSON.stringify({ organisation: { name: 'New Name Ltd' } }),
    );
    expect(renamed.status).toBe(200);
    expect(renamed.text).toBe('');
    expect((await sandbox.v2('GET', `/parties/${organisation.id}`)).body.party.name).toBe('New Name Ltd');
  });

  it('answers 404 for a party of the other kind and for one that is not there', async () => {
    const organisation = addParty(sandbox.store, {
      type: 'organisation',
      firstName: null,
      lastName: null,
      name: 'Not A Person Ltd',
    });
    const asPerson = await send(
      'PUT',
      `/api/person/${organisation.id}`,
      node(),
      JSON.stringify({ person: { firstName: 'X' } }),
    );
    expect(asPerson.status).toBe(404);
    expect(asPerson.json.error.message).toMatch(/no person with id/);
    expect(
      (await send('PUT', '/api/organisation/99999999', python(), '<organisation><name>X</name></organisation>')).status,
    ).toBe(404);
  });
});

describe('DELETE /api/party/{id}, DELETE /api/opportunity/{id}, POST /api/party/{id}/opportunity', () => {
  it('makes an opportunity on a party from XML: 201 + Location; v1 and v2 read it', async () => {
    const party = addParty(sandbox.store, { type: 'organisation', firstName: null, lastName: null, name: 'Buyer Ltd' });
    const xml =
      '<opportunity><name>Fleet renewal</name><description>Ten vans</description><currency>GBP</currency><value>1500.00</value>' +
      '<durationBasis>MONTH</durationBasis><duration>12</duration><milestone>Proposal</milestone><expectedCloseDate>2026-09-30T00:00:00Z</expectedCloseDate></opportunity>';
    const id = createdId(await send('POST', `/api/party/${party.id}/opportunity`, python(), xml), 'opportunity');
    const v1 = parseXml((await send('GET', `/api/opportunity/${id}`, python())).text).opportunity;
    expect(v1).toMatchObject({
      name: 'Fleet renewal',
      partyId: String(party.id),
      currency: 'GBP',
      value: '1500.00',
      durationBasis: 'MONTH',
      duration: '12',
      milestone: 'Proposal',
      probability: '50',
      expectedCloseDate: '2026-09-30T00:00:00Z',
      owner: 'admin',
    });
    const v2 = (await sandbox.v2('GET', `/opportunities/${id}`)).body.opportunity;
    expect(v2).toMatchObject({
      party: { id: party.id },
      value: { amount: 1500, currency: 'GBP' },
      milestone: { name: 'Proposal' },
    });
    // By milestone id, from a JSON client; a milestone is needed.
    const byId = await send(
      'POST',
      `/api/party/${party.id}/opportunity`,
      node(),
      JSON.stringify({ opportunity: { name: 'Spares', milestoneId: String(v2.milestone.id) } }),
    );
    createdId(byId, 'opportunity');
    const without = await send(
      'POST',
      `/api/party/${party.id}/opportunity`,
      node(),
      JSON.stringify({ opportunity: { name: 'No stage' } }),
    );
    expect(without.status).toBe(422);
    expect(without.json.error.fieldErrors.fieldError.field).toBe('milestone');
    const wrong = await send(
      'POST',
      `/api/party/${party.id}/opportunity`,
      node(),
      JSON.stringify({ opportunity: { name: 'Odd', milestoneId: '99999999', value: '10', currency: 'XQQ' } }),
    );
    expect(wrong.status).toBe(422);
    expect(listOf(wrong.json.error.fieldErrors.fieldError).map((e: any) => e.field)).toEqual([
      'milestoneId',
      'currency',
    ]);
  });

  it('deletes an opportunity (200, then 404) and a party with what hangs off it, its people staying', async () => {
    const organisation = addParty(sandbox.store, {
      type: 'organisation',
      firstName: null,
      lastName: null,
      name: 'Going Ltd',
    });
    const person = addParty(sandbox.store, {
      type: 'person',
      firstName: 'Stay',
      lastName: 'Here',
      organisationId: organisation.id,
    });
    const kept = addOpportunity(sandbox.store, person.id, { name: 'Kept' });
    const alone = addOpportunity(sandbox.store, person.id, { name: 'Alone' });
    const cascaded = addOpportunity(sandbox.store, organisation.id, { name: 'Goes with its party' });

    const gone = await send('DELETE', `/api/opportunity/${alone.id}`, node());
    expect(gone.status).toBe(200);
    expect(gone.text).toBe('');
    expect((await send('GET', `/api/opportunity/${alone.id}`, node())).status).toBe(404);

    const deleted = await send('DELETE', `/api/party/${organisation.id}`, python());
    expect(deleted.status).toBe(200);
    expect(deleted.text).toBe('');
    expect((await send('GET', `/api/party/${organisation.id}`, python())).status).toBe(404);
    expect((await send('GET', `/api/opportunity/${cascaded.id}`, python())).status).toBe(404);
    // The cascade is v2's: the party and its opportunity are in the deleted lists.
    expect(
      (await sandbox.v2('GET', '/parties/deleted?since=2000-01-01T00:00:00Z')).body.parties.map((d: any) => d.id),
    ).toContain(organisation.id);
    expect(
      (await sandbox.v2('GET', '/opportunities/deleted?since=2000-01-01T00:00:00Z')).body.opportunities.map(
        (d: any) => d.id,
      ),
    ).toContain(cascaded.id);
    const stays = parseXml((await send('GET', `/api/party/${person.id}`, python())).text).person;
    expect(stays.organisationId).toBeUndefined();
    expect((await send('GET', `/api/opportunity/${kept.id}`, python())).status).toBe(200);
    expect((await send('DELETE', `/api/party/${organisation.id}`, python())).status).toBe(404);
  });
});

describe('GET /api/person and /api/organisation', () => {
  it('lists the people, or the organisations, in a parties list, with the filters of /api/party', async () => {
    const box = await startTestSandbox();
    try {
      const org = addParty(box.store, {
        type: 'organisation',
        firstName: null,
        lastName: null,
        name: 'Only Org Ltd',
        websites: [{ id: 1, type: 'Work', service: 'URL', address: 'only.example' }],
      });
      addParty(box.store, { type: 'person', firstName: 'Pat', lastName: 'One' });
      addParty(box.store, {
        type: 'person',
        firstName: 'Sam',
        lastName: 'Two',
        emailAddresses: [{ id: 2, type: 'Work', address: 'sam@two.example' }],
      });
      const auth = { authorization: `Bearer ${box.token}`, accept: 'application/json' };
      const people = await box.call('GET', '/api/person', { headers: auth });
      expect(people.status).toBe(200);
      expect(people.body.parties['@size']).toBe('2');
      expect(people.body.parties.organisation).toBeUndefined();
      expect(people.body.parties.person.map((p: any) => p.lastName)).toEqual(['One', 'Two']);
      const filtered = await box.call('GET', '/api/person?email=SAM@two.example', { headers: auth });
      // One item: the object itself, as the service answers.
      expect(filtered.body.parties.person).toMatchObject({
        firstName: 'Sam',
        contacts: { email: { emailAddress: 'sam@two.example' } },
      });
      const orgs = await box.call('GET', '/api/organisation.json?limit=5', {
        headers: { authorization: `Bearer ${box.token}` },
      });
      expect(orgs.body).toEqual({
        parties: { '@size': '1', organisation: expect.objectContaining({ id: String(org.id), name: 'Only Org Ltd' }) },
      });
      expect(orgs.body.parties.organisation.contacts).toEqual({
        website: { id: '1', type: 'Work', webAddress: 'only.example', webService: 'URL', url: 'http://only.example' },
      });
      const xml = await box.call('GET', '/api/organisation', { headers: { authorization: `Bearer ${box.token}` } });
      expect(parseXml(xml.text).parties['@size']).toBe('1');
    } finally {
      await box.close();
    }
  });

  it('writes the XML elements in the order of the recorded answers: pictureURL after contacts, webAddress before webService', async () => {
    const org = addParty(sandbox.store, {
      type: 'organisation',
      firstName: null,
      lastName: null,
      name: 'Order Ltd',
      websites: [{ id: 3, type: 'Work', service: 'URL', address: 'order.example' }],
    });
    const text = (await send('GET', `/api/party/${org.id}`, python())).text;
    const names = [...text.matchAll(/<(\w+)[ >/]/g)].map((m) => m[1]);
    expect(names).toEqual([
      'organisation',
      'id',
      'contacts',
      'website',
      'id',
      'type',
      'webAddress',
      'webService',
      'url',
      'pictureURL',
      'name',
      'createdOn',
      'updatedOn',
    ]);
    const person = addParty(sandbox.store, { type: 'person', firstName: 'Ord', lastName: 'Er' });
    const personText = (await send('GET', `/api/party/${person.id}`, python())).text;
    expect([...personText.matchAll(/<(\w+)[ >/]/g)].map((m) => m[1])).toEqual([
      'person',
      'id',
      'contacts',
      'pictureURL',
      'firstName',
      'lastName',
      'createdOn',
      'updatedOn',
    ]);
  });
});
