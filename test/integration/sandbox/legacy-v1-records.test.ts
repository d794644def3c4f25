import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';
import {
  JSON_ACCEPT,
  XML,
  addEntry,
  addKase,
  addOpportunity,
  addParty,
  addTask,
  definitionId,
  listOf,
  parseXml,
  userId,
} from './legacy-v1-fixtures.ts';

let sandbox: TestSandbox;
const clock = new Date('2024-05-01T12:00:00Z');

beforeAll(async () => {
  sandbox = await startTestSandbox({ now: () => clock });
});
afterAll(() => sandbox.close());

const tagId = (name: string): number => {
  const tag = sandbox.store.tags.all().find((t) => t.name === name);
  if (!tag) throw new Error(`no tag ${name}`);
  return tag.id;
};

describe('legacy v1 (spec 4.14): custom fields', () => {
  it('lists only fields with a value, with the value element of their type', async () => {
    const store = sandbox.store;
    const party = addParty(store, {
      tagIds: [tagId('Customer')],
      fields: [
        { id: 1, definitionId: definitionId(store, 'parties', 'Industry'), value: 'Retail' },
        { id: 2, definitionId: definitionId(store, 'parties', 'VIP'), value: false },
        { id: 3, definitionId: definitionId(store, 'parties', 'Customer since'), value: '2020-02-29' },
        { id: 4, definitionId: definitionId(store, 'parties', 'Support level'), value: 'Gold' },
      ],
    });
    const xml = parseXml((await sandbox.call('GET', `/api/party/${party.id}/customfields`)).text);
    expect(xml.customFields['@size']).toBe('3');
    expect(xml.customFields.customField).toEqual([
      { id: '1', label: 'Industry', text: 'Retail' },
      { id: '3', label: 'Customer since', date: '2020-02-29T00:00:00Z' },
      { id: '4', tag: 'Customer', label: 'Support level', text: 'Gold' },
    ]);
    const json = await sandbox.call('GET', `/api/party/${party.id}/customfields`, { headers: JSON_ACCEPT });
    expect(listOf(json.body.customFields.customField)).toHaveLength(3);
  });

  it('adds, updates and removes fields in one PUT and leaves the others alone', async () => {
    const store = sandbox.store;
    const party = addParty(store, {
      fields: [
        { id: 11, definitionId: definitionId(store, 'parties', 'Industry'), value: 'Retail' },
        { id: 12, definitionId: definitionId(store, 'parties', 'Customer since'), value: '2020-01-01' },
        { id: 13, definitionId: definitionId(store, 'parties', 'Preferred language'), value: 'Welsh' },
      ],
    });
    const body = `<customFields>
      <customField><label>Industry</label><text>finance</text></customField>
      <customField><label>Customer since</label></customField>
      <customField><label>VIP</label><boolean>true</boolean></customField>
      <customField><tag>Customer</tag><label>Contract end</label><date>2025-01-31T00:00:00Z</date></customField>
    </customFields>`;
    const answer = await sandbox.call('PUT', `/api/party/${party.id}/customfields`, { headers: XML, rawBody: body });
    expect(answer.status).toBe(200);
    const byLabel = Object.fromEntries(
      parseXml(answer.text).customFields.customField.map((f: { label: string }) => [f.label, f]),
    );
    expect(Object.keys(byLabel).sort()).toEqual(['Contract end', 'Industry', 'Preferred language', 'VIP']);
    // The List value takes the option's own spelling; the instance keeps its id.
    expect(byLabel.Industry).toEqual({ id: '11', label: 'Industry', text: 'Finance' });
    expect(byLabel.VIP.boolean).toBe('true');
    expect(byLabel['Contract end']).toMatchObject({ tag: 'Customer', date: '2025-01-31T00:00:00Z' });
    // A value in a data tag's field puts the tag on the record.
    expect(party.tagIds).toContain(tagId('Customer'));
    expect(party.updatedAt).toBe('2024-05-01T12:00:00Z');

    const untick = await sandbox.call('PUT', `/api/party/${party.id}/customfields.json`, {
      body: { customFields: { customField: { label: 'VIP', boolean: false } } },
    });
    expect(listOf(untick.body.customFields.customField).map((f: { label: string }) => f.label)).not.toContain('VIP');
  });

  it('accepts the misspelled and the correct opportunity path, and case fields', async () => {
    const store = sandbox.store;
    const party = addParty(store);
    const opportunity = addOpportunity(store, party.id);
    const kase = addKase(store, party.id);
    const put = await sandbox.call('PUT', `/api/opportuntity/${opportunity.id}/customfields`, {
      body: { customFields: { customField: [{ label: 'Lead source', text: 'Web' }] } },
    });
    expect(put.status).toBe(200);
    const read = await sandbox.call('GET', `/api/opportunity/${opportunity.id}/customfields.json`);
    expect(listOf(read.body.customFields.customField)[0]).toMatchObject({ label: 'Lead source', text: 'Web' });
    const kasePut = await sandbox.call('PUT', `/api/kase/${kase.id}/customfields`, {
      headers: XML,
      rawBody: '<customFields><customField><label>Billable</label><boolean>true</boolean></customField></customFields>',
    });
    expect(kasePut.status).toBe(200);
    expect(kase.fields).toEqual([
      expect.objectContaining({ definitionId: definitionId(store, 'kases', 'Billable'), value: true }),
    ]);
  });

  it.each([
    [
      'a value that is not a List option',
      '<customField><label>Industry</label><text>Mining</text></customField>',
      /one of Agriculture;Finance/,
    ],
    [
      'a Text value against its pattern',
      '<customField><label>Account number</label><text>12345</text></customField>',
      /does not match the pattern/,
    ],
    [
      'an unknown label',
      '<customField><label>Shoe size</label><text>9</text></customField>',
      /no custom field labelled "Shoe size"/,
    ],
    [
      'a data tag field without its tag',
      '<customField><label>Contract end</label><date>2025-01-01</date></customField>',
      /belongs to the data tag "Customer"/,
    ],
    [
      'the wrong value element',
      '<customField><label>Customer since</label><text>2025-01-01</text></customField>',
      /takes <date>/,
    ],
    [
      'two value elements',
      '<customField><label>VIP</label><boolean>true</boolean><text>yes</text></customField>',
      /give one value element/,
    ],
    ['a bad date', '<customField><label>Customer since</label><date>2025-02-30</date></customField>', /must be a date/],
    [
      'a person-only field on an organisation',
      '<customField><label>Preferred language</label><text>Welsh</text></customField>',
      /only for person records/,
    ],
  ])('refuses %s with 422 and applies nothing', async (_what, element, message) => {
    const store = sandbox.store;
    const org = addParty(store, { type: 'organisation', name: 'Acme', firstName: null, lastName: null });
    const body = `<customFields><customField><label>Industry</label><text>Retail</text></customField>${element}</customFields>`;
    const answer = await sandbox.call('PUT', `/api/party/${org.id}/customfields`, { headers: XML, rawBody: body });
    expect(answer.status).toBe(422);
    expect(parseXml(answer.text).error.message).toMatch(message);
    expect(org.fields).toEqual([]);
  });

  it('lists definitions with type, options, data tag and class', async () => {
    const answer = await sandbox.call('GET', '/api/party/customfield/definitions');
    const items = parseXml(answer.text).customFieldDefinitions.customFieldDefinition as Array<Record<string, string>>;
    const byLabel = Object.fromEntries(items.map((d) => [d.label, d]));
    expect(byLabel.Industry).toMatchObject({
      type: 'List',
      options: 'Agriculture;Finance;Manufacturing;Retail;Software;Other',
    });
    expect(byLabel['Account number']).toMatchObject({ type: 'Text', options: '^[A-Z]{2}-\\d{4,8}$' });
    expect(byLabel['Preferred language']).toMatchObject({ forClass: 'PERSON' });
    expect(byLabel['Support level']).toMatchObject({
      tag: 'Customer',
      id: String(definitionId(sandbox.store, 'parties', 'Support level')),
    });
    expect(byLabel.VIP?.forClass).toBeUndefined();
    const kase = await sandbox.call('GET', '/api/kase/customfield/definitions.json');
    expect(
      listOf(kase.body.customFieldDefinitions.customFieldDefinition).map((d: { label: string }) => d.label),
    ).toEqual(['Priority', 'Go-live', 'Reference', 'Billable']);
    const opportunity = await sandbox.call('GET', '/api/opportunity/customfield/definitions.json');
    expect(opportunity.body.customFieldDefinitions['@size']).toBe('4');
  });
});

