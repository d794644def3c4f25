import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { type AccountCatalog, parseMapping } from '../mapping/index.ts';
import { availableColumns, chooseColumns } from './columns.ts';
import { columnsFromMappings } from './mapping-columns.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

const CATALOG = {
  users: [],
  teams: [],
  pipelines: [],
  milestones: [],
  activityTypes: [],
  taskCategories: [],
  trackDefinitions: [],
  fieldDefinitions: {
    parties: [
      { id: 1, name: 'Customer since', tag: null, type: 'Date' },
      { id: 2, name: 'VIP', tag: null, type: 'Boolean' },
      { id: 3, name: 'Industry', tag: null, type: 'Text' },
      { id: 5, name: 'Contract end', tag: 'Customer', type: 'Date' },
    ],
    kases: [],
    opportunities: [],
  },
} as AccountCatalog;

function bundled(name: string): { file: string; mapping: ReturnType<typeof parseMapping> } {
  const file = join(ROOT, 'mappings', name);
  return { file, mapping: parseMapping(readFileSync(file, 'utf8'), file) };
}

function inline(yaml: string): { file: string; mapping: ReturnType<typeof parseMapping> } {
  return { file: 'export.yaml', mapping: parseMapping(yaml, 'export.yaml') };
}

const PERSON = {
  id: 7,
  type: 'person',
  firstName: 'Ada',
  lastName: 'Lovelace',
  organisation: { id: 3, name: 'Acme Ltd' },
  emailAddresses: [
    { id: 11, type: 'Work', address: 'ada@acme.example' },
    { id: 12, address: 'ada@home.example' },
  ],
  addresses: [{ city: 'London', country: 'United Kingdom' }],
  tags: [{ name: 'vip' }, { name: 'newsletter' }],
  fields: [
    { definition: { id: 1 }, value: '2021-06-01' },
    { definition: { id: 5, name: 'Contract end' }, value: '2027-01-31' },
  ],
};

