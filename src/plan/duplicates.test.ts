import { describe, expect, it } from 'vitest';
import type { MappedItem, MappedRecord } from '../mapping/types.ts';
import { compileMapping } from '../mapping/compile.ts';
import { parseMapping } from '../mapping/load.ts';
import { ColumnCensus, notCarriedLines } from './columns-not-carried.ts';
import { foldDuplicates, indexDuplicates, matchValueOf, MatchValueCheck, mergeRecord } from './duplicates.ts';
import { judgeMatch } from './matching.ts';

function person(
  row: number,
  key: string,
  record: Record<string, unknown>,
  extra: Partial<MappedRecord> = {},
): MappedRecord {
  return {
    kind: 'record',
    entity: 'party',
    key,
    row,
    location: { file: 'in.csv', row: row + 1 },
    record: { type: 'person', ...record },
    names: [],
    refs: [],
    attachments: [],
    valuesOf: () => ({}),
    ...extra,
  };
}

async function* from(items: MappedItem[]): AsyncGenerator<MappedItem> {
  yield* items;
}

async function all(items: AsyncIterable<MappedItem>): Promise<MappedItem[]> {
  const out: MappedItem[] = [];
  for await (const item of items) out.push(item);
  return out;
}

const EMAIL = { by: 'email', onMatch: 'update' } as const;

describe('mergeRecord', () => {
  it('fills empty fields, adds the list items the first row lacks, and moves their names to their new places', () => {
    const first = person(1, 'a', {
      lastName: 'Ada',
      emailAddresses: [{ address: 'a@x.example' }],
      fields: [{ definition: { name: 'Since' }, value: '2020' }],
    });
    first.names.push({
      path: ['fields', 0, 'definition'],
      kind: 'fieldDefinition',
      name: 'Since',
      yamlPath: 'fields[3]',
    });
    const later = person(2, 'a', {
      lastName: 'Other',
      jobTitle: 'Analyst',
      emailAddresses: [{ address: 'a@x.example' }, { address: 'b@x.example' }],
      fields: [
        { definition: { name: 'Since' }, value: '1999' },
        { definition: { name: 'Club' }, value: 'yes' },
      ],
      owner: { id: null },
    });
    later.names.push(
      { path: ['fields', 0, 'definition'], kind: 'fieldDefinition', name: 'Since', yamlPath: 'fields[3]' },
      { path: ['fields', 1, 'definition'], kind: 'fieldDefinition', name: 'Club', yamlPath: 'fields[4]' },
      { path: ['owner', 'id'], kind: 'user', name: 'kim', yamlPath: 'fields[5]' },
    );
    later.warnings = [{ code: 'VALUE_DROPPED', field: 'phone', message: 'left out' }];
    expect(mergeRecord(first, later)).toEqual(['jobTitle', '1 emailAddresses', '1 fields', 'owner']);
    expect(first.record).toMatchObject({
      lastName: 'Ada',
      jobTitle: 'Analyst',
      emailAddresses: [{ address: 'a@x.example' }, { address: 'b@x.example' }],
      owner: { id: null },
    });
    expect(first.record.fields).toEqual([
      { definition: { name: 'Since' }, value: '2020' },
      { definition: { name: 'Club' }, value: 'yes' },
    ]);
    expect(first.names.map((n) => `${n.name}@${n.path.join('.')}`)).toEqual([
      'Since@fields.0.definition',
      'Club@fields.1.definition',
      'kim@owner.id',
    ]);
    expect(first.warnings).toEqual(later.warnings);
  });
});

