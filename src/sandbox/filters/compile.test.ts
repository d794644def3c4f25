import { describe, expect, it, vi } from 'vitest';
import type { KaseRec, OpportunityRec, PartyRec } from '../model.ts';
import { addKase, addOpportunity, addParty, userId } from '../../../test/helpers/records.ts';
import { seedAccount } from '../seed.ts';
import { Store } from '../store.ts';
import { compileFilter } from './compile.ts';
import { FilterError } from './filter-error.ts';
import { parseFilter } from './parse.ts';
import type { FilterEntity, FilterEnv } from './types.ts';

/*
 * One small account, built by hand so that every expected id below can be checked by reading the
 * fixture. "Today" is 2026-03-15 (UTC).
 */
const TODAY = '2026-03-15';
const store = new Store();
seedAccount(store, new Date('2026-01-01T00:00:00Z'));

const tagId = (name: string): number => {
  const tag = store.tags.all().find((t) => t.name === name);
  if (!tag) throw new Error(`no tag ${name}`);
  return tag.id;
};
const fieldId = (name: string): number => {
  const definition = store.fieldDefinitions.all().find((d) => d.name === name);
  if (!definition) throw new Error(`no field ${name}`);
  return definition.id;
};
const milestoneId = (name: string): number => {
  const milestone = store.milestones.all().find((m) => m.name === name);
  if (!milestone) throw new Error(`no milestone ${name}`);
  return milestone.id;
};

const ADMIN = userId(store, 'admin');
const SAM = userId(store, 'sam');
const SALES_TEAM = store.teams.all().find((t) => t.name === 'Sales')?.id ?? -1;
const CUSTOMER = tagId('Customer');
const PROSPECT = tagId('Prospect');
const VIP = fieldId('VIP');
const INDUSTRY = fieldId('Industry');
const CUSTOMER_SINCE = fieldId('Customer since');
const CONTRACT_END = fieldId('Contract end');
const SIGNED = fieldId('Signed');
const PRIORITY = fieldId('Priority');

const partners = store.pipelines.insert({
  name: 'Partners',
  description: null,
  archived: false,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
});
const intro = store.milestones.insert({
  pipelineId: partners.id,
  name: 'Intro',
  description: null,
  probability: 5,
  complete: false,
  daysUntilStale: null,
  displayOrder: 0,
  createdAt: '2026-01-01T00:00:00Z',
  updatedAt: '2026-01-01T00:00:00Z',
});
const BOARDS = [
  {
    id: 100,
    name: 'Projects',
    stages: [
      { id: 101, name: 'Planned' },
      { id: 102, name: 'In progress' },
    ],
  },
  { id: 200, name: 'Support', stages: [{ id: 201, name: 'Triage' }] },
];
const oppTag = store.tags.insert({ entity: 'opportunities', name: 'Renewal', description: null, dataTag: false });
const kaseTag = store.tags.insert({ entity: 'kases', name: 'Onsite', description: null, dataTag: false });

// Records of these tests: no names or owner unless given, dated the day the account was seeded.
const STORED = { ownerId: null, createdAt: '2026-01-01T00:00:00Z', updatedAt: '2026-01-01T00:00:00Z' };

function party(fields: Partial<PartyRec>): PartyRec {
  return addParty(store, { ...STORED, firstName: null, lastName: null, ...fields });
}

