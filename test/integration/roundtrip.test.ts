import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { normaliseExportOptions, runExport } from '../../src/export/index.ts';
import { runImport } from '../../src/load/index.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-roundtrip-'));
/** The bundled round-trip mappings: the export writes the columns they read. */
const PARTY_MAPPINGS = [
  join(ROOT, 'mappings/roundtrip-organisations.yaml'),
  join(ROOT, 'mappings/roundtrip-people.yaml'),
];
const OPPORTUNITY_MAPPINGS = [join(ROOT, 'mappings/roundtrip-opportunities.yaml')];
const boxes: TestSandbox[] = [];
afterAll(async () => {
  for (const box of boxes) await box.close();
  rmSync(dir, { recursive: true, force: true });
});

type Row = Record<string, string>;

async function exportTo(box: TestSandbox, entity: 'parties' | 'opportunities', out: string): Promise<Row[]> {
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  try {
    // --raw: the file is for the importer, not a spreadsheet, so texts stay exactly as they are.
    const mapping = entity === 'parties' ? PARTY_MAPPINGS : OPPORTUNITY_MAPPINGS;
    await runExport(normaliseExportOptions({ entity, out, raw: true, mapping, cwd: dir }), {
      client,
      account: { baseUrl: box.url, account: box.url },
    });
  } finally {
    await client.close();
  }
  return parse(readFileSync(out, 'utf8'), { bom: true, columns: true }) as Row[];
}

/** Seeds the first account: what a client can set on parties and opportunities, several of each item. */
async function seed(a: TestSandbox): Promise<void> {
  const users = (await a.v2('GET', '/users')).body.users as Array<{ id: number; username: string }>;
  const teams = (await a.v2('GET', '/teams')).body.teams as Array<{ id: number; name: string }>;
  const user = (name: string): { id: number } => ({ id: users.find((u) => u.username === name)?.id ?? -1 });
  const team = (name: string): { id: number } => ({ id: teams.find((t) => t.name === name)?.id ?? -1 });
  const post = async (party: Record<string, unknown>): Promise<number> => {
    const answer = await a.v2('POST', '/parties', { party });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
    return answer.body.party.id;
  };
  // Two organisations of one name: people and opportunities must each keep to their own.
  const acmeNorth = await post({
    type: 'organisation',
    name: 'Acme Ltd',
    about: 'Widgets, "quoted", and\nmore (north)',
    owner: user('sam'),
    team: team('Sales'),
    emailAddresses: [
      { type: 'Work', address: 'north@acme.example' },
      { type: 'Billing', address: 'pay@acme.example' },
    ],
    addresses: [
      { type: 'Office', street: '1 Market St', city: 'Leeds', zip: 'LS1 6DT', country: 'United Kingdom' },
      { type: 'Postal', street: 'PO Box 12', city: 'Leeds', country: 'United Kingdom' },
    ],
    tags: [{ name: 'customer' }],
    fields: [
      { definition: { name: 'Industry', tag: null }, value: 'Retail' },
      { definition: { name: 'Contract end', tag: 'Customer' }, value: '2027-03-31' },
      { definition: { name: 'Support level', tag: 'Customer' }, value: 'Gold' },
    ],
  });
  const acmeSouth = await post({
    type: 'organisation',
    name: 'Acme Ltd',
    about: 'South branch',
    owner: user('kim'),
    team: team('Support'),
    phoneNumbers: [{ type: 'Work', number: '+442071234567' }],
  });
  await post({
    type: 'organisation',
    name: 'Ångström Optik AB',
    websites: [
      { type: 'Work', service: 'URL', address: 'https://angstrom.example' },
      { type: 'Social', service: 'TWITTER', address: 'angstrom' },
    ],
  });
  const ada = await post({
    type: 'person',
    title: 'Dr',
    firstName: 'Ada',
    lastName: 'Lovelace',
    jobTitle: 'Head of Engineering',
    organisation: { id: acmeSouth },
    owner: user('kim'),
    team: team('Support'),
    emailAddresses: [
      { type: 'Work', address: 'ada@acme.example' },
      { type: 'Home', address: 'ada@home.example' },
      { type: 'Other', address: 'ada@old.example' },
    ],
    phoneNumbers: [
      { type: 'Work', number: '+441131234567' },
      { type: 'Mobile', number: '+447700900123' },
      { type: 'Home', number: '+441179460000' },
    ],
    addresses: [
      { type: 'Home', street: '12 Crescent', city: 'Bath', zip: 'BA1 2QH', country: 'United Kingdom' },
      { type: 'Office', street: '1 Market St', city: 'Leeds', state: 'West Yorkshire' },
    ],
    websites: [
      { type: 'Personal', service: 'URL', address: 'https://ada.example' },
      { type: 'Work', service: 'LINKED_IN', address: 'adalovelace' },
      { type: 'Social', service: 'GITHUB', address: 'ada' },
    ],
    tags: [{ name: 'vip' }, { name: 'newsletter' }],
    fields: [
      { definition: { name: 'Customer since', tag: null }, value: '2021-06-01' },
      { definition: { name: 'VIP', tag: null }, value: true },
      { definition: { name: 'Account number', tag: null }, value: 'AB-1234' },
      { definition: { name: 'Preferred language', tag: null }, value: 'English' },
      { definition: { name: 'Contract end', tag: 'Customer' }, value: '2026-12-31' },
    ],
  });
  await post({
    type: 'person',
    firstName: 'Grace',
    lastName: 'Hopper',
    about: '=1+1 is not a formula here',
    organisation: { id: acmeNorth },
    owner: user('sam'),
  });
  const milestones = (await allPages(
    a,
    `/pipelines/${(await a.v2('GET', '/pipelines')).body.pipelines[0].id}/milestones`,
    'milestones',
  )) as Array<{ id: number; name: string }>;
  const milestone = (name: string): { id: number } => ({ id: milestones.find((m) => m.name === name)?.id ?? -1 });
  const opportunity = async (body: Record<string, unknown>): Promise<void> => {
    const answer = await a.v2('POST', '/opportunities', { opportunity: body });
    expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  };
  await opportunity({
    name: 'Widgets 2027',
    description: 'Renewal',
    party: { id: acmeSouth },
    milestone: milestone('Proposal'),
    value: { amount: 12500.5, currency: 'GBP' },
    probability: 40,
    expectedCloseOn: '2027-02-01',
    durationBasis: 'MONTH',
    duration: 12,
    owner: user('kim'),
    team: team('Support'),
    tags: [{ name: 'renewal' }],
    fields: [
      { definition: { name: 'Lead source', tag: null }, value: 'Referral' },
      { definition: { name: 'Signed', tag: null }, value: false },
      { definition: { name: 'Contract start', tag: null }, value: '2027-03-01' },
    ],
  });
  await opportunity({
    name: 'Widgets 2027',
    party: { id: acmeNorth },
    milestone: milestone('Lost'),
    value: { amount: 800, currency: 'EUR' },
    lostReason: 'Price',
    closedOn: '2026-10-01',
    owner: user('sam'),
  });
  await opportunity({ name: 'Engine study', party: { id: ada }, milestone: milestone('New'), owner: user('admin') });
}