describe('onDuplicate', () => {
  const rows = (): MappedItem[] => [
    person(1, '101', { lastName: 'Ada', emailAddresses: [{ address: 'ada@x.example' }] }),
    person(2, '102', { lastName: 'Bob' }),
    person(3, '101', { lastName: 'Ada', jobTitle: 'Analyst', emailAddresses: [{ address: 'ada@x.example' }] }),
    person(4, '103', { lastName: 'Ada L', emailAddresses: [{ address: 'ADA@x.example' }] }),
    person(5, '102', { lastName: 'Bob' }),
  ];

  it('reject: a second row with one match value is a problem naming the first row', () => {
    const check = new MatchValueCheck(EMAIL, 'reject');
    const results = rows().map((item) => check.check(item as MappedRecord));
    expect(results.map((r) => r?.field)).toEqual([undefined, undefined, undefined, 'match', undefined]);
    expect(results[3]?.message).toContain("the row with key '101' has the same email (ada@x.example)");
  });

  it('a fallback list: each row is checked by the first criterion it has a value for', () => {
    const check = new MatchValueCheck({ by: ['email', 'name'], onMatch: 'update' }, 'reject');
    const results = [...rows(), person(6, '104', { lastName: 'Bob' })].map((item) => check.check(item as MappedRecord));
    // Row 4 shares Ada's address; row 6 (no address, another key) has the name of row 2.
    expect(results.map((r) => r?.field)).toEqual([undefined, undefined, undefined, 'match', undefined, 'match']);
    expect(results[5]?.message).toContain("the row with key '102' has the same name (bob)");
    expect(matchValueOf(rows()[1] as MappedRecord, { by: ['email', 'name'], onMatch: 'update' })).toEqual({
      by: 'name',
      value: 'bob',
    });
  });

  it('separate: rows of one match value are records of their own, each given another record of the account', () => {
    const check = new MatchValueCheck(EMAIL, 'separate');
    expect(rows().map((item) => check.check(item as MappedRecord))).toEqual([
      undefined,
      undefined,
      undefined,
      undefined,
      undefined,
    ]);
    const found = [{ id: 9 }, { id: 4 }];
    const match = { by: 'name', value: 'acme' } as const;
    const spec = { by: 'name', onMatch: 'update' } as const;
    expect(judgeMatch(spec, match, found, new Set(), 'reject')).toMatchObject({
      kind: 'conflict',
      message: expect.stringContaining('2 records in the account have name acme'),
    });
    expect(judgeMatch(spec, match, found, new Set(), 'separate')).toEqual({ kind: 'found', record: { id: 4 } });
    expect(judgeMatch(spec, match, found, new Set([4]), 'separate')).toEqual({ kind: 'found', record: { id: 9 } });
    expect(judgeMatch(spec, match, found, new Set([4, 9]), 'separate')).toEqual({ kind: 'none' });
  });

  it("within: only a record linked to the row's own party counts; without the row (validate) any does", () => {
    const spec = { by: 'name', onMatch: 'update', within: 'party' } as const;
    const match = { by: 'name', value: 'renewal' } as const;
    const found = [
      { id: 3, party: { id: 70 } },
      { id: 5, party: { id: 71 } },
    ];
    expect(judgeMatch(spec, match, found, new Set(), 'reject', { party: { id: 71 } })).toEqual({
      kind: 'found',
      record: found[1],
    });
    expect(judgeMatch(spec, match, found, new Set(), 'reject', { party: { id: 72 } })).toEqual({ kind: 'none' });
    expect(judgeMatch(spec, match, found, new Set(), 'reject')).toMatchObject({ kind: 'conflict' });
    // People within their organisation: a row without one matches only a person without one.
    const people = [{ id: 8, organisation: { id: 70 } }, { id: 9 }];
    expect(
      judgeMatch({ by: 'name', onMatch: 'update', within: 'organisation' }, match, people, new Set(), 'reject', {}),
    ).toEqual({ kind: 'found', record: { id: 9 } });
  });

  it('merge: the first row waits for its later rows, by key and by match value, and says what each added', async () => {
    const index = await indexDuplicates(from(rows()), EMAIL);
    const out = await all(foldDuplicates(from(rows()), index, 'merge'));
    expect(
      out.map((i) =>
        i.kind === 'record'
          ? `record ${i.key}`
          : i.kind === 'skipped'
            ? `folded ${i.folded?.key}->${i.folded?.into}`
            : i.kind,
      ),
    ).toEqual([
      // Ada waits for her last later row (row 5), Bob for his (row 6); each goes out before it.
      'folded 101->101',
      'record 101',
      'folded 103->101',
      'record 102',
      'folded 102->102',
    ]);
    const ada = out.find((i) => i.kind === 'record' && i.key === '101') as MappedRecord;
    expect(ada.record.jobTitle).toBe('Analyst');
    expect(ada.warnings?.map((w) => [w.code, w.value, w.message])).toEqual([
      ['DUPLICATE_MERGED', '101', 'row 4 has the same key and was merged in: jobTitle'],
      ['DUPLICATE_MERGED', '103', 'row 5 has the same email (ada@x.example) and was merged in, adding nothing'],
    ]);
    // Bob's second row gives the same values: folded without a word.
    expect((out.find((i) => i.kind === 'record' && i.key === '102') as MappedRecord).warnings).toBeUndefined();
  });

  it('first: the first row goes out at once, with a warning per later row that differs', async () => {
    const index = await indexDuplicates(from(rows()), EMAIL);
    const out = await all(foldDuplicates(from(rows()), index, 'first'));
    const ada = out[0] as MappedRecord;
    expect(ada.key).toBe('101');
    expect(ada.record.jobTitle).toBeUndefined();
    expect(ada.warnings?.map((w) => `${w.code} ${w.value}`)).toEqual([
      'DUPLICATE_DROPPED 101',
      'DUPLICATE_DROPPED 103',
    ]);
    expect(out.filter((i) => i.kind === 'skipped')).toHaveLength(3);
  });
});