const acme = party({
  type: 'organisation',
  name: 'Acme Ltd',
  ownerId: ADMIN,
  teamId: SALES_TEAM,
  addresses: [
    {
      id: store.next(),
      type: 'Office',
      street: '1 Road',
      city: 'London',
      state: null,
      zip: 'EC1A 1BB',
      country: 'United Kingdom',
    },
  ],
  tagIds: [CUSTOMER],
  fields: [
    { id: store.next(), definitionId: VIP, value: true },
    { id: store.next(), definitionId: INDUSTRY, value: 'Software' },
    { id: store.next(), definitionId: CONTRACT_END, value: '2026-04-01' },
  ],
  createdAt: '2026-01-10T10:00:00Z',
  updatedAt: '2026-03-10T08:00:00Z',
  lastContactedAt: '2026-03-14T23:59:59Z',
});
const ada = party({
  firstName: 'Ada',
  lastName: 'Lovelace',
  jobTitle: 'Engineer',
  organisationId: acme.id,
  ownerId: SAM,
  teamId: SALES_TEAM,
  emailAddresses: [
    { id: store.next(), type: 'Work', address: 'ADA@acme.example' },
    { id: store.next(), type: 'Home', address: 'ada@home.example' },
  ],
  phoneNumbers: [{ id: store.next(), type: 'Work', number: '+44 20 7946 0000' }],
  addresses: [
    {
      id: store.next(),
      type: 'Home',
      street: null,
      city: 'Cambridge',
      state: 'Cambs',
      zip: 'CB1',
      country: 'United Kingdom',
    },
    { id: store.next(), type: 'Office', street: null, city: 'Paris', state: null, zip: '75001', country: 'France' },
  ],
  tagIds: [PROSPECT],
  fields: [{ id: store.next(), definitionId: CUSTOMER_SINCE, value: '2020-05-01' }],
  createdAt: '2025-12-01T09:00:00Z',
  updatedAt: '2026-03-15T07:00:00Z',
  lastContactedAt: '2026-02-01T12:00:00Z',
});
const bob = party({ firstName: 'Bob', createdAt: '2026-03-15T00:00:00Z', updatedAt: '2026-03-15T00:00:00Z' });
const globex = party({
  type: 'organisation',
  name: 'Globex',
  ownerId: SAM,
  fields: [{ id: store.next(), definitionId: VIP, value: false }],
  createdAt: '2025-06-01T00:00:00Z',
  updatedAt: '2025-06-01T00:00:00Z',
});
const carl = party({
  firstName: 'carl',
  lastName: 'Sagan',
  organisationId: globex.id,
  createdAt: '2026-03-20T00:00:00Z',
});

function opportunity(fields: Partial<OpportunityRec>): OpportunityRec {
  return addOpportunity(store, acme.id, {
    ...STORED,
    milestoneId: milestoneId('New'),
    value: null,
    expectedCloseOn: null,
    probability: 10,
    updatedAt: '2026-03-14T00:00:00Z',
    ...fields,
  });
}

// New is stale after 14 days, Proposal after 21.
const staleDeal = opportunity({
  name: 'Website rebuild',
  ownerId: ADMIN,
  value: { amount: 1500, currency: 'GBP' },
  updatedAt: '2026-02-28T12:00:00Z',
  expectedCloseOn: '2026-03-20',
  tagIds: [oppTag.id],
  fields: [{ id: store.next(), definitionId: SIGNED, value: true }],
});
const wonDeal = opportunity({
  name: 'Support contract',
  milestoneId: milestoneId('Won'),
  probability: 100,
  ownerId: SAM,
  value: { amount: 2500.5, currency: 'EUR' },
  closedOn: '2026-03-01',
  updatedAt: '2025-01-01T00:00:00Z',
});
const lostDeal = opportunity({
  name: 'Hardware',
  milestoneId: milestoneId('Lost'),
  probability: 0,
  lostReason: 'Price too high',
  closedOn: '2026-02-10',
});
const freshDeal = opportunity({
  name: 'Training',
  milestoneId: milestoneId('Proposal'),
  probability: 50,
  ownerId: ADMIN,
  value: { amount: 300, currency: 'gbp' },
  updatedAt: '2026-02-22T00:00:00Z',
});
const partnerDeal = opportunity({
  name: 'Reseller',
  milestoneId: intro.id,
  probability: 5,
  updatedAt: '2020-01-01T00:00:00Z',
});

function kase(fields: Partial<KaseRec>): KaseRec {
  return addKase(store, acme.id, { ...STORED, name: 'Project', ...fields });
}

