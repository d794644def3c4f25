import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preparePlan } from './prepare-step.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const mapping = (name: string) => join(ROOT, 'mappings', name);
const input = (name: string) => join(ROOT, 'samples/export/roundtrip', name);

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-plan-match-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function plan(steps: string): Promise<string> {
  const file = join(dir, `plan-${Math.random().toString(36).slice(2)}.yaml`);
  await writeFile(file, `version: 1\nsteps:\n${steps}`);
  return file;
}

describe("a plan step's match and onDuplicate", () => {
  it("win over the mapping's, which stays as it is", async () => {
    const file = await plan(`  - name: organisations
    mapping: ${mapping('roundtrip-organisations.yaml')}
    input: ${input('parties.csv')}
    match: { by: name }
    onDuplicate: separate
  - name: people
    mapping: ${mapping('roundtrip-people.yaml')}
    input: ${input('parties.csv')}
`);
    const { steps } = await preparePlan(file);
    const [organisations, people] = steps;
    expect(organisations?.mapping).toMatchObject({ match: { by: 'name', onMatch: 'update' }, onDuplicate: 'separate' });
    expect(people?.mapping.match).toBeUndefined();
    expect(people?.mapping.onDuplicate).toBe('reject');
  });

  it("are checked as the mapping's would be, at the plan's place", async () => {
    const file = await plan(`  - name: organisations
    mapping: ${mapping('roundtrip-organisations.yaml')}
    input: ${input('parties.csv')}
  - name: kases
    mapping: ${mapping('roundtrip-kases.yaml')}
    input: ${input('kases.csv')}
    match: { by: name, within: organisation }
`);
    await expect(preparePlan(file)).rejects.toMatchObject({
      code: 'PLAN_INVALID',
      message: expect.stringMatching(/step kases: match\.within: a project or opportunity is matched within its party/),
      location: { file, yamlPath: 'steps[1].match' },
    });
  });
});
