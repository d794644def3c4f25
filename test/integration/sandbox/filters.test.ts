import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEEDED_STAGES as KASE_STAGES } from '../../../src/sandbox/seed.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

/*
 * Spec 4.12 (with 2.13): structured filters over real HTTP. Records are created through the v2
 * interface at two points in time, so the date operators have something to tell apart.
 */
let sandbox: TestSandbox;
let clock = new Date('2026-01-10T09:00:00Z');
let acme: any;
let ada: any;
let bob: any;
let globex: any;
let openDeal: any;
let wonDeal: any;
let samDeal: any;
let rollout: any;
let audit: any;

const userId = (username: string): number => sandbox.store.users.all().find((u) => u.username === username)?.id ?? -1;
const definitionId = (name: string): number =>
  sandbox.store.fieldDefinitions.all().find((d) => d.name === name)?.id ?? -1;
const milestoneId = (name: string): number => sandbox.store.milestones.all().find((m) => m.name === name)?.id ?? -1;

async function create(path: string, key: string, record: Record<string, unknown>): Promise<any> {
  const answer = await sandbox.v2('POST', path, { [key]: record });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body[key];
}

const c = (field: string, operator: string, value: unknown): Record<string, unknown> => ({ field, operator, value });

async function results(
  entity: string,
  filter: unknown,
  query = '',
): Promise<{ status: number; body: any; headers: any }> {
  return sandbox.v2('POST', `/${entity}/filters/results${query}`, { filter });
}

async function ids(entity: string, filter: unknown): Promise<number[]> {
  const answer = await results(entity, filter);
  expect(answer.status, JSON.stringify(answer.body)).toBe(200);
  return answer.body[entity].map((r: { id: number }) => r.id);
}

beforeAll(async () => {
  sandbox = await startTestSandbox({ now: () => clock });
  acme = await create('/parties', 'party', {
    type: 'organisation',
    name: 'Acme Ltd',
    addresses: [{ city: 'London', country: 'United Kingdom' }],
    tags: [{ name: 'Customer' }],
    fields: [{ definition: definitionId('VIP'), value: true }],
  });
  globex = await create('/parties', 'party', { type: 'organisation', name: 'Globex', owner: { id: userId('sam') } });
  openDeal = await create('/opportunities', 'opportunity', {
    name: 'Website rebuild',
    party: { id: acme.id },
    milestone: { id: milestoneId('New') },
    value: { amount: 1500, currency: 'GBP' },
  });
  clock = new Date('2026-03-15T12:00:00Z');
  ada = await create('/parties', 'party', {
    type: 'person',
    firstName: 'Ada',
    lastName: 'Lovelace',
    organisation: { id: acme.id },
    emailAddresses: [{ type: 'Work', address: 'Ada@Acme.example' }],
  });
  bob = await create('/parties', 'party', {
    type: 'person',
    firstName: 'Bob',
    lastName: 'Stone',
    owner: { id: userId('sam') },
  });
  wonDeal = await create('/opportunities', 'opportunity', {
    name: 'Support contract',
    party: { id: globex.id },
    milestone: { id: milestoneId('Won') },
    value: { amount: 900, currency: 'EUR' },
  });
  samDeal = await create('/opportunities', 'opportunity', {
    name: 'Hardware',
    party: { id: globex.id },
    milestone: { id: milestoneId('Proposal') },
    owner: { id: userId('sam') },
  });
  rollout = await create('/kases', 'kase', { name: 'Rollout', party: { id: acme.id }, stage: KASE_STAGES[1]?.id });
  audit = await create('/kases', 'kase', {
    name: 'Audit',
    party: { id: globex.id },
    status: 'CLOSED',
    owner: { id: userId('sam') },
  });
});
afterAll(() => sandbox.close());

