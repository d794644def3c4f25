import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * Every CSV crm-ferry writes for people to open holds a value a spreadsheet would run as a formula
 * as text (a leading apostrophe), as exports do; the rejects file keeps the input as it was, to be
 * fixed and read back.
 */
const dir = mkdtempSync(join(tmpdir(), 'ferry-formulas-'));
const state = join(dir, '.crm-ferry');
const EVIL = "=cmd|' /C calc'!A0";
let box: TestSandbox;

const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });
const csv = (file: string): Array<Record<string, string>> =>
  parse(readFileSync(file, 'utf8'), { columns: true, bom: true }) as Array<Record<string, string>>;

beforeAll(async () => {
  box = await startTestSandbox();
  writeFileSync(
    join(dir, 'people.yaml'),
    'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - {to: type, value: person}\n  - {to: lastName, value: {column: last}, required: true}\n  - {to: phone, type: Work, value: {column: phone, transform: [{phone: {defaultCountry: GB, invalid: keep}}]}}\n',
  );
  writeFileSync(
    join(dir, 'people.csv'),
    `id,last,phone\n=1+1,Lovelace,\n2,Hopper,+1 (2) 3\n3,,"${EVIL.replace(/"/g, '""')}"\n`,
  );
  writeFileSync(
    join(dir, 'plan.yaml'),
    'version: 1\nsteps:\n  - { name: people, mapping: people.yaml, input: people.csv }\n',
  );
});

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('formulas in the files made for people', () => {
  it('neutralises them in results, warnings and verify differences, and keeps the rejects file raw', async () => {
    const validated = await runCli(['validate', '--plan', 'plan.yaml'], { cwd: dir, env: env() });
    expect(validated.code, validated.stderr).toBe(3);
    const warnings = csv(join(dir, 'people.warnings.csv'));
    // A phone number kept as typed starts with +: a spreadsheet would compute it.
    expect(warnings.map((w) => w.phone)).toEqual(["'+1 (2) 3"]);

    const run = await runCli(['run', 'plan.yaml'], { cwd: dir, env: env() });
    expect(run.code, run.stdout).toBe(3);
    const success = csv(join(state, 'results', 'people.success.csv'));
    expect(success.map((row) => row.key).sort()).toEqual(["'=1+1", '2']);
    // The rejects file holds the row as the input had it.
    const rejects = csv(join(state, 'results', 'people.rejects.csv'));
    expect(rejects.map((row) => row.phone)).toEqual([EVIL]);

    const id = success.find((row) => row.key === '2')?.id;
    expect((await box.v2('PUT', `/parties/${id}`, { party: { lastName: EVIL } })).status).toBe(200);
    const verified = await runCli(['verify', 'plan.yaml'], { cwd: dir, env: env() });
    expect(verified.code, verified.stderr).toBe(3);
    const differences = csv(join(state, 'results', 'verify.differences.csv'));
    expect(differences).toContainEqual(
      expect.objectContaining({
        kind: 'differs',
        key: '2',
        field: 'lastName',
        in_account: `'${EVIL}`,
        in_file: 'Hopper',
      }),
    );
  });
});