/** Ids, times and derived values are each account's own. */
const OWN = new Set([
  'id',
  'createdAt',
  'updatedAt',
  'lastContactedAt',
  'lastStageChangedAt',
  'lastOpenMilestone',
  'pictureURL',
  'tagId',
]);

function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [key, inner] of Object.entries(value)) if (!OWN.has(key)) out[key] = comparable(inner);
  return out;
}

/** The records of an account as a client sees them, links named by what they link to (not by id). */
async function snapshot(box: TestSandbox): Promise<{ parties: unknown[]; opportunities: unknown[] }> {
  const parties = (await allPages(box, '/parties?embed=tags,fields', 'parties')) as Array<Record<string, any>>;
  const signature = new Map(
    parties.map((p) => [p.id, `${p.type}:${p.name ?? `${p.firstName} ${p.lastName}`}:${p.about ?? ''}`]),
  );
  const byTag = (list: Array<{ name: string }> | undefined): string[] => (list ?? []).map((t) => t.name).sort();
  const shaped = parties.map((p) =>
    comparable({ ...p, organisation: p.organisation ? signature.get(p.organisation.id) : null, tags: byTag(p.tags) }),
  );
  const opportunities = (
    (await allPages(box, '/opportunities?embed=tags,fields', 'opportunities')) as Array<Record<string, any>>
  ).map((o) => comparable({ ...o, party: signature.get(o.party?.id), tags: byTag(o.tags) }));
  const order = (items: unknown[]): unknown[] =>
    items
      .map((item) => JSON.stringify(item))
      .sort()
      .map((text) => JSON.parse(text));
  return { parties: order(shaped), opportunities: order(opportunities) };
}