describe('4.12 POST /parties/filters/results', () => {
  it('answers 200 in the format of the party list', async () => {
    const answer = await results('parties', { conditions: [c('name', 'is', 'ada lovelace')] });
    expect(answer.status).toBe(200);
    expect(Object.keys(answer.body)).toEqual(['parties']);
    expect(answer.body.parties).toHaveLength(1);
    expect(answer.body.parties[0]).toMatchObject({
      id: ada.id,
      type: 'person',
      firstName: 'Ada',
      lastName: 'Lovelace',
    });
    expect(answer.body.parties[0].tags).toBeUndefined();
  });

  it.each<[string, () => unknown[], () => number[]]>([
    ['no conditions: every party by id', () => [], () => [acme.id, globex.id, ada.id, bob.id]],
    ['tag by name, any case', () => [c('tag', 'is', 'CUSTOMER')], () => [acme.id]],
    ['email, case-insensitive', () => [c('email', 'is', 'ada@acme.EXAMPLE')], () => [ada.id]],
    ['city of an address', () => [c('city', 'starts with', 'lon')], () => [acme.id]],
    ['owner by id', () => [c('owner', 'is', userId('sam'))], () => [globex.id, bob.id]],
    ['custom boolean field', () => [c(`custom:${definitionId('VIP')}`, 'is', true)], () => [acme.id]],
    ["the person's organisation", () => [c('org.name', 'is', 'Acme Ltd')], () => [ada.id]],
    ['organisation tag of a person', () => [c('org.tag', 'is', 'Customer')], () => [ada.id]],
    ['hasPeople', () => [c('hasPeople', 'is', true)], () => [acme.id]],
    ['addedOn before a date', () => [c('addedOn', 'is before', '2026-02-01')], () => [acme.id, globex.id]],
    [
      'addedOn within the last 7 days of the sandbox clock',
      () => [c('addedOn', 'is within last', 7)],
      () => [ada.id, bob.id],
    ],
    [
      'an orGroup inside all-of',
      () => [
        c('type', 'is', 'person'),
        { orGroup: [c('name', 'starts with', 'bo'), c('hasEmailAddress', 'is', true)] },
      ],
      () => [ada.id, bob.id],
    ],
  ])('%s', async (_label, conditions, expected) => {
    expect(await ids('parties', { conditions: conditions() })).toEqual(expected());
  });

  it('orders by orderBy, then pages with a Link header', async () => {
    const filter = { conditions: [], orderBy: [{ field: 'name', direction: 'descending' }] };
    expect(await ids('parties', filter)).toEqual([globex.id, bob.id, ada.id, acme.id]);
    const first = await results('parties', filter, '?perPage=3');
    expect(first.body.parties.map((p: any) => p.id)).toEqual([globex.id, bob.id, ada.id]);
    expect(first.headers.link).toMatch(/[?&]page=2[^>]*>; rel="next"/);
    const second = await results('parties', filter, '?perPage=3&page=2');
    expect(second.body.parties.map((p: any) => p.id)).toEqual([acme.id]);
    expect(second.headers.link).toMatch(/rel="prev"/);
    expect(second.headers.link).not.toMatch(/rel="next"/);
  });

  it('embeds what the party list embeds', async () => {
    const answer = await results('parties', { conditions: [c('id', 'is', acme.id)] }, '?embed=tags,fields');
    expect(answer.status).toBe(200);
    expect(answer.body.parties[0].tags).toEqual([expect.objectContaining({ name: 'Customer' })]);
    expect(answer.body.parties[0].fields).toEqual([expect.objectContaining({ value: true })]);
    const wrong = await results('parties', { conditions: [] }, '?embed=milestone');
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toMatch(/unknown embed value "milestone"/);
  });

  it('leaves out records restricted for the caller', async () => {
    const stored = sandbox.store.parties.get(globex.id)!;
    // A change made straight in the store says so, as request handlers' changes are noted.
    stored.restrictedFor.push(userId('admin'));
    sandbox.store.parties.touch(stored);
    try {
      expect(await ids('parties', { conditions: [c('type', 'is', 'organisation')] })).toEqual([acme.id]);
    } finally {
      stored.restrictedFor.pop();
      sandbox.store.parties.touch(stored);
    }
    expect(await ids('parties', { conditions: [c('type', 'is', 'organisation')] })).toEqual([acme.id, globex.id]);
  });
});