const rollout = kase({
  name: 'Rollout',
  ownerId: ADMIN,
  stageId: 102,
  startOn: '2026-03-10',
  tagIds: [kaseTag.id],
  fields: [{ id: store.next(), definitionId: PRIORITY, value: 'High' }],
});
const audit = kase({
  name: 'Audit',
  status: 'CLOSED',
  ownerId: SAM,
  closedOn: '2026-03-01',
  stageId: 201,
  startOn: '2026-01-05',
});
const migration = kase({ name: 'migration', expectedCloseOn: '2026-04-30' });

const env: FilterEnv = { store, callerId: ADMIN, today: TODAY, boards: BOARDS };

function ids(entity: FilterEntity, conditions: unknown[], orderBy?: unknown[]): number[] {
  const filter = compileFilter(entity, parseFilter({ conditions, ...(orderBy ? { orderBy } : {}) }), env);
  const records: Array<{ id: number }> =
    entity === 'parties'
      ? store.parties.all()
      : entity === 'opportunities'
        ? store.opportunities.all()
        : store.kases.all();
  const walked = filter.sort((records as never[]).filter((r) => filter.matches(r))).map((r: { id: number }) => r.id);
  // Ids the filter names (the sandbox looks those up instead of walking): the same answer.
  if (filter.ids !== null) {
    const named = records.filter((r) => filter.ids?.includes(r.id));
    expect(filter.sort((named as never[]).filter((r) => filter.matches(r))).map((r: { id: number }) => r.id)).toEqual(
      walked,
    );
  }
  return walked;
}

type Case = [string, unknown[], number[]];
const c = (field: string, operator: string, value: unknown): unknown => ({ field, operator, value });