describe('columnsFromMappings', () => {
  it('the round-trip mappings: every column they read, once, in their order, with the key and the skip column', () => {
    const columns = columnsFromMappings(
      'parties',
      [bundled('roundtrip-organisations.yaml'), bundled('roundtrip-people.yaml')],
      CATALOG,
    );
    expect(columns.map((c) => c.name)).toEqual([
      'name',
      'about',
      'owner',
      'team',
      'emailAddresses',
      'phoneNumbers',
      'websites',
      'addresses',
      'tags',
      'customFields',
      'id',
      'type',
      'title',
      'firstName',
      'lastName',
      'jobTitle',
      'organisationId',
    ]);
    const row = Object.fromEntries(columns.map((c) => [c.name, c.value(PERSON)]));
    expect(row).toMatchObject({
      name: 'Ada Lovelace',
      tags: 'vip;newsletter',
      organisationId: 3,
      type: 'person',
      id: 7,
    });
    // Every item, with its type; ids left out.
    expect(JSON.parse(row.emailAddresses as string)).toEqual([
      { type: 'Work', address: 'ada@acme.example' },
      { address: 'ada@home.example' },
    ]);
    expect(JSON.parse(row.addresses as string)).toEqual([{ city: 'London', country: 'United Kingdom' }]);
    // Custom fields by name and data tag, whatever fields the account has.
    expect(JSON.parse(row.customFields as string)).toEqual([
      { definition: 'Customer since', tag: null, value: '2021-06-01' },
      { definition: 'Contract end', tag: 'Customer', value: '2027-01-31' },
    ]);
    expect(row.phoneNumbers).toBeNull();
  });

  it('numbered columns cannot be written back; a link by an id column writes the id', () => {
    expect(() =>
      columnsFromMappings(
        'parties',
        [
          inline(
            "version: 1\nentity: party\nkey: id\nfields:\n  - { to: phone, items: numbered, value: { column: 'phone.*.number' } }\n",
          ),
        ],
        CATALOG,
      ),
    ).toThrow(/fields\[0\]\.items: numbered columns cannot be written back/);
    const columns = columnsFromMappings('opportunities', [bundled('roundtrip-opportunities.yaml')], CATALOG);
    const opportunity = {
      id: 5,
      name: 'Deal',
      party: { id: 3, name: 'Acme Ltd' },
      milestone: { id: 2, name: 'Won', pipeline: { id: 1, name: 'Sales' } },
      durationBasis: 'FIXED',
      value: { amount: 10, currency: 'EUR' },
    };
    expect(Object.fromEntries(columns.map((c) => [c.name, c.value(opportunity)]))).toMatchObject({
      partyId: 3,
      pipeline: 'Sales',
      milestone: 'Won',
      amount: 10,
      currency: 'EUR',
      durationBasis: 'FIXED',
      duration: null,
    });
  });

  it('columns named as another tool has them: the mapping decides the names', () => {
    const columns = columnsFromMappings(
      'parties',
      [
        inline(
          'version: 1\nentity: party\nkey: "{{Contact ID}}"\nfields:\n  - { to: firstName, value: { column: First Name } }\n  - { to: email, type: Work, value: { column: E-mail } }\n  - to: address\n    parts: { city: { column: Town } }\n',
        ),
      ],
      CATALOG,
    );
    expect(columns.map((c) => [c.name, c.value(PERSON)])).toEqual([
      ['First Name', 'Ada'],
      ['E-mail', 'ada@acme.example'],
      ['Town', 'London'],
      ['Contact ID', 7],
    ]);
  });

  it('a custom field named like another column is filled from the field, not from that column', () => {
    const catalog = {
      ...CATALOG,
      fieldDefinitions: {
        ...CATALOG.fieldDefinitions,
        parties: [...CATALOG.fieldDefinitions.parties, { id: 4, name: 'tags', tag: null, type: 'Text' }],
      },
    } as AccountCatalog;
    const columns = columnsFromMappings(
      'parties',
      [
        inline(
          'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: tags, value: { column: Tags } }\n  - { to: custom, definition: tags, tag: null, value: { column: Labels } }\n',
        ),
      ],
      catalog,
    );
    const person = { ...PERSON, fields: [{ definition: { id: 4 }, value: 'from the field' }] };
    expect(columns.map((c) => [c.name, c.value(person)])).toEqual([
      ['Tags', 'vip;newsletter'],
      ['Labels', 'from the field'],
      ['id', 7],
    ]);
  });

  it.each([
    [
      'version: 1\nentity: kase\nkey: "{{id}}"\nfields:\n  - { to: name, value: { column: name } }\n',
      /entity: the mapping makes kases, and this export is of parties/,
    ],
    [
      'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: name, value: "{{First}} {{Last}}" }\n',
      /fields\[0\]\.value: a template cannot be split back/,
    ],
    [
      'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: name, value: { coalesce: [{ column: A }, { column: B }] } }\n',
      /fields\[0\]\.value: a template or a coalesce cannot be split back/,
    ],
    [
      'version: 1\nentity: party\nkey: "{{First}}-{{Last}}"\nfields:\n  - { to: firstName, value: { column: First } }\n',
      /key: the key "\{\{First\}\}-\{\{Last\}\}" is not one column/,
    ],
    [
      'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: email, type: { column: Kind }, value: { column: E-mail } }\n',
      /fields\[0\]\.type: a type read from a column cannot be written back/,
    ],
    [
      'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: firstName, value: { column: Name } }\n  - { to: lastName, value: { column: Name } }\n',
      /fields\[1\]\.value: column "Name" would hold two different fields/,
    ],
    [
      'version: 1\nentity: party\nkey: "{{id}}"\nskip: { column: Status, equals: gone }\nfields:\n  - { to: firstName, value: { column: First } }\n',
      /skip: the export has nothing to write into column "Status"/,
    ],
  ])('refuses %j, saying where', (yaml, message) => {
    const error = (() => {
      try {
        columnsFromMappings('parties', [inline(yaml)], CATALOG);
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).code).toBe('USAGE');
    expect((error as FerryError).message).toMatch(message);
    expect((error as FerryError).message.startsWith('export.yaml: ')).toBe(true);
  });
});

describe('round-trip columns of projects, notes and tasks', () => {
  it('a project: stage by name, links and additional contacts by id, tracks by description, each column saying what it needs fetched', () => {
    const columns = columnsFromMappings('kases', [bundled('roundtrip-kases.yaml')], CATALOG);
    const kase = {
      id: 4,
      name: 'Rollout',
      party: { id: 3 },
      opportunity: { id: 9 },
      stage: { id: 102, name: 'In progress' },
      parties: [{ id: 7 }, { id: 8 }],
      tracks: [{ description: 'Onboarding' }, { description: 'Audit' }],
    };
    const cells = Object.fromEntries(columns.map((c) => [c.name, c.value(kase)]));
    expect(cells).toMatchObject({
      partyId: 3,
      opportunityId: 9,
      stage: 'In progress',
      additionalContacts: '[7,8]',
      tracks: 'Onboarding;Audit',
      id: 4,
    });
    expect(cells).not.toHaveProperty('stageId');
    expect(columns.filter((c) => c.fetches).map((c) => [c.name, c.fetches])).toEqual([
      ['additionalContacts', 'parties'],
      ['tracks', 'tracks'],
    ]);
  });

  it('a note: the columns of its author line by name, its files as JSON with their content types', () => {
    const columns = columnsFromMappings('entries', [bundled('roundtrip-entries.yaml')], null);
    const entry = {
      id: 5,
      type: 'note',
      content: 'Hello',
      creator: { username: 'sam', name: 'Sam Seller' },
      kase: { id: 4 },
      attachments: [{ id: 1, filename: 'a.txt', contentType: 'text/plain', file: 'files/1/a.txt' }],
    };
    const cells = Object.fromEntries(columns.map((c) => [c.name, c.value(entry)]));
    expect(cells).toMatchObject({
      kaseId: 4,
      partyId: null,
      creator: 'Sam Seller',
      content: 'Hello',
      type: 'note',
      attachmentFiles: '[{"file":"files/1/a.txt","contentType":"text/plain"}]',
    });
    expect(columns.find((c) => c.name === 'attachmentFiles')?.fetches).toBe('attachments');
  });

  it('a template over a column the export does not have is still refused', () => {
    const yaml =
      'version: 1\nentity: entry\nkey: "{{id}}"\nfields:\n  - { to: content, value: "By {{Author}}: {{content}}" }\n';
    expect(() => columnsFromMappings('entries', [inline(yaml)], null)).toThrow(
      /fields\[0\]\.value: a template cannot be split back/,
    );
  });
});

function catalogWith(kases: Array<{ id: number; name: string }>): AccountCatalog {
  return {
    ...CATALOG,
    fieldDefinitions: {
      ...CATALOG.fieldDefinitions,
      kases: kases.map((d) => ({ id: d.id, name: d.name, tag: null, type: 'Text' })),
    },
  };
}

describe('custom field columns', () => {
  it('a custom field named like another column gets its own name, and each column its own value', () => {
    const catalog = catalogWith([
      { id: 7, name: 'Status' },
      { id: 8, name: 'Region' },
      { id: 9, name: 'region' },
      { id: 10, name: 'Status (custom field)' },
    ]);
    const columns = availableColumns('kases', catalog);
    const names = columns.map((c) => c.name);
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(names.length);
    expect(names.slice(-4)).toEqual([
      'Status (custom field)',
      'Region',
      'region (custom field)',
      'Status (custom field) (custom field)',
    ]);
    const record = {
      status: 'OPEN',
      fields: [
        { definition: { id: 7 }, value: 'Blocked' },
        { definition: { id: 9 }, value: 'North' },
      ],
    };
    const [status, custom, region] = chooseColumns('kases', catalog, [
      'status',
      'Status (custom field)',
      'region (custom field)',
    ]);
    expect(status?.value(record)).toBe('OPEN');
    expect(custom?.value(record)).toBe('Blocked');
    expect(region?.value(record)).toBe('North');
  });

  it('a third field of one name is told apart by its id', () => {
    const names = availableColumns(
      'kases',
      catalogWith([
        { id: 7, name: 'Status' },
        { id: 8, name: 'Status' },
      ]),
    ).map((c) => c.name);
    expect(names.slice(-2)).toEqual(['Status (custom field)', 'Status (custom field 8)']);
  });
});
