import { describe, expect, it } from 'vitest';
import type { MappedItem, MappedRecord } from '../mapping/index.ts';
import { RowChecks } from './row-checks.ts';

function row(key: string, record: Record<string, unknown> = { name: key }, line = 2): MappedRecord {
  return {
    kind: 'record',
    entity: 'party',
    row: line,
    location: { file: 'f.csv', row: line },
    key,
    record,
    names: [],
    refs: [],
    attachments: [],
    valuesOf: () => ({}),
  } as unknown as MappedRecord;
}

function rejected(key: string | null, line = 2): MappedItem {
  return {
    kind: 'rejected',
    row: line,
    location: { file: 'f.csv', row: line },
    key,
    field: 'lastName',
    code: 'MAPPING_VALUE',
    message: 'no value',
    values: {},
  };
}

describe('RowChecks: the one order of row checks the run, validate, verify and the preview share', () => {
  it('a key an earlier row has is a duplicate, whether that row was ready or rejected; the duplicate is not the row’s own', () => {
    const checks = new RowChecks('people', { onDuplicate: 'reject' }, false);
    expect(checks.check(row('C-1')).kind).toBe('ready');
    expect(checks.check(rejected('C-2')).kind).toBe('rejected');
    const again = checks.check(row('C-1', { name: 'C-1' }, 4));
    expect(again).toMatchObject({
      kind: 'rejected',
      own: false,
      rejected: {
        field: 'key',
        code: 'MAPPING_VALUE',
        message:
          "duplicate key 'C-1': an earlier row of step people has the same key; keys must be unique within a step",
      },
    });
    expect(checks.check(row('C-2')).kind).toBe('rejected');
    expect(new RowChecks('orgs', { onDuplicate: 'reject' }, false).check(row('C-1')).kind).toBe('ready');
  });

  it('in a step others link to, a key may come again with the same values: the same record, repeated', () => {
    const checks = new RowChecks('orgs', { onDuplicate: 'reject' }, true);
    expect(checks.check(row('Acme Ltd', { name: 'Acme Ltd', about: 'x' })).kind).toBe('ready');
    expect(checks.check(row('Acme Ltd', { name: 'Acme Ltd', about: 'x' })).kind).toBe('repeated');
    expect(checks.check(row('Acme Ltd', { name: 'Acme Ltd', about: 'y' }))).toMatchObject({
      kind: 'rejected',
      rejected: { message: expect.stringContaining('the same key with other values') },
    });
    // A row that did not map is no record to name again.
    expect(checks.check(rejected('Globex')).kind).toBe('rejected');
    expect(checks.check(row('Globex'))).toMatchObject({
      kind: 'rejected',
      rejected: { message: expect.stringContaining('keys must be unique within a step') },
    });
  });

  it('a match value an earlier row has is refused under onDuplicate: reject, and taken under separate', () => {
    const person = (key: string): MappedRecord =>
      row(key, { type: 'person', lastName: key, emailAddresses: [{ address: 'same@example.com' }] });
    const strict = new RowChecks('people', { match: { by: 'email', onMatch: 'update' }, onDuplicate: 'reject' }, false);
    expect(strict.check(person('A')).kind).toBe('ready');
    expect(strict.check(person('B'))).toMatchObject({ kind: 'rejected', own: true, rejected: { field: 'match' } });
    const separate = new RowChecks(
      'people',
      { match: { by: 'email', onMatch: 'update' }, onDuplicate: 'separate' },
      false,
    );
    expect(separate.check(person('A')).kind).toBe('ready');
    expect(separate.check(person('B')).kind).toBe('ready');
  });

  it('skipped and folded rows: a folded key stands for its record', () => {
    const checks = new RowChecks('people', { onDuplicate: 'merge' }, false);
    expect(checks.check({ kind: 'skipped', row: 2, location: { file: 'f.csv', row: 2 } }).kind).toBe('skipped');
    expect(
      checks.check({ kind: 'skipped', row: 3, location: { file: 'f.csv', row: 3 }, folded: { key: 'B', into: 'A' } }),
    ).toMatchObject({ kind: 'folded', key: 'B', into: 'A' });
    expect(checks.seen.has('B')).toBe(true);
    // Under merge a row of the first row's own key is folded before that row comes: not a duplicate then.
    expect(
      checks.check({ kind: 'skipped', row: 4, location: { file: 'f.csv', row: 4 }, folded: { key: 'A', into: 'A' } })
        .kind,
    ).toBe('folded');
    expect(checks.check(row('A')).kind).toBe('ready');
  });
});
