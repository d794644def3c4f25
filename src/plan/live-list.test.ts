import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse as parseYaml, stringify as stringifyYaml } from 'yaml';
import { FerryError } from '../errors/index.ts';
import { prepareSingleStep, preparePlan } from './prepare-step.ts';

const MAPPINGS = resolve(import.meta.dirname, '../../mappings');
const HOST = 'https://old.example.com';
let dir: string;

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-live-list-'));
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function refusal(work: Promise<unknown>): Promise<FerryError> {
  try {
    await work;
  } catch (error) {
    if (error instanceof FerryError) return error;
    throw error;
  }
  throw new Error('expected the step to be refused');
}

const single = (mapping: string, input: string) =>
  prepareSingleStep(join(MAPPINGS, mapping), input, join(dir, 'rejects.csv'));

describe('a live v1 input given to a one-mapping import', () => {
  it.each([
    // [mapping, input, what the message says, the input the hint gives]
    [
      'v1-opportunities.yaml',
      `v1+${HOST}/api/party`,
      /reads opportunity records \(source\.record\), which the v1 interface lists at \/api\/opportunity/,
      `v1+${HOST}/api/opportunity`,
    ],
    ['v1-people.yaml', `v1+${HOST}/api/kase`, /reads person records .* lists at \/api\/party/, `v1+${HOST}/api/party`],
    ['v1-tasks.yaml', `v1+${HOST}/api/party`, /reads task records .* lists at \/api\/tasks/, `v1+${HOST}/api/tasks`],
    ['v1-notes.yaml', `v1+${HOST}/api/tasks`, /tasks have no history in the v1 interface/, `v1+${HOST}/api/party`],
    [
      'v1-kase-notes.yaml',
      `v1+${HOST}`,
      /\(its list \/api\/party, picked by the mapping's record\), but its mapping v1-kase-notes\.yaml links each history item to the kase it sits in/,
      `v1+${HOST}/api/kase`,
    ],
    [
      'v1-opportunity-notes.yaml',
      `v1+${HOST}/api/kase`,
      /links each history item to the opportunity it sits in .* the history of \/api\/kase sits in cases/,
      `v1+${HOST}/api/opportunity`,
    ],
    [
      'v1-notes.yaml',
      `v1+${HOST}/api/opportunity`,
      /links each history item to the party it sits in/,
      `v1+${HOST}/api/party`,
    ],
    [
      'v1-history.yaml',
      `v1+${HOST}`,
      /maps history saved as a list of its own \(history\.xml\), linking each item by partyId, opportunityId, caseId; the v1 interface has no list of all history/,
      `v1-kase-notes.yaml from v1+${HOST}/api/kase`,
    ],
    ['v1-history.yaml', `v1+${HOST}/api/kase`, /maps history saved as a list of its own/, 'Leave this step out'],
  ])('refuses %s from %s, saying what to give instead', async (mapping, input, message, hint) => {
    const error = await refusal(single(mapping, input));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toMatch(/^this import reads the live account /);
    expect(error.message).toMatch(message);
    expect(error.hint).toContain(hint);
    // Pointed at the mapping's record, the line that picks what is read.
    expect(error.location?.file).toBe(join(MAPPINGS, mapping));
    expect(error.location?.yamlPath).toBe('source.record');
    expect(error.location?.line).toBeGreaterThan(1);
  });

  it('leaves a mapping that names no record to the list the input names', async () => {
    await writeFile(
      join(dir, 'any.yaml'),
      'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - to: name\n    value: { column: name }\n',
    );
    const step = await prepareSingleStep(join(dir, 'any.yaml'), `v1+${HOST}/api/kase`, join(dir, 'rejects.csv'));
    expect(step.source.record).toBeUndefined();
  });

  it('checks a mapping whose own source names the account (format v1-api, baseUrl)', async () => {
    const text = await readFile(join(MAPPINGS, 'v1-opportunities.yaml'), 'utf8');
    await writeFile(
      join(dir, 'opps.yaml'),
      text.replace(/^source:\n/m, `source:\n  format: v1-api\n  baseUrl: ${HOST}/api/kase\n`),
    );
    const error = await refusal(prepareSingleStep(join(dir, 'opps.yaml'), '', join(dir, 'rejects.csv')));
    expect(error.code).toBe('CONFIG_INVALID');
    expect(error.message).toContain(`v1+${HOST}/api/kase, but its mapping opps.yaml reads opportunity records`);
  });
});

describe('a live v1 input given to a plan step', () => {
  it('takes the bundled v1 plan made live as docs/sources.md says: each input its list, no history step', async () => {
    const plan = parseYaml(await readFile(join(MAPPINGS, 'plans/v1-migration.yaml'), 'utf8')) as {
      steps: Array<{ name: string; mapping: string; input: string }>;
    };
    const lists: Record<string, string> = {
      organisations: '',
      people: '',
      notes: '',
      tasks: '',
      opportunities: '/api/opportunity',
      'opportunity-notes': '/api/opportunity',
      kases: '/api/kase',
      'kase-notes': '/api/kase',
    };
    plan.steps = plan.steps.filter((step) => step.name !== 'history');
    for (const step of plan.steps) {
      expect(lists[step.name], step.name).toBeDefined();
      step.input = `v1+${HOST}${lists[step.name]}`;
      step.mapping = join(MAPPINGS, 'plans', step.mapping);
    }
    expect(plan.steps).toHaveLength(8);
    await writeFile(join(dir, 'v1-live.yaml'), stringifyYaml(plan));
    const { steps } = await preparePlan(join(dir, 'v1-live.yaml'));
    expect(steps.map((step) => step.inputFile).sort()).toEqual(
      Object.values(lists)
        .map((list) => `v1+${HOST}${list}`)
        .sort(),
    );
  });

  it('refuses the standalone history step by name and line, before any step is run', async () => {
    const plan = [
      'version: 1',
      'steps:',
      '  - name: organisations',
      `    mapping: ${join(MAPPINGS, 'v1-organisations.yaml')}`,
      `    input: v1+${HOST}`,
      '  - name: history',
      `    mapping: ${join(MAPPINGS, 'v1-history.yaml')}`,
      `    input: v1+${HOST}`,
      '',
    ].join('\n');
    await writeFile(join(dir, 'plan.yaml'), plan);
    const error = await refusal(preparePlan(join(dir, 'plan.yaml')));
    expect(error.code).toBe('PLAN_INVALID');
    expect(error.message).toMatch(
      /^step history reads the live account v1\+https:\/\/old\.example\.com \(its list \/api\/party/,
    );
    expect(error.location).toMatchObject({ file: join(dir, 'plan.yaml'), line: 6, yamlPath: 'steps[1]' });
    expect(error.hint).toMatch(/^Leave this step out when reading a live account/);
  });

  it('refuses a notes step given the list of another kind of record, and passes the one given its own', async () => {
    const plan = [
      'version: 1',
      'steps:',
      '  - name: kase-notes',
      `    mapping: ${join(MAPPINGS, 'v1-kase-notes.yaml')}`,
      `    input: v1+${HOST}/api/kase`,
      '  - name: notes',
      `    mapping: ${join(MAPPINGS, 'v1-kase-notes.yaml')}`,
      `    input: v1+${HOST}/api/opportunity`,
      '',
    ].join('\n');
    await writeFile(join(dir, 'plan2.yaml'), plan);
    const error = await refusal(preparePlan(join(dir, 'plan2.yaml')));
    expect(error.message).toMatch(
      /^step notes reads the live account v1\+https:\/\/old\.example\.com\/api\/opportunity, but its mapping v1-kase-notes\.yaml links each history item to the kase/,
    );
    expect(error.location?.line).toBe(6);
  });
});
