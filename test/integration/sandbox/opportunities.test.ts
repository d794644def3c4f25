import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

let sandbox: TestSandbox;
let clock = new Date('2026-05-04T10:00:00Z');
const tick = (seconds: number): void => {
  clock = new Date(clock.getTime() + seconds * 1000);
};
let globex: any;

beforeAll(async () => {
  sandbox = await startTestSandbox({ now: () => clock });
  globex = (
    await sandbox.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Globex', phoneNumbers: [{ number: '+1 555 867 5309' }] },
    })
  ).body.party;
});
afterAll(() => sandbox.close());

const milestone = (name: string): { id: number; probability: number } => {
  const found = sandbox.store.milestones.all().find((m) => m.name === name);
  if (!found) throw new Error(`no seeded milestone ${name}`);
  return found;
};
const userId = (username: string): number => sandbox.store.users.all().find((u) => u.username === username)?.id ?? -1;
const definitionId = (name: string): number =>
  sandbox.store.fieldDefinitions.all().find((d) => d.name === name)?.id ?? -1;
const trackDefinitionId = (description: string): number =>
  sandbox.store.trackDefinitions.all().find((d) => d.description === description)?.id ?? -1;

async function createOpportunity(opportunity: Record<string, unknown>): Promise<any> {
  const answer = await sandbox.v2('POST', '/opportunities', {
    opportunity: { party: { id: globex.id }, milestone: { id: milestone('New').id }, ...opportunity },
  });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body.opportunity;
}

