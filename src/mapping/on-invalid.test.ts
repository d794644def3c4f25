import { describe, expect, it } from 'vitest';
import type { CellValue, SourceRow } from '../sources/types.ts';
import { compileMapping } from './compile.ts';
import type { CompiledMapping } from './compile.ts';
import { parseMapping } from './load.ts';
import type { MappedItem, MappedRecord } from './types.ts';

async function compile(entity: string, body: string): Promise<CompiledMapping> {
  const text = `version: 1\nentity: ${entity}\nkey: "{{id}}"\n${body}`;
  return compileMapping(parseMapping(text, '/maps/m.yaml'), { file: '/maps/m.yaml' });
}

function map(compiled: CompiledMapping, values: Record<string, CellValue>): MappedItem {
  const row: SourceRow = {
    kind: 'row',
    source: 'in.csv',
    row: 1,
    values: { id: '1', ...values },
    location: { file: '/data/in.csv', row: 2 },
  };
  return compiled.mapRow(row);
}

function record(item: MappedItem): MappedRecord {
  if (item.kind !== 'record') throw new Error(`expected a record, got ${JSON.stringify(item)}`);
  return item;
}

const person = (email: string, extra = ''): string => `${extra}fields:
  - {to: lastName, value: {column: l}}
  - {to: email, value: {column: e, transform: [email]}${email}}
`;

describe('onInvalid', () => {
  it.each([
    ['reject (the default)', '', 'rejected'],
    ['field drop', ', onInvalid: drop', 'dropped'],
    ['mapping-wide drop', '', 'dropped', 'onInvalid: drop\n'],
    ['field keep', ', onInvalid: keep', 'kept'],
    ['field reject over a mapping-wide drop', ', onInvalid: reject', 'rejected', 'onInvalid: drop\n'],
  ])('a malformed email under %s', async (_name, field, outcome, mappingWide = '') => {
    const item = map(await compile('party', person(field, mappingWide)), { l: 'Lovelace', e: 'ada at example' });
    if (outcome === 'rejected') {
      expect(item).toMatchObject({ kind: 'rejected', code: 'MAPPING_VALUE', field: 'email' });
      return;
    }
    const mapped = record(item);
    expect(mapped.record.lastName).toBe('Lovelace');
    if (outcome === 'dropped') {
      expect(mapped.record.emailAddresses).toBeUndefined();
      expect(mapped.warnings).toEqual([
        expect.objectContaining({ code: 'VALUE_DROPPED', field: 'email', value: 'ada at example' }),
      ]);
    } else {
      expect(mapped.record.emailAddresses).toEqual([{ address: 'ada at example' }]);
      expect(mapped.warnings).toEqual([
        expect.objectContaining({ code: 'VALUE_KEPT', field: 'email', value: 'ada at example' }),
      ]);
    }
  });

  it.each([
    [
      'drop',
      [
        { type: 'Work', address: 'ada@example.com' },
        { type: 'Other', address: 'a.l@example.org' },
      ],
      'VALUE_DROPPED',
    ],
    [
      'keep',
      [
        { type: 'Work', address: 'ada@example.com' },
        { type: 'Home', address: 'ada at home' },
        { type: 'Other', address: 'a.l@example.org' },
      ],
      'VALUE_KEPT',
    ],
  ])(
    'with numbered items, %s holds for each item: the bad second email leaves the first and third',
    async (policy, emails, code) => {
      const compiled = await compile(
        'party',
        `fields:
  - {to: lastName, value: {column: l}}
  - {to: email, items: numbered, type: {column: 'email.*.type'}, value: {column: 'email.*.emailAddress', transform: [email]}, onInvalid: ${policy}}
`,
      );
      const mapped = record(
        map(compiled, {
          l: 'Lovelace',
          'email.1.type': 'Work',
          'email.1.emailAddress': 'ada@example.com',
          'email.2.type': 'Home',
          'email.2.emailAddress': 'ada at home',
          'email.3.type': 'Other',
          'email.3.emailAddress': 'a.l@example.org',
        }),
      );
      expect(mapped.record.emailAddresses).toEqual(emails);
      expect(mapped.warnings).toEqual([expect.objectContaining({ code, field: 'email', value: 'ada at home' })]);
    },
  );

  it('a good value carries no warning', async () => {
    const mapped = record(map(await compile('party', person(', onInvalid: drop')), { l: 'L', e: 'ada@example.com' }));
    expect(mapped.warnings).toBeUndefined();
    expect(mapped.record.emailAddresses).toEqual([{ address: 'ada@example.com' }]);
  });

  it('drops an unparseable amount and imports the opportunity without a value', async () => {
    const compiled = await compile(
      'opportunity',
      `fields:
  - {to: name, value: {column: n}}
  - {to: party, value: 7}
  - {to: milestone, value: Lead}
  - {to: amount, value: {column: a, transform: [number]}, onInvalid: drop}
  - {to: currency, value: EUR}
`,
    );
    const mapped = record(map(compiled, { n: 'Deal', a: 'about two grand' }));
    expect(mapped.record.value).toBeUndefined();
    expect(mapped.warnings?.map((w) => [w.code, w.field, w.value])).toEqual([
      ['VALUE_DROPPED', 'amount', 'about two grand'],
    ]);
    // The target's own check (a negative amount) is a bad value too.
    expect(record(map(compiled, { n: 'Deal', a: '-5' })).warnings?.[0]?.code).toBe('VALUE_DROPPED');
    expect(record(map(compiled, { n: 'Deal', a: '2000' })).record.value).toEqual({ amount: 2000, currency: 'EUR' });
  });

  it('required stays a reject under drop', async () => {
    const compiled = await compile(
      'party',
      'onInvalid: drop\nfields:\n  - {to: lastName, value: {column: l}, required: true}\n',
    );
    expect(map(compiled, { l: '' })).toMatchObject({ kind: 'rejected', field: 'lastName' });
  });

  it('a mapping-wide keep drops where the target cannot hold text (a date)', async () => {
    const compiled = await compile(
      'task',
      'onInvalid: keep\nfields:\n  - {to: description, value: Call}\n  - {to: dueOn, value: {column: d}}\n',
    );
    const item = map(compiled, { d: 'next week' });
    // The task needs dueOn: the record rule still rejects once the value is dropped.
    expect(item).toMatchObject({ kind: 'rejected', field: 'dueOn', message: 'a task needs a `dueOn` date' });
  });

  it("refuses a field's keep on a target that cannot hold text as typed", async () => {
    await expect(
      compile(
        'task',
        'fields:\n  - {to: description, value: Call}\n  - {to: dueOn, value: {column: d}, onInvalid: keep}\n',
      ),
    ).rejects.toThrow(/cannot hold a value as typed/);
  });

  it("the phone transform's invalid: keep is onInvalid: keep, with its warning", async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: L}\n  - {to: phone, value: {column: p, transform: [{phone: {defaultCountry: GB, invalid: keep}}]}}\n',
    );
    const kept = record(map(compiled, { p: ' ask reception ' }));
    expect(kept.record.phoneNumbers).toEqual([{ number: 'ask reception' }]);
    expect(kept.warnings?.[0]).toMatchObject({ code: 'VALUE_KEPT', field: 'phone', value: 'ask reception' });
    expect(record(map(compiled, { p: '020 7946 0000' })).record.phoneNumbers).toEqual([{ number: '+442079460000' }]);
  });
});

