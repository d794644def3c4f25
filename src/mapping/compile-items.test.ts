import { describe, expect, it } from 'vitest';
import type { CellValue, FieldRow, SourceRow } from '../sources/types.ts';
import { compileMapping } from './compile.ts';
import type { CompiledMapping } from './compile.ts';
import { parseMapping } from './load.ts';
import type { MappedItem, MappedRecord } from './types.ts';

async function compile(body: string): Promise<CompiledMapping> {
  const text = `version: 1\nentity: party\nkey: "{{id}}"\n${body}`;
  return compileMapping(parseMapping(text, '/maps/m.yaml'), { file: '/maps/m.yaml' });
}

function row(values: Record<string, CellValue>): SourceRow {
  return {
    kind: 'row',
    source: 'in.xml',
    row: 1,
    values: { id: '1', lastName: 'Lovelace', ...values },
    location: { file: '/data/in.xml', row: 1 },
  };
}

/** The same row given as fields under a header, as CSV rows are. */
function fieldRow(values: Record<string, CellValue>): FieldRow {
  const all = { id: '1', lastName: 'Lovelace', ...values };
  return {
    kind: 'fields',
    source: 'in.csv',
    row: 1,
    header: Object.keys(all),
    fields: Object.values(all),
    location: { file: '/data/in.csv', row: 2 },
  };
}

function recordOf(item: MappedItem): MappedRecord {
  if (item.kind !== 'record') throw new Error(`expected a record, got ${JSON.stringify(item)}`);
  return item;
}

const NUMBERED = `fields:
  - {to: lastName, value: {column: lastName}}
  - {to: email, items: numbered, type: {column: 'email.*.type'}, value: {column: 'email.*.emailAddress'}}
  - {to: phone, items: numbered, type: {column: 'phone.*.type'}, value: {column: 'phone.*.phoneNumber'}}
  - to: address
    items: numbered
    type: {column: 'address.*.type'}
    parts: {street: {column: 'address.*.street'}, city: {column: 'address.*.city'}, zip: {column: 'address.*.zip'}}
  - {to: website, items: numbered, type: {column: 'website.*.type'}, service: {column: 'website.*.webService'}, value: {column: 'website.*.webAddress'}}
`;

const LEGACY: Record<string, CellValue> = {
  'email.1.type': 'Work',
  'email.1.emailAddress': 'ada@example.com',
  'email.2.type': 'Home',
  'email.2.emailAddress': 'ada@home.example',
  'email.3.type': 'Other',
  'email.3.emailAddress': 'ada@old.example',
  'phone.1.type': 'Mobile',
  'phone.1.phoneNumber': '07700 900123',
  'phone.2.type': 'Work',
  'phone.2.phoneNumber': '0117 496 0000',
  'phone.3.type': 'Fax',
  'phone.3.phoneNumber': '0117 496 0009',
  'address.1.type': 'Office',
  'address.1.street': '1 Main St',
  'address.1.city': 'Bristol',
  'address.2.type': 'Home',
  'address.2.street': '2 Side St',
  'address.2.zip': 'BS2 1AA',
  'website.1.type': 'Work',
  'website.1.webService': 'URL',
  'website.1.webAddress': 'https://ada.example',
  'website.2.type': 'Personal',
  'website.2.webService': 'twitter',
  'website.2.webAddress': 'ada',
};

const EXPECTED = {
  emailAddresses: [
    { type: 'Work', address: 'ada@example.com' },
    { type: 'Home', address: 'ada@home.example' },
    { type: 'Other', address: 'ada@old.example' },
  ],
  phoneNumbers: [
    { type: 'Mobile', number: '07700 900123' },
    { type: 'Work', number: '0117 496 0000' },
    { type: 'Fax', number: '0117 496 0009' },
  ],
  addresses: [
    { type: 'Office', street: '1 Main St', city: 'Bristol' },
    { type: 'Home', street: '2 Side St', zip: 'BS2 1AA' },
  ],
  websites: [
    { type: 'Work', service: 'URL', address: 'https://ada.example' },
    { type: 'Personal', service: 'TWITTER', address: 'ada' },
  ],
};