describe('party fields', () => {
  const cases: Case[] = [
    ['no conditions: every party, by id', [], [acme.id, ada.id, bob.id, globex.id, carl.id]],
    ['id is', [c('id', 'is', ada.id)], [ada.id]],
    ['id is greater than', [c('id', 'is greater than', globex.id)], [carl.id]],
    ['id is less than', [c('id', 'is less than', ada.id)], [acme.id]],
    [
      'ids by an orGroup (a read by id), one not in the account',
      [{ orGroup: [c('id', 'is', carl.id), c('id', 'is', ada.id), c('id', 'is', 999_999)] }],
      [ada.id, carl.id],
    ],
    ['an id and a name that is not its own', [c('id', 'is', ada.id), c('name', 'is', 'bob')], []],
    ['an orGroup of an id or a name', [{ orGroup: [c('id', 'is', ada.id), c('name', 'is', 'bob')] }], [ada.id, bob.id]],
    ['person name is "first last", any case', [c('name', 'is', 'ada lovelace')], [ada.id]],
    ['person with first name only', [c('name', 'is', 'BOB')], [bob.id]],
    ['organisation name starts with', [c('name', 'starts with', 'ac')], [acme.id]],
    ['name ends with', [c('name', 'ends with', 'SAGAN')], [carl.id]],
    ['name contains', [c('name', 'contains', 'O')], [ada.id, bob.id, globex.id]],
    ['name is not', [c('name', 'is not', 'globex')], [acme.id, ada.id, bob.id, carl.id]],
    ['jobTitle is', [c('jobTitle', 'is', 'engineer')], [ada.id]],
    [
      'jobTitle is not passes records without one',
      [c('jobTitle', 'is not', 'Engineer')],
      [acme.id, bob.id, globex.id, carl.id],
    ],
    ['email matches any of the addresses', [c('email', 'is', 'ada@home.example')], [ada.id]],
    ['email compared case-insensitively', [c('email', 'is', 'ada@ACME.example')], [ada.id]],
    ['email ends with', [c('email', 'ends with', '@acme.example')], [ada.id]],
    [
      'email is not: none of the addresses',
      [c('email', 'is not', 'ada@home.example')],
      [acme.id, bob.id, globex.id, carl.id],
    ],
    ['phone contains', [c('phone', 'contains', '7946')], [ada.id]],
    ['phone compared on digits when the value has digits', [c('phone', 'is', '+44 (20) 7946-0000')], [ada.id]],
    ['phone starts with digits across spaces', [c('phone', 'starts with', '44207')], [ada.id]],
    ['city of any address', [c('city', 'is', 'paris')], [ada.id]],
    ['zip starts with', [c('zip', 'starts with', 'ec1a')], [acme.id]],
    ['state is', [c('state', 'is', 'Cambs')], [ada.id]],
    ['country is', [c('country', 'is', 'united kingdom')], [acme.id, ada.id]],
    ['type is', [c('type', 'is', 'organisation')], [acme.id, globex.id]],
    ['tag by name', [c('tag', 'is', 'customer')], [acme.id]],
    ['tag by id', [c('tag', 'is', PROSPECT)], [ada.id]],
    ['tag by unknown name matches nothing', [c('tag', 'is', 'Nope')], []],
    ['tag is not', [c('tag', 'is not', 'Customer')], [ada.id, bob.id, globex.id, carl.id]],
    ['tag name contains', [c('tag', 'contains', 'spec')], [ada.id]],
    ['owner by id', [c('owner', 'is', SAM)], [ada.id, globex.id]],
    ['team by id', [c('team', 'is', SALES_TEAM)], [acme.id, ada.id]],
    ['hasEmailAddress', [c('hasEmailAddress', 'is', true)], [ada.id]],
    ['hasPhoneNumber is false', [c('hasPhoneNumber', 'is', false)], [acme.id, bob.id, globex.id, carl.id]],
    ['hasAddress', [c('hasAddress', 'is', true)], [acme.id, ada.id]],
    ['hasPeople: organisations with a person', [c('hasPeople', 'is', true)], [acme.id, globex.id]],
    ['hasPeople is not true', [c('hasPeople', 'is not', true)], [ada.id, bob.id, carl.id]],
    ['hasTags', [c('hasTags', 'is', true)], [acme.id, ada.id]],
    ['addedOn is: the date part of the timestamp', [c('addedOn', 'is', '2026-01-10')], [acme.id]],
    ['addedOn is after', [c('addedOn', 'is after', '2026-03-14')], [bob.id, carl.id]],
    ['updatedOn is before', [c('updatedOn', 'is before', '2026-01-01')], [globex.id]],
    ['lastContactedOn is within last 1 day', [c('lastContactedOn', 'is within last', 1)], [acme.id]],
    ['lastContactedOn is older than 30 days', [c('lastContactedOn', 'is older than', 30)], [ada.id]],
    ['addedOn is within last 0 days: today only', [c('addedOn', 'is within last', 0)], [bob.id]],
    ['addedOn is within next 5 days', [c('addedOn', 'is within next', 5)], [bob.id, carl.id]],
    [
      'addedOn is not a date: records without the date count',
      [c('lastContactedOn', 'is not', '2026-03-14')],
      [ada.id, bob.id, globex.id, carl.id],
    ],
    ['custom boolean true', [c(`custom:${VIP}`, 'is', true)], [acme.id]],
    ['custom boolean false includes unset', [c(`custom:${VIP}`, 'is', false)], [ada.id, bob.id, globex.id, carl.id]],
    ['custom list value', [c(`custom:${INDUSTRY}`, 'is', 'software')], [acme.id]],
    ['custom date before', [c(`custom:${CUSTOMER_SINCE}`, 'is before', '2021-01-01')], [ada.id]],
    ['custom date of a data tag, within next', [c(`custom:${CONTRACT_END}`, 'is within next', 30)], [acme.id]],
    ['org.name of a person', [c('org.name', 'is', 'Acme Ltd')], [ada.id]],
    [
      'org.name is not: no organisation counts as not',
      [c('org.name', 'is not', 'Acme Ltd')],
      [acme.id, bob.id, globex.id, carl.id],
    ],
    ['org.tag', [c('org.tag', 'is', CUSTOMER)], [ada.id]],
    ['org.custom', [c(`org.custom:${VIP}`, 'is', false)], [carl.id]],
    ['all of the conditions', [c('type', 'is', 'person'), c('hasEmailAddress', 'is', false)], [bob.id, carl.id]],
    [
      'an orGroup is any of its conditions',
      [{ orGroup: [c('city', 'is', 'London'), c('name', 'is', 'Bob')] }],
      [acme.id, bob.id],
    ],
    [
      'an orGroup combined with a plain condition',
      [
        c('type', 'is', 'person'),
        { orGroup: [c('city', 'is', 'London'), c('name', 'starts with', 'b'), c('org.name', 'is', 'Globex')] },
      ],
      [bob.id, carl.id],
    ],
  ];
  it.each(cases)('%s', (_label, conditions, expected) => {
    expect(ids('parties', conditions)).toEqual(expected);
  });
});

