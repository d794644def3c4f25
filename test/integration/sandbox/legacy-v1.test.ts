import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';
import { JSON_ACCEPT, XML, addKase, addParty, listOf, parseXml, userId } from './legacy-v1-fixtures.ts';

let sandbox: TestSandbox;
let clock = new Date('2024-05-01T12:00:00Z');

beforeAll(async () => {
  sandbox = await startTestSandbox({ now: () => clock });
});
afterAll(() => sandbox.close());

describe('legacy v1 (spec 4.14): content negotiation', () => {
  it('answers XML by default with an XML content type', async () => {
    const party = addParty(sandbox.store);
    const kase = addKase(sandbox.store, party.id, { name: 'Fit-out <phase 1> & more', description: 'Big' });
    const answer = await sandbox.call('GET', `/api/kase/${kase.id}`);
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^application\/xml/);
    expect(answer.text).toMatch(/^<\?xml version="1.0" encoding="UTF-8"\?>/);
    expect(answer.text).toContain('<name>Fit-out &lt;phase 1&gt; &amp; more</name>');
    const doc = parseXml(answer.text);
    expect(doc.kase).toMatchObject({
      id: String(kase.id),
      status: 'OPEN',
      description: 'Big',
      partyId: String(party.id),
      owner: 'admin',
      createdOn: '2024-03-01T10:00:00Z',
      updatedOn: '2024-03-01T10:00:00Z',
    });
  });

  it('answers JSON with string ids when Accept asks for it', async () => {
    const party = addParty(sandbox.store);
    const kase = addKase(sandbox.store, party.id, { name: 'JSON case' });
    const answer = await sandbox.call('GET', `/api/kase/${kase.id}`, { headers: JSON_ACCEPT });
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(answer.body).toEqual({
      kase: {
        id: String(kase.id),
        status: 'OPEN',
        name: 'JSON case',
        partyId: String(party.id),
        owner: 'admin',
        createdOn: '2024-03-01T10:00:00Z',
        updatedOn: '2024-03-01T10:00:00Z',
      },
    });
  });

  it('lets a .json or .xml suffix override the Accept header', async () => {
    const party = addParty(sandbox.store);
    const kase = addKase(sandbox.store, party.id);
    const json = await sandbox.call('GET', `/api/kase/${kase.id}.json`, { headers: { accept: 'application/xml' } });
    expect(json.headers['content-type']).toMatch(/^application\/json/);
    expect(json.body.kase.id).toBe(String(kase.id));
    const xml = await sandbox.call('GET', `/api/kase/${kase.id}.xml`, { headers: JSON_ACCEPT });
    expect(xml.headers['content-type']).toMatch(/^application\/xml/);
    expect(parseXml(xml.text).kase.id).toBe(String(kase.id));
    const list = await sandbox.call('GET', '/api/kase.json');
    expect(Array.isArray(list.body.kases.kase)).toBe(true);
  });

  it.each([
    ['application/xml;q=0.5, application/json', 'json'],
    ['application/json;q=0.2, text/xml', 'xml'],
    ['text/html, */*', 'xml'],
    ['application/json;q=0, application/xml;q=0.1', 'xml'],
  ])('Accept %s gives %s', async (accept, format) => {
    const answer = await sandbox.call('GET', '/api/task/categories', { headers: { accept } });
    expect(answer.headers['content-type']).toMatch(format === 'json' ? /^application\/json/ : /^application\/xml/);
  });
});