describe('4.12 POST /opportunities/filters/results', () => {
  it('answers in the format of the opportunity list', async () => {
    const answer = await results('opportunities', { conditions: [c('status', 'is', 'won')] });
    expect(answer.status).toBe(200);
    expect(answer.body.opportunities).toEqual([
      expect.objectContaining({
        id: wonDeal.id,
        name: 'Support contract',
        milestone: expect.objectContaining({ name: 'Won' }),
      }),
    ]);
  });

  it.each<[string, () => unknown[], () => number[]]>([
    ['status OPEN', () => [c('status', 'is', 'OPEN')], () => [openDeal.id, samDeal.id]],
    ['isOwnedByMe: the caller owns it', () => [c('isOwnedByMe', 'is', true)], () => [openDeal.id, wonDeal.id]],
    ['pipeline by name', () => [c('pipeline', 'is', 'sales')], () => [openDeal.id, wonDeal.id, samDeal.id]],
    ['milestone by name', () => [c('milestone', 'is', 'Proposal')], () => [samDeal.id]],
    ['expectedValue equal as a number', () => [c('expectedValue', 'is', '1500.0')], () => [openDeal.id]],
    ['currency', () => [c('currency', 'is', 'eur')], () => [wonDeal.id]],
    // New turns stale after 14 days; the deal was last changed on 2026-01-10.
    ['isStale', () => [c('isStale', 'is', true)], () => [openDeal.id]],
    ['probability', () => [c('probability', 'is greater than', 10)], () => [wonDeal.id, samDeal.id]],
  ])('%s', async (_label, conditions, expected) => {
    expect(await ids('opportunities', { conditions: conditions() })).toEqual(expected());
  });
});

describe('4.12 POST /kases/filters/results', () => {
  it('answers in the format of the project list', async () => {
    const answer = await results('kases', { conditions: [c('name', 'is', 'rollout')] }, '?embed=party');
    expect(answer.status).toBe(200);
    expect(answer.body.kases).toEqual([
      expect.objectContaining({ id: rollout.id, party: expect.objectContaining({ id: acme.id }) }),
    ]);
  });

  it.each<[string, () => unknown[], () => number[]]>([
    ['isOpen', () => [c('isOpen', 'is', true)], () => [rollout.id]],
    ['status', () => [c('status', 'is', 'closed')], () => [audit.id]],
    ['stage by id', () => [c('stage', 'is', KASE_STAGES[1]?.id)], () => [rollout.id]],
    ['stage by name', () => [c('stage', 'is', KASE_STAGES[1]?.name.toUpperCase())], () => [rollout.id]],
    ['board by name', () => [c('board', 'is', 'Projects')], () => [rollout.id, audit.id]],
    ['isOwnedByMe false', () => [c('isOwnedByMe', 'is', false)], () => [audit.id]],
  ])('%s', async (_label, conditions, expected) => {
    expect(await ids('kases', { conditions: conditions() })).toEqual(expected());
  });
});

describe('4.12 rejected filters', () => {
  it.each<[string, string, unknown, RegExp]>([
    ['no filter in the body', 'parties', { conditions: [] }, /under "filter"/],
    [
      'an unknown field, named with its index',
      'parties',
      { filter: { conditions: [c('id', 'is', 1), c('colour', 'is', 'red')] } },
      /^invalid filter: conditions\[1\]: unknown field "colour" for parties/,
    ],
    [
      'an operator that does not fit',
      'opportunities',
      { filter: { conditions: [c('probability', 'contains', '5')] } },
      /conditions\[0\]: operator "contains" does not apply to field "probability"/,
    ],
    [
      'a value of the wrong type',
      'kases',
      { filter: { conditions: [{ orGroup: [c('isOpen', 'is', 'yes')] }] } },
      /conditions\[0\]\.orGroup\[0\]: .*takes true or false, got "yes"/,
    ],
    [
      'a bad orderBy direction',
      'parties',
      { filter: { conditions: [], orderBy: [{ field: 'name', direction: 'up' }] } },
      /orderBy\[0\]: direction/,
    ],
  ])('%s: 400 with a message', async (_label, entity, body, message) => {
    const answer = await sandbox.v2('POST', `/${entity}/filters/results`, body);
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(message);
  });

  it('answers 400 for a custom field of opportunities used on parties', async () => {
    const answer = await results('parties', { conditions: [c(`custom:${definitionId('Signed')}`, 'is', true)] });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/defined for opportunities, not for parties/);
  });

  it('answers 400 for a body that is not JSON and for a bad page size', async () => {
    const text = await sandbox.call('POST', '/api/v2/parties/filters/results', {
      rawBody: 'name=x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(400);
    expect(text.body.message).toMatch(/JSON object/);
    const page = await results('parties', { conditions: [] }, '?perPage=500');
    expect(page.status).toBe(400);
    expect(page.body.message).toMatch(/perPage/);
  });

  it('has no filter endpoint for other entities', async () => {
    const answer = await results('tasks', { conditions: [] });
    expect(answer.status).toBe(404);
  });
});