describe('opportunity fields', () => {
  const cases: Case[] = [
    ['status OPEN', [c('status', 'is', 'open')], [staleDeal.id, freshDeal.id, partnerDeal.id]],
    ['status WON: complete at 100 %', [c('status', 'is', 'WON')], [wonDeal.id]],
    ['status LOST: complete below 100 %', [c('status', 'is', 'LOST')], [lostDeal.id]],
    ['milestone by name', [c('milestone', 'is', 'proposal')], [freshDeal.id]],
    ['lostReason contains', [c('lostReason', 'contains', 'price')], [lostDeal.id]],
    ['currency is, any case', [c('currency', 'is', 'GBP')], [staleDeal.id, freshDeal.id]],
    ['expectedValue is, compared as a number', [c('expectedValue', 'is', '1500.00')], [staleDeal.id]],
    ['expectedValue starts with', [c('expectedValue', 'starts with', '2500')], [wonDeal.id]],
    ['expectedValue text operators are not rewritten as numbers', [c('expectedValue', 'starts with', '15.')], []],
    [
      'expectedValue is not passes deals without a value',
      [c('expectedValue', 'is not', '1500')],
      [wonDeal.id, lostDeal.id, freshDeal.id, partnerDeal.id],
    ],
    ['pipeline by name', [c('pipeline', 'is', 'partners')], [partnerDeal.id]],
    ['pipeline by id', [c('pipeline', 'is', partners.id)], [partnerDeal.id]],
    ['pipeline is not', [c('pipeline', 'is not', 'Sales')], [partnerDeal.id]],
    ['probability is greater than', [c('probability', 'is greater than', 10)], [wonDeal.id, freshDeal.id]],
    ['tag by name', [c('tag', 'is', 'renewal')], [staleDeal.id]],
    ['owner', [c('owner', 'is', SAM)], [wonDeal.id]],
    ['isOpen false', [c('isOpen', 'is', false)], [wonDeal.id, lostDeal.id]],
    ['isStale: open and older than daysUntilStale', [c('isStale', 'is', true)], [staleDeal.id]],
    ['isOwnedByMe: owner is the caller', [c('isOwnedByMe', 'is', true)], [staleDeal.id, freshDeal.id]],
    ['hasTags', [c('hasTags', 'is', false)], [wonDeal.id, lostDeal.id, freshDeal.id, partnerDeal.id]],
    ['closedOn is after', [c('closedOn', 'is after', '2026-02-10')], [wonDeal.id]],
    ['closedOn is', [c('closedOn', 'is', '2026-02-10')], [lostDeal.id]],
    ['expectedCloseOn within next 7 days', [c('expectedCloseOn', 'is within next', 7)], [staleDeal.id]],
    ['updatedOn older than 365 days', [c('updatedOn', 'is older than', 365)], [wonDeal.id, partnerDeal.id]],
    ['custom boolean', [c(`custom:${SIGNED}`, 'is', true)], [staleDeal.id]],
  ];
  it.each(cases)('%s', (_label, conditions, expected) => {
    expect(ids('opportunities', conditions)).toEqual(expected);
  });
});