describe('legacy v1 (spec 4.14): tags', () => {
  it('adds a tag with 201 and Location, answers 200 when present, lists and removes it', async () => {
    const party = addParty(sandbox.store);
    const added = await sandbox.call('POST', `/api/party/${party.id}/tag/Trade%20Show%202024`);
    expect(added.status).toBe(201);
    expect(added.headers.location).toBe(`${sandbox.url}/api/party/${party.id}/tag/Trade%20Show%202024`);
    expect((await sandbox.call('POST', `/api/party/${party.id}/tag/trade%20show%202024`)).status).toBe(200);
    expect(sandbox.store.tags.all().filter((t) => t.name.toLowerCase() === 'trade show 2024')).toHaveLength(1);

    const list = parseXml((await sandbox.call('GET', `/api/party/${party.id}/tag`)).text);
    expect(list.tags).toEqual({ '@size': '1', tag: [{ name: 'Trade Show 2024' }] });
    const json = await sandbox.call('GET', `/api/party/${party.id}/tag.json`);
    expect(json.body).toEqual({ tags: { '@size': '1', tag: { name: 'Trade Show 2024' } } });

    expect((await sandbox.call('DELETE', `/api/party/${party.id}/tag/Trade%20Show%202024`)).status).toBe(200);
    expect(party.tagIds).toEqual([]);
  });

  it('removes the values of a data tag with the tag', async () => {
    const store = sandbox.store;
    const party = addParty(store, {
      tagIds: [tagId('Customer')],
      fields: [
        { id: 21, definitionId: definitionId(store, 'parties', 'Support level'), value: 'Gold' },
        { id: 22, definitionId: definitionId(store, 'parties', 'Industry'), value: 'Retail' },
      ],
    });
    expect((await sandbox.call('DELETE', `/api/party/${party.id}/tag/Customer`)).status).toBe(200);
    expect(party.fields.map((f) => f.id)).toEqual([22]);
  });

  it('tags opportunities and cases in their own tag lists', async () => {
    const party = addParty(sandbox.store);
    const opportunity = addOpportunity(sandbox.store, party.id);
    const kase = addKase(sandbox.store, party.id);
    expect((await sandbox.call('POST', `/api/opportunity/${opportunity.id}/tag/Hot`)).status).toBe(201);
    expect((await sandbox.call('POST', `/api/kase/${kase.id}/tag/Hot`)).status).toBe(201);
    const hot = sandbox.store.tags
      .all()
      .filter((t) => t.name === 'Hot')
      .map((t) => t.entity)
      .sort();
    expect(hot).toEqual(['kases', 'opportunities']);
    const listed = await sandbox.call('GET', '/api/opportunity.json?tag=hot');
    expect(listOf(listed.body.opportunities.opportunity).map((o: { id: string }) => o.id)).toEqual([
      String(opportunity.id),
    ]);
    expect((await sandbox.call('POST', '/api/kase/999999/tag/Hot')).status).toBe(404);
  });
});