describe('round trip: export from one account, import into another', () => {
  it('every party and opportunity is the same in the second account, on everything a client can set', async () => {
    const a = await startTestSandbox();
    const b = await startTestSandbox();
    boxes.push(a, b);
    await seed(a);

    const parties = await exportTo(a, 'parties', join(dir, 'parties.csv'));
    const opportunities = await exportTo(a, 'opportunities', join(dir, 'opportunities.csv'));
    // Every item is in the file with its type, not only the first.
    const ada = parties.find((r) => r.lastName === 'Lovelace');
    expect(JSON.parse(ada?.phoneNumbers ?? '[]')).toEqual([
      { type: 'Work', number: '+441131234567' },
      { type: 'Mobile', number: '+447700900123' },
      { type: 'Home', number: '+441179460000' },
    ]);
    expect(ada?.customFields).toContain('"definition":"Contract end","tag":"Customer"');
    expect(opportunities.map((o) => o.partyId).every((id) => /^\d+$/.test(id ?? ''))).toBe(true);

    writeFileSync(
      join(dir, 'plan.yaml'),
      [
        'version: 1',
        'steps:',
        `  - { name: organisations, mapping: ${PARTY_MAPPINGS[0]}, input: parties.csv }`,
        `  - { name: people, mapping: ${PARTY_MAPPINGS[1]}, input: parties.csv }`,
        `  - { name: opportunities, mapping: ${OPPORTUNITY_MAPPINGS[0]}, input: opportunities.csv }`,
        '',
      ].join('\n'),
    );
    const client = new CrmClient({ baseUrl: b.url, auth: b.token });
    const run = () =>
      runImport(
        { source: { kind: 'plan', planFile: join(dir, 'plan.yaml') }, stateDir: join(dir, 'state') },
        { client, account: { baseUrl: b.url, account: b.url } },
      );
    const summary = await run();
    expect(summary.stopped).toBeNull();
    expect(summary.steps.map((s) => s.rejected)).toEqual([0, 0, 0]);
    expect(summary.steps.map((s) => s.created)).toEqual([3, 2, 3]);
    // Run again: every row is as it was written, lists and "no team" included, so nothing is sent.
    const again = await run();
    await client.close();
    expect(again.steps.map((s) => [s.created, s.updated, s.unchanged])).toEqual([
      [0, 0, 3],
      [0, 0, 2],
      [0, 0, 3],
    ]);

    const before = await snapshot(a);
    const after = await snapshot(b);
    expect(after.parties).toEqual(before.parties);
    expect(after.opportunities).toEqual(before.opportunities);
    // The same-named organisations kept their own people and opportunities.
    const grace = (after.parties as Array<Record<string, unknown>>).find((p) => p.lastName === 'Hopper');
    expect(grace?.organisation).toMatch(/\(north\)$/);

    // And the second account exports the same file, but for its own ids and times.
    const exportedAgain = await exportTo(b, 'parties', join(dir, 'parties-b.csv'));
    // Tags come back in any order (a data tag is added with its first field).
    const strip = (rows: Row[]): Row[] =>
      rows
        .map(({ id: _id, organisationId: _org, ...rest }) => ({
          ...rest,
          tags: (rest.tags ?? '').split(';').sort().join(';'),
        }))
        .sort((x, y) => JSON.stringify(x).localeCompare(JSON.stringify(y)));
    expect(strip(exportedAgain)).toEqual(strip(parties));
    expect(exportedAgain.find((r) => r.lastName === 'Hopper')?.about).toBe('=1+1 is not a formula here');
  });
});

describe('round-trip mappings into an account that lacks a user or a team', () => {
  it('write the record for the importing user and without the team, and do not reject it', async () => {
    const c = await startTestSandbox();
    boxes.push(c);
    const header =
      'id,type,name,title,firstName,lastName,jobTitle,about,organisationId,owner,team,emailAddresses,phoneNumbers,websites,addresses,tags,customFields';
    writeFileSync(
      join(dir, 'strangers.csv'),
      `${header}\n7,person,,,Ada,Lovelace,,,,Jo Smith,Marketing,,,,,,\n8,person,,,Alan,Turing,,,,kim@sandbox.example,Support,,,,,,\n`,
    );
    writeFileSync(
      join(dir, 'strangers.yaml'),
      `version: 1\nsteps:\n  - { name: organisations, mapping: ${PARTY_MAPPINGS[0]}, input: strangers.csv }\n  - { name: people, mapping: ${PARTY_MAPPINGS[1]}, input: strangers.csv }\n`,
    );
    const client = new CrmClient({ baseUrl: c.url, auth: c.token });
    const summary = await runImport(
      { source: { kind: 'plan', planFile: join(dir, 'strangers.yaml') }, stateDir: join(dir, 'strangers-state') },
      { client, account: { baseUrl: c.url, account: c.url } },
    );
    await client.close();
    expect(summary.steps.map((s) => [s.step, s.created, s.rejected])).toEqual([
      ['organisations', 0, 0],
      ['people', 2, 0],
    ]);
    const people = (await allPages(c, '/parties', 'parties')) as Array<Record<string, any>>;
    const ada = people.find((p) => p.lastName === 'Lovelace');
    expect([ada?.owner?.username, ada?.team]).toEqual(['admin', null]);
    // An owner named by email address is found.
    const alan = people.find((p) => p.lastName === 'Turing');
    expect([alan?.owner?.username, alan?.team?.name]).toEqual(['kim', 'Support']);
  });
});
