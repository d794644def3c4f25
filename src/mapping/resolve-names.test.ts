import { describe, expect, it } from 'vitest';
import {
  checkConstantNames,
  constantNames,
  constantOf,
  createResolver,
  offlineResolver,
  resolveRecord,
  type AccountCatalog,
} from './resolve.ts';
import type { Mapping } from './schema.ts';
import type { MappedRecord, NameResolver } from './types.ts';

/** A small account built by hand, for the branches the sandbox does not have. */
const catalog: AccountCatalog = {
  users: [
    { id: 1, username: 'ada', email: 'ada@example.com' },
    { id: 2, username: 'bob', email: undefined },
  ],
  teams: null,
  pipelines: [
    { id: 10, name: 'Sales' },
    { id: 11, name: 'Partners' },
  ],
  milestones: [
    { id: 20, name: 'Won', pipelineId: 10, pipelineName: 'Sales' },
    { id: 21, name: 'Lost', pipelineId: 10, pipelineName: 'Sales' },
    { id: 22, name: 'Signed', pipelineId: 11, pipelineName: 'Partners' },
  ],
  activityTypes: [{ id: -1, name: 'Note' }],
  taskCategories: [{ id: 30, name: 'Call' }],
  fieldDefinitions: {
    parties: [
      { id: 40, name: 'Level', tag: null },
      { id: 41, name: 'Level', tag: 'Customer' },
      { id: 42, name: 'Industry', tag: null },
    ],
    kases: [],
    opportunities: [{ id: 43, name: 'Source', tag: null }],
  },
  trackDefinitions: [{ id: 50, name: 'Onboarding' }],
};
const resolver = createResolver(catalog);

function record(names: MappedRecord['names'], body: Record<string, unknown>): MappedRecord {
  return {
    kind: 'record',
    entity: 'party',
    key: 'k',
    row: 2,
    location: { file: 'x.csv', row: 2 },
    record: body,
    names,
    refs: [],
    attachments: [],
    valuesOf: () => ({}),
  };
}

describe('CatalogResolver (by hand)', () => {
  it('users by email when the service lists it', () => {
    expect(resolver.resolve('user', 'ADA@example.com')).toBe(1);
    expect(resolver.resolve('user', 'bob@example.com')).toBeUndefined();
  });

  it('a custom field in several data tags needs the tag', () => {
    expect(resolver.resolve('fieldDefinition', 'Level', { entity: 'parties' })).toBeUndefined();
    expect(resolver.explain('fieldDefinition', 'Level', { entity: 'parties' })).toBe(
      'custom field `Level` of parties exists several times (no data tag, `Customer`); give its data tag with `tag:` (null for none)',
    );
    expect(resolver.resolve('fieldDefinition', 'Level', { entity: 'parties', tag: null })).toBe(40);
    expect(resolver.resolve('fieldDefinition', 'Level', { entity: 'parties', tag: 'Customer' })).toBe(41);
  });

  it('teams: names cannot be checked when the service lists none; ids pass', () => {
    expect(resolver.resolve('team', 'Sales')).toBeUndefined();
    expect(resolver.resolve('team', '7')).toBe(7);
    expect(resolver.explain('team', 'Sales')).toBe(
      "team `Sales` cannot be checked by name: the service does not list teams; give the team's id",
    );
  });

  it('suggests up to three names, closest first, and none that are far away', () => {
    const many = createResolver({
      ...catalog,
      taskCategories: ['Call', 'Cell', 'Calm', 'Cold', 'Meeting'].map((name, i) => ({ id: i + 1, name })),
    });
    expect(many.suggest('taskCategory', 'Cal')).toEqual(['Call', 'Calm', 'Cell']);
    expect(many.suggest('taskCategory', 'Invoice')).toEqual([]);
    expect(many.explain('taskCategory', 'Cal')).toBe(
      'unknown task category `Cal`; did you mean one of `Call`, `Calm`, `Cell`?',
    );
  });
});

