import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEEDED_STAGES as KASE_STAGES } from '../../../src/sandbox/seed.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

let sandbox: TestSandbox;
let clock = new Date('2026-04-01T08:00:00Z');
const tick = (seconds: number): void => {
  clock = new Date(clock.getTime() + seconds * 1000);
};
let acme: any;
let contact: any;

beforeAll(async () => {
  sandbox = await startTestSandbox({ now: () => clock });
  acme = (
    await sandbox.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Acme Rockets', addresses: [{ zip: 'AB1 2CD' }] },
    })
  ).body.party;
  contact = (
    await sandbox.v2('POST', '/parties', {
      party: { type: 'person', firstName: 'Wile', lastName: 'Coyote', phoneNumbers: [{ number: '(555) 010-9999' }] },
    })
  ).body.party;
});
afterAll(() => sandbox.close());

const userId = (username: string): number => sandbox.store.users.all().find((u) => u.username === username)?.id ?? -1;
const definitionId = (name: string): number =>
  sandbox.store.fieldDefinitions.all().find((d) => d.name === name)?.id ?? -1;
const trackDefinitionId = (description: string): number =>
  sandbox.store.trackDefinitions.all().find((d) => d.description === description)?.id ?? -1;

async function createKase(kase: Record<string, unknown>): Promise<any> {
  const answer = await sandbox.v2('POST', '/kases', { kase });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.kase;
}

