import { mkdtemp, readdir, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparePlan } from './prepare-step.ts';
import { validateMapping, validatePlan } from './validate.ts';

let dir: string;

const ORGS = 'version: 1\nentity: party\nkey: "{{cid}}"\nfields:\n  - to: name\n    value: { column: name }\n';
const PEOPLE =
  'version: 1\nentity: party\nkey: "{{id}}"\ntimeZone: America/New_York\nfields:\n  - to: lastName\n    value: { column: last }\n  - to: organisation\n    ref: orgs\n    key: "{{org}}"\n';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-validate-lib-'));
  await writeFile(join(dir, 'orgs.yaml'), ORGS);
  await writeFile(join(dir, 'people.yaml'), PEOPLE);
  await writeFile(join(dir, 'orgs.csv'), 'cid,name\nC-1,Acme\n');
  await writeFile(join(dir, 'people.csv'), 'id,last,org\nP-1,Lovelace,C-1\nP-2,Hopper,C-1\n');
  await writeFile(
    join(dir, 'plan.yaml'),
    'version: 1\ntimeZone: Europe/Berlin\nsteps:\n  - name: people\n    mapping: people.yaml\n    input: people.csv\n    source: { delimiter: "," }\n  - name: orgs\n    mapping: orgs.yaml\n    input: orgs.csv\n',
  );
});

afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

describe('preparePlan', () => {
  it("orders steps by their references, gives mappings without a time zone the plan's, and merges reader options", async () => {
    const { steps } = await preparePlan(join(dir, 'plan.yaml'), join(dir, 'out'));
    expect(steps.map((s) => s.name)).toEqual(['orgs', 'people']);
    expect(steps.map((s) => s.mapping.timeZone)).toEqual(['Europe/Berlin', 'America/New_York']);
    expect(steps[1]?.source).toEqual({ delimiter: ',' });
    expect(steps[1]?.rejectsFile).toBe(join(dir, 'out', 'people.rejects.csv'));
    expect(steps[1]?.refs[0]?.location).toEqual({ file: join(dir, 'people.yaml'), yamlPath: 'fields[1].ref', line: 9 });
  });
});

describe('validatePlan', () => {
  it('counts rows per step and writes no file when all are valid', async () => {
    const report = await validatePlan({ planFile: join(dir, 'plan.yaml') });
    expect(report.interrupted).toBe(false);
    expect(report.online).toBe(false);
    expect(report.steps.map((s) => [s.step, s.rowsRead, s.ok, s.rejected, s.rejectsFile])).toEqual([
      ['orgs', 1, 1, 0, null],
      ['people', 2, 2, 0, null],
    ]);
    expect((await readdir(dir)).filter((f) => f.includes('rejects'))).toEqual([]);
  });
});

describe('interruption', () => {
  it('an aborted run reports itself interrupted and leaves no rejects file', async () => {
    const controller = new AbortController();
    controller.abort();
    await writeFile(join(dir, 'bad.csv'), 'cid,name\nC-1,\n');
    const report = await validateMapping({
      mappingFile: join(dir, 'orgs.yaml'),
      inputFile: join(dir, 'bad.csv'),
      signal: controller.signal,
    });
    expect(report.interrupted).toBe(true);
    expect(report.steps[0]?.rejected).toBe(0);
    expect((await readdir(dir)).filter((f) => f.includes('rejects'))).toEqual([]);
  });

  it('the same input without the abort is rejected, so the abort is what kept the file away', async () => {
    const report = await validateMapping({
      mappingFile: join(dir, 'orgs.yaml'),
      inputFile: join(dir, 'bad.csv'),
      rejectsFile: join(dir, 'bad.rejects.csv'),
    });
    expect(report.steps[0]?.rejected).toBe(1);
    expect(report.steps[0]?.rejectsFile).toBe(join(dir, 'bad.rejects.csv'));
    await rm(join(dir, 'bad.rejects.csv'));
  });
});
