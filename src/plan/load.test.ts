import { mkdtemp, rm, writeFile, mkdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { findStep, loadPlan, parsePlan } from './load.ts';

let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-plan-'));
  await mkdir(join(dir, 'maps'));
  await writeFile(join(dir, 'maps', 'people.yaml'), 'version: 1\n');
  await writeFile(join(dir, 'maps', 'orgs.yaml'), 'version: 1\n');
  await writeFile(join(dir, 'people.csv'), 'a\n1\n');
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function planError(text: string): Promise<FerryError> {
  try {
    await parsePlan(text, join(dir, 'plan.yaml'));
  } catch (error) {
    if (error instanceof FerryError) return error;
    throw error;
  }
  throw new Error('expected an error');
}

const GOOD = `version: 1
timeZone: Europe/Berlin
steps:
  - name: orgs
    mapping: maps/orgs.yaml
    input: people.csv
  - name: people
    mapping: maps/people.yaml
    input: people.csv
    source:
      delimiter: ";"
`;

describe('parsePlan', () => {
  it('resolves paths against the plan file and keeps the file order', async () => {
    const plan = await parsePlan(GOOD, join(dir, 'plan.yaml'));
    expect(plan.timeZone).toBe('Europe/Berlin');
    expect(plan.steps.map((s) => s.name)).toEqual(['orgs', 'people']);
    expect(plan.steps[1]).toMatchObject({
      mappingFile: join(dir, 'maps', 'people.yaml'),
      inputFile: join(dir, 'people.csv'),
      source: { delimiter: ';' },
      index: 1,
      location: { file: join(dir, 'plan.yaml'), line: 7, yamlPath: 'steps[1]' },
    });
    expect(findStep(plan, 'people').index).toBe(1);
  });

  it('reads a file with a byte-order mark', async () => {
    await writeFile(join(dir, 'bom.yaml'), `\uFEFF${GOOD}`);
    expect((await loadPlan(join(dir, 'bom.yaml'))).steps).toHaveLength(2);
  });

  it.each([
    [
      'duplicate step names',
      GOOD.replace('name: people', 'name: orgs'),
      { line: 7, yamlPath: 'steps[1].name' },
      'two steps are named `orgs` (steps[0] and steps[1]); step names must be unique',
    ],
    [
      'a missing mapping file',
      GOOD.replace('maps/people.yaml', 'maps/peeple.yaml'),
      { line: 8, yamlPath: 'steps[1].mapping' },
      /^step people: the mapping file maps\/peeple.yaml does not exist/,
    ],
    [
      'a missing input file',
      GOOD.replace('input: people.csv\n    source', 'input: nobody.csv\n    source'),
      { line: 9, yamlPath: 'steps[1].input' },
      /^step people: the input file nobody.csv does not exist/,
    ],
    [
      'an unknown key',
      GOOD.replace('    input: people.csv\n  - name', '    inputs: people.csv\n  - name'),
      { line: 6, yamlPath: 'steps[0].inputs' },
      'the plan is not valid: unknown key `inputs`; did you mean `input`?',
    ],
    [
      'a wrong version',
      GOOD.replace('version: 1', 'version: 2'),
      { line: 1, yamlPath: 'version' },
      'the plan is not valid: expected 1, found number 2',
    ],
    [
      'a step name with a space',
      GOOD.replace('name: people', 'name: my people'),
      { line: 7, yamlPath: 'steps[1].name' },
      /a step name starts with a letter/,
    ],
    [
      'an unknown time zone',
      GOOD.replace('Europe/Berlin', 'Europe/Berlinn'),
      { line: 2, yamlPath: 'timeZone' },
      'unknown time zone `Europe/Berlinn`; expected an IANA name such as Europe/Berlin',
    ],
    [
      'a source option of the wrong type',
      GOOD.replace('delimiter: ";"', 'headerRow: -1'),
      { line: 11, yamlPath: 'steps[1].source.headerRow' },
      /^the plan is not valid: /,
    ],
    [
      'a step without input',
      GOOD.replace('    input: people.csv\n  - name', '  - name'),
      { line: 4, yamlPath: 'steps[0].input' },
      'the plan is not valid: `input` is required',
    ],
    ['no steps', 'version: 1\nsteps: []\n', { line: 2, yamlPath: 'steps' }, /^the plan is not valid: /],
    ['a duplicate YAML key', 'version: 1\nversion: 1\nsteps: []\n', { line: 2 }, /^not valid YAML: /],
    ['broken YAML', 'version: 1\nsteps:\n  - name: [a\n', { line: 4 }, /^not valid YAML: /],
  ])('%s', async (_title, text, location, message) => {
    const error = await planError(text);
    expect(error.code).toBe('PLAN_INVALID');
    expect(error.location).toMatchObject({ file: join(dir, 'plan.yaml'), ...location });
    if (typeof message === 'string') expect(error.message).toBe(message);
    else expect(error.message).toMatch(message);
  });

  it('a plan file that does not exist is PLAN_INVALID naming the file', async () => {
    await expect(loadPlan(join(dir, 'nope.yaml'))).rejects.toMatchObject({
      code: 'PLAN_INVALID',
      message: `the plan file ${join(dir, 'nope.yaml')} does not exist`,
    });
  });

  it('findStep suggests the closest name', async () => {
    const plan = await parsePlan(GOOD, join(dir, 'plan.yaml'));
    expect(() => findStep(plan, 'peple')).toThrow('the plan has no step `peple`; did you mean `people`?');
  });
});