describe('4.1 POST /kases', () => {
  it('creates a project with 201, Location and the 2.3 shape', async () => {
    const answer = await sandbox.v2('POST', '/kases', {
      kase: {
        name: 'Launch site',
        description: 'Build the pad',
        party: { id: acme.id },
        stage: KASE_STAGES[1]?.id,
        startOn: '2026-04-02',
        expectedCloseOn: '2026-06-30',
      },
    });
    expect(answer.status).toBe(201);
    const kase = answer.body.kase;
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/kases/${kase.id}`);
    expect(kase).toMatchObject({
      name: 'Launch site',
      description: 'Build the pad',
      party: { id: acme.id, type: 'organisation', name: 'Acme Rockets' },
      owner: { id: userId('admin'), username: 'admin' },
      team: null,
      status: 'OPEN',
      stage: KASE_STAGES[1],
      startOn: '2026-04-02',
      expectedCloseOn: '2026-06-30',
      closedOn: null,
      createdAt: '2026-04-01T08:00:00Z',
      lastContactedAt: null,
      tags: [],
      fields: [],
    });
    expect(kase.opportunity).toBeUndefined();
  });

  it('starts on the first stage and accepts tags and custom fields', async () => {
    const kase = await createKase({
      name: 'Fielded',
      party: { id: acme.id },
      tags: [{ name: 'Rollout' }],
      fields: [
        { definition: definitionId('Priority'), value: 'High' },
        { definition: { name: 'Go-live', tag: null }, value: '2026-09-01' },
        { definition: { id: definitionId('Billable') }, value: true },
      ],
    });
    expect(kase.stage).toEqual(KASE_STAGES[0]);
    expect(kase.tags.map((t: any) => t.name)).toEqual(['Rollout']);
    expect(kase.fields.map((f: any) => [f.definition.name, f.value, f.tagId])).toEqual([
      ['Priority', 'High', null],
      ['Go-live', '2026-09-01', null],
      ['Billable', true, null],
    ]);
  });

  it('applies tracks given in either form to the new project', async () => {
    const onboarding = trackDefinitionId('Onboarding');
    const kase = await createKase({
      name: 'Tracked',
      party: { id: acme.id },
      tracks: [{ definition: { id: onboarding } }, { definition: onboarding }],
    });
    const tracks = sandbox.store.tracks.all().filter((t) => t.kaseId === kase.id);
    expect(tracks).toHaveLength(2);
    const tasks = sandbox.store.tasks.all().filter((t) => t.kaseId === kase.id);
    expect(tasks.length).toBeGreaterThan(0);
    expect(kase.tracks).toBeUndefined();
  });

  it.each([
    [{ party: { id: 0 } }, 'name'],
    [{ name: 'No party', party: undefined }, 'party'],
    [{ name: 'X', party: { id: 999999 } }, 'party'],
    [{ name: 'X', party: 'acme' }, 'party'],
    [{ name: 42, party: { id: -1 } }, 'name'],
    [{ name: 'X', partyId: 1 }, 'partyId'],
    [{ name: 'X', stage: 999 }, 'stage'],
    [{ name: 'X', status: 'DONE' }, 'status'],
    [{ name: 'X', startOn: '2026-02-30' }, 'startOn'],
    [{ name: 'X', opportunity: { id: 999999 } }, 'opportunity'],
    [{ name: 'X', owner: null }, 'owner'],
    [{ name: 'X', tags: [{ id: 1 }] }, 'tags[0].id'],
    [{ name: 'X', fields: [{ definition: { name: 'Industry', tag: null }, value: 'Retail' }] }, 'fields[0].definition'],
    [{ name: 'X', fields: [{ definition: { name: 'Priority', tag: null }, value: 'Whenever' }] }, 'fields[0].value'],
    [{ name: 'X', tracks: [{ definition: 999999 }] }, 'tracks[0].definition'],
    [{ name: 'X', tracks: [{ definition: 'Onboarding' }] }, 'tracks[0].definition'],
    [{ name: 'X', tracks: [{}] }, 'tracks[0].definition'],
  ])('rejects %j with a 422 naming %s', async (kase, field) => {
    const before = sandbox.store.kases.size;
    const body = { party: { id: acme.id }, ...kase };
    const answer = await sandbox.v2('POST', '/kases', { kase: body });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: any) => e.field)).toContain(field);
    expect(answer.body.errors[0].resource).toBe('kase');
    expect(sandbox.store.kases.size).toBe(before);
  });

  it('refuses a track definition made for opportunities', async () => {
    const answer = await sandbox.v2('POST', '/kases', {
      kase: { name: 'X', party: { id: acme.id }, tracks: [{ definition: trackDefinitionId('Deal follow-up') }] },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors[0].message).toMatch(/OPPORTUNITY/);
  });
});

describe('4.1 GET /kases and reads', () => {
  let ids: number[];
  beforeAll(async () => {
    tick(3600);
    ids = [];
    for (const name of ['Read one', 'Read two']) ids.push((await createKase({ name, party: { id: contact.id } })).id);
  });

  it('lists with since and paging', async () => {
    const recent = await sandbox.v2('GET', `/kases?since=${clock.toISOString()}`);
    expect(recent.body.kases.map((k: any) => k.id)).toEqual(ids);
    const paged = await sandbox.v2('GET', '/kases?perPage=1&page=2');
    expect(paged.body.kases).toHaveLength(1);
    expect(paged.headers.link).toMatch(/rel="next"/);
    expect(paged.headers.link).toMatch(/rel="prev"/);
  });

  it('reads one, several, and embeds party, opportunity, tags, fields and missingImportantFields', async () => {
    const one = await sandbox.v2('GET', `/kases/${ids[0]}?embed=party,opportunity,tags,fields,missingImportantFields`);
    expect(one.status).toBe(200);
    expect(one.body.kase.party).toMatchObject({
      id: contact.id,
      firstName: 'Wile',
      phoneNumbers: [{ number: '(555) 010-9999' }],
    });
    expect(one.body.kase.opportunity).toBeNull();
    expect(one.body.kase.tags).toEqual([]);
    expect(one.body.kase.missingImportantFields).toBe(false);
    const many = await sandbox.v2('GET', `/kases/${ids.join(',')}`);
    expect(many.body.kases.map((k: any) => k.name)).toEqual(['Read one', 'Read two']);
    expect((await sandbox.v2('GET', `/kases/${ids[0]},999999`)).status).toBe(404);
    expect((await sandbox.v2('GET', '/kases/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', `/kases/${ids[0]}?embed=organisation`)).status).toBe(400);
  });

  it('reports missing important fields once a project field is important', async () => {
    const priority = sandbox.store.fieldDefinitions.get(definitionId('Priority'));
    if (!priority) throw new Error('seed changed');
    priority.important = true;
    try {
      const answer = await sandbox.v2('GET', `/kases/${ids[0]}?embed=missingImportantFields`);
      expect(answer.body.kase.missingImportantFields).toBe(true);
    } finally {
      priority.important = false;
    }
  });

  it('lists the projects of a party', async () => {
    const answer = await sandbox.v2('GET', `/parties/${contact.id}/kases?embed=tags`);
    expect(answer.body.kases.map((k: any) => k.id)).toEqual(ids);
    expect(answer.body.kases[0].tags).toEqual([]);
    expect((await sandbox.v2('GET', '/parties/999999/kases')).status).toBe(404);
  });

  it('searches by project name and by the party name, postcode or phone', async () => {
    const byName = await sandbox.v2('GET', '/kases/search?q=read%20one');
    expect(byName.body.kases.map((k: any) => k.id)).toEqual([ids[0]]);
    const byPhone = await sandbox.v2('GET', '/kases/search?q=5550109999');
    expect(byPhone.body.kases.map((k: any) => k.id)).toEqual(ids);
    const byZip = await sandbox.v2('GET', '/kases/search?q=AB1%202CD');
    expect(byZip.body.kases.length).toBeGreaterThan(0);
    expect(byZip.body.kases.every((k: any) => k.party.id === acme.id)).toBe(true);
    expect((await sandbox.v2('GET', '/kases/search?q=')).status).toBe(400);
  });
});

describe('4.1 PUT /kases/{id}', () => {
  it('changes only what is given, links an opportunity and closes', async () => {
    const kase = await createKase({ name: 'Changing', party: { id: acme.id }, description: 'kept' });
    const milestone = sandbox.store.milestones.all()[0];
    const opportunity = (
      await sandbox.v2('POST', '/opportunities', {
        opportunity: { name: 'Deal', party: { id: acme.id }, milestone: { id: milestone?.id } },
      })
    ).body.opportunity;
    tick(60);
    const answer = await sandbox.v2('PUT', `/kases/${kase.id}`, {
      kase: {
        name: 'Changed',
        stage: { id: KASE_STAGES[3]?.id },
        opportunity: { id: opportunity.id },
        status: 'CLOSED',
      },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.kase).toMatchObject({
      name: 'Changed',
      description: 'kept',
      stage: KASE_STAGES[3],
      opportunity: { id: opportunity.id, name: 'Deal' },
      status: 'CLOSED',
      closedOn: clock.toISOString().slice(0, 10),
      tags: [],
      fields: [],
    });
    expect(answer.body.kase.updatedAt).not.toBe(kase.updatedAt);
    const reopened = await sandbox.v2('PUT', `/kases/${kase.id}`, { kase: { status: 'OPEN', opportunity: null } });
    expect(reopened.body.kase.closedOn).toBeNull();
    expect(reopened.body.kase.opportunity).toBeUndefined();
  });

  it('keeps an owner or a team: clearing both is a 422', async () => {
    const kase = await createKase({ name: 'Owned', party: { id: acme.id } });
    const both = await sandbox.v2('PUT', `/kases/${kase.id}`, { kase: { owner: null, team: null } });
    expect(both.status).toBe(422);
    expect(both.body.errors[0].field).toBe('owner');
    const teamOnly = await sandbox.v2('PUT', `/kases/${kase.id}`, { kase: { owner: null, team: { name: 'Support' } } });
    expect(teamOnly.status).toBe(200);
    expect(teamOnly.body.kase.owner).toBeNull();
    expect(teamOnly.body.kase.team.name).toBe('Support');
    const kim = await sandbox.v2('PUT', `/kases/${kase.id}`, { kase: { owner: { username: 'kim' } } });
    expect(kim.body.kase.owner.username).toBe('kim');
    expect(kim.body.kase.team.name).toBe('Support');
  });

  it('updates tags and fields with ids and _delete', async () => {
    const kase = await createKase({
      name: 'Collections',
      party: { id: acme.id },
      tags: [{ name: 'Alpha' }],
      fields: [{ definition: definitionId('Reference'), value: 'R-1' }],
    });
    const answer = await sandbox.v2('PUT', `/kases/${kase.id}`, {
      kase: {
        tags: [{ id: kase.tags[0].id, _delete: true }, { name: 'Beta' }],
        fields: [
          { id: kase.fields[0].id, value: 'R-2' },
          { definition: definitionId('Billable'), value: false },
        ],
      },
    });
    expect(answer.body.kase.tags.map((t: any) => t.name)).toEqual(['Beta']);
    expect(answer.body.kase.fields.map((f: any) => f.value)).toEqual(['R-2', false]);
    const bad = await sandbox.v2('PUT', `/kases/${kase.id}`, {
      kase: { fields: [{ id: 999999, value: 'x' }], tracks: [] },
    });
    expect(bad.status).toBe(422);
    expect(bad.body.errors.map((e: any) => e.field)).toEqual(['tracks', 'fields[0].id']);
  });

  it('answers 404 for an unknown project and 400 without the wrapper', async () => {
    expect((await sandbox.v2('PUT', '/kases/999999', { kase: { name: 'x' } })).status).toBe(404);
    const kase = await createKase({ name: 'Wrapped', party: { id: acme.id } });
    expect((await sandbox.v2('PUT', `/kases/${kase.id}`, { name: 'x' })).status).toBe(400);
  });
});

describe('4.1 additional contacts', () => {
  it('adds, lists and removes additional contacts', async () => {
    const kase = await createKase({ name: 'Contacts', party: { id: acme.id } });
    expect((await sandbox.v2('POST', `/kases/${kase.id}/parties/${contact.id}`)).status).toBe(204);
    expect((await sandbox.v2('POST', `/kases/${kase.id}/parties/${contact.id}`)).status).toBe(204);
    const listed = await sandbox.v2('GET', `/kases/${kase.id}/parties?embed=tags`);
    expect(listed.body.parties.map((p: any) => p.id)).toEqual([contact.id]);
    expect(listed.body.parties[0].tags).toEqual([]);
    const ofParty = await sandbox.v2('GET', `/parties/${contact.id}/kases`);
    expect(ofParty.body.kases.map((k: any) => k.id)).toContain(kase.id);
    expect((await sandbox.v2('DELETE', `/kases/${kase.id}/parties/${contact.id}`)).status).toBe(204);
    expect((await sandbox.v2('GET', `/kases/${kase.id}/parties`)).body.parties).toEqual([]);
  });

  it('refuses unknown records, the main party, and removing a party that is no contact', async () => {
    const kase = await createKase({ name: 'Contacts 2', party: { id: acme.id } });
    expect((await sandbox.v2('POST', `/kases/${kase.id}/parties/999999`)).status).toBe(404);
    expect((await sandbox.v2('POST', `/kases/999999/parties/${contact.id}`)).status).toBe(404);
    expect((await sandbox.v2('POST', `/kases/${kase.id}/parties/${acme.id}`)).status).toBe(422);
    expect((await sandbox.v2('DELETE', `/kases/${kase.id}/parties/${contact.id}`)).status).toBe(404);
  });
});

describe('4.1 DELETE, deleted and restricted lists', () => {
  it('deletes with 204, removes the project tasks and logs the deletion', async () => {
    const kase = await createKase({
      name: 'Doomed',
      party: { id: acme.id },
      tracks: [{ definition: trackDefinitionId('Onboarding') }],
    });
    expect(sandbox.store.tasks.all().some((t) => t.kaseId === kase.id)).toBe(true);
    tick(60);
    const since = clock.toISOString();
    const answer = await sandbox.v2('DELETE', `/kases/${kase.id}`);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect((await sandbox.v2('GET', `/kases/${kase.id}`)).status).toBe(404);
    expect(sandbox.store.tasks.all().some((t) => t.kaseId === kase.id)).toBe(false);
    const deleted = await sandbox.v2('GET', `/kases/deleted?since=${since}`);
    expect(deleted.body).toEqual({ kases: [{ id: kase.id, deletedAt: since.replace('.000', '') }] });
    expect((await sandbox.v2('DELETE', `/kases/${kase.id}`)).status).toBe(404);
  });

  it('lists restricted projects and refuses to show them', async () => {
    const kase = await createKase({ name: 'Hidden project', party: { id: acme.id } });
    sandbox.store.kases.get(kase.id)?.restrictedFor.push(userId('admin'));
    const deleted = await sandbox.v2('GET', '/kases/deleted');
    expect(deleted.body.restrictedKases).toEqual([{ id: kase.id, name: 'Hidden project', isRestricted: true }]);
    expect((await sandbox.v2('GET', `/kases/${kase.id}`)).status).toBe(403);
    const list = await sandbox.v2('GET', '/kases?perPage=100');
    expect(list.body.kases.some((k: any) => k.id === kase.id)).toBe(false);
  });
});