describe('4.2 POST /opportunities', () => {
  it('creates with 201, Location and the 2.4 shape; probability comes from the milestone', async () => {
    const answer = await sandbox.v2('POST', '/opportunities', {
      opportunity: {
        name: 'Hammock order',
        description: '500 hammocks',
        party: { id: globex.id },
        milestone: { id: milestone('Qualified').id },
        value: { amount: 12500.5, currency: 'EUR' },
        expectedCloseOn: '2026-07-01',
      },
    });
    expect(answer.status).toBe(201);
    const opportunity = answer.body.opportunity;
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/opportunities/${opportunity.id}`);
    expect(opportunity).toMatchObject({
      name: 'Hammock order',
      description: '500 hammocks',
      owner: { id: userId('admin'), username: 'admin' },
      team: null,
      party: { id: globex.id, type: 'organisation', name: 'Globex' },
      milestone: { id: milestone('Qualified').id, name: 'Qualified' },
      lostReason: null,
      value: { amount: 12500.5, currency: 'EUR' },
      expectedCloseOn: '2026-07-01',
      closedOn: null,
      probability: milestone('Qualified').probability,
      durationBasis: 'FIXED',
      duration: null,
      createdAt: '2026-05-04T10:00:00Z',
      tags: [],
      fields: [],
    });
  });

  it('accepts a milestone by name, an explicit probability, a duration, tags and fields', async () => {
    const opportunity = await createOpportunity({
      name: 'Retainer',
      milestone: { name: 'proposal' },
      probability: 60,
      durationBasis: 'MONTH',
      duration: 12,
      tags: [{ name: 'Recurring' }],
      fields: [
        { definition: definitionId('Lead source'), value: 'Referral' },
        { definition: { name: 'Signed', tag: null }, value: false },
      ],
    });
    expect(opportunity).toMatchObject({
      milestone: { name: 'Proposal' },
      probability: 60,
      durationBasis: 'MONTH',
      duration: 12,
    });
    expect(opportunity.tags.map((t: any) => t.name)).toEqual(['Recurring']);
    expect(opportunity.fields.map((f: any) => f.value)).toEqual(['Referral', false]);
  });

  it('sets closedOn when created on a complete milestone', async () => {
    const won = await createOpportunity({ name: 'Won already', milestone: { id: milestone('Won').id } });
    expect(won.closedOn).toBe('2026-05-04');
    expect(won.probability).toBe(100);
    const lost = await createOpportunity({
      name: 'Lost long ago',
      milestone: { id: milestone('Lost').id },
      closedOn: '2025-12-24',
      lostReason: 'Price',
    });
    expect(lost).toMatchObject({ closedOn: '2025-12-24', lostReason: 'Price', probability: 0 });
  });

  it('applies a track for opportunities', async () => {
    const opportunity = await createOpportunity({
      name: 'Tracked deal',
      tracks: [{ definition: trackDefinitionId('Deal follow-up') }],
    });
    expect(sandbox.store.tracks.all().filter((t) => t.opportunityId === opportunity.id)).toHaveLength(1);
    expect(sandbox.store.tasks.all().filter((t) => t.opportunityId === opportunity.id).length).toBeGreaterThan(0);
  });

  it.each([
    [{ name: undefined }, 'name'],
    [{ party: undefined }, 'party'],
    [{ party: { id: 999999 } }, 'party'],
    [{ milestone: undefined }, 'milestone'],
    [{ milestone: { id: 999999 } }, 'milestone'],
    [{ milestone: { name: 'Nowhere' } }, 'milestone'],
    [{ value: { amount: 10, currency: 'XYZ' } }, 'value.currency'],
    [{ value: { amount: 10, currency: 'eur' } }, 'value.currency'],
    [{ value: { amount: '10', currency: 'EUR' } }, 'value.amount'],
    [{ value: { amount: -1, currency: 'EUR' } }, 'value.amount'],
    [{ value: 100 }, 'value'],
    [{ probability: 101 }, 'probability'],
    [{ probability: 12.5 }, 'probability'],
    [{ durationBasis: 'FORTNIGHT' }, 'durationBasis'],
    [{ durationBasis: 'WEEK' }, 'duration'],
    [{ duration: 3 }, 'duration'],
    [{ expectedCloseOn: '01/07/2026' }, 'expectedCloseOn'],
    [{ closedOn: '2026-01-01' }, 'closedOn'],
    [{ owner: null, team: null }, 'owner'],
    [{ owner: { username: 'nobody' } }, 'owner'],
    [{ team: { id: 999999 } }, 'team'],
    [{ stage: 1 }, 'stage'],
    [{ tags: 'hot' }, 'tags'],
    [{ fields: [{ definition: { name: 'Signed', tag: null }, value: 'yes' }] }, 'fields[0].value'],
    [{ fields: [{ definition: { name: 'Contract start', tag: null }, value: '2026-13-01' }] }, 'fields[0].value'],
    [{ tracks: [{ definition: { id: -5 } }] }, 'tracks[0].definition'],
  ])('rejects %j with a 422 naming %s', async (change, field) => {
    const before = sandbox.store.opportunities.size;
    const answer = await sandbox.v2('POST', '/opportunities', {
      opportunity: { name: 'Bad', party: { id: globex.id }, milestone: { id: milestone('New').id }, ...change },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: any) => e.field)).toContain(field);
    expect(answer.body.errors[0].resource).toBe('opportunity');
    expect(sandbox.store.opportunities.size).toBe(before);
  });

  it('refuses a track definition made for projects and leaves nothing behind', async () => {
    const before = sandbox.store.opportunities.size;
    const answer = await sandbox.v2('POST', '/opportunities', {
      opportunity: {
        name: 'X',
        party: { id: globex.id },
        milestone: { id: milestone('New').id },
        tracks: [{ definition: trackDefinitionId('Onboarding') }],
      },
    });
    expect(answer.status).toBe(422);
    expect(sandbox.store.opportunities.size).toBe(before);
  });
});

describe('4.2 GET /opportunities and reads', () => {
  let ids: number[];
  beforeAll(async () => {
    tick(3600);
    ids = [(await createOpportunity({ name: 'Read A' })).id, (await createOpportunity({ name: 'Read B' })).id];
  });

  it('lists with since and paging', async () => {
    const recent = await sandbox.v2('GET', `/opportunities?since=${clock.toISOString().slice(0, 19)}Z`);
    expect(recent.body.opportunities.map((o: any) => o.id)).toEqual(ids);
    const paged = await sandbox.v2('GET', '/opportunities?perPage=1');
    expect(paged.body.opportunities).toHaveLength(1);
    expect(paged.headers.link).toMatch(/rel="next"/);
  });

  it('reads one and several; embeds party, milestone, tags, fields, missingImportantFields', async () => {
    const one = await sandbox.v2(
      'GET',
      `/opportunities/${ids[0]}?embed=party,milestone,tags,fields,missingImportantFields`,
    );
    expect(one.body.opportunity.party).toMatchObject({
      id: globex.id,
      name: 'Globex',
      phoneNumbers: [{ number: '+1 555 867 5309' }],
    });
    expect(one.body.opportunity.milestone).toMatchObject({
      id: milestone('New').id,
      name: 'New',
      complete: false,
      probability: 10,
      daysUntilStale: 14,
      pipeline: { name: 'Sales' },
    });
    expect(one.body.opportunity.missingImportantFields).toBe(false);
    const plain = await sandbox.v2('GET', `/opportunities/${ids[0]}`);
    expect(plain.body.opportunity.milestone).toEqual({ id: milestone('New').id, name: 'New' });
    expect(plain.body.opportunity.tags).toBeUndefined();
    const many = await sandbox.v2('GET', `/opportunities/${ids.join(',')}`);
    expect(many.body.opportunities.map((o: any) => o.name)).toEqual(['Read A', 'Read B']);
    expect((await sandbox.v2('GET', `/opportunities/${ids[1]},999999`)).status).toBe(404);
    expect((await sandbox.v2('GET', '/opportunities/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', `/opportunities/${ids[0]}?embed=opportunity`)).status).toBe(400);
  });

  it('lists the opportunities of a party and the parties of an opportunity', async () => {
    const ofParty = await sandbox.v2('GET', `/parties/${globex.id}/opportunities?perPage=100`);
    expect(ofParty.body.opportunities.map((o: any) => o.id)).toEqual(expect.arrayContaining(ids));
    const parties = await sandbox.v2('GET', `/opportunities/${ids[0]}/parties`);
    expect(parties.status).toBe(200);
    expect(parties.body.parties).toEqual([]);
    sandbox.store.opportunities.get(ids[0] as number)?.partyIds.push(globex.id);
    const withExtra = await sandbox.v2('GET', `/opportunities/${ids[0]}/parties`);
    expect(withExtra.body.parties.map((p: any) => p.id)).toEqual([globex.id]);
    expect((await sandbox.v2('GET', '/opportunities/999999/parties')).status).toBe(404);
  });

  it('searches by opportunity name and by the party phone number', async () => {
    const byName = await sandbox.v2('GET', '/opportunities/search?q=read%20b');
    expect(byName.body.opportunities.map((o: any) => o.id)).toEqual([ids[1]]);
    const byPhone = await sandbox.v2('GET', '/opportunities/search?q=867-5309');
    expect(byPhone.body.opportunities.map((o: any) => o.id)).toEqual(expect.arrayContaining(ids));
    expect((await sandbox.v2('GET', '/opportunities/search')).status).toBe(400);
  });
});

describe('4.2 PUT /opportunities/{id}', () => {
  it('moves through milestones: probability follows, closedOn is set and cleared', async () => {
    const opportunity = await createOpportunity({ name: 'Moving', value: { amount: 100, currency: 'GBP' } });
    tick(86_400);
    const won = await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, {
      opportunity: { milestone: { id: milestone('Won').id } },
    });
    expect(won.status).toBe(200);
    expect(won.body.opportunity).toMatchObject({
      probability: 100,
      closedOn: clock.toISOString().slice(0, 10),
      value: { amount: 100, currency: 'GBP' },
      name: 'Moving',
    });
    const back = await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, {
      opportunity: { milestone: { name: 'Negotiation' }, probability: 80 },
    });
    expect(back.body.opportunity).toMatchObject({ probability: 80, closedOn: null });
    const renamed = await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, {
      opportunity: { name: 'Renamed', value: null },
    });
    expect(renamed.body.opportunity).toMatchObject({
      name: 'Renamed',
      probability: 80,
      value: null,
      tags: [],
      fields: [],
    });
  });

  it('keeps an owner or a team and applies owner defaults', async () => {
    const opportunity = await createOpportunity({ name: 'Owners' });
    const none = await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, { opportunity: { owner: null } });
    expect(none.status).toBe(422);
    const kim = await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, {
      opportunity: { owner: { id: userId('kim') } },
    });
    expect(kim.body.opportunity.owner.username).toBe('kim');
    expect(kim.body.opportunity.team.name).toBe('Support');
    const teamOnly = await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, { opportunity: { owner: null } });
    expect(teamOnly.status).toBe(200);
    expect(teamOnly.body.opportunity.owner).toBeNull();
  });

  it('updates tags and fields with the _delete convention', async () => {
    const opportunity = await createOpportunity({
      name: 'Collections',
      tags: [{ name: 'Hot' }],
      fields: [{ definition: definitionId('Competitor'), value: 'Initech' }],
    });
    const answer = await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, {
      opportunity: {
        tags: [{ id: opportunity.tags[0].id, _delete: true }],
        fields: [{ id: opportunity.fields[0].id, _delete: true }],
      },
    });
    expect(answer.body.opportunity.tags).toEqual([]);
    expect(answer.body.opportunity.fields).toEqual([]);
  });

  it('answers 404, 400 and 422 for bad updates', async () => {
    const opportunity = await createOpportunity({ name: 'Bad updates' });
    expect((await sandbox.v2('PUT', '/opportunities/999999', { opportunity: { name: 'x' } })).status).toBe(404);
    expect((await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, { kase: { name: 'x' } })).status).toBe(400);
    const answer = await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, {
      opportunity: { name: '', tracks: [] },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: any) => e.field).sort()).toEqual(['name', 'tracks']);
  });
});

describe('4.2 DELETE, deleted and restricted lists', () => {
  it('deletes with 204, unlinks projects and logs the deletion', async () => {
    const opportunity = await createOpportunity({ name: 'Doomed deal' });
    const kase = (
      await sandbox.v2('POST', '/kases', {
        kase: { name: 'Linked', party: { id: globex.id }, opportunity: { id: opportunity.id } },
      })
    ).body.kase;
    expect(kase.opportunity).toEqual({ id: opportunity.id, name: 'Doomed deal' });
    tick(60);
    const since = clock.toISOString();
    expect((await sandbox.v2('DELETE', `/opportunities/${opportunity.id}`)).status).toBe(204);
    expect((await sandbox.v2('GET', `/opportunities/${opportunity.id}`)).status).toBe(404);
    const linked = await sandbox.v2('GET', `/kases/${kase.id}?embed=opportunity`);
    expect(linked.body.kase.opportunity).toBeNull();
    const deleted = await sandbox.v2('GET', `/opportunities/deleted?since=${since}`);
    expect(deleted.body).toEqual({ opportunities: [{ id: opportunity.id, deletedAt: since.replace('.000', '') }] });
    expect((await sandbox.v2('DELETE', `/opportunities/${opportunity.id}`)).status).toBe(404);
  });

  it('lists restricted opportunities and refuses to show them', async () => {
    const opportunity = await createOpportunity({ name: 'Hidden deal' });
    sandbox.store.opportunities.get(opportunity.id)?.restrictedFor.push(userId('admin'));
    const deleted = await sandbox.v2('GET', '/opportunities/deleted');
    expect(deleted.body.restrictedOpportunities).toEqual([
      { id: opportunity.id, name: 'Hidden deal', isRestricted: true },
    ]);
    expect((await sandbox.v2('PUT', `/opportunities/${opportunity.id}`, { opportunity: { name: 'x' } })).status).toBe(
      403,
    );
    const search = await sandbox.v2('GET', '/opportunities/search?q=hidden');
    expect(search.body.opportunities).toEqual([]);
  });
});