describe('numbered columns (`*`)', () => {
  it('writes every item a record has, each with its own type, by name and by position', async () => {
    const compiled = await compile(NUMBERED);
    expect(recordOf(compiled.mapRow(row(LEGACY))).record).toMatchObject(EXPECTED);
    expect(recordOf(compiled.mapFields(fieldRow(LEGACY))).record).toMatchObject(EXPECTED);
  });

  it('writes nothing for a record without items, and skips an empty one between others', async () => {
    const compiled = await compile(NUMBERED);
    const none = recordOf(compiled.mapRow(row({}))).record;
    expect(none.emailAddresses).toBeUndefined();
    expect(none.addresses).toBeUndefined();
    const gap = recordOf(
      compiled.mapRow(
        row({ 'phone.1.phoneNumber': '', 'phone.1.type': 'Work', 'phone.2.phoneNumber': '123', 'phone.2.type': null }),
      ),
    ).record;
    expect(gap.phoneNumbers).toEqual([{ number: '123' }]);
  });

  it('names the numbered columns apart from those the header must have', async () => {
    const compiled = await compile(NUMBERED);
    expect(compiled.columns).toEqual(['id', 'lastName']);
    expect(compiled.columnPatterns).toContain('phone.*.phoneNumber');
    expect(compiled.readsColumn('phone.12.phoneNumber')).toBe(true);
    expect(compiled.readsColumn('phone.x.phoneNumber')).toBe(false);
    expect(compiled.readsColumn('phone.1.extension')).toBe(false);
    expect(() => compiled.checkColumns(['id', 'lastName'])).not.toThrow();
  });

  it('rejects a row whose website service is not one the service knows', async () => {
    const compiled = await compile(NUMBERED);
    const item = compiled.mapRow(row({ 'website.1.webService': 'MYSPACE', 'website.1.webAddress': 'ada' }));
    expect(item.kind).toBe('rejected');
    if (item.kind === 'rejected') expect(item.message).toMatch(/service.*MYSPACE/);
  });

  it('is refused on a target that has no items, and without a `*`; elsewhere a `*` is part of the name', async () => {
    expect(() =>
      parseMapping(
        "version: 1\nentity: party\nkey: id\nfields:\n  - {to: about, items: numbered, value: {column: 'note.*.text'}}\n",
        '/m.yaml',
      ),
    ).toThrow(/`items: numbered` goes with/);
    expect(() =>
      parseMapping(
        "version: 1\nentity: party\nkey: id\nfields:\n  - {to: phone, items: numbered, value: {column: 'Phone 1'}}\n",
        '/m.yaml',
      ),
    ).toThrow(/needs a `\*`/);
    const plain = await compile(
      "fields:\n  - {to: lastName, value: {column: lastName}}\n  - {to: email, value: {column: 'Email*'}}\n",
    );
    expect(plain.columns).toContain('Email*');
    expect(recordOf(plain.mapRow(row({ 'Email*': 'a@b.example' }))).record.emailAddresses).toEqual([
      { address: 'a@b.example' },
    ]);
  });
});

describe('items: a JSON list in one column', () => {
  const ITEMS = `fields:
  - {to: lastName, value: {column: lastName}}
  - {to: email, items: {column: emails}}
  - {to: phone, items: {column: phones}}
  - {to: address, items: {column: addresses}}
  - {to: website, items: {column: websites}}
  - {to: custom, items: {column: fields}}
`;

  it('writes every item with its type, service and the custom fields with their data tags', async () => {
    const compiled = await compile(ITEMS);
    const record = recordOf(
      compiled.mapRow(
        row({
          emails: JSON.stringify(EXPECTED.emailAddresses.map((e, i) => ({ id: i, ...e }))),
          phones: JSON.stringify(EXPECTED.phoneNumbers),
          addresses: JSON.stringify(EXPECTED.addresses),
          websites: JSON.stringify(EXPECTED.websites),
          fields: JSON.stringify([
            { definition: 'Contract end', tag: 'Customer', value: '2027-01-31' },
            { definition: 'VIP', tag: null, value: true },
          ]),
        }),
      ),
    );
    expect(record.record).toMatchObject(EXPECTED);
    expect(record.record.fields).toEqual([
      { definition: { name: 'Contract end', tag: 'Customer' }, value: '2027-01-31' },
      { definition: { name: 'VIP', tag: null }, value: true },
    ]);
    expect(record.names.map((n) => [n.path, n.name, n.scope])).toEqual([
      [['fields', 0, 'definition'], 'Contract end', { entity: 'parties', tag: 'Customer' }],
      [['fields', 1, 'definition'], 'VIP', { entity: 'parties', tag: null }],
    ]);
  });

  it('rejects a cell that is not a JSON list, saying what it should hold', async () => {
    const compiled = await compile(ITEMS);
    const item = compiled.mapRow(row({ emails: 'ada@example.com' }));
    expect(item.kind).toBe('rejected');
    if (item.kind === 'rejected') expect(item.message).toMatch(/column `emails` must hold a JSON list/);
    const noAddress = compiled.mapRow(row({ emails: '[{"type":"Work"}]' }));
    if (noAddress.kind !== 'rejected') throw new Error('expected a reject');
    expect(noAddress.message).toMatch(/needs `address`/);
  });

  it('is refused with value, type or definition beside it', () => {
    expect(() =>
      parseMapping(
        'version: 1\nentity: party\nkey: id\nfields:\n  - {to: email, type: Work, items: {column: emails}}\n',
        '/m.yaml',
      ),
    ).toThrow(/leave `type` out/);
    expect(() =>
      parseMapping('version: 1\nentity: party\nkey: id\nfields:\n  - {to: about, items: {column: x}}\n', '/m.yaml'),
    ).toThrow(/`items`.*not `about`/);
  });
});

