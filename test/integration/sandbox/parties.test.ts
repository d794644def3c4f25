import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

let sandbox: TestSandbox;
let clock = new Date('2026-03-01T09:00:00Z');
const tick = (seconds: number): void => {
  clock = new Date(clock.getTime() + seconds * 1000);
};

beforeAll(async () => {
  sandbox = await startTestSandbox({ now: () => clock, jobDurationMs: 1000 });
});
afterAll(() => sandbox.close());

const userId = (username: string): number => {
  const user = sandbox.store.users.all().find((u) => u.username === username);
  if (!user) throw new Error(`no seeded user ${username}`);
  return user.id;
};
const teamId = (name: string): number => {
  const team = sandbox.store.teams.all().find((t) => t.name === name);
  if (!team) throw new Error(`no seeded team ${name}`);
  return team.id;
};
const definitionId = (name: string): number => {
  const definition = sandbox.store.fieldDefinitions.all().find((d) => d.name === name);
  if (!definition) throw new Error(`no seeded field ${name}`);
  return definition.id;
};

async function createParty(party: Record<string, unknown>, query = ''): Promise<any> {
  const answer = await sandbox.v2('POST', `/parties${query}`, { party });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.party;
}

describe('4.3 POST /parties', () => {
  it('creates a person with 201, Location and the 2.2 shape', async () => {
    const answer = await sandbox.v2('POST', '/parties', {
      party: {
        type: 'person',
        title: 'Dr',
        firstName: 'Ada',
        lastName: 'Lovelace',
        jobTitle: 'Analyst',
        about: 'Wrote the first program',
        addresses: [{ type: 'Office', street: '1 Main St', city: 'London', zip: 'N1 9GU', country: 'United Kingdom' }],
        phoneNumbers: [{ type: 'Work', number: '+44 20 7946 0001' }],
        emailAddresses: [{ type: 'Work', address: 'ada@example.org' }],
        websites: [
          { service: 'URL', address: 'example.org/ada' },
          { service: 'TWITTER', address: '@ada' },
          { service: 'GITHUB', address: 'https://github.com/ada' },
        ],
      },
    });
    expect(answer.status).toBe(201);
    const party = answer.body.party;
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/parties/${party.id}`);
    expect(party).toMatchObject({
      type: 'person',
      title: 'Dr',
      firstName: 'Ada',
      lastName: 'Lovelace',
      jobTitle: 'Analyst',
      about: 'Wrote the first program',
      organisation: null,
      createdAt: '2026-03-01T09:00:00Z',
      updatedAt: '2026-03-01T09:00:00Z',
      lastContactedAt: null,
      owner: { id: userId('admin'), username: 'admin', name: 'Alex Admin' },
      team: null,
      tags: [],
      fields: [],
    });
    expect(party.name).toBeUndefined();
    expect(typeof party.pictureURL).toBe('string');
    expect(party.addresses[0]).toMatchObject({
      type: 'Office',
      street: '1 Main St',
      city: 'London',
      zip: 'N1 9GU',
      country: 'United Kingdom',
      state: null,
    });
    expect(party.phoneNumbers[0]).toMatchObject({ type: 'Work', number: '+44 20 7946 0001' });
    expect(party.emailAddresses[0]).toMatchObject({ type: 'Work', address: 'ada@example.org' });
    expect(party.websites.map((w: any) => w.url)).toEqual([
      'http://example.org/ada',
      'https://twitter.com/ada',
      'https://github.com/ada',
    ]);
    for (const item of [...party.addresses, ...party.phoneNumbers, ...party.emailAddresses, ...party.websites]) {
      expect(Number.isInteger(item.id)).toBe(true);
    }
  });

  it('creates an organisation; a person linked by {name} creates a missing organisation', async () => {
    const org = await createParty({ type: 'organisation', name: 'Analytical Engines Ltd' });
    expect(org).toMatchObject({ type: 'organisation', name: 'Analytical Engines Ltd' });
    expect(org.firstName).toBeUndefined();

    const linked = await createParty({
      type: 'person',
      lastName: 'Babbage',
      organisation: { name: 'analytical engines ltd' },
    });
    expect(linked.organisation).toMatchObject({ id: org.id, name: 'Analytical Engines Ltd' });

    const before = sandbox.store.parties.size;
    const fresh = await createParty({ type: 'person', firstName: 'Mary', organisation: { name: 'Brand New Org' } });
    expect(sandbox.store.parties.size).toBe(before + 2);
    const created = await sandbox.v2('GET', `/parties/${fresh.organisation.id}`);
    expect(created.body.party).toMatchObject({ type: 'organisation', name: 'Brand New Org' });

    const byId = await createParty({ type: 'person', lastName: 'Byron', organisation: { id: org.id } });
    expect(byId.organisation.id).toBe(org.id);
  });

  it('applies the owner and team rules', async () => {
    const kim = await createParty({ type: 'person', lastName: 'Owned', owner: { username: 'kim' } });
    expect(kim.owner.username).toBe('kim');
    expect(kim.team).toEqual({ id: teamId('Support'), name: 'Support' });

    const noTeam = await createParty({ type: 'person', lastName: 'NoTeam', owner: { id: userId('sam') }, team: null });
    expect(noTeam.owner.username).toBe('sam');
    expect(noTeam.team).toBeNull();

    const nobody = await createParty({ type: 'person', lastName: 'Nobody', owner: null });
    expect(nobody.owner).toBeNull();

    const teamOnly = await createParty({
      type: 'organisation',
      name: 'Team owned',
      owner: null,
      team: { id: teamId('Sales') },
    });
    expect(teamOnly.owner).toBeNull();
    expect(teamOnly.team.name).toBe('Sales');
  });

  it('adds tags by id and by name, creating unknown names once', async () => {
    const prospect = sandbox.store.tags.all().find((t) => t.name === 'Prospect');
    const party = await createParty({
      type: 'organisation',
      name: 'Tagged',
      tags: [{ id: prospect?.id }, { name: 'Brand-new tag' }, { name: 'BRAND-NEW TAG' }],
    });
    expect(party.tags.map((t: any) => t.name)).toEqual(['Prospect', 'Brand-new tag']);
    const tags = await sandbox.v2('GET', '/parties/tags?perPage=100');
    expect(tags.body.tags.filter((t: any) => t.name === 'Brand-new tag')).toHaveLength(1);
  });

  it('sets custom fields by id, {id} and {name, tag}; a data-tag field brings its tag', async () => {
    const party = await createParty({
      type: 'organisation',
      name: 'Fielded',
      fields: [
        { definition: definitionId('Industry'), value: 'Retail' },
        { definition: { id: definitionId('VIP') }, value: true },
        { definition: { name: 'Customer since', tag: null }, value: '2020-02-29' },
        { definition: { name: 'Support level', tag: 'Customer' }, value: 'Gold' },
      ],
    });
    const values = Object.fromEntries(party.fields.map((f: any) => [f.definition.name, f.value]));
    expect(values).toEqual({ Industry: 'Retail', VIP: true, 'Customer since': '2020-02-29', 'Support level': 'Gold' });
    const gold = party.fields.find((f: any) => f.definition.name === 'Support level');
    expect(gold.tagId).toBe(sandbox.store.tags.all().find((t) => t.name === 'Customer')?.id);
    expect(party.tags.map((t: any) => t.name)).toEqual(['Customer']);
  });

  it('answers 422 with every field problem at once', async () => {
    const answer = await sandbox.v2('POST', '/parties', {
      party: {
        type: 'person',
        firstName: 42,
        surname: 'x',
        emailAddresses: [{ address: 'not-an-email' }],
        phoneNumbers: [{ type: 'Work' }],
        websites: [{ service: 'MYSPACE', address: 'x' }],
        tags: [{ id: 999999 }],
        fields: [{ definition: { name: 'Industry' }, value: 'Retail' }],
        owner: { id: 999999 },
      },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.message).toMatch(/^validation failed/);
    const fields = answer.body.errors.map((e: any) => e.field);
    expect(fields).toEqual(
      expect.arrayContaining([
        'firstName',
        'surname',
        'emailAddresses[0].address',
        'phoneNumbers[0].number',
        'websites[0].service',
        'tags[0].id',
        'fields[0].definition.tag',
        'owner',
      ]),
    );
    expect(answer.body.errors.every((e: any) => e.resource === 'party')).toBe(true);
  });

  it.each([
    [{ type: 'robot', name: 'R2' }, 'type'],
    [{ name: 'No type' }, 'type'],
    [{ type: 'person', jobTitle: 'Nameless' }, 'firstName'],
    [{ type: 'organisation', about: 'No name' }, 'name'],
    [{ type: 'organisation', name: 'Acme', firstName: 'x' }, 'firstName'],
    [{ type: 'person', lastName: 'X', organisation: { id: 1 } }, 'organisation'],
    [{ type: 'person', lastName: 'X', addresses: 'London' }, 'addresses'],
    [{ type: 'person', lastName: 'X', fields: [{ definition: { id: 999999 }, value: 'x' }] }, 'fields[0].definition'],
    [
      { type: 'person', lastName: 'X', fields: [{ definition: { name: 'Account number', tag: null }, value: 'bad' }] },
      'fields[0].value',
    ],
    [
      {
        type: 'organisation',
        name: 'X',
        fields: [{ definition: { name: 'Preferred language', tag: null }, value: 'en' }],
      },
      'fields[0].definition',
    ],
    [{ type: 'person', lastName: 'X', tags: [{ id: 1, _delete: true }] }, 'tags[0].id'],
  ])('rejects %j with a 422 naming %s', async (party, field) => {
    const before = sandbox.store.parties.size;
    const answer = await sandbox.v2('POST', '/parties', { party });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: any) => e.field)).toContain(field);
    expect(sandbox.store.parties.size).toBe(before);
  });

  it('creates no tag or organisation when the body is refused', async () => {
    const tags = sandbox.store.tags.size;
    const parties = sandbox.store.parties.size;
    const answer = await sandbox.v2('POST', '/parties', {
      party: { type: 'person', organisation: { name: 'Ghost Org' }, tags: [{ name: 'Ghost tag' }] },
    });
    expect(answer.status).toBe(422);
    expect(sandbox.store.tags.size).toBe(tags);
    expect(sandbox.store.parties.size).toBe(parties);
  });

  it('answers 400 for a body without the party wrapper and for malformed JSON', async () => {
    const unwrapped = await sandbox.v2('POST', '/parties', { type: 'person', lastName: 'X' });
    expect(unwrapped.status).toBe(400);
    expect(unwrapped.body.message).toMatch(/"party"/);
    const malformed = await sandbox.call('POST', '/api/v2/parties', {
      rawBody: '{"party":',
      headers: { 'content-type': 'application/json' },
    });
    expect(malformed.status).toBe(400);
  });
});

describe('4.3 GET /parties, single and multi-id reads', () => {
  let ids: number[] = [];
  beforeAll(async () => {
    tick(3600);
    ids = [];
    for (const lastName of ['Alpha', 'Beta', 'Gamma']) ids.push((await createParty({ type: 'person', lastName })).id);
  });

  it('lists with paging and a Link header', async () => {
    const all = await sandbox.v2('GET', '/parties?perPage=100');
    const total = all.body.parties.length;
    expect(total).toBeGreaterThan(3);
    const first = await sandbox.v2('GET', '/parties?perPage=2');
    expect(first.body.parties).toHaveLength(2);
    expect(first.headers.link).toMatch(/^<[^>]*[?&]page=2[&>][^,]*rel="next"/);
    expect(first.body.parties[0].tags).toBeUndefined();
    const last = await sandbox.v2('GET', `/parties?perPage=2&page=${Math.ceil(total / 2)}`);
    expect(last.headers.link).toMatch(/rel="prev"/);
    expect(last.headers.link).not.toMatch(/rel="next"/);
    expect((await sandbox.v2('GET', '/parties?perPage=101')).status).toBe(400);
  });

  it('filters by since (changes at or after the given time)', async () => {
    const answer = await sandbox.v2('GET', `/parties?since=${clock.toISOString()}`);
    expect(answer.body.parties.map((p: any) => p.id)).toEqual(ids);
    expect((await sandbox.v2('GET', '/parties?since=yesterday')).status).toBe(400);
  });

  it('embeds tags, fields, organisation and missingImportantFields on request', async () => {
    const org = await createParty({
      type: 'organisation',
      name: 'Embed Org',
      tags: [{ name: 'Embed tag' }],
      fields: [{ definition: definitionId('Account number'), value: 'AB-1234' }],
    });
    const person = await createParty({ type: 'person', lastName: 'Embedded', organisation: { id: org.id } });
    const plain = await sandbox.v2('GET', `/parties/${person.id}`);
    expect(plain.body.party.organisation).toEqual({
      id: org.id,
      type: 'organisation',
      name: 'Embed Org',
      pictureURL: org.pictureURL,
    });
    expect(plain.body.party.fields).toBeUndefined();
    const embedded = await sandbox.v2(
      'GET',
      `/parties/${person.id}?embed=organisation,tags,fields,missingImportantFields`,
    );
    expect(embedded.body.party.organisation).toMatchObject({
      id: org.id,
      type: 'organisation',
      name: 'Embed Org',
      addresses: [],
    });
    expect(embedded.body.party.organisation.tags.map((t: any) => t.name)).toEqual(['Embed tag']);
    expect(embedded.body.party.tags).toEqual([]);
    // The important Account number field has no value on the person, but has one on the organisation.
    expect(embedded.body.party.missingImportantFields).toBe(true);
    const orgRead = await sandbox.v2('GET', `/parties/${org.id}?embed=missingImportantFields`);
    expect(orgRead.body.party.missingImportantFields).toBe(false);
    expect((await sandbox.v2('GET', `/parties/${person.id}?embed=milestone`)).status).toBe(400);
  });

  it('reads several ids at once and answers 404 when any is missing', async () => {
    const answer = await sandbox.v2('GET', `/parties/${ids.join(',')}`);
    expect(answer.status).toBe(200);
    expect(answer.body.parties.map((p: any) => p.lastName)).toEqual(['Alpha', 'Beta', 'Gamma']);
    const missing = await sandbox.v2('GET', `/parties/${ids[0]},999999`);
    expect(missing.status).toBe(404);
    expect(missing.body.message).toMatch(/999999/);
    const tooMany = await sandbox.v2('GET', `/parties/${Array.from({ length: 11 }, () => ids[0]).join(',')}`);
    expect(tooMany.status).toBe(400);
  });

  it('answers 404 for an unknown or malformed id', async () => {
    expect((await sandbox.v2('GET', '/parties/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', '/parties/abc')).status).toBe(404);
  });
});

describe('4.3 PUT /parties/{id}', () => {
  it('changes only what is given and answers with tags and fields', async () => {
    const party = await createParty({ type: 'person', firstName: 'Grace', lastName: 'Hopper', jobTitle: 'Admiral' });
    tick(60);
    const answer = await sandbox.v2('PUT', `/parties/${party.id}`, { party: { jobTitle: 'Rear Admiral' } });
    expect(answer.status).toBe(200);
    expect(answer.body.party).toMatchObject({
      firstName: 'Grace',
      lastName: 'Hopper',
      jobTitle: 'Rear Admiral',
      tags: [],
      fields: [],
    });
    expect(answer.body.party.updatedAt).not.toBe(party.updatedAt);
    expect(answer.body.party.createdAt).toBe(party.createdAt);
  });

  it('adds, updates and removes nested items with the _delete convention', async () => {
    const party = await createParty({
      type: 'person',
      lastName: 'Nested',
      addresses: [{ city: 'Paris' }, { city: 'Rome' }],
      phoneNumbers: [{ number: '111' }],
      emailAddresses: [{ address: 'a@b.co' }],
      websites: [{ address: 'a.example' }],
    });
    const [paris, rome] = party.addresses;
    const answer = await sandbox.v2('PUT', `/parties/${party.id}`, {
      party: {
        addresses: [{ id: paris.id, zip: '75001' }, { id: rome.id, _delete: true }, { city: 'Oslo' }],
        phoneNumbers: [{ id: party.phoneNumbers[0].id, _delete: true }],
        emailAddresses: [{ id: party.emailAddresses[0].id, type: 'Home' }],
        websites: [{ id: party.websites[0].id, service: 'FACEBOOK', address: 'nested' }],
      },
    });
    expect(answer.status).toBe(200);
    const updated = answer.body.party;
    expect(updated.addresses.map((a: any) => [a.city, a.zip])).toEqual([
      ['Paris', '75001'],
      ['Oslo', null],
    ]);
    expect(updated.addresses[0].id).toBe(paris.id);
    expect(updated.phoneNumbers).toEqual([]);
    expect(updated.emailAddresses[0]).toEqual({ id: party.emailAddresses[0].id, type: 'Home', address: 'a@b.co' });
    expect(updated.websites[0].url).toBe('https://www.facebook.com/nested');

    const unknown = await sandbox.v2('PUT', `/parties/${party.id}`, {
      party: { addresses: [{ id: 999999, city: 'X' }] },
    });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].field).toBe('addresses[0].id');
  });

  it('adds and removes tags; removing a data tag drops its field values', async () => {
    const party = await createParty({
      type: 'organisation',
      name: 'Tag changes',
      fields: [{ definition: { name: 'Contract end', tag: 'Customer' }, value: '2027-01-31' }],
    });
    const customer = party.tags[0];
    expect(customer.name).toBe('Customer');
    const answer = await sandbox.v2('PUT', `/parties/${party.id}`, {
      party: { tags: [{ id: customer.id, _delete: true }, { name: 'Prospect' }] },
    });
    expect(answer.body.party.tags.map((t: any) => t.name)).toEqual(['Prospect']);
    expect(answer.body.party.fields).toEqual([]);
  });

  it('updates and removes custom field values by instance id', async () => {
    const party = await createParty({
      type: 'organisation',
      name: 'Field changes',
      fields: [
        { definition: definitionId('Industry'), value: 'Retail' },
        { definition: definitionId('VIP'), value: false },
      ],
    });
    const [industry, vip] = party.fields;
    const answer = await sandbox.v2('PUT', `/parties/${party.id}`, {
      party: {
        fields: [
          { id: industry.id, value: 'Finance' },
          { id: vip.id, _delete: true },
          { definition: definitionId('Customer since'), value: '2001-01-01' },
        ],
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.party.fields.map((f: any) => [f.definition.name, f.value])).toEqual([
      ['Industry', 'Finance'],
      ['Customer since', '2001-01-01'],
    ]);
    expect(answer.body.party.fields[0].id).toBe(industry.id);
    const bad = await sandbox.v2('PUT', `/parties/${party.id}`, {
      party: { fields: [{ id: industry.id, value: 'Mining' }] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors[0].message).toMatch(/Agriculture/);
  });

  it('applies the owner and team rules on update', async () => {
    const party = await createParty({ type: 'person', lastName: 'Moves' });
    const toKim = await sandbox.v2('PUT', `/parties/${party.id}`, { party: { owner: { id: userId('kim') } } });
    expect(toKim.body.party.owner.username).toBe('kim');
    expect(toKim.body.party.team.name).toBe('Support');
    const keepTeam = await sandbox.v2('PUT', `/parties/${party.id}`, {
      party: { owner: { username: 'sam' }, team: null },
    });
    expect(keepTeam.body.party.owner.username).toBe('sam');
    expect(keepTeam.body.party.team).toBeNull();
  });

  it('refuses changing the type, unknown parties and wrong types', async () => {
    const party = await createParty({ type: 'person', lastName: 'Fixed' });
    const retype = await sandbox.v2('PUT', `/parties/${party.id}`, { party: { type: 'organisation' } });
    expect(retype.status).toBe(422);
    expect(retype.body.errors[0].field).toBe('type');
    const blank = await sandbox.v2('PUT', `/parties/${party.id}`, { party: { lastName: null } });
    expect(blank.status).toBe(422);
    expect((await sandbox.v2('PUT', '/parties/999999', { party: { lastName: 'x' } })).status).toBe(404);
  });
});

describe('4.3 search, people, deleted and restricted lists', () => {
  it('finds parties by name, postcode and phone number ignoring punctuation', async () => {
    const org = await createParty({
      type: 'organisation',
      name: 'Zebra Crossing Ltd',
      addresses: [{ zip: 'EC1A 1BB' }],
      phoneNumbers: [{ number: '+44 (0)20 7946-0958' }],
    });
    for (const q of ['zebra cross', 'ec1a1bb', '7946 0958', '020-7946-0958'.slice(1)]) {
      const answer = await sandbox.v2('GET', `/parties/search?q=${encodeURIComponent(q)}`);
      expect(answer.status).toBe(200);
      expect(
        answer.body.parties.map((p: any) => p.id),
        q,
      ).toContain(org.id);
    }
    const none = await sandbox.v2('GET', '/parties/search?q=no-such-party-anywhere');
    expect(none.body.parties).toEqual([]);
    expect((await sandbox.v2('GET', '/parties/search')).status).toBe(400);
  });

  it('lists the people of an organisation', async () => {
    const org = await createParty({ type: 'organisation', name: 'Employer' });
    const one = await createParty({ type: 'person', lastName: 'One', organisation: { id: org.id } });
    await createParty({ type: 'person', lastName: 'Elsewhere' });
    const answer = await sandbox.v2('GET', `/parties/${org.id}/people?embed=tags`);
    expect(answer.body.parties.map((p: any) => p.id)).toEqual([one.id]);
    expect(answer.body.parties[0].tags).toEqual([]);
    expect((await sandbox.v2('GET', '/parties/999999/people')).status).toBe(404);
  });

  it('hides restricted parties and lists them under restrictedParties', async () => {
    const party = await createParty({ type: 'person', firstName: 'Secret', lastName: 'Agent' });
    const plainDeleted = await sandbox.v2('GET', '/parties/deleted');
    expect(plainDeleted.body.restrictedParties).toBeUndefined();
    const record = sandbox.store.parties.get(party.id);
    record?.restrictedFor.push(userId('admin'));
    // A change made straight in the store is noted, as a route's change would be.
    if (record) sandbox.store.parties.touch(record);
    const deleted = await sandbox.v2('GET', '/parties/deleted');
    expect(deleted.body.restrictedParties).toEqual([{ id: party.id, name: 'Secret Agent', isRestricted: true }]);
    expect((await sandbox.v2('GET', `/parties/${party.id}`)).status).toBe(403);
    const list = await sandbox.v2('GET', '/parties?perPage=100');
    expect(list.body.parties.some((p: any) => p.id === party.id)).toBe(false);
    record?.restrictedFor.splice(0);
    if (record) sandbox.store.parties.touch(record);
  });
});

describe('4.3 DELETE /parties/{id}', () => {
  it('deletes at once with 204 and logs the party, its projects and opportunities as deleted', async () => {
    const party = await createParty({ type: 'person', lastName: 'Leaving' });
    const kase = await sandbox.v2('POST', '/kases', { kase: { name: 'Goes too', party: { id: party.id } } });
    const milestone = sandbox.store.milestones.all()[0];
    const opportunity = await sandbox.v2('POST', '/opportunities', {
      opportunity: { name: 'Goes too', party: { id: party.id }, milestone: { id: milestone?.id } },
    });
    expect([kase.status, opportunity.status]).toEqual([201, 201]);
    tick(60);
    const since = clock.toISOString();
    const answer = await sandbox.v2('DELETE', `/parties/${party.id}`);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect((await sandbox.v2('GET', `/parties/${party.id}`)).status).toBe(404);
    const deleted = await sandbox.v2('GET', `/parties/deleted?since=${since}`);
    expect(deleted.body.parties).toEqual([{ id: party.id, deletedAt: since.replace('.000', '') }]);
    const kases = await sandbox.v2('GET', `/kases/deleted?since=${since}`);
    expect(kases.body.kases.map((k: any) => k.id)).toEqual([kase.body.kase.id]);
    const opportunities = await sandbox.v2('GET', `/opportunities/deleted?since=${since}`);
    expect(opportunities.body.opportunities.map((o: any) => o.id)).toEqual([opportunity.body.opportunity.id]);
    const later = await sandbox.v2('GET', `/parties/deleted?since=2099-01-01`);
    expect(later.body.parties).toEqual([]);
  });

  it('schedules the delete of an organisation with people: 202, a job, then the party is gone', async () => {
    const org = await createParty({ type: 'organisation', name: 'Heavy Org' });
    const person = await createParty({ type: 'person', lastName: 'Staff', organisation: { id: org.id } });
    const answer = await sandbox.v2('DELETE', `/parties/${org.id}`);
    expect(answer.status).toBe(202);
    const location = String(answer.headers.location);
    expect(location).toMatch(new RegExp(`^${sandbox.url}/api/v2/jobs/[0-9a-f-]{36}$`));
    const path = location.slice(sandbox.url.length);
    const pending = await sandbox.call('GET', path);
    expect(pending.body.job).toMatchObject({ status: 'in_progress', action: 'Deleting Party' });
    expect((await sandbox.v2('GET', `/parties/${org.id}`)).status).toBe(200);
    tick(5);
    const done = await sandbox.call('GET', path);
    expect(done.body.job).toMatchObject({ status: 'completed', progress: 100 });
    expect((await sandbox.v2('GET', `/parties/${org.id}`)).status).toBe(404);
    const staff = await sandbox.v2('GET', `/parties/${person.id}`);
    expect(staff.body.party.organisation).toBeNull();
  });

  it('schedules the delete of a party with entries; the job removes its entries too', async () => {
    const party = await createParty({ type: 'person', lastName: 'Chatty' });
    const at = clock.toISOString().slice(0, 19) + 'Z';
    // Entries are written by another module; a stored note is enough to make the delete heavy.
    const note = sandbox.store.entries.insert({
      type: 'note',
      content: 'Called about the renewal',
      subject: null,
      creatorId: userId('admin'),
      activityTypeId: null,
      entryAt: at,
      partyId: party.id,
      kaseId: null,
      opportunityId: null,
      partyIds: [],
      attachments: [],
      participants: [],
      createdAt: at,
      updatedAt: at,
    });
    const answer = await sandbox.v2('DELETE', `/parties/${party.id}`);
    expect(answer.status).toBe(202);
    expect(sandbox.store.entries.has(note.id)).toBe(true);
    tick(5);
    const job = await sandbox.call('GET', String(answer.headers.location).slice(sandbox.url.length));
    expect(job.body.job.status).toBe('completed');
    expect(sandbox.store.parties.has(party.id)).toBe(false);
    expect(sandbox.store.entries.has(note.id)).toBe(false);
  });

  it('answers 404 for an unknown party and for its lists', async () => {
    expect((await sandbox.v2('DELETE', '/parties/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', '/parties/999999/opportunities')).status).toBe(404);
  });
});

describe('4.3 deletes without scheduling', () => {
  it('deletes an organisation with people at once when scheduled deletes are off', async () => {
    const direct = await startTestSandbox({ scheduledDeletes: false });
    try {
      const org = await direct.v2('POST', '/parties', { party: { type: 'organisation', name: 'Quick' } });
      await direct.v2('POST', '/parties', {
        party: { type: 'person', lastName: 'P', organisation: { id: org.body.party.id } },
      });
      const answer = await direct.v2('DELETE', `/parties/${org.body.party.id}`);
      expect(answer.status).toBe(204);
      expect(direct.store.parties.has(org.body.party.id)).toBe(false);
    } finally {
      await direct.close();
    }
  });
});
