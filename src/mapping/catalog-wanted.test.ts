import { describe, expect, it } from 'vitest';
import { catalogWithOnly } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { compileMapping } from './compile.ts';
import { TARGET_INFO } from './compile-targets.ts';
import { parseMapping } from './load.ts';
import { catalogWanted, checkConstantNames, createResolver, type AccountCatalog } from './resolve.ts';
import type { Entity } from './schema.ts';

/** An account with something in every list, so that a name of each kind can be looked up. */
const full: AccountCatalog = {
  users: [{ id: 1, username: 'ada', email: 'ada@example.com' }],
  teams: [{ id: 2, name: 'North' }],
  pipelines: [{ id: 10, name: 'Sales' }],
  milestones: [{ id: 20, name: 'Won', pipelineId: 10, pipelineName: 'Sales' }],
  activityTypes: [{ id: 3, name: 'Call' }],
  taskCategories: [{ id: 4, name: 'Follow-up' }],
  fieldDefinitions: {
    parties: [{ id: 40, name: 'Level', tag: null }],
    kases: [{ id: 41, name: 'Level', tag: null }],
    opportunities: [{ id: 42, name: 'Level', tag: null }],
  },
  trackDefinitions: [{ id: 50, name: 'Onboarding' }],
  stages: [{ id: 60, name: 'Planning', boardName: 'Projects' }],
  lostReasons: [{ id: 70, name: 'Price' }],
};

/** What each entity needs besides its names for a row to be a record. */
const REQUIRED: Record<Entity, string[]> = {
  party: ['- {to: name, value: Acme}'],
  kase: ['- {to: name, value: Fit-out}', '- {to: party, value: {column: pid}}'],
  opportunity: ['- {to: name, value: Deal}', '- {to: party, value: {column: pid}}'],
  entry: ['- {to: party, value: {column: pid}}', '- {to: content, value: Called}'],
  task: ['- {to: description, value: Call back}', '- {to: dueOn, value: 2026-12-01}'],
};

const NAME_TARGETS = new Set(['name', 'names', 'custom', 'pipeline']);

/** A name the account above has, for each target that holds one. */
const NAMES: Record<string, string> = {
  owner: 'ada',
  team: 'North',
  stage: 'Planning',
  tracks: 'Onboarding',
  pipeline: 'Sales',
  milestone: 'Won',
  lostReason: 'Price',
  activityType: 'Call',
  category: 'Follow-up',
  custom: 'x',
};

/**
 * A mapping of `entity` that writes every target the compiler's table says holds a name, each from
 * a column (`fromColumns`) or written in the mapping: a target added to the table is in it too.
 */
function everyName(entity: Entity, fromColumns: boolean): { yaml: string; targets: string[] } {
  const targets = Object.entries(TARGET_INFO[entity])
    .filter(([, info]) => NAME_TARGETS.has(info.kind))
    .map(([to]) => to);
  const value = (to: string): string => (fromColumns ? `{column: ${to}}` : (NAMES[to] ?? to));
  const fields = targets.map((to) =>
    to === 'custom'
      ? `- {to: custom, definition: Level, tag: null, value: ${value(to)}}`
      : `- {to: ${to}, value: ${value(to)}}`,
  );
  return {
    yaml: [
      'version: 1',
      `entity: ${entity}`,
      'key: "{{id}}"',
      'fields:',
      ...[...REQUIRED[entity], ...fields].map((line) => `  ${line}`),
      '',
    ].join('\n'),
    targets,
  };
}

describe('catalogWanted: the lists of names a run reads', () => {
  for (const entity of Object.keys(REQUIRED) as Entity[]) {
    it(`every name a row of ${entity} holds resolves against the lists its mapping asks for alone`, async () => {
      const { yaml, targets } = everyName(entity, true);
      const compiled = await compileMapping(parseMapping(yaml, '/maps/m.yaml'), { file: '/maps/m.yaml' });
      const resolver = createResolver(catalogWithOnly(full, catalogWanted([compiled.mapping])));
      const values = Object.fromEntries([['id', '1'], ['pid', 7], ...targets.map((to) => [to, NAMES[to] ?? to])]);
      const item = compiled.mapRow({
        kind: 'row',
        source: 'in.csv',
        row: 1,
        values,
        location: { file: '/data/in.csv', row: 2 },
      });
      if (item.kind !== 'record') throw new Error(`expected a record, got ${JSON.stringify(item)}`);
      // Every name-holding target but the pipeline (a milestone's scope) puts a name in the row.
      expect(new Set(item.names.map((use) => use.yamlPath)).size).toBe(
        targets.filter((to) => to !== 'pipeline').length,
      );
      for (const use of item.names) {
        expect(resolver.resolve(use.kind, use.name, use.scope), `${use.kind} ${use.name}`).toBeTypeOf('number');
        expect(() => resolver.explain(use.kind, use.name, use.scope)).not.toThrow();
      }
    });

    it(`the names a mapping of ${entity} writes as constants are checked against those lists alone`, async () => {
      const { yaml } = everyName(entity, false);
      const mapping = parseMapping(yaml, '/maps/m.yaml');
      expect(checkConstantNames(mapping, createResolver(catalogWithOnly(full, catalogWanted([mapping]))))).toEqual([]);
    });
  }

  it('asks for nothing but the users for a mapping that names nothing, and reading another list is an error', () => {
    const mapping = parseMapping(
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - {to: name, value: {column: n}}',
        '  - {to: tags, value: {column: t}}',
        '',
      ].join('\n'),
      '/maps/m.yaml',
    );
    const wanted = catalogWanted([mapping]);
    expect([...wanted.lists]).toEqual([]);
    expect([...wanted.fieldDefinitions]).toEqual([]);
    const narrowed = catalogWithOnly(full, wanted);
    expect(narrowed.users).toEqual(full.users);
    // A list not read is not an empty list (a set-up would create again what the account has).
    expect(() => narrowed.pipelines).toThrow(FerryError);
    expect(() => createResolver(narrowed).resolve('trackDefinition', 'Onboarding')).toThrow(
      /track definitions were not read for this run/,
    );
    expect(() => narrowed.fieldDefinitions.parties).toThrow(/custom fields of parties/);
  });

  it('reads the custom fields of an entity matched by one, and the pipelines for a milestone', () => {
    const people = parseMapping(
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'match: {by: custom, definition: Ref}',
        'fields:',
        '  - {to: name, value: {column: n}}',
        '',
      ].join('\n'),
      '/maps/p.yaml',
    );
    const deals = parseMapping(
      [
        'version: 1',
        'entity: opportunity',
        'key: "{{id}}"',
        'fields:',
        '  - {to: name, value: {column: n}}',
        '  - {to: milestone, value: {column: m}}',
        '  - {to: owner, value: {column: o}}',
        '',
      ].join('\n'),
      '/maps/o.yaml',
    );
    const wanted = catalogWanted([people, deals]);
    expect([...wanted.lists]).toEqual(['pipelines']);
    expect([...wanted.fieldDefinitions]).toEqual(['parties']);
  });
});