describe('resolveRecord', () => {
  it('fills ids at their paths and reports the names that do not resolve', () => {
    const mapped = record(
      [
        { path: ['owner'], kind: 'user', name: 'ada', yamlPath: 'fields[0]' },
        {
          path: ['fields', 1, 'definition'],
          kind: 'fieldDefinition',
          name: 'Industy',
          scope: { entity: 'parties', tag: null },
          yamlPath: 'fields[3].definition',
        },
      ],
      {
        owner: null,
        fields: [
          { definition: 9, value: 'a' },
          { definition: null, value: 'b' },
        ],
      },
    );
    expect(resolveRecord(mapped, resolver)).toEqual([
      {
        field: 'fields[3].definition',
        code: 'MAPPING_UNKNOWN_NAME',
        message: 'unknown custom field `Industy` without a data tag of parties; did you mean `Industry`?',
        value: 'Industy',
        rule: 'fields[3].definition',
      },
    ]);
    expect(mapped.record.owner).toBe(1);
  });

  it('offline: checks nothing and fills nothing', () => {
    const mapped = record([{ path: ['owner'], kind: 'user', name: 'nobody', yamlPath: 'fields[0]' }], { owner: null });
    expect(resolveRecord(mapped, offlineResolver)).toEqual([]);
    expect(mapped.record.owner).toBeNull();
  });

  it('works with any NameResolver, using its suggestions', () => {
    const plain: NameResolver = { resolve: () => undefined, suggest: () => ['Won'] };
    const mapped = record([{ path: ['milestone'], kind: 'milestone', name: 'Wonn', yamlPath: 'fields[1]' }], {
      milestone: null,
    });
    expect(resolveRecord(mapped, plain)[0]?.message).toBe('unknown milestone `Wonn`; did you mean `Won`?');
  });

  it('a path that is not in the record is a bug, not a reject', () => {
    const mapped = record([{ path: ['a', 'b'], kind: 'user', name: 'ada', yamlPath: 'fields[0]' }], {});
    expect(() => resolveRecord(mapped, resolver)).toThrow(expect.objectContaining({ code: 'INTERNAL' }));
  });
});

describe('constant names of a mapping', () => {
  it.each([
    ['a plain string', 'Won', 'Won'],
    ['a number', 7, '7'],
    ['a template', '{{Stage}}', undefined],
    ['a column', { column: 'Stage' }, undefined],
    ['a const', { const: 'Won' }, 'Won'],
    ['a const with transforms', { const: 'won', transform: ['trim'] }, undefined],
    ['null', null, undefined],
    ['blank', '  ', undefined],
  ])('constantOf: %s', (_title, spec, expected) => {
    expect(constantOf(spec as never)).toBe(expected);
  });

  const opportunity = (fields: Mapping['fields']): Pick<Mapping, 'entity' | 'fields'> => ({
    entity: 'opportunity',
    fields,
  });

  it('finds milestones (scoped by a constant pipeline), owners, custom field definitions and tracks', () => {
    const found = constantNames(
      opportunity([
        { to: 'name', value: '{{Deal}}' },
        { to: 'pipeline', value: 'Sales' },
        { to: 'milestone', value: 'Won' },
        { to: 'owner', value: { column: 'Owner' } },
        { to: 'custom', definition: 'Source', tag: null, value: { column: 'Source' } },
        { to: 'tracks', value: 'Onboarding' },
      ]),
    );
    expect(found).toEqual([
      { kind: 'pipeline', name: 'Sales', yamlPath: 'fields[1].value' },
      { kind: 'milestone', name: 'Won', scope: { pipeline: 'Sales' }, yamlPath: 'fields[2].value' },
      {
        kind: 'fieldDefinition',
        name: 'Source',
        scope: { entity: 'opportunities', tag: null },
        yamlPath: 'fields[4].definition',
      },
      { kind: 'trackDefinition', name: 'Onboarding', yamlPath: 'fields[5].value' },
    ]);
  });

  it('a milestone under a pipeline from a column is left to the rows', () => {
    const found = constantNames(
      opportunity([
        { to: 'pipeline', value: { column: 'Pipeline' } },
        { to: 'milestone', value: 'Won' },
      ]),
    );
    expect(found).toEqual([]);
  });

  it('reports every unknown constant name with its YAML path; the offline resolver reports none', () => {
    const mapping = opportunity([
      { to: 'milestone', value: 'Wonn' },
      { to: 'custom', definition: 'Sourse', tag: null, value: 'x' },
      { to: 'owner', value: 'ada' },
    ]);
    expect(checkConstantNames(mapping, resolver)).toEqual([
      { yamlPath: 'fields[0].value', message: 'unknown milestone `Wonn` in any active pipeline; did you mean `Won`?' },
      {
        yamlPath: 'fields[1].definition',
        message: 'unknown custom field `Sourse` without a data tag of opportunities; did you mean `Source`?',
      },
    ]);
    expect(checkConstantNames(mapping, offlineResolver)).toEqual([]);
  });
});
