import { describe, expect, it } from 'vitest';
import { createResolver, resolveRecord, type AccountCatalog } from './resolve.ts';
import type { MappedRecord, NameUse } from './types.ts';

const catalog: AccountCatalog = {
  users: [
    { id: 1, username: 'admin', name: 'Alex Admin', email: 'admin@example.com' },
    { id: 2, username: 'sam', name: 'Sam Seller', email: 'sam@example.com' },
    { id: 3, username: 'sam2', name: 'Sam Seller', email: undefined },
    { id: 4, username: 'kim', name: 'Kim Keeper', email: undefined },
  ],
  teams: [{ id: 10, name: 'Sales' }],
  pipelines: [],
  milestones: [],
  activityTypes: [],
  taskCategories: [],
  fieldDefinitions: { parties: [], kases: [], opportunities: [] },
  trackDefinitions: [],
};
const resolver = createResolver(catalog);

function mapped(names: NameUse[], record: Record<string, unknown>): MappedRecord {
  return {
    kind: 'record',
    entity: 'party',
    key: 'k',
    row: 1,
    location: { file: 'in.csv', row: 2 },
    record,
    names,
    refs: [],
    attachments: [],
    valuesOf: () => ({}),
  };
}

describe('users by username, email address or name', () => {
  it.each([
    ['kim', 4],
    ['KIM', 4],
    ['sam@example.com', 2],
    ['Kim Keeper', 4],
    [' alex admin ', 1],
  ])('%s is user %i', (name, id) => {
    expect(resolver.resolve('user', name)).toBe(id);
  });

  it('refuses a name two users share, and says to give the username', () => {
    expect(resolver.resolve('user', 'Sam Seller')).toBeUndefined();
    expect(resolver.explain('user', 'Sam Seller')).toMatch(/ambiguous.*username or an email address/);
  });

  it('suggests full names too', () => {
    expect(resolver.suggest('user', 'Kim Keper')).toContain('Kim Keeper');
  });
});

describe('onUnknown', () => {
  const owner = (name: string, onUnknown?: 'reject' | 'drop'): NameUse => ({
    path: ['owner', 'id'],
    kind: 'user',
    name,
    yamlPath: 'fields[3]',
    ...(onUnknown ? { onUnknown } : {}),
  });

  it('rejects an unknown owner by default', () => {
    const record = mapped([owner('jsmith')], { lastName: 'L', owner: { id: null } });
    expect(resolveRecord(record, resolver)).toEqual([
      {
        field: 'fields[3]',
        code: 'MAPPING_UNKNOWN_NAME',
        message: 'unknown user `jsmith`',
        value: 'jsmith',
        rule: 'fields[3]',
      },
    ]);
    expect(record.warnings).toBeUndefined();
  });

  it('with drop, writes the record without the owner (the token user) and a USER_UNKNOWN warning', () => {
    const record = mapped([owner('jsmith', 'drop')], { lastName: 'L', owner: { id: null } });
    expect(resolveRecord(record, resolver)).toEqual([]);
    expect(record.record).toEqual({ lastName: 'L' });
    expect(record.warnings).toEqual([
      {
        code: 'USER_UNKNOWN',
        field: 'owner',
        value: 'jsmith',
        rule: 'fields[3]',
        message: "unknown user `jsmith`; the record goes to the token's user (onUnknown: drop)",
      },
    ]);
  });

  it('with drop, leaves out an unknown team with a NOT_CARRIED warning, and keeps a known owner', () => {
    const record = mapped(
      [
        owner('kim', 'drop'),
        { path: ['team', 'id'], kind: 'team', name: 'Marketing', yamlPath: 'fields[4]', onUnknown: 'drop' },
      ],
      { owner: { id: null }, team: { id: null } },
    );
    expect(resolveRecord(record, resolver)).toEqual([]);
    expect(record.record).toEqual({ owner: { id: 4 } });
    expect(record.warnings?.map((w) => [w.code, w.field, w.value])).toEqual([['NOT_CARRIED', 'team', 'Marketing']]);
  });
});

describe('constant names with onUnknown: drop', () => {
  it('are not checked before the run: each row warns instead', async () => {
    const { checkConstantNames } = await import('./resolve.ts');
    const fields = [{ to: 'owner', value: 'nobody' }];
    expect(checkConstantNames({ entity: 'party', fields }, resolver)).toHaveLength(1);
    expect(
      checkConstantNames(
        { entity: 'party', fields: [{ ...fields[0], onUnknown: 'drop' as const }] as never },
        resolver,
      ),
    ).toEqual([]);
  });
});