describe('legacy v1 (spec 4.14, 3): tasks', () => {
  it('creates a task on a party from XML and reads it back', async () => {
    const party = addParty(sandbox.store, { firstName: 'Ada', lastName: 'Lovelace' });
    const answer = await sandbox.call('POST', `/api/party/${party.id}/task`, {
      headers: XML,
      rawBody:
        '<task><description>Send brochure</description><category>email</category><dueDate>2024-06-01</dueDate><owner>kim</owner></task>',
    });
    expect(answer.status).toBe(201);
    expect(answer.text).toBe('');
    const location = String(answer.headers.location);
    expect(location).toMatch(new RegExp(`^${sandbox.url}/api/task/\\d+$`));
    const read = parseXml((await sandbox.call('GET', location.slice(sandbox.url.length))).text);
    expect(read.task).toMatchObject({
      description: 'Send brochure',
      category: 'Email',
      owner: 'kim',
      dueDate: '2024-06-01T00:00:00Z',
      partyId: String(party.id),
      partyName: 'Ada Lovelace',
    });
    expect(read.task.dueDateTime).toBeUndefined();
  });

  it('creates tasks with a time of day, on cases and opportunities, and alone', async () => {
    const party = addParty(sandbox.store);
    const kase = addKase(sandbox.store, party.id, { name: 'Install' });
    const opportunity = addOpportunity(sandbox.store, party.id, { name: 'Big deal' });
    const onKase = await sandbox.call('POST', `/api/kase/${kase.id}/task`, {
      body: { task: { description: 'Visit', dueDateTime: '2024-06-01T14:30:00+02:00' } },
    });
    const kaseTask = (await sandbox.call('GET', `${String(onKase.headers.location).slice(sandbox.url.length)}.json`))
      .body.task;
    expect(kaseTask).toMatchObject({
      caseId: String(kase.id),
      caseName: 'Install',
      dueDateTime: '2024-06-01T12:30:00Z',
      owner: 'admin',
    });
    expect(kaseTask.partyId).toBeUndefined();

    const onOpportunity = await sandbox.call('POST', `/api/opportunity/${opportunity.id}/task`, {
      body: { task: { description: 'Quote', dueDate: '2024-06-02' } },
    });
    const opportunityTask = (
      await sandbox.call('GET', `${String(onOpportunity.headers.location).slice(sandbox.url.length)}.json`)
    ).body.task;
    expect(opportunityTask).toMatchObject({ opportunityId: String(opportunity.id), opportunityName: 'Big deal' });

    const alone = await sandbox.call('POST', '/api/task', {
      body: { task: { description: 'Plan week', dueDate: '2024-06-03' } },
    });
    expect(alone.status).toBe(201);
    const id = Number(String(alone.headers.location).split('/').pop());
    expect(sandbox.store.tasks.get(id)).toMatchObject({
      partyId: null,
      kaseId: null,
      opportunityId: null,
      ownerId: userId(sandbox.store, 'admin'),
    });
  });

  it.each([
    ['no due date', { description: 'x' }, 'dueDate'],
    ['both due forms', { description: 'x', dueDate: '2024-01-01', dueDateTime: '2024-01-01T10:00:00Z' }, 'dueDateTime'],
    ['an unknown category', { description: 'x', dueDate: '2024-01-01', category: 'Lunch' }, 'category'],
    ['an unknown owner', { description: 'x', dueDate: '2024-01-01', owner: 'ghost' }, 'owner'],
    ['no description', { dueDate: '2024-01-01' }, 'description'],
    ['a bad date', { description: 'x', dueDate: '01/02/2024' }, 'dueDate'],
  ])('refuses a task with %s (422)', async (_what, task, field) => {
    const before = sandbox.store.tasks.size;
    const answer = await sandbox.call('POST', '/api/task', { body: { task }, headers: JSON_ACCEPT });
    expect(answer.status).toBe(422);
    expect(listOf(answer.body.error.fieldErrors.fieldError).map((e: { field: string }) => e.field)).toEqual([field]);
    expect(sandbox.store.tasks.size).toBe(before);
  });

  it('lists open tasks by due date, filtered by category and user, and follows complete and reopen', async () => {
    const store = sandbox.store;
    for (const task of store.tasks.all()) store.tasks.delete(task.id);
    const call = store.taskCategories.all().find((c) => c.name === 'Call')?.id ?? null;
    const late = addTask(store, { description: 'late', dueOn: '2024-09-01', categoryId: call });
    const early = addTask(store, { description: 'early', dueOn: '2024-02-01', dueTime: '09:00:00', categoryId: call });
    const kims = addTask(store, { description: 'kims', dueOn: '2024-03-01', ownerId: userId(store, 'kim') });
    addTask(store, { description: 'done', status: 'COMPLETED' });

    const all = await sandbox.call('GET', '/api/tasks.json');
    expect(listOf(all.body.tasks.task).map((t: { description: string }) => t.description)).toEqual([
      'early',
      'kims',
      'late',
    ]);
    const calls = parseXml((await sandbox.call('GET', '/api/tasks?category=call')).text);
    expect(calls.tasks.task.map((t: { id: string }) => t.id)).toEqual([String(early.id), String(late.id)]);
    const kim = await sandbox.call('GET', '/api/tasks.json?user=kim');
    expect(listOf(kim.body.tasks.task).map((t: { id: string }) => t.id)).toEqual([String(kims.id)]);
    const limited = await sandbox.call('GET', '/api/tasks.json?start=1&limit=1');
    expect(listOf(limited.body.tasks.task).map((t: { description: string }) => t.description)).toEqual(['kims']);

    const completed = await sandbox.call('POST', `/api/task/${early.id}/complete`);
    expect(completed.status).toBe(200);
    expect(early).toMatchObject({ status: 'COMPLETED', completedAt: '2024-05-01T12:00:00Z' });
    expect((await sandbox.call('GET', '/api/tasks.json')).body.tasks['@size']).toBe('2');
    expect((await sandbox.call('POST', `/api/task/${early.id}/reopen`)).status).toBe(200);
    expect(early).toMatchObject({ status: 'OPEN', completedAt: null });
    expect((await sandbox.call('GET', '/api/tasks.json')).body.tasks['@size']).toBe('3');
    expect((await sandbox.call('POST', '/api/task/999999/complete')).status).toBe(404);
  });

  it('updates supplied fields only and deletes', async () => {
    const task = addTask(sandbox.store, { description: 'Keep', detail: 'Some detail', dueOn: '2024-04-01' });
    const answer = await sandbox.call('PUT', `/api/task/${task.id}`, {
      headers: XML,
      rawBody: '<task><dueDateTime>2024-04-02T16:00:00Z</dueDateTime><category>Meeting</category></task>',
    });
    expect(answer.status).toBe(200);
    expect(parseXml(answer.text).task).toMatchObject({
      description: 'Keep',
      detail: 'Some detail',
      dueDateTime: '2024-04-02T16:00:00Z',
      category: 'Meeting',
    });
    expect(task).toMatchObject({ dueOn: '2024-04-02', dueTime: '16:00:00' });
    expect((await sandbox.call('DELETE', `/api/task/${task.id}`)).status).toBe(200);
    expect(sandbox.store.tasks.has(task.id)).toBe(false);
    expect((await sandbox.call('GET', `/api/task/${task.id}`)).status).toBe(404);
  });

  it('lists the task category names', async () => {
    const xml = parseXml((await sandbox.call('GET', '/api/task/categories')).text);
    expect(xml.taskCategories.taskCategory).toEqual(['Call', 'Email', 'Follow-up', 'Meeting']);
    const json = await sandbox.call('GET', '/api/task/categories.json');
    expect(json.body.taskCategories.taskCategory).toEqual(['Call', 'Email', 'Follow-up', 'Meeting']);
  });
});

