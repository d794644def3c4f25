import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { mappingRefs, orderSteps, type StepDependencies } from './order.ts';

/** `people:companies,teams` means step people refers to companies and teams. */
function steps(spec: string): StepDependencies[] {
  return spec.split(' ').map((part) => {
    const [name = '', refs = ''] = part.split(':');
    return {
      name,
      refs:
        refs === ''
          ? []
          : refs
              .split(',')
              .map((step, i) => ({ step, location: { file: `${name}.yaml`, yamlPath: `fields[${i}].ref` } })),
    };
  });
}

function thrown(fn: () => unknown): FerryError {
  try {
    fn();
  } catch (error) {
    if (error instanceof FerryError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

describe('orderSteps', () => {
  it.each([
    ['no references keeps the file order', 'a b c', 'a b c'],
    ['a step moves after the step it refers to', 'people:companies companies', 'companies people'],
    [
      'independent steps keep their order around a moved one',
      'notes:people tasks people companies',
      'tasks people notes companies',
    ],
    ['a chain is ordered from its root', 'tasks:deals deals:people people:orgs orgs', 'orgs people deals tasks'],
    ['two references: after both', 'deals:people,orgs people orgs', 'people orgs deals'],
    ['an already ordered plan stays as it is', 'orgs people:orgs deals:people', 'orgs people deals'],
    ['diamond', 'd:b,c b:a c:a a', 'a b c d'],
    ['the same reference twice', 'notes:people,people people', 'people notes'],
  ])('%s', (_title, input, expected) => {
    expect(
      orderSteps(steps(input))
        .map((s) => s.name)
        .join(' '),
    ).toBe(expected);
  });

  it.each([
    ['two steps', 'people:companies companies:people', 'people -> companies -> people'],
    ['a step referring to itself', 'orgs:orgs', 'orgs -> orgs'],
    ['three steps, found from the first step in file order', 'a b:c c:d d:b', 'b -> c -> d -> b'],
    ['a cycle behind an innocent step', 'x:a a:b b:a', 'a -> b -> a'],
  ])('cycle: %s', (_title, input, cycle) => {
    const error = thrown(() => orderSteps(steps(input)));
    expect(error.code).toBe('PLAN_CYCLE');
    expect(error.message).toBe(`the steps refer to each other in a circle: ${cycle}`);
    // Points at the ref that closes the circle's first link.
    const first = cycle.split(' -> ')[0];
    expect(error.location?.file).toBe(`${first}.yaml`);
  });

  it.each([
    [
      'a typo gets a suggestion',
      'people:compnies companies',
      'step people refers to step `compnies`, which the plan does not have; did you mean `companies`?',
    ],
    [
      'nothing close: no suggestion',
      'people:invoices companies',
      'step people refers to step `invoices`, which the plan does not have',
    ],
  ])('unknown step: %s', (_title, input, message) => {
    const error = thrown(() => orderSteps(steps(input)));
    expect(error.code).toBe('PLAN_INVALID');
    expect(error.message).toBe(message);
    expect(error.location).toEqual({ file: 'people.yaml', yamlPath: 'fields[0].ref' });
  });

  it("returns the caller's objects, so extra data travels along", () => {
    const input = [
      { name: 'b', refs: [{ step: 'a', location: {} }], extra: 2 },
      { name: 'a', refs: [], extra: 1 },
    ];
    expect(orderSteps(input).map((s) => s.extra)).toEqual([1, 2]);
  });
});

describe('mappingRefs', () => {
  it('lists the ref entries of a mapping with their YAML paths', () => {
    const refs = mappingRefs(
      {
        fields: [
          { to: 'name', value: '{{Name}}' },
          { to: 'party', ref: 'people', key: '{{Contact}}' },
          { to: 'opportunity', ref: 'deals', key: '{{Deal}}' },
        ],
      },
      'notes.yaml',
    );
    expect(refs).toEqual([
      { step: 'people', location: { file: 'notes.yaml', yamlPath: 'fields[1].ref' } },
      { step: 'deals', location: { file: 'notes.yaml', yamlPath: 'fields[2].ref' } },
    ]);
  });
});

describe('a ref naming several steps', () => {
  const mapping = {
    fields: [
      { to: 'description', value: '{{text}}' },
      { to: 'party', ref: ['people', 'organisations'], key: '{{partyId}}' },
      { to: 'kase', ref: 'kases', key: '{{caseId}}' },
    ],
  };

  it('gives one StepRef per named step, each pointing at its place in the list', () => {
    expect(mappingRefs(mapping, 'tasks.yaml')).toEqual([
      { step: 'people', location: { file: 'tasks.yaml', yamlPath: 'fields[1].ref[0]' } },
      { step: 'organisations', location: { file: 'tasks.yaml', yamlPath: 'fields[1].ref[1]' } },
      { step: 'kases', location: { file: 'tasks.yaml', yamlPath: 'fields[2].ref' } },
    ]);
  });

  it('orders the step after every step its list names', () => {
    const ordered = orderSteps([
      { name: 'tasks', refs: mappingRefs(mapping) },
      { name: 'people', refs: [] },
      { name: 'kases', refs: [] },
      { name: 'organisations', refs: [] },
    ]);
    expect(ordered.map((s) => s.name)).toEqual(['people', 'kases', 'organisations', 'tasks']);
  });

  it('finds a cycle through the second step of a list', () => {
    const error = thrown(() =>
      orderSteps([
        {
          name: 'organisations',
          refs: mappingRefs({ fields: [{ to: 'party', ref: 'tasks', key: '{{x}}' }] }, 'organisations.yaml'),
        },
        { name: 'tasks', refs: mappingRefs(mapping, 'tasks.yaml') },
        { name: 'people', refs: [] },
        { name: 'kases', refs: [] },
      ]),
    );
    expect(error.code).toBe('PLAN_CYCLE');
    expect(error.message).toBe('the steps refer to each other in a circle: organisations -> tasks -> organisations');
  });

  it('an unknown step in the list gets a did-you-mean and the place of that list item', () => {
    const typo = { fields: [{ to: 'party', ref: ['people', 'organsations'], key: '{{partyId}}' }] };
    const error = thrown(() =>
      orderSteps([
        { name: 'tasks', refs: mappingRefs(typo, 'tasks.yaml') },
        { name: 'people', refs: [] },
        { name: 'organisations', refs: [] },
      ]),
    );
    expect(error.code).toBe('PLAN_INVALID');
    expect(error.message).toBe(
      'step tasks refers to step `organsations`, which the plan does not have; did you mean `organisations`?',
    );
    expect(error.location).toEqual({ file: 'tasks.yaml', yamlPath: 'fields[0].ref[1]' });
  });
});
