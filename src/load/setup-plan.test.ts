import { describe, expect, it } from 'vitest';
import type { AccountCatalog, NameUse } from '../mapping/index.ts';
import { type NameNeed, planSetup } from './setup-plan.ts';

const CATALOG: AccountCatalog = {
  users: [],
  teams: [],
  pipelines: [],
  milestones: [],
  activityTypes: [],
  taskCategories: [],
  fieldDefinitions: { parties: [], kases: [], opportunities: [] },
  trackDefinitions: [],
  stages: [{ id: 101, name: 'Planned', boardName: 'Projects' }],
  lostReasons: [{ id: 111, name: 'Price' }],
};
const SPEC = { derive: true, pipelines: [], milestones: [], activityTypes: [], trackDefinitions: [] };

function need(kind: NameUse['kind'], name: string, entity: NameNeed['entity']): NameNeed {
  return { use: { path: [kind], kind, name, yamlPath: 'fields[0]' }, entity, steps: new Set(['step']), rows: 2 };
}

describe('set-up: project stages and lost reasons (the interface lists them, cannot create them)', () => {
  const needs = [
    need('stage', 'Shipping', 'kase'),
    need('stage', 'planned', 'kase'),
    need('lostReason', 'Too slow', 'opportunity'),
    need('lostReason', 'PRICE', 'opportunity'),
  ];

  it('lists those the account lacks for a person to make, and creates none', () => {
    const plan = planSetup(SPEC, needs, CATALOG);
    expect(plan.create).toEqual([]);
    expect(plan.checklist.map((c) => [c.kind, c.name, c.rows])).toEqual([
      ['stage', 'Shipping', 2],
      ['lostReason', 'Too slow', 2],
    ]);
  });

  it('lists none where the account does not list them (their names cannot be checked)', () => {
    expect(planSetup(SPEC, needs, { ...CATALOG, stages: null, lostReasons: undefined }).checklist).toEqual([]);
  });
});
