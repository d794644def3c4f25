import { describe, expect, it } from 'vitest';
import type { CatalogFieldDefinition } from '../client/index.ts';
import { refusedFieldValue } from './field-rules.ts';
import { CatalogResolver, resolveRecord } from './resolve.ts';
import type { MappedRecord } from './types.ts';

const INDUSTRY: CatalogFieldDefinition = {
  id: 1,
  name: 'Industry',
  tag: null,
  type: 'List',
  options: ['Retail', 'Finance'],
};
const ACCOUNT: CatalogFieldDefinition = {
  id: 2,
  name: 'Account number',
  tag: null,
  type: 'Text',
  pattern: '^[A-Z]{2}-\\d{4}$',
};
const SINCE: CatalogFieldDefinition = { id: 3, name: 'Since', tag: null, type: 'Date' };
const VIP: CatalogFieldDefinition = { id: 4, name: 'VIP', tag: null, type: 'Boolean' };
const LANGUAGE: CatalogFieldDefinition = { id: 5, name: 'Language', tag: null, type: 'Text', forClass: 'PERSON' };
const FREE: CatalogFieldDefinition = { id: 6, name: 'Note', tag: null, type: 'Text' };

describe('refusedFieldValue: what the service refuses, said before a request', () => {
  it.each([
    [INDUSTRY, 'Retail', undefined, null],
    [INDUSTRY, 'retail', undefined, 'one of the choices of Industry: Retail, Finance'],
    [INDUSTRY, 'Groothandel', undefined, 'one of the choices of Industry: Retail, Finance'],
    [ACCOUNT, 'NL-1234', undefined, null],
    [ACCOUNT, '1234', undefined, 'text matching the pattern of Account number (^[A-Z]{2}-\\d{4}$)'],
    [SINCE, '2024-02-29', undefined, null],
    [SINCE, '2023-02-29', undefined, 'a date (YYYY-MM-DD) for the Date field Since'],
    [SINCE, '29/02/2024', undefined, 'a date (YYYY-MM-DD) for the Date field Since'],
    [VIP, true, undefined, null],
    [VIP, 'ja', undefined, 'yes or no (true or false) for the Boolean field VIP'],
    [FREE, 'anything', undefined, null],
    [LANGUAGE, 'Dutch', 'person', null],
  ])('%j takes %j: %j', (definition, value, partyClass, expected) => {
    expect(refusedFieldValue(definition, value, partyClass)?.expected ?? null).toBe(expected);
  });

  it('a field for people only is refused on an organisation', () => {
    expect(refusedFieldValue(LANGUAGE, 'Dutch', 'organisation')?.message).toBe(
      'Language is a field of people only, and this record is an organisation',
    );
  });

  it("an account's pattern that would backtrack for ever is run in linear time", () => {
    const greedy: CatalogFieldDefinition = { id: 8, name: 'Code', tag: null, type: 'Text', pattern: '^(a+)+$' };
    expect(refusedFieldValue(greedy, `${'a'.repeat(50_000)}!`, undefined)?.expected).toBe(
      'text matching the pattern of Code (^(a+)+$)',
    );
  });

  it('a List whose choices the service did not give is not checked', () => {
    expect(refusedFieldValue({ id: 7, name: 'Sector', tag: null, type: 'List' }, 'Anything', undefined)).toBeNull();
  });
});

function record(fields: Array<{ value: unknown }>, onInvalid: 'reject' | 'drop'): MappedRecord {
  return {
    kind: 'record',
    row: 2,
    location: { file: 'c.csv', row: 2 },
    key: '1',
    record: { type: 'organisation', name: 'X', fields: fields.map((f) => ({ definition: null, ...f })) },
    names: [
      {
        path: ['fields', 0, 'definition'],
        kind: 'fieldDefinition',
        name: 'Industry',
        scope: { entity: 'parties', tag: null },
        yamlPath: 'fields[2]',
        onInvalid,
        valueColumn: 'Sector',
      },
      {
        path: ['fields', 1, 'definition'],
        kind: 'fieldDefinition',
        name: 'Account number',
        scope: { entity: 'parties', tag: null },
        yamlPath: 'fields[3]',
        onInvalid,
        valueColumn: 'Nr',
      },
    ],
    refs: [],
    attachments: [],
    valuesOf: () => ({}),
  } as unknown as MappedRecord;
}

describe('resolveRecord checks custom field values against their definitions', () => {
  const resolver = new CatalogResolver({
    users: [],
    teams: [],
    pipelines: [],
    milestones: [],
    activityTypes: [],
    taskCategories: [],
    trackDefinitions: [],
    fieldDefinitions: { parties: [INDUSTRY, ACCOUNT], kases: [], opportunities: [] },
  });

  it('rejects the row with a reason per refused value (onInvalid: reject)', () => {
    const problems = resolveRecord(record([{ value: 'Groothandel' }, { value: '12' }], 'reject'), resolver);
    expect(problems.map((p) => [p.field, p.code, p.column, p.value, p.expected])).toEqual([
      ['fields[2]', 'MAPPING_VALUE', 'Sector', 'Groothandel', 'one of the choices of Industry: Retail, Finance'],
      ['fields[3]', 'MAPPING_VALUE', 'Nr', '12', 'text matching the pattern of Account number (^[A-Z]{2}-\\d{4}$)'],
    ]);
  });

  it('leaves the refused values out with a warning each (onInvalid: drop), the ids of the others in place', () => {
    const mapped = record([{ value: 'Groothandel' }, { value: 'NL-1234' }], 'drop');
    expect(resolveRecord(mapped, resolver)).toEqual([]);
    expect(mapped.record.fields).toEqual([{ definition: 2, value: 'NL-1234' }]);
    expect(mapped.warnings?.map((w) => [w.code, w.column, w.value])).toEqual([
      ['VALUE_DROPPED', 'Sector', 'Groothandel'],
    ]);
  });
});
