import { describe, expect, it } from 'vitest';
import type { AccountCatalog } from '../mapping/resolve-catalog.ts';
import { availableColumns, chooseColumns } from './columns.ts';

function catalogWith(kases: Array<{ id: number; name: string; tag?: string }>): AccountCatalog {
  return {
    users: [],
    teams: [],
    pipelines: [],
    milestones: [],
    activityTypes: [],
    taskCategories: [],
    trackDefinitions: [],
    fieldDefinitions: { parties: [], opportunities: [], kases: kases.map((d) => ({ id: d.id, name: d.name, tag: d.tag ?? null, type: 'Text' })) },
  };
}

describe('custom field columns', () => {
  it('a custom field named like another column gets its own name, and each column its own value', () => {
    const catalog = catalogWith([
      { id: 7, name: 'Status' },
      { id: 8, name: 'Region' },
      { id: 9, name: 'region' },
      { id: 10, name: 'Status (custom field)' },
    ]);
    const columns = availableColumns('kases', catalog);
    const names = columns.map((c) => c.name);
    expect(new Set(names.map((n) => n.toLowerCase())).size).toBe(names.length);
    expect(names.slice(-4)).toEqual(['Status (custom field)', 'Region', 'region (custom field)', 'Status (custom field) (custom field)']);
    const record = { status: 'OPEN', fields: [{ definition: { id: 7 }, value: 'Blocked' }, { definition: { id: 9 }, value: 'North' }] };
    const [status, custom, region] = chooseColumns('kases', catalog, ['status', 'Status (custom field)', 'region (custom field)']);
    expect(status?.value(record)).toBe('OPEN');
    expect(custom?.value(record)).toBe('Blocked');
    expect(region?.value(record)).toBe('North');
  });

  it('a third field of one name is told apart by its id', () => {
    const names = availableColumns('kases', catalogWith([{ id: 7, name: 'Status' }, { id: 8, name: 'Status' }])).map((c) => c.name);
    expect(names.slice(-2)).toEqual(['Status (custom field)', 'Status (custom field 8)']);
  });
});
