import { describe, expect, it } from 'vitest';
import { addParty } from '../../test/helpers/records.ts';
import { seededRandom } from '../util/seeded-random.ts';
import type { PartyRec } from './model.ts';
import { partyMatches } from './routes/record-search.ts';
import { seedAccount } from './seed.ts';
import { type ChangeRecord, Store } from './store.ts';
import { compileFilter, parseFilter } from './filters/index.ts';

/** A store with the seeded account (its users) and no parties. */
function emptyStore(): Store {
  const store = new Store();
  seedAccount(store, new Date('2026-01-01T00:00:00Z'));
  for (const party of store.parties.all()) store.parties.delete(party.id);
  return store;
}

// Few distinct values, so that names, addresses and numbers are shared and found more than once.
const WORDS = [
  'Acme',
  'acme',
  'Ann',
  'Anna',
  'Annabel',
  'Bob',
  'Smith',
  'Smithson',
  'Çelik',
  'Grün',
  'Øst',
  'de la Cruz',
];
const DOMAINS = ['acme.example', 'mail.example', 'ACME.example'];
const ZIPS = ['SW1A 1AA', 'sw1a1aa', 'EC1 2BB', '10115', null];
const PHONES = ['+44 (0)20 7946-0018', '020 7946 0018', '555-0100', '0049 30 1234567', '12'];

function pick<T>(next: () => number, list: readonly T[]): T {
  return list[Math.floor(next() * list.length)] as T;
}

function values(next: () => number, store: Store): Partial<PartyRec> {
  const organisations = store.parties.all().filter((p) => p.type === 'organisation');
  const some = <T>(make: () => T): T[] => Array.from({ length: Math.floor(next() * 3) }, make);
  return {
    firstName: next() < 0.8 ? pick(next, WORDS) : null,
    lastName: next() < 0.8 ? `${pick(next, WORDS)}${next() < 0.3 ? ' Jr' : ''}` : null,
    name: `${pick(next, WORDS)} ${pick(next, ['Ltd', 'GmbH', ''])}`.trim(),
    organisationId: organisations.length > 0 && next() < 0.6 ? pick(next, organisations).id : null,
    emailAddresses: some(() => ({
      id: 0,
      type: null,
      address: `${pick(next, WORDS).replace(/ /g, '')}.${Math.floor(next() * 5)}@${pick(next, DOMAINS)}`,
    })),
    phoneNumbers: some(() => ({ id: 0, type: null, number: pick(next, PHONES) })),
    addresses: some(() => ({
      id: 0,
      type: null,
      street: null,
      city: null,
      state: null,
      country: null,
      zip: pick(next, ZIPS),
    })),
  } as Partial<PartyRec>;
}

const QUERIES = [
  'acme',
  'ACME Ltd',
  'ann',
  'Anna Smith',
  'smith',
  'mith',
  'celik',
  'Çelik',
  'grün',
  'de la',
  'acme.0@acme.example',
  'ann.1@mail.example',
  '@acme.example',
  'acme.example',
  'sw1a 1aa',
  'SW1A1AA',
  '10115',
  '7946 0018',
  '79460018',
  '0100',
  '555',
  '+49 30',
  'zzzz',
  'an',
  ' ',
];

/** Structured filters whose conditions on a name, an e-mail address or a phone number the index narrows by. */
const FILTERS: unknown[][] = [
  [{ field: 'name', operator: 'contains', value: 'acme' }],
  [{ field: 'name', operator: 'is', value: 'Anna Smith' }],
  [{ field: 'name', operator: 'starts with', value: 'Çeli' }],
  [{ field: 'name', operator: 'ends with', value: 'son Jr' }],
  [{ field: 'name', operator: 'is not', value: 'acme' }],
  [{ field: 'email', operator: 'contains', value: '@ACME.example' }],
  [{ field: 'email', operator: 'is', value: 'ann.1@mail.example' }],
  [{ field: 'phone', operator: 'contains', value: '7946 0018' }],
  [{ field: 'phone', operator: 'is', value: '555-0100' }],
  [{ field: 'phone', operator: 'contains', value: '12' }],
  [
    { field: 'name', operator: 'contains', value: 'smith' },
    { field: 'email', operator: 'contains', value: 'mail.example' },
  ],
  [
    {
      orGroup: [
        { field: 'name', operator: 'contains', value: 'grün' },
        { field: 'email', operator: 'contains', value: 'acme.0' },
      ],
    },
  ],
];

/** What the index answers, beside what a walk over every party answers. */
function answers(store: Store): unknown {
  const all = store.parties.all();
  const env = { store, callerId: 0, today: '2026-01-01', boards: [] };
  const filters = FILTERS.map((conditions) => compileFilter('parties', parseFilter({ conditions }), env));
  const organisations = [
    ...new Set(all.filter((p) => p.type === 'organisation').map((p) => (p.name ?? '').toLowerCase())),
  ];
  const walk = {
    named: organisations.map(
      (name) => all.find((p) => p.type === 'organisation' && (p.name ?? '').toLowerCase() === name)?.id,
    ),
    employees: all.map((o) => all.filter((p) => p.organisationId === o.id).map((p) => p.id)),
    search: QUERIES.map((q) => all.filter((p) => partyMatches(p, q)).map((p) => p.id)),
    filters: filters.map((filter) => all.filter((p) => filter.matches(p)).map((p) => p.id)),
  };
  const index = store.partyIndex;
  const indexed = {
    named: organisations.map((name) => index.organisationNamed(name)?.id),
    employees: all.map((o) => index.employees(o.id).map((p) => p.id)),
    search: QUERIES.map((q) =>
      [...(index.searchCandidates(q) ?? store.parties.values())].filter((p) => partyMatches(p, q)).map((p) => p.id),
    ),
    filters: filters.map((filter) =>
      [...(index.filterCandidates(filter.texts) ?? store.parties.values())]
        .filter((p) => filter.matches(p))
        .map((p) => p.id),
    ),
  };
  return { walk, indexed };
}

