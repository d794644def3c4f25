import { describe, expect, it } from 'vitest';
import { FilterError } from './filter-error.ts';
import { parseFilter, parseFilterBody } from './parse.ts';

function failure(run: () => unknown): FilterError {
  try {
    run();
  } catch (error) {
    if (error instanceof FilterError) return error;
    throw error;
  }
  throw new Error('expected a FilterError');
}

describe('parseFilter: accepted shapes', () => {
  it('keeps conditions, groups and order in the order given, with their paths', () => {
    const spec = parseFilter({
      conditions: [
        { field: 'name', operator: 'contains', value: 'ac' },
        {
          orGroup: [
            { field: 'city', operator: 'is', value: 'Paris' },
            { field: 'zip', operator: 'starts with', value: '75' },
          ],
        },
      ],
      orderBy: [{ field: 'name', direction: 'descending' }, { field: 'id' }],
    });
    expect(spec.conditions).toEqual([
      { kind: 'condition', path: 'conditions[0]', field: 'name', operator: 'contains', value: 'ac' },
      {
        kind: 'orGroup',
        path: 'conditions[1]',
        conditions: [
          { kind: 'condition', path: 'conditions[1].orGroup[0]', field: 'city', operator: 'is', value: 'Paris' },
          { kind: 'condition', path: 'conditions[1].orGroup[1]', field: 'zip', operator: 'starts with', value: '75' },
        ],
      },
    ]);
    expect(spec.orderBy).toEqual([
      { path: 'orderBy[0]', field: 'name', direction: 'descending' },
      { path: 'orderBy[1]', field: 'id', direction: 'ascending' },
    ]);
  });

  it('accepts an empty list of conditions and no orderBy', () => {
    expect(parseFilter({ conditions: [] })).toEqual({ conditions: [], orderBy: [] });
  });

  it('keeps a null value for the compiler to judge', () => {
    const spec = parseFilter({ conditions: [{ field: 'name', operator: 'is', value: null }] });
    expect(spec.conditions[0]).toMatchObject({ value: null });
  });
});

describe('parseFilter: rejected shapes name where the problem is', () => {
  const cases: Array<[string, unknown, string | null, RegExp]> = [
    ['filter not an object', 'name=x', 'filter', /must be an object/],
    ['conditions missing', {}, 'filter', /conditions must be an array, got nothing/],
    ['conditions not an array', { conditions: { field: 'x' } }, 'filter', /conditions must be an array, got an object/],
    ['unknown filter property', { conditions: [], order: [] }, 'filter', /unknown property "order"/],
    ['orderBy not an array', { conditions: [], orderBy: 'name' }, 'filter', /orderBy must be an array/],
    [
      'condition not an object',
      { conditions: [{ field: 'a', operator: 'is', value: 1 }, 3] },
      'conditions[1]',
      /must be an object, got 3 \(a number\)/,
    ],
    [
      'field missing',
      { conditions: [{ operator: 'is', value: 1 }] },
      'conditions[0]',
      /field must be a non-empty string, got nothing/,
    ],
    [
      'field not a string',
      { conditions: [{ field: 7, operator: 'is', value: 1 }] },
      'conditions[0]',
      /field must be a non-empty string, got 7/,
    ],
    [
      'operator missing',
      { conditions: [{ field: 'id', value: 1 }] },
      'conditions[0]',
      /operator must be a non-empty string/,
    ],
    ['value missing', { conditions: [{ field: 'id', operator: 'is' }] }, 'conditions[0]', /value is missing/],
    [
      'misspelt key',
      { conditions: [{ field: 'id', operater: 'is', value: 1 }] },
      'conditions[0]',
      /unknown property "operater"/,
    ],
    ['orGroup not an array', { conditions: [{ orGroup: {} }] }, 'conditions[0]', /orGroup must be an array/],
    ['empty orGroup', { conditions: [{ orGroup: [] }] }, 'conditions[0]', /at least one condition/],
    [
      'orGroup with extra key',
      { conditions: [{ orGroup: [], field: 'x' }] },
      'conditions[0]',
      /unknown property "field"/,
    ],
    [
      'nested orGroup',
      { conditions: [{ orGroup: [{ field: 'id', operator: 'is', value: 1 }, { orGroup: [] }] }] },
      'conditions[0].orGroup[1]',
      /one level deep/,
    ],
    [
      'bad member of a group',
      {
        conditions: [
          {
            orGroup: [
              { field: 'id', operator: 'is', value: 1 },
              { field: '', operator: 'is', value: 1 },
            ],
          },
        ],
      },
      'conditions[0].orGroup[1]',
      /field must be a non-empty string/,
    ],
    ['orderBy element not an object', { conditions: [], orderBy: ['name'] }, 'orderBy[0]', /must be an object/],
    ['orderBy without field', { conditions: [], orderBy: [{ direction: 'ascending' }] }, 'orderBy[0]', /field must be/],
    [
      'orderBy bad direction',
      { conditions: [], orderBy: [{ field: 'id' }, { field: 'name', direction: 'asc' }] },
      'orderBy[1]',
      /"ascending" or "descending", got "asc"/,
    ],
  ];
  it.each(cases)('%s', (_label, raw, path, message) => {
    const error = failure(() => parseFilter(raw));
    expect(error.path).toBe(path);
    expect(error.problem).toMatch(message);
    expect(error.message).toBe(path === null ? error.problem : `${path}: ${error.problem}`);
  });
});

describe('parseFilterBody', () => {
  it('takes the filter from under "filter"', () => {
    expect(parseFilterBody({ filter: { conditions: [] } })).toEqual({ conditions: [], orderBy: [] });
  });

  const cases: Array<[string, unknown, RegExp]> = [
    ['no body', undefined, /must be a JSON object/],
    ['an array', [], /must be a JSON object/],
    ['a raw buffer', Buffer.from('{}'), /must be a JSON object/],
    ['no filter', {}, /under "filter"/],
    ['the filter without its wrapper', { conditions: [] }, /under "filter"/],
    ['extra top-level property', { filter: { conditions: [] }, page: 2 }, /unknown property "page"/],
  ];
  it.each(cases)('rejects %s', (_label, body, message) => {
    expect(failure(() => parseFilterBody(body)).message).toMatch(message);
  });
});
