import { mkdir, mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { runSetup } from '../../src/load/setup.ts';
import {
  compileMapping,
  loadMapping,
  mapRows,
  type MappedRecord,
  type Mapping,
  type RejectedRow,
  type SourceOptions,
} from '../../src/mapping/index.ts';
import { readAccountCatalog } from '../../src/client/account-catalog.ts';
import { CatalogResolver, resolveRecord, setAt } from '../../src/mapping/resolve.ts';
import { loadPlan } from '../../src/plan/load.ts';
import { mappingRefs, orderSteps } from '../../src/plan/order.ts';
import { lookUpRef, ReferenceBook } from '../../src/plan/references.ts';
import { RowChecks } from '../../src/plan/row-checks.ts';
import { validatePlan } from '../../src/plan/validate.ts';
import { openSource, type SourceItem } from '../../src/sources/index.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const MAPPINGS = join(ROOT, 'mappings');
const PLANS = join(MAPPINGS, 'plans');

interface Mapped {
  records: MappedRecord[];
  rejected: RejectedRow[];
  skipped: number;
}

/**
 * Maps a whole sample the way a run does: load, compile, check the header, map every row.
 * `adjust` changes the loaded mapping before it is compiled (another time zone, say).
 */
async function mapFile(
  mappingFile: string,
  inputFile: string,
  override: SourceOptions = {},
  adjust: (m: Mapping) => Mapping = (m) => m,
): Promise<Mapped> {
  const mapping = adjust(await loadMapping(mappingFile));
  const compiled = await compileMapping(mapping, { file: mappingFile });
  let header: string[] | undefined;
  const opened = await openSource(inputFile, {
    ...mapping.source,
    ...override,
    onDetected: (d) => (header ??= d.columns),
  });
  const items: SourceItem[] = [];
  for await (const item of opened.items) items.push(item);
  // Only CSV has a header. Legacy v1 records each carry their own columns (an organisation has
  // no firstName, a person without a second phone has no phone.2.*), so there is none to check.
  if (header) compiled.checkColumns(header);
  const out: Mapped = { records: [], rejected: [], skipped: 0 };
  async function* replay(): AsyncGenerator<SourceItem> {
    yield* items;
  }
  for await (const item of mapRows(replay(), compiled)) {
    if (item.kind === 'record') out.records.push(item);
    else if (item.kind === 'rejected') out.rejected.push(item);
    else out.skipped += 1;
  }
  return out;
}

const mapped = new Map<string, Mapped>();

/** Maps a sample once per test file; the spot checks share the results. */
async function sample(mapping: string, input: string): Promise<Mapped> {
  const id = `${mapping}|${input}`;
  let result = mapped.get(id);
  if (!result) {
    result = await mapFile(join(MAPPINGS, mapping), join(ROOT, input));
    mapped.set(id, result);
  }
  return result;
}

async function recordOf(mapping: string, input: string, key: string): Promise<MappedRecord> {
  const found = (await sample(mapping, input)).records.find((r) => r.key === key);
  if (!found) throw new Error(`${mapping} made no record with key ${key}`);
  return found;
}

/** A mapped note's text as the importer sends it when the token's user is `writer` (the names resolved to 1). */
function contentAs(record: MappedRecord, writer: { username: string; name: string } | null): unknown {
  const copy: MappedRecord = { ...record, record: structuredClone(record.record), names: [...record.names] };
  resolveRecord(copy, { resolve: () => 1, suggest: () => [], writer: () => writer });
  expect(copy.record.author).toBeUndefined();
  return copy.record.content;
}

/** The names a record asks to resolve, as `kind:name`. */
function namesOf(record: MappedRecord): string[] {
  return record.names.map((n) => `${n.kind}:${n.name}`);
}

/** The links a record asks to fill in, as `step:key`, or `step|other:key` for a link to several steps. */
function refsOf(record: MappedRecord): string[] {
  return record.refs.map((r) => `${r.steps.join('|')}:${r.key}`);
}

interface SampleCase {
  mapping: string;
  input: string;
  records: number;
  /** The rejects the sample is built to contain: `row field code`, the row as a spreadsheet numbers it. */
  rejects: string[];
  skipped?: number;
}

const CASES: SampleCase[] = [
  { mapping: 'generic-organisations.yaml', input: 'samples/contacts.csv', records: 30, rejects: [] },
  { mapping: 'generic-people.yaml', input: 'samples/contacts.csv', records: 30, rejects: [] },
  { mapping: 'hubspot-companies.yaml', input: 'samples/crm/hubspot-companies.csv', records: 6, rejects: [] },
  { mapping: 'hubspot-contacts.yaml', input: 'samples/crm/hubspot-contacts.csv', records: 8, rejects: [] },
  { mapping: 'salesforce-accounts.yaml', input: 'samples/crm/salesforce-accounts.csv', records: 8, rejects: [] },
  { mapping: 'salesforce-contacts.yaml', input: 'samples/crm/salesforce-contacts.csv', records: 10, rejects: [] },
  {
    mapping: 'salesforce-opportunities.yaml',
    input: 'samples/crm/salesforce-opportunities.csv',
    records: 8,
    rejects: [],
  },
  {
    mapping: 'pipedrive-organizations.yaml',
    input: 'samples/crm/pipedrive-organizations.csv',
    records: 4,
    rejects: [],
  },
  { mapping: 'pipedrive-persons.yaml', input: 'samples/crm/pipedrive-persons.csv', records: 5, rejects: [] },
  { mapping: 'pipedrive-deals.yaml', input: 'samples/crm/pipedrive-deals.csv', records: 5, rejects: [] },
  { mapping: 'v1-organisations.yaml', input: 'samples/v1/parties.xml', records: 1, rejects: [] },
  { mapping: 'v1-organisations.yaml', input: 'samples/v1/parties.json', records: 1, rejects: [] },
  { mapping: 'v1-people.yaml', input: 'samples/v1/parties.xml', records: 2, rejects: [] },
  { mapping: 'v1-people.yaml', input: 'samples/v1/parties.json', records: 2, rejects: [] },
  { mapping: 'v1-opportunities.yaml', input: 'samples/v1/opportunities.xml', records: 2, rejects: [] },
  { mapping: 'v1-kases.yaml', input: 'samples/v1/kases.xml', records: 2, rejects: [] },
  { mapping: 'v1-kases.yaml', input: 'samples/v1-migration/kases.xml', records: 2, rejects: [] },
  { mapping: 'v1-kase-notes.yaml', input: 'samples/v1-migration/kases.xml', records: 3, rejects: [] },
  { mapping: 'v1-notes.yaml', input: 'samples/v1/parties.xml', records: 3, rejects: [] },
  { mapping: 'v1-opportunity-notes.yaml', input: 'samples/v1/opportunities.xml', records: 1, rejects: [] },
  { mapping: 'v1-history.yaml', input: 'samples/v1/history.xml', records: 3, rejects: [] },
  { mapping: 'v1-tasks.yaml', input: 'samples/v1/tasks.xml', records: 4, rejects: [] },
  {
    mapping: 'roundtrip-organisations.yaml',
    input: 'samples/export/roundtrip/parties.csv',
    records: 3,
    rejects: [],
    skipped: 2,
  },
  {
    mapping: 'roundtrip-people.yaml',
    input: 'samples/export/roundtrip/parties.csv',
    records: 2,
    rejects: [],
    skipped: 3,
  },
  {
    mapping: 'roundtrip-opportunities.yaml',
    input: 'samples/export/roundtrip/opportunities.csv',
    records: 3,
    rejects: [],
  },
  { mapping: 'roundtrip-kases.yaml', input: 'samples/export/roundtrip/kases.csv', records: 2, rejects: [] },
  {
    mapping: 'roundtrip-entries.yaml',
    input: 'samples/export/roundtrip/entries.csv',
    records: 3,
    rejects: [],
    skipped: 1,
  },
  { mapping: 'roundtrip-tasks.yaml', input: 'samples/export/roundtrip/tasks.csv', records: 3, rejects: [], skipped: 1 },
];

describe('ready-made mappings over their samples', () => {
  it('covers every mapping and every plan in mappings/', async () => {
    const mappingFiles = (await readdir(MAPPINGS)).filter((f) => f.endsWith('.yaml')).sort();
    expect([...new Set(CASES.map((c) => c.mapping))].sort()).toEqual(mappingFiles);
    const planFiles = (await readdir(PLANS)).filter((f) => f.endsWith('.yaml')).sort();
    expect(planFiles).toEqual(
      Object.keys(PLAN_STEPS)
        .map((p) => `${p}.yaml`)
        .sort(),
    );
  });

  it.each(CASES)(
    '$mapping maps $input: $records records, rejects $rejects',
    async ({ mapping, input, records, rejects, skipped = 0 }) => {
      const result = await sample(mapping, input);
      expect(result.rejected.map((r) => `${r.location.row} ${r.field} ${r.code}`)).toEqual(rejects);
      expect(result.records).toHaveLength(records);
      expect(result.skipped).toBe(skipped);
      // Keys identify rows across re-runs and links: a sample must not repeat one.
      const keys = result.records.map((r) => r.key);
      expect(new Set(keys).size).toBe(keys.length);
    },
  );
});

describe('generic contacts sheet', () => {
  const people = 'generic-people.yaml';
  const csv = 'samples/contacts.csv';

  it('makes a person with e-mail, E.164 phone, address, tags, notes and custom fields without data tag', async () => {
    const anna = await recordOf(people, csv, 'anna.mueller@beispiel.de');
    expect(anna.record).toMatchObject({
      type: 'person',
      firstName: 'Anna',
      lastName: 'Müller',
      jobTitle: 'Geschäftsführerin',
      emailAddresses: [{ type: 'Work', address: 'anna.mueller@beispiel.de' }],
      phoneNumbers: [{ type: 'Work', number: '+49301234567' }],
      addresses: [{ type: 'Work', street: 'Hauptstraße 5', city: 'Berlin', zip: '10115', country: 'Germany' }],
      tags: [{ name: 'customer' }, { name: 'vip' }],
      about: 'Prefers email.\nSpeaks English and German.',
      fields: [
        { definition: { name: 'VIP', tag: null }, value: true },
        { definition: { name: 'Customer since', tag: null }, value: '2023-01-15' },
      ],
    });
    expect(refsOf(anna)).toEqual(['organisations:Müller & Söhne GmbH']);
  });

  it.each([
    ['marie.dubois@exemple.fr', '+33612345678'], // French local format, read by the row's country
    ['noah.w@example.com', '+14155550147'], // US local format
    ['jose.nunez@ejemplo.es', '+34911234567'], // 00 prefix
    ['hans.schmidt@beispiel.de', '+4989987654'],
    ['zoe.smith@example.co.uk', '+442079460018'],
    // A fictional number no country accepts is kept as written rather than losing the person.
    ['david.cohen@example.co.uk', '07700 900123'],
  ])('phone of %s is %s', async (key, number) => {
    expect((await recordOf(people, csv, key)).record.phoneNumbers).toEqual([{ type: 'Work', number }]);
  });

  it('leaves out custom fields whose condition does not hold and tags of an empty cell', async () => {
    const marie = await recordOf(people, csv, 'marie.dubois@exemple.fr');
    expect(marie.record.tags).toBeUndefined();
    expect(marie.record.fields).toBeUndefined();
    const lars = await recordOf(people, csv, 'lars.jensen@eksempel.dk');
    expect(lars.record.fields).toBeUndefined();
  });

  it('makes one organisation per company, with the office address', async () => {
    const org = await recordOf('generic-organisations.yaml', csv, 'Bœuf & Cie');
    expect(org.record).toEqual({
      type: 'organisation',
      name: 'Bœuf & Cie',
      addresses: [{ type: 'Office', street: '12 rue de la Paix', city: 'Paris', zip: '75002', country: 'France' }],
    });
  });
});

describe('HubSpot', () => {
  const contacts = ['hubspot-contacts.yaml', 'samples/crm/hubspot-contacts.csv'] as const;
  const companies = ['hubspot-companies.yaml', 'samples/crm/hubspot-companies.csv'] as const;

  it('maps a contact: lower-cased e-mail, work and mobile phones, owner, company link, tags, language', async () => {
    const nancy = await recordOf(...contacts, '101');
    expect(nancy.record).toMatchObject({
      firstName: 'Nancy',
      lastName: 'Davolio',
      emailAddresses: [{ type: 'Work', address: 'nancy.davolio@northwind.example.com' }],
      phoneNumbers: [
        { type: 'Work', number: '+12065559857' },
        { type: 'Mobile', number: '+12065550199' },
      ],
      tags: [{ name: 'Customer' }, { name: 'Connected' }],
      fields: [{ definition: { name: 'Preferred language', tag: null }, value: 'English' }],
      organisation: { id: null },
    });
    // The owner by the full name HubSpot shows, found among the account's users when resolved.
    expect(namesOf(nancy)).toEqual(['user:Sam Seller', 'fieldDefinition:Preferred language']);
    expect(refsOf(nancy)).toEqual(['companies:5240117401']);
  });

  it('leaves a contact without company or owner unlinked', async () => {
    const priya = await recordOf(...contacts, '108');
    expect(priya.refs).toEqual([]);
    expect(priya.record.organisation).toBeUndefined();
    expect(priya.record.owner).toBeUndefined();
    expect(priya.record.addresses).toEqual([{ type: 'Work', country: 'India' }]);
  });

  it('maps a company: industry folded into the list, customer-since date, websites, phone', async () => {
    const fabrikam = await recordOf(...companies, '5240117403');
    expect(fabrikam.record).toMatchObject({
      type: 'organisation',
      name: 'Fabrikam Software',
      about: 'ISV partner.\nPrefers quarterly invoicing.',
      phoneNumbers: [{ type: 'Work', number: '+14155550188' }],
      websites: [
        { service: 'URL', address: 'https://fabrikam.example.com' },
        { service: 'LINKED_IN', address: 'https://www.linkedin.com/company/fabrikam' },
      ],
      fields: [
        { definition: { name: 'Industry', tag: null }, value: 'Software' },
        { definition: { name: 'Customer since', tag: null }, value: '2023-01-15' },
      ],
    });
  });

  it('falls back to the company domain for the website', async () => {
    const alpine = await recordOf(...companies, '5240117404');
    expect(alpine.record.websites).toEqual([{ service: 'URL', address: 'https://alpine-dairy.example.ch' }]);
    expect(alpine.record.fields).toEqual([{ definition: { name: 'Industry', tag: null }, value: 'Agriculture' }]);
  });
});

describe('Salesforce', () => {
  const accounts = ['salesforce-accounts.yaml', 'samples/crm/salesforce-accounts.csv'] as const;
  const opportunities = ['salesforce-opportunities.yaml', 'samples/crm/salesforce-opportunities.csv'] as const;

  it('maps an account: multi-line street, account number, industry, US dates', async () => {
    const edge = await recordOf(...accounts, '0015g00000ABC01AAA');
    expect(edge.record).toMatchObject({
      name: 'Edge Communications',
      addresses: [
        {
          type: 'Office',
          street: '312 Constitution Place\nAustin, TX 78767\nUSA',
          city: 'Austin',
          state: 'TX',
          zip: '78767',
          country: 'United States',
        },
      ],
      phoneNumbers: [{ type: 'Work', number: '+15127576000' }],
      tags: [{ name: 'Customer - Direct' }],
      fields: [
        { definition: { name: 'Account number', tag: null }, value: 'GB-10042' },
        { definition: { name: 'Industry', tag: null }, value: 'Manufacturing' },
        { definition: { name: 'Customer since', tag: null }, value: '2019-04-15' },
      ],
    });
  });

  it('maps a contact: title without full stop, linked to its account; imports the one with a broken e-mail without it', async () => {
    const sean = await recordOf(
      'salesforce-contacts.yaml',
      'samples/crm/salesforce-contacts.csv',
      '0035g00000XYZ01AAA',
    );
    expect(sean.record).toMatchObject({
      title: 'Mr',
      firstName: 'Sean',
      lastName: 'Forbes',
      jobTitle: 'CFO',
      tags: [{ name: 'Source: Web' }],
    });
    expect(refsOf(sean)).toEqual(['accounts:0015g00000ABC01AAA']);
    expect(sean.warnings).toBeUndefined();
    const bond = await recordOf(
      'salesforce-contacts.yaml',
      'samples/crm/salesforce-contacts.csv',
      '0035g00000XYZ10AAA',
    );
    expect(bond.record.emailAddresses).toBeUndefined();
    expect(bond.record.lastName).toBe('Bond');
    expect(bond.warnings).toEqual([
      expect.objectContaining({ code: 'VALUE_DROPPED', field: 'email', value: 'bond_john@@dickenson.example.com' }),
    ]);
  });

  it('maps a won opportunity: milestone Won in Sales, value, close date, lead source, Signed', async () => {
    const won = await recordOf(...opportunities, '0065g00000OPP01AAA');
    expect(won.record).toMatchObject({
      name: 'Edge Emergency Generator',
      description: 'Replacement of the backup generator.',
      probability: 100,
      closedOn: '2023-05-17',
      value: { amount: 75000, currency: 'USD' },
      tags: [{ name: 'Existing Customer - Replacement' }],
      fields: [
        { definition: { name: 'Lead source', tag: null }, value: 'Web' },
        { definition: { name: 'Signed', tag: null }, value: true },
      ],
    });
    expect(won.record.expectedCloseOn).toBeUndefined();
    expect(won.names.find((n) => n.kind === 'milestone')).toMatchObject({ name: 'Won', scope: { pipeline: 'Sales' } });
    expect(refsOf(won)).toEqual(['accounts:0015g00000ABC01AAA']);
  });

  it('maps an open opportunity: expected close date, next step in the description', async () => {
    const open = await recordOf(...opportunities, '0065g00000OPP02AAA');
    expect(open.record).toMatchObject({
      expectedCloseOn: '2024-10-31',
      description: 'Next step: Call to confirm budget',
      value: { amount: 50000, currency: 'USD' },
    });
    expect(open.record.closedOn).toBeUndefined();
    expect(open.record.fields).toEqual([{ definition: { name: 'Lead source', tag: null }, value: 'Referral' }]);
    expect(namesOf(open)).toContain('milestone:New');
    const quote = await recordOf(...opportunities, '0065g00000OPP04AAA');
    expect(quote.record.description).toBe('Two sites, one contract.\nNext step: Send revised quote');
    expect(namesOf(quote)).toContain('milestone:Proposal');
    const small = await recordOf(...opportunities, '0065g00000OPP08AAA');
    expect(small.record.value).toEqual({ amount: 1250.5, currency: 'CHF' });
  });
});

describe('Pipedrive', () => {
  const deals = ['pipedrive-deals.yaml', 'samples/crm/pipedrive-deals.csv'] as const;

  it.each([
    [
      '101',
      'Negotiation',
      { probability: 80, expectedCloseOn: '2024-12-20', value: { amount: 48000, currency: 'NOK' } },
    ],
    ['102', 'Won', { closedOn: '2024-05-28', value: { amount: 12500.5, currency: 'EUR' } }],
    ['103', 'Lost', { closedOn: '2024-04-02' }],
    ['104', 'New', { probability: 10 }],
    ['105', 'Qualified', { expectedCloseOn: '2025-01-15' }],
  ])('deal %s reaches milestone %s', async (key, milestone, fields) => {
    const deal = await recordOf(...deals, key);
    expect(deal.names.find((n) => n.kind === 'milestone')).toMatchObject({
      name: milestone,
      scope: { pipeline: 'Sales' },
    });
    expect(deal.record).toMatchObject(fields);
  });

  it("folds Pipedrive's lost reason into the account's list, looked up by name (a reason it lacks is dropped with a warning)", async () => {
    const deal = await recordOf(...deals, '103');
    expect(deal.names.find((n) => n.kind === 'lostReason')).toMatchObject({
      name: 'Competitor',
      path: ['lostReason'],
      onUnknown: 'drop',
    });
    expect(deal.record.lostReason).toBeNull();
  });

  it('links a deal to its organisation by name and keeps the contact person', async () => {
    const deal = await recordOf(...deals, '101');
    expect(refsOf(deal)).toEqual(['organizations:Fjord Fisk AS']);
    expect(deal.record.description).toBe('Contact person: Kari Ødegård');
    expect(deal.record.tags).toEqual([{ name: 'Hot' }]);
  });

  it('maps people with two e-mails and labels, and one without organisation', async () => {
    const ana = await recordOf('pipedrive-persons.yaml', 'samples/crm/pipedrive-persons.csv', '12');
    expect(ana.record).toMatchObject({
      emailAddresses: [
        { type: 'Work', address: 'ana.silva@silvavinhos.example.pt' },
        { type: 'Home', address: 'ana.silva@mail.example.pt' },
      ],
      phoneNumbers: [{ type: 'Work', number: '+351211234567' }],
      tags: [{ name: 'Customer' }, { name: 'Hot lead' }],
    });
    expect(refsOf(ana)).toEqual(['organizations:Silva Vinhos Lda']);
    const leila = await recordOf('pipedrive-persons.yaml', 'samples/crm/pipedrive-persons.csv', '15');
    expect(leila.refs).toEqual([]);
    expect(leila.record.phoneNumbers).toEqual([{ type: 'Mobile', number: '+33698765432' }]);
  });

  it('maps an organisation: street from road and house number, customer since for customers only', async () => {
    const fjord = await recordOf(
      'pipedrive-organizations.yaml',
      'samples/crm/pipedrive-organizations.csv',
      'Fjord Fisk AS',
    );
    expect(fjord.record).toMatchObject({
      addresses: [{ type: 'Office', street: 'Karl Johans gate 1', city: 'Oslo', zip: '0154', country: 'Norway' }],
      fields: [
        { definition: { name: 'Industry', tag: null }, value: 'Agriculture' },
        { definition: { name: 'Customer since', tag: null }, value: '2022-03-01' },
      ],
    });
    const virtanen = await recordOf(
      'pipedrive-organizations.yaml',
      'samples/crm/pipedrive-organizations.csv',
      'Virtanen Oy',
    );
    expect(virtanen.record.fields).toEqual([{ definition: { name: 'Industry', tag: null }, value: 'Software' }]);
  });
});

describe('legacy v1 exports', () => {
  it('maps a person with contacts, custom fields and tags, linked to the organisation by its v1 id', async () => {
    const ada = await recordOf('v1-people.yaml', 'samples/v1/parties.xml', '101');
    expect(ada.record).toEqual({
      type: 'person',
      title: 'Dr',
      firstName: 'Ada',
      lastName: 'Lovelace',
      jobTitle: 'Analyst',
      about: 'Likes <b>engines</b> & poetry',
      organisation: { id: null },
      emailAddresses: [
        { type: 'Work', address: 'ada@example.com' },
        { type: 'Home', address: 'ada.home@example.com' },
      ],
      // Every item of the v1 record, each with its own type.
      phoneNumbers: [
        { type: 'Mobile', number: '07700 900123' },
        { type: 'Work', number: '+441174960000' },
        { type: 'Home', number: '+442079460018' },
      ],
      addresses: [
        { type: 'Office', street: '1 Main Street', city: 'Bristol', zip: 'BS1 4DJ', country: 'United Kingdom' },
        { type: 'Home', street: "12 St James's Square", city: 'London', zip: 'SW1Y 4JH', country: 'United Kingdom' },
      ],
      websites: [{ type: 'Work', service: 'URL', address: 'https://ada.example.com' }],
      fields: [{ definition: { name: 'Industry', tag: null }, value: 'Software' }],
      tags: [{ name: 'VIP' }, { name: 'Café owner' }, { name: 'Newsletter' }, { name: 'Supplier rating A' }],
    });
    expect(refsOf(ada)).toEqual(['organisations:201']);
  });

  it('reads only the people with the people mapping and only the organisations with the other', async () => {
    expect(
      (await sample('v1-people.yaml', 'samples/v1/parties.xml')).records.map((r) => [r.key, r.record.type]),
    ).toEqual([
      ['101', 'person'],
      ['102', 'person'],
    ]);
    expect(
      (await sample('v1-organisations.yaml', 'samples/v1/parties.xml')).records.map((r) => [r.key, r.record.type]),
    ).toEqual([['201', 'organisation']]);
    // A person without an organisation is not linked to one.
    const alan = await recordOf('v1-people.yaml', 'samples/v1/parties.xml', '102');
    expect(alan.refs).toEqual([]);
    expect(alan.record.organisation).toBeUndefined();
  });

  it.each(['v1-people.yaml', 'v1-organisations.yaml'])(
    '%s reads the JSON export of the same parties into the same records',
    async (mapping) => {
      const xml = await sample(mapping, 'samples/v1/parties.xml');
      const json = await sample(mapping, 'samples/v1/parties.json');
      expect(json.records.map((r) => r.record)).toEqual(xml.records.map((r) => r.record));
      expect(json.records.map((r) => r.refs)).toEqual(xml.records.map((r) => r.refs));
    },
  );

  it('maps an organisation with its twitter handle as a TWITTER website', async () => {
    const org = await recordOf('v1-organisations.yaml', 'samples/v1/parties.xml', '201');
    expect(org.record).toMatchObject({
      type: 'organisation',
      name: 'Analytical Engines & Co',
      websites: [{ type: 'Work', service: 'TWITTER', address: 'analytical' }],
      fields: [{ definition: { name: 'Industry', tag: null }, value: 'Manufacturing' }],
      tags: [{ name: 'Customer' }],
    });
  });

  it('maps opportunities with milestone, value, duration, dates, lead source and owner', async () => {
    const maintenance = await recordOf('v1-opportunities.yaml', 'samples/v1/opportunities.xml', '301');
    expect(maintenance.record).toMatchObject({
      name: 'Engine maintenance',
      probability: 50,
      durationBasis: 'YEAR',
      duration: 1,
      expectedCloseOn: '2012-03-31',
      value: { amount: 12000, currency: 'GBP' },
      fields: [{ definition: { name: 'Lead source', tag: null }, value: 'Referral' }],
      tags: [{ name: 'Renewal' }],
    });
    expect(namesOf(maintenance)).toEqual(['user:sam', 'milestone:Proposal', 'fieldDefinition:Lead source']);
    expect(refsOf(maintenance)).toEqual(['people|organisations:201']);
    const poetry = await recordOf('v1-opportunities.yaml', 'samples/v1/opportunities.xml', '302');
    expect(poetry.record).toMatchObject({ closedOn: '2012-01-15', durationBasis: 'FIXED' });
    expect(poetry.record.duration).toBeUndefined();
  });

  it('maps cases to projects with status, start and close dates', async () => {
    const claim = await recordOf('v1-kases.yaml', 'samples/v1/kases.xml', '402');
    expect(claim.record).toMatchObject({
      name: 'Warranty claim',
      status: 'CLOSED',
      startOn: '2012-01-10',
      closedOn: '2012-02-01',
    });
    // The plain export has no custom fields: only the unticked Billable checkbox is written.
    expect(namesOf(claim)).toEqual(['user:kim', 'fieldDefinition:Billable']);
    expect(refsOf(claim)).toEqual(['people|organisations:101']);
  });

  it('maps case custom fields onto the project fields, unticked checkboxes as false', async () => {
    const installation = await recordOf('v1-kases.yaml', 'samples/v1-migration/kases.xml', '401');
    expect(installation.record.fields).toEqual([
      { definition: { name: 'Priority', tag: null }, value: 'High' },
      { definition: { name: 'Go-live', tag: null }, value: '2012-04-01' },
      { definition: { name: 'Reference', tag: null }, value: 'INST-2011-07' },
      { definition: { name: 'Billable', tag: null }, value: true },
    ]);
    const claim = await recordOf('v1-kases.yaml', 'samples/v1-migration/kases.xml', '402');
    expect(claim.record.fields).toEqual([
      { definition: { name: 'Priority', tag: null }, value: 'Urgent' },
      { definition: { name: 'Billable', tag: null }, value: false },
    ]);
  });

  it('maps history nested in cases to notes on the project, author and date first unless the author imports', async () => {
    const call = await recordOf('v1-kase-notes.yaml', 'samples/v1-migration/kases.xml', '706');
    expect(call.record).toEqual({
      type: 'note',
      kase: { id: null },
      content: 'Customer reports a cracked gear. Parts ordered.',
      author: 'Al Jones',
      authorLine: 'Originally by Al Jones (ajones) on 2012-01-12T08:30:00Z',
      activityType: null,
      entryAt: '2012-01-12T08:30:00Z',
    });
    expect(contentAs(call, { username: 'admin', name: 'Alex Admin' })).toBe(
      'Originally by Al Jones (ajones) on 2012-01-12T08:30:00Z\n\nCustomer reports a cracked gear. Parts ordered.',
    );
    expect(contentAs(call, null)).toBe(
      'Originally by Al Jones (ajones) on 2012-01-12T08:30:00Z\n\nCustomer reports a cracked gear. Parts ordered.',
    );
    expect(contentAs(call, { username: 'ajones', name: 'Al Jones' })).toBe(
      'Customer reports a cracked gear. Parts ordered.',
    );
    expect(namesOf(call)).toEqual(['activityType:Call']);
    expect(refsOf(call)).toEqual(['kases:402']);
  });

  it('maps nested history to notes on the parent party: author, date and subject first, the kind as activity type, files beside the export', async () => {
    const email = await recordOf('v1-notes.yaml', 'samples/v1/parties.xml', '702');
    expect(email.record).toEqual({
      type: 'note',
      party: { id: null },
      content: 'Follow-up\n\nSent the brochure.',
      author: 'Jo Smith',
      authorLine: 'Originally by Jo Smith (jsmith) on 2011-10-02T11:30:00Z',
      activityType: null,
      entryAt: '2011-10-02T11:30:00Z',
    });
    expect(contentAs(email, { username: 'admin', name: 'Alex Admin' })).toBe(
      'Originally by Jo Smith (jsmith) on 2011-10-02T11:30:00Z\n\nFollow-up\n\nSent the brochure.',
    );
    expect(contentAs(email, { username: 'jsmith', name: 'Jo Smith' })).toBe('Follow-up\n\nSent the brochure.');
    expect(namesOf(email)).toEqual(['activityType:Email']);
    expect(refsOf(email)).toEqual(['people|organisations:101']);
    expect(email.attachments).toEqual([
      { path: join(ROOT, 'samples/v1/attachments/801/brochure.pdf'), contentType: 'application/pdf' },
    ]);
    expect(namesOf(await recordOf('v1-notes.yaml', 'samples/v1/parties.xml', '707'))).toEqual([
      'activityType:Task completed',
    ]);
  });

  it('maps a history list saved on its own onto the record each item names', async () => {
    expect(refsOf(await recordOf('v1-history.yaml', 'samples/v1/history.xml', '703'))).toEqual([
      'people|organisations:201',
    ]);
    expect(refsOf(await recordOf('v1-history.yaml', 'samples/v1/history.xml', '704'))).toEqual(['kases:402']);
    const offer = await recordOf('v1-history.yaml', 'samples/v1/history.xml', '708');
    expect(refsOf(offer)).toEqual(['opportunities:301']);
    expect(offer.attachments.map((a) => [a.path.slice(ROOT.length), a.contentType])).toEqual([
      ['/samples/v1/attachments/802/offer.txt', 'text/plain'],
      ['/samples/v1/attachments/803/engine-photo', 'image/png'],
    ]);
  });

  it('maps a case with its additional contacts and tracks', async () => {
    const installation = await recordOf('v1-kases.yaml', 'samples/v1-migration/kases.xml', '401');
    expect(refsOf(installation)).toEqual(['people|organisations:201', 'people|organisations:102']);
    expect(installation.record.parties).toEqual([{ id: null }]);
    expect(namesOf(installation)).toContain('trackDefinition:Installation checklist');
  });

  it.each([
    ['1001', { dueOn: '2012-03-01', detail: 'Both copies, signed' }, ['opportunities:301']],
    ['1002', { dueOn: '2012-03-02', dueTime: '14:30:00' }, ['people|organisations:101']],
    ['1003', { dueOn: '2012-03-05' }, ['kases:402']],
    [
      '1004',
      {
        dueOn: '2012-01-20',
        status: 'COMPLETED',
        detail: 'Part no. G-42\n\nCompleted on 2012-01-18T15:20:00Z (legacy account)',
      },
      ['kases:402'],
    ],
  ])('maps task %s onto the record it belongs to', async (key, fields, refs) => {
    const task = await recordOf('v1-tasks.yaml', 'samples/v1/tasks.xml', key);
    expect(task.record).toMatchObject(fields);
    expect(refsOf(task)).toEqual(refs);
  });
});

describe('dates do not move with the time zone', () => {
  // Zones far from UTC on both sides: a date-only value read through a zone would shift a day.
  it.each(['Pacific/Kiritimati', 'Pacific/Pago_Pago', 'America/New_York'])('in %s', async (timeZone) => {
    const inZone = (m: Mapping): Mapping => ({ ...m, timeZone });
    const v1 = await mapFile(
      join(MAPPINGS, 'v1-opportunities.yaml'),
      join(ROOT, 'samples/v1/opportunities.xml'),
      {},
      inZone,
    );
    expect(v1.records.map((r) => r.record.expectedCloseOn ?? r.record.closedOn)).toEqual(['2012-03-31', '2012-01-15']);
    const sf = await mapFile(
      join(MAPPINGS, 'salesforce-opportunities.yaml'),
      join(ROOT, 'samples/crm/salesforce-opportunities.csv'),
      {},
      inZone,
    );
    expect(sf.records[0]?.record.closedOn).toBe('2023-05-17');
    const pd = await mapFile(
      join(MAPPINGS, 'pipedrive-deals.yaml'),
      join(ROOT, 'samples/crm/pipedrive-deals.csv'),
      {},
      inZone,
    );
    expect(pd.records[1]?.record.closedOn).toBe('2024-05-28');
  });
});

/** Each plan's steps in the order they run. */
const PLAN_STEPS: Record<string, string[]> = {
  generic: ['organisations', 'people'],
  roundtrip: ['organisations', 'people', 'opportunities', 'kases', 'entries', 'tasks'],
  hubspot: ['companies', 'people'],
  salesforce: ['accounts', 'contacts', 'opportunities'],
  pipedrive: ['organizations', 'people', 'deals'],
  'v1-migration': [
    'organisations',
    'people',
    'opportunities',
    'kases',
    'notes',
    'kase-notes',
    'opportunity-notes',
    'history',
    'tasks',
  ],
};

interface PlannedStep {
  name: string;
  mappingFile: string;
  inputFile: string;
  source: SourceOptions | undefined;
  refs: ReturnType<typeof mappingRefs>;
}

async function plannedSteps(plan: string): Promise<PlannedStep[]> {
  const loaded = await loadPlan(join(PLANS, `${plan}.yaml`));
  const steps: PlannedStep[] = [];
  for (const step of loaded.steps) {
    const mapping = await loadMapping(step.mappingFile);
    steps.push({
      name: step.name,
      mappingFile: step.mappingFile,
      inputFile: step.inputFile,
      source: step.source,
      refs: mappingRefs(mapping, step.mappingFile),
    });
  }
  return orderSteps(steps);
}

describe('plans', () => {
  it.each(Object.entries(PLAN_STEPS))('%s runs its steps in reference order', async (plan, order) => {
    expect((await plannedSteps(plan)).map((s) => s.name)).toEqual(order);
  });

  it.each(Object.keys(PLAN_STEPS))('every link of %s finds its record in the step it names', async (plan) => {
    const book = new ReferenceBook();
    const problems: string[] = [];
    for (const step of await plannedSteps(plan)) {
      const result = await mapFile(step.mappingFile, step.inputFile, step.source);
      const checks = new RowChecks(step.name, { onDuplicate: 'reject' }, false);
      for (const record of result.records) {
        const outcome = checks.check(record);
        if (outcome.kind === 'rejected') problems.push(`${step.name} ${record.key}: ${outcome.rejected.message}`);
        for (const problem of book.checkRefs(record.refs))
          problems.push(`${step.name} ${record.key}: ${problem.message}`);
        book.addValid(step.name, record.key);
      }
    }
    expect(problems).toEqual([]);
  });

  describe('validate', () => {
    let dir: string;
    beforeAll(async () => {
      dir = await mkdtemp(join(tmpdir(), 'ready-made-'));
    });

    afterAll(async () => {
      await rm(dir, { recursive: true, force: true });
    });

    it.each([
      ['generic', ['organisations 30/0', 'people 30/0']],
      ['hubspot', ['companies 6/0', 'people 8/0']],
      ['salesforce', ['accounts 8/0', 'contacts 10/0', 'opportunities 8/0']],
      ['pipedrive', ['organizations 4/0', 'people 5/0', 'deals 5/0']],
      [
        'v1-migration',
        [
          'organisations 1/0',
          'people 2/0',
          'opportunities 2/0',
          'kases 2/0',
          'notes 3/0',
          'kase-notes 3/0',
          'opportunity-notes 1/0',
          'history 3/0',
          'tasks 4/0',
        ],
      ],
      ['roundtrip', ['organisations 3/0', 'people 2/0', 'opportunities 3/0', 'kases 2/0', 'entries 3/0', 'tasks 3/0']],
    ])('%s: rows ok/rejected per step', async (plan, expected) => {
      const rejectsDir = join(dir, plan);
      await mkdir(rejectsDir);
      const report = await validatePlan({ planFile: join(PLANS, `${plan}.yaml`), rejectsDir });
      expect(report.steps.map((s) => `${s.step} ${s.ok}/${s.rejected}`)).toEqual(expected);
    });
  });
});

describe('imported into the sandbox', () => {
  let sandbox: TestSandbox;
  let client: CrmClient;
  let resolver: CatalogResolver;
  /** Ids the sandbox gave, by plan, step and key. */
  const created = new Map<string, Map<string, number>>();
  const ENDPOINT = {
    party: 'parties',
    kase: 'kases',
    opportunity: 'opportunities',
    entry: 'entries',
    task: 'tasks',
  } as const;

  beforeAll(async () => {
    sandbox = await startTestSandbox();
    client = new CrmClient({ baseUrl: sandbox.url, auth: sandbox.token });
    resolver = new CatalogResolver(await readAccountCatalog(client));
  });

  afterAll(async () => {
    await client?.close();
    await sandbox?.close();
  });

  // Plays the importer's part by hand: the plan's set-up made, names resolved against the account,
  // links filled with the ids of records created by earlier steps, then one create request per
  // record (and one per additional contact of a project).
  it.each(Object.keys(PLAN_STEPS))('the service accepts every record of %s', async (plan) => {
    const failures: string[] = [];
    const planFile = join(PLANS, `${plan}.yaml`);
    if ((await loadPlan(planFile)).setup) {
      const stateDir = await mkdtemp(join(tmpdir(), 'ready-made-setup-'));
      try {
        await runSetup({ planFile, stateDir }, { client, account: { baseUrl: sandbox.url, account: sandbox.url } });
      } finally {
        await rm(stateDir, { recursive: true, force: true });
      }
      resolver = new CatalogResolver(await readAccountCatalog(client));
    }
    for (const step of await plannedSteps(plan)) {
      const ids = new Map<string, number>();
      created.set(`${plan}/${step.name}`, ids);
      const result = await mapFile(step.mappingFile, step.inputFile, step.source);
      for (const record of result.records) {
        const problems = resolveRecord(record, resolver);
        if (problems.length > 0) {
          failures.push(`${step.name} ${record.key}: ${problems.map((p) => p.message).join('; ')}`);
          continue;
        }
        for (const ref of record.refs) {
          const found = lookUpRef(ref, (linked, key) => created.get(`${plan}/${linked}`)?.get(key));
          expect(found.status, `${step.name} ${record.key} links to ${ref.steps.join(' or ')} ${ref.key}`).toBe(
            'found',
          );
          if (found.status === 'found') expect(setAt(record.record, ref.path, found.value)).toBe(true);
        }
        const plural = ENDPOINT[record.entity];
        const singular = record.entity;
        const { parties, ...body } = record.record as { parties?: Array<{ id: number }> };
        const answer = await sandbox.v2('POST', `/${plural}`, { [singular]: body });
        if (answer.status !== 201) failures.push(`${step.name} ${record.key}: ${answer.status} ${answer.text}`);
        else ids.set(record.key, answer.body[singular].id);
        for (const party of parties ?? []) {
          const added = await sandbox.v2('POST', `/kases/${answer.body[singular]?.id}/parties/${party.id}`);
          if (added.status !== 204)
            failures.push(`${step.name} ${record.key} contact ${party.id}: ${added.status} ${added.text}`);
        }
      }
    }
    expect(failures).toEqual([]);
  });

  it('stored a HubSpot contact with its company, owner and language', async () => {
    const id = created.get('hubspot/people')?.get('101');
    const answer = await sandbox.v2('GET', `/parties/${id}?embed=fields,tags,organisation`);
    expect(answer.status).toBe(200);
    const party = answer.body.party;
    expect(party.organisation.name).toBe('Northwind Traders');
    expect(party.owner.username).toBe('sam');
    expect(
      party.fields.map((f: { definition: { name: string }; value: unknown }) => [f.definition.name, f.value]),
    ).toEqual([['Preferred language', 'English']]);
  });

  it('stored a Salesforce opportunity in milestone Won with its value and account', async () => {
    const id = created.get('salesforce/opportunities')?.get('0065g00000OPP01AAA');
    const answer = await sandbox.v2('GET', `/opportunities/${id}?embed=fields,party,milestone`);
    expect(answer.status).toBe(200);
    const opportunity = answer.body.opportunity;
    expect(opportunity.milestone.name).toBe('Won');
    expect(opportunity.value).toEqual({ amount: 75000, currency: 'USD' });
    expect(opportunity.closedOn).toBe('2023-05-17');
    expect(opportunity.party.name).toBe('Edge Communications');
  });

  it('created each v1 organisation once, and linked its people to it', async () => {
    const org = created.get('v1-migration/organisations')?.get('201');
    expect(org).toBeDefined();
    const found = await sandbox.v2('GET', `/parties/search?q=${encodeURIComponent('Analytical Engines')}&perPage=100`);
    expect(found.status).toBe(200);
    const named = found.body.parties.filter(
      (p: { type: string; name?: string }) => p.type === 'organisation' && p.name === 'Analytical Engines & Co',
    );
    expect(named.map((p: { id: number }) => p.id)).toEqual([org]);
    const ada = created.get('v1-migration/people')?.get('101');
    const person = await sandbox.v2('GET', `/parties/${ada}?embed=organisation`);
    expect(person.body.party.organisation.id).toBe(org);
    // The opportunity links to the organisation through the same two-step link as notes to people.
    const opportunity = await sandbox.v2(
      'GET',
      `/opportunities/${created.get('v1-migration/opportunities')?.get('301')}?embed=party`,
    );
    expect(opportunity.body.opportunity.party.id).toBe(org);
  });

  it('stored v1 notes and tasks on the records they belonged to', async () => {
    const ada = created.get('v1-migration/people')?.get('101');
    const notes = await sandbox.v2('GET', `/parties/${ada}/entries`);
    expect(notes.status).toBe(200);
    expect(notes.body.entries.map((e: { content: string }) => e.content).sort()).toEqual([
      'Originally by Al Jones (ajones) on 2011-10-05T16:00:00Z\n\nCompleted: send the price list',
      'Originally by Jo Smith (jsmith) on 2011-10-01T10:00:00Z\n\nFirst call\n\nCalled about the engine.',
      'Originally by Jo Smith (jsmith) on 2011-10-02T11:30:00Z\n\nFollow-up\n\nSent the brochure.',
    ]);
    const project = created.get('v1-migration/kases')?.get('401');
    const projectAnswer = await sandbox.v2('GET', `/kases/${project}?embed=fields`);
    expect(
      projectAnswer.body.kase.fields.map((f: { definition: { name: string }; value: unknown }) => [
        f.definition.name,
        f.value,
      ]),
    ).toEqual([
      ['Priority', 'High'],
      ['Go-live', '2012-04-01'],
      ['Reference', 'INST-2011-07'],
      ['Billable', true],
    ]);
    const projectNotes = await sandbox.v2('GET', `/kases/${project}/entries`);
    expect(projectNotes.body.entries.map((e: { content: string }) => e.content)).toEqual([
      'Originally by Jo Smith (jsmith) on 2011-11-12T08:05:00Z\n\nSite plan\n\nThe site plan, as agreed.',
      'Originally by Jo Smith (jsmith) on 2011-11-11T15:45:00Z\n\nSite survey\n\nCrane access from the north gate only.',
    ]);
    const taskId = created.get('v1-migration/tasks')?.get('1002');
    const task = await sandbox.v2('GET', `/tasks/${taskId}?embed=party`);
    expect(task.body.task).toMatchObject({ dueOn: '2012-03-02', dueTime: '14:30:00', party: { id: ada } });
  });
});