describe('ColumnCensus', () => {
  it('counts the rows with a value in each column no field reads, by position and by name', () => {
    const census = new ColumnCensus({
      readsColumn: (column) => column === 'id' || column === 'name',
      leftOutBecause: () => undefined,
    });
    const header = ['id', 'name', 'notes', 'created', ''];
    census.countFields(['1', 'A', 'x', ' ', 'stray'], header);
    census.countFields(['2', 'B', 'y', '2020-01-01', null], header);
    census.countValues({ id: '3', notes: '', created: '2021-01-01', 'phone.3.phoneNumber': '+44 20 7946 0000' });
    expect(census.result()).toEqual([
      { column: 'created', rows: 2 },
      { column: 'notes', rows: 2 },
      { column: 'phone.3.phoneNumber', rows: 1 },
    ]);
  });

  it('takes numbered columns the mapping reads as read, and lists the columns it leaves out on purpose last, with the reason', async () => {
    const mapping = parseMapping(
      `version: 1
entity: party
key: "{{id}}"
leaveOut: { createdOn: the service sets it, "email.*.id": ids are the old system's }
fields:
  - {to: lastName, value: {column: name}}
  - {to: email, items: numbered, type: {column: 'email.*.type'}, value: {column: 'email.*.emailAddress'}}
`,
      '/maps/m.yaml',
    );
    const census = new ColumnCensus(await compileMapping(mapping, { file: '/maps/m.yaml' }));
    census.countValues({
      id: '1',
      name: 'A',
      'email.1.type': 'Work',
      'email.1.emailAddress': 'a@example.com',
      'email.1.id': '7',
      'email.2.id': '8',
      createdOn: '2020-01-01',
      fax: '1',
    });
    census.countValues({
      id: '2',
      name: 'B',
      'email.12.emailAddress': 'b@example.com',
      'email.12.id': '9',
      createdOn: '2020-01-02',
    });
    const result = census.result();
    expect(result).toEqual([
      { column: 'fax', rows: 1 },
      { column: 'createdOn', rows: 2, reason: 'the service sets it' },
      { column: 'email.1.id', rows: 1, reason: "ids are the old system's" },
      { column: 'email.12.id', rows: 1, reason: "ids are the old system's" },
      { column: 'email.2.id', rows: 1, reason: "ids are the old system's" },
    ]);
    expect(notCarriedLines(result, '')).toEqual([
      'not carried: column "fax", 1 row with a value',
      'left out: "createdOn": the service sets it',
      `left out: "email.1.id", "email.12.id", "email.2.id": ids are the old system's`,
    ]);
  });

  it('refuses a mapping that leaves out a column its fields read', async () => {
    const mapping = parseMapping(
      'version: 1\nentity: party\nkey: "{{id}}"\nleaveOut: { "email.*.type": no }\nfields:\n  - {to: email, items: numbered, type: {column: "email.*.type"}, value: {column: "email.*.emailAddress"}}\n',
      '/maps/m.yaml',
    );
    await expect(compileMapping(mapping, { file: '/maps/m.yaml' })).rejects.toMatchObject({
      code: 'MAPPING_INVALID',
      location: { yamlPath: 'leaveOut.email.*.type' },
    });
  });
});