describe('legacy v1 (beyond the spec): parties, opportunities and history', () => {
  it('shows people and organisations with contacts and country names', async () => {
    const store = sandbox.store;
    const org = addParty(store, {
      type: 'organisation',
      name: 'Acme Ltd',
      firstName: null,
      lastName: null,
      updatedAt: '2030-01-01T00:00:00Z',
    });
    const person = addParty(store, {
      title: 'Dr',
      firstName: 'Grace',
      lastName: 'Hopper',
      jobTitle: 'Admiral',
      organisationId: org.id,
      updatedAt: '2030-01-01T00:00:00Z',
      addresses: [
        { id: 31, type: 'Office', street: '1 Main St', city: 'Leeds', state: null, zip: 'LS1', country: 'GB' },
      ],
      emailAddresses: [{ id: 32, type: 'Work', address: 'grace@acme.test' }],
      phoneNumbers: [{ id: 33, type: 'Mobile', number: '+44 7700 900000' }],
      websites: [{ id: 34, type: null, service: 'TWITTER', address: '@grace' }],
    });
    const read = parseXml((await sandbox.call('GET', `/api/party/${person.id}`)).text);
    expect(read.person).toMatchObject({
      id: String(person.id),
      title: 'Dr',
      firstName: 'Grace',
      organisationId: String(org.id),
      organisationName: 'Acme Ltd',
      contacts: {
        address: {
          id: '31',
          type: 'Office',
          street: '1 Main St',
          city: 'Leeds',
          zip: 'LS1',
          country: 'United Kingdom',
        },
        email: { id: '32', type: 'Work', emailAddress: 'grace@acme.test' },
        phone: { id: '33', type: 'Mobile', phoneNumber: '+44 7700 900000' },
        website: { id: '34', webService: 'TWITTER', webAddress: '@grace', url: 'https://twitter.com/grace' },
      },
    });

    const list = parseXml((await sandbox.call('GET', '/api/party?lastmodified=20291231T000000')).text);
    expect(list.parties['@size']).toBe('2');
    expect(list.parties.organisation[0].name).toBe('Acme Ltd');
    expect(list.parties.person[0].lastName).toBe('Hopper');

    const json = await sandbox.call('GET', '/api/party.json?lastmodified=20291231T000000&limit=1');
    expect(json.body.parties['@size']).toBe('1');
    expect(listOf(json.body.parties.organisation)).toHaveLength(1);
    expect(listOf(json.body.parties.person)).toEqual([]);
    const single = await sandbox.call('GET', `/api/party/${org.id}.json`);
    // No contact of a kind: the kind is left out, as the service answers.
    expect(single.body.organisation.contacts).toEqual({});
  });

  it('shows opportunities with milestone names and two-decimal values', async () => {
    const party = addParty(sandbox.store);
    const opportunity = addOpportunity(sandbox.store, party.id, {
      name: 'Fleet',
      value: { amount: 1234.5, currency: 'EUR' },
    });
    const answer = await sandbox.call('GET', `/api/opportunity/${opportunity.id}.json`);
    expect(answer.body.opportunity).toEqual({
      id: String(opportunity.id),
      name: 'Fleet',
      partyId: String(party.id),
      currency: 'EUR',
      value: '1234.50',
      durationBasis: 'FIXED',
      milestoneId: String(opportunity.milestoneId),
      milestone: 'Proposal',
      probability: '50',
      expectedCloseDate: '2024-06-30T00:00:00Z',
      owner: 'sam',
      createdOn: '2024-03-01T10:00:00Z',
      updatedOn: '2024-03-01T10:00:00Z',
    });
    const ofParty = await sandbox.call('GET', `/api/party/${party.id}/opportunity.json`);
    expect(listOf(ofParty.body.opportunities.opportunity).map((o: { id: string }) => o.id)).toEqual([
      String(opportunity.id),
    ]);
    expect((await sandbox.call('GET', '/api/opportunity/999999')).status).toBe(404);
  });

  it('shows history newest first with creators and attachments', async () => {
    const store = sandbox.store;
    const party = addParty(store);
    const kase = addKase(store, party.id);
    const note = addEntry(store, { partyId: party.id, content: 'First note', entryAt: '2024-01-01T09:00:00Z' });
    const email = addEntry(store, {
      type: 'email',
      subject: 'Quote',
      content: 'Please find attached',
      partyIds: [party.id],
      entryAt: '2024-02-01T09:00:00Z',
      attachments: [{ id: 41, filename: 'quote.pdf', contentType: 'application/pdf', size: 10, blobId: 'b' }],
    });
    addEntry(store, { kaseId: kase.id, content: 'On the case' });

    const xml = parseXml((await sandbox.call('GET', `/api/party/${party.id}/history`)).text);
    expect(xml.history['@size']).toBe('2');
    expect(xml.history.historyItem[0]).toEqual({
      id: String(email.id),
      type: 'Email',
      entryDate: '2024-02-01T09:00:00Z',
      creator: 'kim',
      creatorName: 'Kim Keeper',
      subject: 'Quote',
      note: 'Please find attached',
      attachments: { attachment: { id: '41', filename: 'quote.pdf', contentType: 'application/pdf' } },
    });
    expect(xml.history.historyItem[1]).toMatchObject({ id: String(note.id), type: 'Note', note: 'First note' });

    const json = await sandbox.call('GET', `/api/kase/${kase.id}/history.json`);
    expect(listOf(json.body.history.historyItem).map((h: { note: string }) => h.note)).toEqual(['On the case']);
    const emails = await sandbox.call('GET', `/api/party/${party.id}/history.json`);
    expect(listOf(listOf(emails.body.history.historyItem)[0].attachments.attachment)).toHaveLength(1);
  });
});