describe('legacy v1 (spec 4.14): errors in the negotiated format', () => {
  it('answers 404 for an unknown id as an XML error document', async () => {
    const answer = await sandbox.call('GET', '/api/kase/999999');
    expect(answer.status).toBe(404);
    expect(answer.headers['content-type']).toMatch(/^application\/xml/);
    expect(parseXml(answer.text).error.message).toBe('no case with id 999999');
  });

  it('answers 404 in JSON when JSON was asked for, also for ids that are not numbers', async () => {
    const answer = await sandbox.call('GET', '/api/kase/abc.json');
    expect(answer.status).toBe(404);
    expect(answer.body).toEqual({ error: { message: 'no case with id "abc"' } });
  });

  it('answers 400 for malformed XML, naming the place', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, {
      headers: XML,
      rawBody: '<kase><name>x</kase>',
    });
    expect(answer.status).toBe(400);
    expect(parseXml(answer.text).error.message).toMatch(/malformed at line 1/);
  });

  it('answers 400 for malformed JSON in the negotiated format', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, {
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      rawBody: '{"kase": {"name": ',
    });
    expect(answer.status).toBe(400);
    expect(answer.headers['content-type']).toMatch(/^application\/json/);
    expect(typeof answer.body.error.message).toBe('string');
  });

  it('refuses a DOCTYPE without expanding its entities', async () => {
    const party = addParty(sandbox.store);
    const before = sandbox.store.kases.size;
    const body =
      '<?xml version="1.0"?><!DOCTYPE kase [<!ENTITY a "aaaaaaaaaa"><!ENTITY b "&a;&a;&a;&a;">]><kase><name>&b;</name></kase>';
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, { headers: XML, rawBody: body });
    expect(answer.status).toBe(400);
    expect(parseXml(answer.text).error.message).toMatch(/DOCTYPE/);
    expect(sandbox.store.kases.size).toBe(before);
  });

  it('answers 422 with every field problem at once', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, {
      headers: XML,
      rawBody: '<kase><status>PENDING</status><owner>nobody</owner><colour>red</colour></kase>',
    });
    expect(answer.status).toBe(422);
    const fieldErrors = parseXml(answer.text).error.fieldErrors.fieldError as Array<{ field: string }>;
    expect(fieldErrors.map((e) => e.field).sort()).toEqual(['colour', 'name', 'owner', 'status']);
  });

  it('answers 415 for a body that is neither XML nor JSON', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, {
      headers: { 'content-type': 'text/plain' },
      rawBody: 'name=x',
    });
    expect(answer.status).toBe(415);
  });

  it('answers 400 for a JSON body that is not an object', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase.json`, { body: [{ kase: { name: 'x' } }] });
    expect(answer.status).toBe(400);
    expect(answer.body.error.message).toMatch(/must be an object/);
  });

  it('answers 400 when the body holds another element than the resource', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, {
      headers: XML,
      rawBody: '<case><name>x</name></case>',
    });
    expect(answer.status).toBe(400);
    expect(parseXml(answer.text).error.message).toMatch(/one kase element/);
  });
});

describe('legacy v1 (spec 4.14, 3): cases', () => {
  it('creates a case from an XML body (delivered to the route as raw bytes) with 201, Location and no body', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, {
      headers: { 'content-type': 'text/xml; charset=utf-8' },
      rawBody: Buffer.from(
        '\uFEFF<?xml version="1.0"?><kase><name>Caf&#233; &amp; Bar</name><description>  Fit-out  </description></kase>',
      ),
    });
    expect(answer.status).toBe(201);
    expect(answer.text).toBe('');
    const id = Number(/\/api\/kase\/(\d+)$/.exec(String(answer.headers.location))?.[1]);
    expect(answer.headers.location).toBe(`${sandbox.url}/api/kase/${id}`);
    const stored = sandbox.store.kases.get(id);
    expect(stored).toMatchObject({
      name: 'Café & Bar',
      description: 'Fit-out',
      partyId: party.id,
      status: 'OPEN',
      ownerId: userId(sandbox.store, 'admin'),
      closedOn: null,
      createdAt: '2024-05-01T12:00:00Z',
    });
  });

  it('creates a closed case from JSON with another owner and its close date', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, {
      body: { kase: { name: 'Closed one', owner: 'sam', status: 'CLOSED', closeDate: '2024-04-15T00:00:00Z' } },
    });
    expect(answer.status).toBe(201);
    const id = Number(String(answer.headers.location).split('/').pop());
    const stored = sandbox.store.kases.get(id);
    expect(stored).toMatchObject({ status: 'CLOSED', closedOn: '2024-04-15', ownerId: userId(sandbox.store, 'sam') });
    const read = await sandbox.call('GET', `/api/kase/${id}.json`);
    expect(read.body.kase).toMatchObject({ status: 'CLOSED', owner: 'sam', closeDate: '2024-04-15T00:00:00Z' });
  });

  it('ignores closeDate on an open case', async () => {
    const party = addParty(sandbox.store);
    const answer = await sandbox.call('POST', `/api/party/${party.id}/kase`, {
      body: { kase: { name: 'Still open', closeDate: '2024-04-15' } },
    });
    const id = Number(String(answer.headers.location).split('/').pop());
    expect(sandbox.store.kases.get(id)).toMatchObject({ status: 'OPEN', closedOn: null });
  });

  it('answers 404 when creating a case on an unknown party', async () => {
    const answer = await sandbox.call('POST', '/api/party/999999/kase', { body: { kase: { name: 'x' } } });
    expect(answer.status).toBe(404);
  });

  it('changes only the supplied fields; closing sets the close date from the clock, reopening clears it', async () => {
    const party = addParty(sandbox.store);
    const kase = addKase(sandbox.store, party.id, { name: 'Keep me', description: 'Old' });
    clock = new Date('2024-05-02T08:30:00Z');
    const closed = await sandbox.call('PUT', `/api/kase/${kase.id}`, {
      headers: XML,
      rawBody: '<kase><status>CLOSED</status></kase>',
    });
    expect(closed.status).toBe(200);
    expect(parseXml(closed.text).kase).toMatchObject({
      name: 'Keep me',
      description: 'Old',
      status: 'CLOSED',
      updatedOn: '2024-05-02T08:30:00Z',
    });
    expect(kase.closedOn).toBe('2024-05-02');

    const renamed = await sandbox.call('PUT', `/api/kase/${kase.id}.json`, {
      body: { kase: { description: null, name: 'Renamed' } },
    });
    expect(renamed.body.kase.name).toBe('Renamed');
    expect(renamed.body.kase.description).toBeUndefined();
    expect(kase.closedOn).toBe('2024-05-02');

    await sandbox.call('PUT', `/api/kase/${kase.id}`, { body: { kase: { status: 'OPEN' } } });
    expect(kase).toMatchObject({ status: 'OPEN', closedOn: null, description: null });
  });

  it('refuses an empty name on update', async () => {
    const party = addParty(sandbox.store);
    const kase = addKase(sandbox.store, party.id, { name: 'Named' });
    const answer = await sandbox.call('PUT', `/api/kase/${kase.id}`, { headers: XML, rawBody: '<kase><name/></kase>' });
    expect(answer.status).toBe(422);
    expect(kase.name).toBe('Named');
  });

  it('lists cases with tag, lastmodified, start and limit and a size attribute', async () => {
    const tag = sandbox.store.tags.insert({ entity: 'kases', name: 'Urgent Work', description: null, dataTag: false });
    const party = addParty(sandbox.store);
    const old = addKase(sandbox.store, party.id, { name: 'old', tagIds: [tag.id], updatedAt: '2009-06-30T23:59:59Z' });
    const july = addKase(sandbox.store, party.id, {
      name: 'july',
      tagIds: [tag.id],
      updatedAt: '2009-07-01T00:00:01Z',
    });
    const later = addKase(sandbox.store, party.id, {
      name: 'later',
      tagIds: [tag.id],
      updatedAt: '2010-01-01T00:00:00Z',
    });
    addKase(sandbox.store, party.id, { name: 'untagged', updatedAt: '2010-01-01T00:00:00Z' });

    const tagged = await sandbox.call('GET', '/api/kase?tag=urgent%20work');
    const doc = parseXml(tagged.text);
    expect(doc.kases['@size']).toBe('3');
    expect(doc.kases.kase.map((k: { id: string }) => k.id)).toEqual([old.id, july.id, later.id].map(String));

    // June has 30 days: the 31st rolls over to 1 July.
    const modified = await sandbox.call('GET', '/api/kase.json?tag=Urgent%20Work&lastmodified=20090631T000000');
    expect(modified.body.kases['@size']).toBe('2');
    expect(listOf(modified.body.kases.kase).map((k: { name: string }) => k.name)).toEqual(['july', 'later']);

    const paged = await sandbox.call('GET', '/api/kase.json?tag=Urgent%20Work&start=1&limit=1');
    expect(listOf(paged.body.kases.kase).map((k: { name: string }) => k.name)).toEqual(['july']);
  });

  it.each([
    ['lastmodified=2009-06-30', 200],
    ['lastmodified=20091301T000000', 400],
    ['lastmodified=yesterday', 400],
    ['start=-1', 400],
    ['limit=0', 400],
    ['limit=abc', 400],
  ])('list query %s answers %i', async (query, status) => {
    const answer = await sandbox.call('GET', `/api/kase?${query}`);
    expect(answer.status).toBe(status);
  });

  it('answers an empty list as an empty element and as an empty array', async () => {
    const xml = await sandbox.call('GET', '/api/kase?tag=no-such-tag');
    expect(xml.text).toContain('<kases size="0"/>');
    const json = await sandbox.call('GET', '/api/kase.json?tag=no-such-tag');
    expect(json.body).toEqual({ kases: { '@size': '0', kase: [] } });
  });

  it('lists the cases of a party', async () => {
    const party = addParty(sandbox.store);
    const other = addParty(sandbox.store);
    const mine = addKase(sandbox.store, party.id);
    addKase(sandbox.store, other.id);
    const answer = await sandbox.call('GET', `/api/party/${party.id}/kase`, { headers: JSON_ACCEPT });
    expect(listOf(answer.body.kases.kase).map((k: { id: string }) => k.id)).toEqual([String(mine.id)]);
    expect((await sandbox.call('GET', '/api/party/999999/kase')).status).toBe(404);
  });

  it('deletes a case with its tasks and lists it as deleted after since', async () => {
    const party = addParty(sandbox.store);
    const kase = addKase(sandbox.store, party.id);
    const task = sandbox.store.tasks.insert({
      description: 'on the case',
      detail: null,
      categoryId: null,
      status: 'OPEN',
      partyId: null,
      opportunityId: null,
      kaseId: kase.id,
      ownerId: null,
      dueOn: null,
      dueTime: null,
      completedAt: null,
      trackId: null,
      repeat: null,
      createdAt: '2024-01-01T00:00:00Z',
      updatedAt: '2024-01-01T00:00:00Z',
    });
    clock = new Date('2024-05-03T09:00:00Z');
    const answer = await sandbox.call('DELETE', `/api/kase/${kase.id}`);
    expect(answer.status).toBe(200);
    expect(sandbox.store.kases.has(kase.id)).toBe(false);
    expect(sandbox.store.tasks.has(task.id)).toBe(false);
    expect((await sandbox.call('GET', `/api/kase/${kase.id}`)).status).toBe(404);

    const deleted = await sandbox.call('GET', '/api/kase/deleted.json?since=20240503T000000');
    expect(listOf(deleted.body.deletedKases.kase)).toContainEqual({
      id: String(kase.id),
      deletedDate: '2024-05-03T09:00:00Z',
    });
    const none = await sandbox.call('GET', '/api/kase/deleted?since=20240503T090000');
    expect(parseXml(none.text).deletedKases['@size']).toBe('0');
  });

  it('requires since on the deleted list', async () => {
    const answer = await sandbox.call('GET', '/api/kase/deleted');
    expect(answer.status).toBe(400);
    expect(parseXml(answer.text).error.message).toMatch(/since is required/);
  });

  it('adds, lists and removes additional contacts', async () => {
    const party = addParty(sandbox.store);
    const org = addParty(sandbox.store, { type: 'organisation', name: 'Acme', firstName: null, lastName: null });
    const person = addParty(sandbox.store, { firstName: 'Grace', lastName: 'Hopper' });
    const kase = addKase(sandbox.store, party.id);

    const added = await sandbox.call('POST', `/api/kase/${kase.id}/party/${org.id}`);
    expect(added.status).toBe(201);
    expect(added.headers.location).toBe(`${sandbox.url}/api/kase/${kase.id}/party`);
    expect((await sandbox.call('POST', `/api/kase/${kase.id}/party/${org.id}`)).status).toBe(200);
    expect((await sandbox.call('POST', `/api/kase/${kase.id}/party/${person.id}`)).status).toBe(201);
    expect((await sandbox.call('POST', `/api/kase/${kase.id}/party/999999`)).status).toBe(404);

    const list = parseXml((await sandbox.call('GET', `/api/kase/${kase.id}/party`)).text);
    expect(list.parties['@size']).toBe('2');
    expect(list.parties.organisation[0].name).toBe('Acme');
    expect(list.parties.person[0].firstName).toBe('Grace');

    expect((await sandbox.call('DELETE', `/api/kase/${kase.id}/party/${org.id}`)).status).toBe(200);
    expect(kase.partyIds).toEqual([person.id]);
    const json = await sandbox.call('GET', `/api/kase/${kase.id}/party.json`);
    expect(listOf(json.body.parties.organisation)).toEqual([]);
    expect(listOf(json.body.parties.person)).toHaveLength(1);
  });

  it('hides cases restricted for the caller', async () => {
    const party = addParty(sandbox.store);
    const hidden = addKase(sandbox.store, party.id, { restrictedFor: [userId(sandbox.store, 'admin')] });
    expect((await sandbox.call('GET', `/api/kase/${hidden.id}`)).status).toBe(404);
    const list = await sandbox.call('GET', `/api/party/${party.id}/kase.json`);
    expect(listOf(list.body.kases.kase)).toEqual([]);
  });
});