describe('project fields', () => {
  const cases: Case[] = [
    ['status', [c('status', 'is', 'closed')], [audit.id]],
    ['isOpen', [c('isOpen', 'is', true)], [rollout.id, migration.id]],
    ['name is, any case', [c('name', 'is', 'Migration')], [migration.id]],
    ['stage by id', [c('stage', 'is', 102)], [rollout.id]],
    ['stage by name', [c('stage', 'is', 'triage')], [audit.id]],
    ['stage name contains', [c('stage', 'contains', 'progress')], [rollout.id]],
    ['board by name: the board holding the stage', [c('board', 'is', 'Projects')], [rollout.id]],
    ['board by id', [c('board', 'is', 200)], [audit.id]],
    ['board is not passes projects without a stage', [c('board', 'is not', 'Projects')], [audit.id, migration.id]],
    ['tag', [c('tag', 'is', 'onsite')], [rollout.id]],
    ['isOwnedByMe', [c('isOwnedByMe', 'is', true)], [rollout.id]],
    ['owner', [c('owner', 'is', SAM)], [audit.id]],
    ['startOn within last 7 days', [c('startOn', 'is within last', 7)], [rollout.id]],
    ['closedOn is before', [c('closedOn', 'is before', '2026-03-02')], [audit.id]],
    ['expectedCloseOn is after', [c('expectedCloseOn', 'is after', '2026-04-01')], [migration.id]],
    ['custom list', [c(`custom:${PRIORITY}`, 'is', 'high')], [rollout.id]],
  ];
  it.each(cases)('%s', (_label, conditions, expected) => {
    expect(ids('kases', conditions)).toEqual(expected);
  });
});

describe('orderBy', () => {
  it.each<[string, FilterEntity, unknown[], number[]]>([
    [
      'name ascending, case-insensitive',
      'parties',
      [{ field: 'name', direction: 'ascending' }],
      [acme.id, ada.id, bob.id, carl.id, globex.id],
    ],
    [
      'name descending',
      'parties',
      [{ field: 'name', direction: 'descending' }],
      [globex.id, carl.id, bob.id, ada.id, acme.id],
    ],
    [
      'direction defaults to ascending',
      'parties',
      [{ field: 'addedOn' }],
      [globex.id, ada.id, acme.id, bob.id, carl.id],
    ],
    // Admin was seeded before Sam, so has the smaller id.
    [
      'owner ascending: no value last, ties by id',
      'parties',
      [{ field: 'owner' }],
      [acme.id, ada.id, globex.id, bob.id, carl.id],
    ],
    [
      'owner descending: no value still last',
      'parties',
      [{ field: 'owner', direction: 'descending' }],
      [ada.id, globex.id, acme.id, bob.id, carl.id],
    ],
    [
      'second key breaks ties',
      'parties',
      [{ field: 'type' }, { field: 'name', direction: 'descending' }],
      [globex.id, acme.id, carl.id, bob.id, ada.id],
    ],
    [
      'expectedValue as a number',
      'opportunities',
      [{ field: 'expectedValue', direction: 'descending' }],
      [wonDeal.id, staleDeal.id, freshDeal.id, lostDeal.id, partnerDeal.id],
    ],
    [
      'opportunity status then probability',
      'opportunities',
      [{ field: 'status' }, { field: 'probability', direction: 'descending' }],
      [lostDeal.id, freshDeal.id, staleDeal.id, partnerDeal.id, wonDeal.id],
    ],
    ['project stage by its name', 'kases', [{ field: 'stage' }], [rollout.id, audit.id, migration.id]],
    [
      'project board by its name, descending',
      'kases',
      [{ field: 'board', direction: 'descending' }],
      [audit.id, rollout.id, migration.id],
    ],
    [
      'email: the first address',
      'parties',
      [{ field: 'email', direction: 'descending' }],
      [ada.id, acme.id, bob.id, globex.id, carl.id],
    ],
  ])('%s', (_label, entity, orderBy, expected) => {
    expect(ids(entity, [], orderBy)).toEqual(expected);
  });

  it('compare() agrees with sort()', () => {
    const filter = compileFilter(
      'parties',
      parseFilter({ conditions: [], orderBy: [{ field: 'name', direction: 'descending' }] }),
      env,
    );
    const sorted = [...store.parties.all()].sort(filter.compare).map((p) => p.id);
    expect(sorted).toEqual(filter.sort(store.parties.all()).map((p) => p.id));
    expect(sorted[0]).toBe(globex.id);
  });
});