describe('legacy v1: authentication and persistence', () => {
  it('answers 401 without a token, as every /api/ path', async () => {
    const answer = await sandbox.call('GET', '/api/kase', { token: null });
    expect(answer.status).toBe(401);
  });

  it('saves v1 writes to the data file', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-v1-'));
    try {
      const file = join(dir, 'state.json');
      const persisted = await startTestSandbox({ dataFile: file });
      const party = addParty(persisted.store);
      const answer = await persisted.call('POST', `/api/party/${party.id}/kase`, {
        headers: XML,
        rawBody: '<kase><name>Saved</name></kase>',
      });
      expect(answer.status).toBe(201);
      await persisted.close();
      const saved = JSON.parse(await readFile(file, 'utf8'));
      expect(saved.tables.kases.map((k: { name: string }) => k.name)).toContain('Saved');
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('v1 tasks share the v2 task rules', () => {
  it('completing a track task through v1 opens the next one and files a task entry; deleting drops it from the track', async () => {
    const party = await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'V1 Track Co' } });
    const kase = await sandbox.v2('POST', '/kases', {
      kase: { name: 'V1 onboarding', party: { id: party.body.party.id } },
    });
    const definition = sandbox.store.trackDefinitions.all().find((d) => d.description === 'Onboarding');
    const track = await sandbox.v2('POST', '/tracks', {
      track: { definition: definition?.id, kase: kase.body.kase.id },
    });
    const [first, second, third] = sandbox.store.tasks.all().filter((t) => t.trackId === track.body.track.id);
    expect(second?.status).toBe('PENDING');

    expect((await sandbox.call('POST', `/api/task/${first?.id}/complete`)).status).toBe(200);
    expect(second?.status).toBe('OPEN');
    const entries = sandbox.store.entries.all().filter((e) => e.kaseId === kase.body.kase.id && e.type === 'task');
    expect(entries.map((e) => e.content)).toEqual(['Welcome call']);

    expect((await sandbox.call('DELETE', `/api/task/${third?.id}`)).status).toBe(200);
    expect(sandbox.store.tracks.get(track.body.track.id)?.taskIds).toEqual([first?.id, second?.id]);
  });
});