function expectSame(store: Store, when: string): void {
  const { walk, indexed } = answers(store) as { walk: unknown; indexed: unknown };
  expect(indexed, when).toEqual(walk);
}

/** One random write, through the store's write functions (as the routes make them). */
function randomWrite(next: () => number, store: Store): void {
  const parties = store.parties.all();
  const roll = next();
  if (parties.length < 5 || roll < 0.4) {
    const organisation = next() < 0.3;
    addParty(store, {
      ...values(next, store),
      type: organisation ? 'organisation' : 'person',
      ...(organisation ? { firstName: null, lastName: null, organisationId: null } : { name: null }),
    });
  } else if (roll < 0.6) {
    const party = pick(next, parties);
    const changes = values(next, store);
    store.parties.put({
      ...party,
      ...(party.type === 'organisation' ? { name: changes.name } : { ...changes, name: null }),
    } as PartyRec);
  } else if (roll < 0.75) {
    // Changed in place, then touched, as the cascade of a deleted organisation does.
    const party = pick(next, parties);
    party.emailAddresses = [
      ...party.emailAddresses,
      { id: 0, type: null, address: `${pick(next, WORDS)}@${pick(next, DOMAINS)}` },
    ];
    if (party.type === 'organisation') party.name = pick(next, WORDS);
    else party.organisationId = null;
    store.parties.touch(party);
  } else if (roll < 0.85) {
    // Changed in place after a fetch during a write.
    store.tracker.writes += 1;
    const party = store.parties.get(pick(next, parties).id) as PartyRec;
    party.phoneNumbers = [{ id: 0, type: null, number: pick(next, PHONES) }];
    store.tracker.writes -= 1;
  } else {
    const party = pick(next, parties);
    store.parties.delete(party.id);
    for (const person of store.partyIndex.employees(party.id)) {
      person.organisationId = null;
      store.parties.touch(person);
    }
  }
}

describe('the party index', () => {
  for (const seed of [1, 2, 3, 4, 5, 6]) {
    it(`gives the answers of a walk over every party after random writes, deletes, a reload and a replay (seed ${seed})`, () => {
      const next = seededRandom(seed);
      const store = emptyStore();
      store.tracker.enabled = true;
      const log: ChangeRecord[] = [];
      let snapshot: unknown = null;
      for (let step = 1; step <= 300; step++) {
        randomWrite(next, store);
        const change = store.takeChanges();
        if (change) log.push(change);
        if (step === 120) {
          snapshot = store.toJSON();
          log.length = 0;
        }
        // Asking between writes leaves the index part-synced, as a running sandbox does.
        if (step % 37 === 0) expectSame(store, `seed ${seed}, after ${step} writes`);
      }
      expectSame(store, `seed ${seed}, at the end`);

      // A restart: the snapshot loaded, then the change log replayed on top.
      const restarted = new Store();
      restarted.load(snapshot, 'state.json');
      expectSame(restarted, `seed ${seed}, snapshot loaded`);
      for (const change of log) restarted.apply(change);
      expect(restarted.parties.all()).toEqual(store.parties.all());
      expectSame(restarted, `seed ${seed}, after the replay`);

      // A reload of the whole state in place.
      restarted.load(store.toJSON(), 'state.json');
      expectSame(restarted, `seed ${seed}, reloaded`);
    });
  }

  it('narrows a search to a few candidates in a large account', () => {
    const store = emptyStore();
    for (let i = 0; i < 20_000; i++) {
      addParty(store, {
        firstName: `First${i}`,
        lastName: 'Person',
        emailAddresses: [{ id: 0, type: null, address: `person${i}@mail.example` }],
        phoneNumbers: [{ id: 0, type: null, number: `+44 20 ${String(10_000_000 + i)}` }],
      });
    }
    const count = (q: string): number => [...(store.partyIndex.searchCandidates(q) ?? store.parties.values())].length;
    expect(count('person12345@mail.example')).toBeLessThan(20);
    expect(count('10012345')).toBeLessThan(20);
    expect(count('First12345')).toBeLessThan(20);
  });

  it('keeps a posting per piece of a party, and builds itself again once most of them are stale', () => {
    const store = emptyStore();
    const party = addParty(store, {
      firstName: 'Ann',
      emailAddresses: [{ id: 0, type: null, address: 'ann@x.example' }],
    });
    const first = store.partyIndex.entries();
    for (let i = 0; i < 30_000; i++) {
      party.firstName = `Ann${i}`;
      store.parties.touch(party);
      expect(store.partyIndex.organisationNamed('nobody')).toBeUndefined();
    }
    // Every change leaves its old postings behind until the index is built again.
    expect(store.partyIndex.entries()).toBeLessThan(first * 12_000);
    expect(store.partyIndex.searchCandidates('Ann29999')).not.toBeNull();
    expect([...(store.partyIndex.searchCandidates('Ann29999') ?? [])].map((p) => p.id)).toEqual([party.id]);
  });
});