describe('rejected filters name the condition', () => {
  const cases: Array<[string, FilterEntity, unknown, string, RegExp]> = [
    [
      'unknown field',
      'parties',
      { conditions: [c('id', 'is', 1), c('nmae', 'is', 'x')] },
      'conditions[1]',
      /unknown field "nmae" for parties; fields: id, name,.*org\.tag/,
    ],
    [
      'party-only field on opportunities',
      'opportunities',
      { conditions: [c('email', 'is', 'x')] },
      'conditions[0]',
      /unknown field "email" for opportunities/,
    ],
    [
      'org fields only on parties',
      'kases',
      { conditions: [c('org.name', 'is', 'x')] },
      'conditions[0]',
      /unknown field "org.name"/,
    ],
    [
      'unknown org field',
      'parties',
      { conditions: [c('org.city', 'is', 'x')] },
      'conditions[0]',
      /unknown organisation field "org.city"/,
    ],
    [
      'unknown operator',
      'parties',
      { conditions: [c('name', 'equals', 'x')] },
      'conditions[0]',
      /unknown operator "equals"/,
    ],
    [
      'string operator on a number',
      'parties',
      { conditions: [c('id', 'contains', '1')] },
      'conditions[0]',
      /"contains" does not apply to field "id" \(a number field\); it takes: is, is not, is greater than, is less than/,
    ],
    [
      'number operator on a string',
      'parties',
      { conditions: [c('name', 'is greater than', 3)] },
      'conditions[0]',
      /does not apply to field "name"/,
    ],
    [
      'date operator on a boolean',
      'opportunities',
      { conditions: [c('isOpen', 'is after', '2026-01-01')] },
      'conditions[0]',
      /does not apply to field "isOpen" \(a boolean field\)/,
    ],
    [
      'greater than on a tag',
      'parties',
      { conditions: [c('tag', 'is greater than', 3)] },
      'conditions[0]',
      /does not apply to field "tag"/,
    ],
    [
      'number for a string field',
      'parties',
      { conditions: [c('name', 'is', 5)] },
      'conditions[0]',
      /operator "is" on field "name" takes a string, got 5 \(a number\)/,
    ],
    [
      'string for a number field',
      'opportunities',
      { conditions: [c('probability', 'is greater than', '50')] },
      'conditions[0]',
      /takes a number, got "50" \(a string\)/,
    ],
    [
      'number for expectedValue (a string field)',
      'opportunities',
      { conditions: [c('expectedValue', 'is', 1500)] },
      'conditions[0]',
      /takes a string/,
    ],
    [
      'string for a boolean',
      'parties',
      { conditions: [c('hasTags', 'is', 'true')] },
      'conditions[0]',
      /takes true or false/,
    ],
    ['null value', 'parties', { conditions: [c('owner', 'is', null)] }, 'conditions[0]', /takes a number, got null/],
    [
      'timestamp for a date',
      'parties',
      { conditions: [c('addedOn', 'is', '2026-01-10T10:00:00Z')] },
      'conditions[0]',
      /a date written YYYY-MM-DD/,
    ],
    [
      'impossible date',
      'parties',
      { conditions: [c('addedOn', 'is before', '2026-02-30')] },
      'conditions[0]',
      /YYYY-MM-DD/,
    ],
    [
      'negative days',
      'parties',
      { conditions: [c('addedOn', 'is within last', -1)] },
      'conditions[0]',
      /whole number of days/,
    ],
    [
      'fractional days',
      'parties',
      { conditions: [c('addedOn', 'is older than', 1.5)] },
      'conditions[0]',
      /whole number of days/,
    ],
    [
      'days as a string',
      'parties',
      { conditions: [c('addedOn', 'is older than', '3')] },
      'conditions[0]',
      /whole number of days/,
    ],
    [
      'tag as a boolean',
      'parties',
      { conditions: [c('tag', 'is', true)] },
      'conditions[0]',
      /an id \(number\) or a name \(string\)/,
    ],
    [
      'tag id with a text operator',
      'parties',
      { conditions: [c('tag', 'contains', 3)] },
      'conditions[0]',
      /takes a string/,
    ],
    [
      'inside an orGroup',
      'parties',
      { conditions: [{ orGroup: [c('name', 'is', 'x'), c('city', 'is', 1)] }] },
      'conditions[0].orGroup[1]',
      /field "city" takes a string/,
    ],
    [
      'custom field without definition',
      'parties',
      { conditions: [c('custom:999999', 'is', 'x')] },
      'conditions[0]',
      /no custom field definition with id 999999/,
    ],
    [
      'custom field of another entity',
      'parties',
      { conditions: [c(`custom:${PRIORITY}`, 'is', 'High')] },
      'conditions[0]',
      /defined for kases, not for parties/,
    ],
    [
      'custom field id not a number',
      'parties',
      { conditions: [c('custom:Industry', 'is', 'x')] },
      'conditions[0]',
      /numeric id/,
    ],
    [
      'custom date field with a string operator',
      'parties',
      { conditions: [c(`custom:${CUSTOMER_SINCE}`, 'contains', '2020')] },
      'conditions[0]',
      /a date field/,
    ],
    [
      'custom boolean with a string value',
      'parties',
      { conditions: [c(`custom:${VIP}`, 'is', 'yes')] },
      'conditions[0]',
      /true or false/,
    ],
    [
      'org.custom of another entity',
      'parties',
      { conditions: [c(`org.custom:${SIGNED}`, 'is', true)] },
      'conditions[0]',
      /defined for opportunities/,
    ],
    [
      'unknown orderBy field',
      'kases',
      { conditions: [], orderBy: [{ field: 'color' }] },
      'orderBy[0]',
      /unknown field "color" for kases/,
    ],
    [
      'orderBy a tag',
      'parties',
      { conditions: [], orderBy: [{ field: 'id' }, { field: 'tag' }] },
      'orderBy[1]',
      /cannot be ordered by "tag"/,
    ],
  ];
  it.each(cases)('%s', (_label, entity, raw, path, message) => {
    let caught: unknown;
    try {
      compileFilter(entity, parseFilter(raw), env);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(FilterError);
    expect((caught as FilterError).path).toBe(path);
    expect((caught as FilterError).problem).toMatch(message);
  });
});

describe('compiling once', () => {
  it('looks names and definitions up on compile, not per record', () => {
    const tagsRead = vi.spyOn(store.tags, 'all');
    const definitionsRead = vi.spyOn(store.fieldDefinitions, 'get');
    const filter = compileFilter(
      'parties',
      parseFilter({
        conditions: [
          c('tag', 'is', 'Customer'),
          { orGroup: [c(`custom:${VIP}`, 'is', true), c('tag', 'contains', 'pro')] },
        ],
      }),
      env,
    );
    const many = Array.from({ length: 500 }, (_, i) => ({ ...acme, id: i + 1 }));
    expect(many.filter((p) => filter.matches(p))).toHaveLength(500);
    expect(tagsRead).toHaveBeenCalledTimes(2);
    expect(definitionsRead).toHaveBeenCalledTimes(1);
    tagsRead.mockRestore();
    definitionsRead.mockRestore();
  });
});
