import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { notCarriedInPlan, type ColumnUse } from './columns-not-carried.ts';
import { validatePlan } from './validate.ts';

const ROOT = resolve(import.meta.dirname, '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-census-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const reads = (...columns: string[]): ColumnUse => ({
  readsColumn: (c) => columns.includes(c),
  leftOutBecause: () => undefined,
});

describe('not carried, in a plan (issue 26, item 13)', () => {
  it("is a column no step of the same input reads; another input's column of that name does not count", () => {
    const lists = notCarriedInPlan([
      {
        inputFile: 'contacts.csv',
        notCarried: [
          { column: 'email', rows: 30 },
          { column: 'fax', rows: 2 },
        ],
        use: reads('company'),
      },
      { inputFile: 'contacts.csv', notCarried: [{ column: 'company', rows: 30 }], use: reads('email', 'company') },
      { inputFile: 'deals.csv', notCarried: [{ column: 'fax', rows: 1 }], use: reads('title') },
      { inputFile: 'other.csv', notCarried: [], use: reads('fax') },
    ]);
    expect(lists).toEqual([[{ column: 'fax', rows: 2 }], [], [{ column: 'fax', rows: 1 }], []]);
  });

  it('the generic plan: neither step of the contacts sheet lists a column the other reads', async () => {
    const report = await validatePlan({
      planFile: join(ROOT, 'mappings/plans/generic.yaml'),
      rejectsDir: join(dir, 'generic'),
    });
    expect(report.steps.map((s) => [s.step, s.notCarried])).toEqual([
      ['organisations', []],
      ['people', []],
    ]);
  });

  it('still lists a column no step reads', async () => {
    writeFileSync(join(dir, 'contacts.csv'), 'company,email,last_name,fax\nAcme,ada@acme.example,Lovelace,0123\n');
    writeFileSync(
      join(dir, 'orgs.yaml'),
      'version: 1\nentity: party\nkey: "{{company}}"\nfields:\n  - { to: type, value: organisation }\n  - { to: name, value: { column: company } }\n',
    );
    writeFileSync(
      join(dir, 'people.yaml'),
      'version: 1\nentity: party\nkey: "{{email}}"\nfields:\n  - { to: lastName, value: { column: last_name } }\n  - { to: email, value: { column: email } }\n  - { to: organisation, ref: orgs, key: "{{company}}" }\n',
    );
    writeFileSync(
      join(dir, 'plan.yaml'),
      'version: 1\nsteps:\n  - { name: orgs, mapping: orgs.yaml, input: contacts.csv }\n  - { name: people, mapping: people.yaml, input: contacts.csv }\n',
    );
    const report = await validatePlan({ planFile: join(dir, 'plan.yaml'), rejectsDir: join(dir, 'own') });
    expect(report.steps.map((s) => [s.step, s.notCarried.map((n) => n.column)])).toEqual([
      ['orgs', ['fax']],
      ['people', ['fax']],
    ]);
  });
});