describe('items: additional contacts and attachments in one column', () => {
  it('links each key of the list as an additional contact, and uploads each file with its content type', async () => {
    const kase = compileMapping(
      parseMapping(
        'version: 1\nentity: kase\nkey: "{{id}}"\nfields:\n  - {to: name, value: {column: name}}\n  - {to: party, value: {column: party}}\n  - {to: additionalContact, items: {column: contacts}, ref: [people, organisations]}\n',
        '/maps/k.yaml',
      ),
      { file: '/maps/k.yaml' },
    );
    const mapped = recordOf((await kase).mapRow(row({ name: 'Rollout', party: '3', contacts: '[12, "15"]' })));
    expect(mapped.record.parties).toEqual([{ id: null }, { id: null }]);
    expect(mapped.refs.map((r) => [r.path, r.key, r.steps])).toEqual([
      [['parties', 0, 'id'], '12', ['people', 'organisations']],
      [['parties', 1, 'id'], '15', ['people', 'organisations']],
    ]);
    const bad = (await kase).mapRow(row({ name: 'Rollout', party: '3', contacts: '12' }));
    if (bad.kind !== 'rejected') throw new Error('expected a reject');
    expect(bad.message).toMatch(/column `contacts` must hold a JSON list of keys/);

    const entry = compileMapping(
      parseMapping(
        'version: 1\nentity: entry\nkey: "{{id}}"\nfields:\n  - {to: content, value: {column: content}}\n  - {to: party, value: {column: party}}\n  - {to: attachment, items: {column: files}}\n',
        '/maps/e.yaml',
      ),
      { file: '/maps/e.yaml' },
    );
    const note = recordOf(
      (await entry).mapRow(
        row({
          content: 'Hi',
          party: '3',
          files: '[{"file": "files/1/a.txt", "contentType": "text/plain"}, {"file": "/abs/b.pdf"}]',
        }),
      ),
    );
    expect(note.attachments).toEqual([
      { path: '/data/files/1/a.txt', contentType: 'text/plain' },
      { path: '/abs/b.pdf', contentType: null },
    ]);
  });

  it('carries no relative attachment of a live v1 source, which has no folder: a NOT_CARRIED warning per file instead', async () => {
    const entry = await compileMapping(
      parseMapping(
        'version: 1\nentity: entry\nkey: "{{id}}"\nfields:\n  - {to: content, value: {column: content}}\n  - {to: party, value: {column: party}}\n  - {to: attachment, items: numbered, value: \'attachments/{{attachment.*.id}}/{{attachment.*.filename}}\'}\n',
        '/maps/e.yaml',
      ),
      { file: '/maps/e.yaml' },
    );
    const values = {
      id: '7',
      content: 'Hi',
      party: '3',
      'attachment.1.id': '801',
      'attachment.1.filename': 'a.pdf',
      'attachment.2.id': '802',
      'attachment.2.filename': 'b.txt',
    };
    const fromFile = recordOf(
      entry.mapRow({ kind: 'row', source: 'in.xml', row: 1, values, location: { file: '/data/in.xml', row: 1 } }),
    );
    expect(fromFile.attachments.map((a) => a.path)).toEqual([
      '/data/attachments/801/a.pdf',
      '/data/attachments/802/b.txt',
    ]);
    expect(fromFile.warnings).toBeUndefined();
    const live = recordOf(
      entry.mapRow({
        kind: 'row',
        source: 'v1+party',
        row: 1,
        values,
        location: { file: 'v1+https://old.example.com/api/party', row: 1 },
      }),
    );
    expect(live.attachments).toEqual([]);
    expect(live.warnings?.map((w) => [w.code, w.field, w.value])).toEqual([
      ['NOT_CARRIED', 'attachment', 'a.pdf'],
      ['NOT_CARRIED', 'attachment', 'b.txt'],
    ]);
    expect(live.warnings?.[0]?.message).toMatch(/no download of attachments/);
  });

  it('a link list goes with ref and without key', () => {
    expect(() =>
      parseMapping(
        'version: 1\nentity: kase\nkey: "{{id}}"\nfields:\n  - {to: additionalContact, items: {column: contacts}}\n',
        '/maps/k.yaml',
      ),
    ).toThrow(/`items` of a link needs `ref`/);
    expect(() =>
      parseMapping(
        'version: 1\nentity: kase\nkey: "{{id}}"\nfields:\n  - {to: additionalContact, items: {column: contacts}, ref: people, key: "{{x}}"}\n',
        '/maps/k.yaml',
      ),
    ).toThrow(/leave `key` out/);
  });
});

describe('onUnknown', () => {
  it('goes with owner and team only', () => {
    expect(() =>
      parseMapping(
        'version: 1\nentity: party\nkey: id\nfields:\n  - {to: about, onUnknown: drop, value: x}\n',
        '/m.yaml',
      ),
    ).toThrow(/onUnknown/);
    expect(() =>
      parseMapping(
        'version: 1\nentity: party\nkey: id\nfields:\n  - {to: owner, onUnknown: drop, value: {column: o}}\n',
        '/m.yaml',
      ),
    ).not.toThrow();
  });
});