describe('links with several keys and a fallback', () => {
  const contact = (extra: string): Promise<CompiledMapping> =>
    compile(
      'party',
      `fields:\n  - {to: lastName, value: L}\n  - to: organisation\n    ref: companies\n    key: ["{{cid}}", "{{cname}}"]\n${extra}`,
    );

  it('takes the filled keys in order', async () => {
    const compiled = await contact('');
    expect(record(map(compiled, { cid: '12', cname: 'Acme' })).refs).toEqual([
      expect.objectContaining({ key: '12', alternatives: ['Acme'] }),
    ]);
    const byName = record(map(compiled, { cid: '', cname: 'Acme' }));
    expect(byName.refs[0]?.key).toBe('Acme');
    expect(byName.refs[0]?.alternatives).toBeUndefined();
    expect(record(map(compiled, { cid: '', cname: '' })).refs).toEqual([]);
  });

  it('writes the value beside ref when no key is filled, and keeps it as the fallback of a filled one', async () => {
    const compiled = await compile(
      'party',
      'fields:\n  - {to: lastName, value: L}\n  - {to: organisation, ref: companies, key: "{{cid}}", value: {column: cname}}\n',
    );
    const none = record(map(compiled, { cid: '', cname: 'Acme' }));
    expect(none.record.organisation).toEqual({ name: 'Acme' });
    expect(none.refs).toEqual([]);
    const both = record(map(compiled, { cid: '12', cname: 'Acme' }));
    expect(both.refs[0]).toMatchObject({ key: '12', fallback: { name: 'Acme' } });
    expect(both.refs[0]?.required).toBeUndefined();
  });

  it('marks the links a record cannot go without as required', async () => {
    const compiled = await compile(
      'kase',
      'fields:\n  - {to: name, value: P}\n  - {to: party, ref: people, key: "{{pid}}"}\n',
    );
    expect(record(map(compiled, { pid: '3' })).refs[0]?.required).toBe(true);
  });
});
