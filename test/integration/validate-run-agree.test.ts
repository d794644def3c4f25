import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient, RecordService } from '../../src/client/index.ts';
import { runImport, type ImportSummary } from '../../src/load/index.ts';
import { readAccountCatalog } from '../../src/client/account-catalog.ts';
import { CatalogResolver } from '../../src/mapping/resolve.ts';
import { validatePlan, type ValidateReport } from '../../src/plan/validate.ts';
import { openSource } from '../../src/sources/index.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/**
 * `validate --online` and `run` must agree on every reject and every warning: the same rows, the
 * same codes, the same fields. The inputs are the HubSpot samples made dirty: the same contact
 * twice (by id and by e-mail), a malformed e-mail, links by id to a missing company with and
 * without a company name to fall back on, a company without a name, a person without names.
 */
const CONTACTS_EXTRA = [
  // The same id as Nancy (row 2) with a value she lacks: merged, or rejected as a duplicate key.
  '101,Nancy,Davolio,Nancy.Davolio@northwind.example.com,,,,Northwind Traders,5240117401,,,,,,https://nancy.example.com,English,Customer,,Sam Seller,2020-11-03 14:30',
  // Another id with Andrew's e-mail: the same person by the mapping's match.
  '120,Andy,Fuller,ANDREW.FULLER@northwind.example.com,,,,Northwind Traders,5240117401,,,,,,,English,Customer,,Sam Seller,2020-11-05 10:00',
  // A malformed e-mail: imported without it (onInvalid: drop).
  '121,Mal,Formed,mal at formed,,,,,,,,,,,,English,Lead,,Sam Seller,2024-01-01 10:00',
  // No association id, but a company name: linked by name.
  '122,Nina,Byname,nina@byname.example.com,,,,Fabrikam Software,,,,,,,,English,Lead,,Sam Seller,2024-01-01 10:00',
  // An association id the export lacks, no name to fall back on: a warning.
  '123,Otto,Orphan,otto@orphan.example.com,,,,,9999999999,,,,,,,English,Lead,,Sam Seller,2024-01-01 10:00',
  // The association points at the company without a name (rejected), with its name given: by name.
  '124,Paula,Parent,paula@parent.example.com,,,,Nameless Ltd,5240117499,,,,,,,English,Lead,,Sam Seller,2024-01-01 10:00',
  // No names at all: rejected.
  '125,,,nobody@example.com,,,,,,,,,,,,English,Lead,,Sam Seller,2024-01-01 10:00',
];
const COMPANIES_EXTRA = [
  // A company without a name: rejected (`required`).
  '5240117499,,nameless.example.com,,,,,,,,,,Lead,Alex Admin,,2024-01-01 10:00,',
  // Northwind again under another id, with its description missing: merged by name.
  '5240117407,Northwind Traders,,,,,,,,,,,Customer,Sam Seller,,2024-01-01 10:00,Second row.',
];

interface Line {
  row: string;
  field: string;
  code: string;
}

async function csvRows(file: string): Promise<Array<Record<string, unknown>>> {
  const opened = await openSource(file, {});
  const rows: Array<Record<string, unknown>> = [];
  for await (const item of opened.items) if (item.kind === 'row') rows.push(item.values);
  return rows;
}

function sorted(lines: Line[]): string[] {
  return lines.map((l) => `${l.row} ${l.code} ${l.field}`).sort();
}

/** Rejects and warnings as validate wrote them (the warnings file has the rejects file's columns). */
async function validateLines(file: string | null): Promise<Line[]> {
  if (file === null) return [];
  return (await csvRows(file)).map((r) => ({
    row: String(r._row),
    field: String(r._field ?? ''),
    code: String(r._code),
  }));
}

/** The run's rejects, and its warnings from the success file (`CODE field: message | ...`). */
async function runRejects(file: string | null): Promise<Line[]> {
  return validateLines(file);
}

async function runWarnings(file: string | null): Promise<Line[]> {
  if (file === null) return [];
  const out: Line[] = [];
  for (const r of await csvRows(file)) {
    const text = String(r.warnings ?? '');
    if (text === '') continue;
    for (const part of text.split(' | ')) {
      const match = /^(\S+) ([^:]+):/.exec(part);
      if (match) out.push({ row: String(r._row), code: match[1] as string, field: match[2] as string });
    }
  }
  return out;
}

describe('validate --online and run agree on dirty files', () => {
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'crm-ferry-agree-'));
    const contacts = (await readFile(join(ROOT, 'samples/crm/hubspot-contacts.csv'), 'utf8')).trimEnd();
    const companies = (await readFile(join(ROOT, 'samples/crm/hubspot-companies.csv'), 'utf8')).trimEnd();
    await writeFile(join(dir, 'contacts.csv'), `${contacts}\n${CONTACTS_EXTRA.join('\n')}\n`);
    await writeFile(join(dir, 'companies.csv'), `${companies}\n${COMPANIES_EXTRA.join('\n')}\n`);
  });

  afterAll(async () => {
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** Writes the plan and its mappings (changed by `edit`) into a folder of their own. */
  async function planIn(
    name: string,
    edit: (text: string) => string,
    inputs = { companies: '../companies.csv', contacts: '../contacts.csv' },
  ): Promise<string> {
    const work = await mkdtemp(join(dir, `${name}-`));
    for (const mapping of ['hubspot-companies', 'hubspot-contacts']) {
      await writeFile(
        join(work, `${mapping}.yaml`),
        edit(await readFile(join(ROOT, 'mappings', `${mapping}.yaml`), 'utf8')),
      );
    }
    await writeFile(
      join(work, 'plan.yaml'),
      [
        'version: 1',
        'steps:',
        '  - name: companies',
        '    mapping: hubspot-companies.yaml',
        `    input: ${inputs.companies}`,
        '  - name: people',
        '    mapping: hubspot-contacts.yaml',
        `    input: ${inputs.contacts}`,
        '',
      ].join('\n'),
    );
    return join(work, 'plan.yaml');
  }

  function clientOf(box: TestSandbox): CrmClient {
    return new CrmClient({
      baseUrl: box.url,
      auth: box.token,
      retry: { limit: 3, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 1000 },
    });
  }

  /** `validate --online` of a plan, then a run of it into the same account (a fresh state). */
  async function validateThenRun(
    box: TestSandbox,
    plan: string,
  ): Promise<{ validated: ValidateReport; summary: ImportSummary }> {
    const client = clientOf(box);
    try {
      const resolver = new CatalogResolver(await readAccountCatalog(client));
      const validated = await validatePlan({
        planFile: plan,
        rejectsDir: join(dirname(plan), 'validate'),
        resolver,
        service: new RecordService(client),
      });
      const summary = await runImport(
        { source: { kind: 'plan', planFile: plan }, stateDir: join(dirname(plan), 'state') },
        { client, account: { baseUrl: box.url, account: box.url } },
      );
      return { validated, summary };
    } finally {
      await client.close();
    }
  }

  async function both(onDuplicate: string): Promise<{ validated: ValidateReport; summary: ImportSummary }> {
    const plan = await planIn(onDuplicate, (text) =>
      text.replace(/^onDuplicate: merge$/m, `onDuplicate: ${onDuplicate}`),
    );
    // An account of its own each time: the runs must not match each other's records.
    const box = await startTestSandbox();
    try {
      return await validateThenRun(box, plan);
    } finally {
      await box.close();
    }
  }

  /** Every reject and warning of the run is validate's, row for row; returns the rejects as `step row code field`. */
  async function expectAgreement(validated: ValidateReport, summary: ImportSummary): Promise<string[]> {
    expect(summary.stopped).toBeNull();
    const rejects: string[] = [];
    for (const [index, step] of summary.steps.entries()) {
      const report = validated.steps[index];
      expect(report?.step).toBe(step.step);
      const fromRun = sorted(await runRejects(step.rejectsFile));
      expect(fromRun, `${step.step}: rejects`).toEqual(sorted(await validateLines(report?.rejectsFile ?? null)));
      expect(step.rejected).toBe(report?.rejected);
      rejects.push(...fromRun.map((line) => `${step.step} ${line}`));
      expect(sorted(await runWarnings(step.successFile)), `${step.step}: warnings`).toEqual(
        sorted(await validateLines(report?.warningsFile ?? null)),
      );
      expect(step.warnings).toEqual(report?.warnings);
      expect(step.notCarried).toEqual(report?.notCarried);
    }
    return rejects.sort();
  }

  it.each(['merge', 'first', 'reject'])('onDuplicate: %s — the same counts and the same rows', async (onDuplicate) => {
    const { validated, summary } = await both(onDuplicate);
    const expectedRejects: Record<string, string[]> = {
      merge: ['companies 8 MAPPING_VALUE name', 'people 16 MAPPING_VALUE lastName'],
      first: ['companies 8 MAPPING_VALUE name', 'people 16 MAPPING_VALUE lastName'],
      reject: [
        'companies 8 MAPPING_VALUE name',
        'companies 9 MAPPING_VALUE match',
        'people 10 MAPPING_VALUE key',
        'people 11 MAPPING_VALUE match',
        'people 16 MAPPING_VALUE lastName',
      ],
    };
    const rejects = await expectAgreement(validated, summary);
    expect(rejects).toEqual(expectedRejects[onDuplicate]);
    const people = summary.steps[1];
    // The malformed e-mail is dropped, the orphan link said, whatever the duplicates do.
    expect(people?.warnings.VALUE_DROPPED).toBe(1);
    expect(people?.warnings.LINK_UNRESOLVED).toBe(1);
    if (onDuplicate === 'merge') expect(people?.warnings.DUPLICATE_MERGED).toBe(2);
    if (onDuplicate === 'first') expect(people?.warnings.DUPLICATE_DROPPED).toBe(2);
    expect(people?.notCarried.map((n) => n.column)).toEqual(expect.arrayContaining(['Create Date']));
  });

  it('in an account that has the records: onMatch reject and a value several records share are rejected by both', async () => {
    const box = await startTestSandbox();
    try {
      // The clean samples, imported without `match:`: the companies twice (two records of each name), the people once.
      const plain = (text: string): string => text.replace(/^(match|onDuplicate): .*\n/gm, '');
      const samples = {
        companies: join(ROOT, 'samples/crm/hubspot-companies.csv'),
        contacts: join(ROOT, 'samples/crm/hubspot-contacts.csv'),
      };
      const client = clientOf(box);
      try {
        for (const seed of ['seed-a', 'seed-b']) {
          const plan = await planIn(seed, plain, samples);
          const seeded = await runImport(
            { source: { kind: 'plan', planFile: plan }, stateDir: join(dirname(plan), 'state') },
            { client, account: { baseUrl: box.url, account: box.url } },
          );
          expect(seeded.stopped).toBeNull();
        }
      } finally {
        await client.close();
      }
      // People: onMatch reject; companies: update, but every name is there twice now.
      const plan = await planIn('existing', (text) =>
        text
          .replace('match: { by: email, onMatch: update }', 'match: { by: email, onMatch: reject }')
          .replace(/^onDuplicate: merge$/m, 'onDuplicate: first'),
      );
      const { validated, summary } = await validateThenRun(box, plan);
      const rejects = await expectAgreement(validated, summary);
      expect(rejects.filter((r) => r.startsWith('companies') && r.endsWith('API_CONFLICT match'))).toHaveLength(6);
      // Two copies of every person exist after two seeds: matched by e-mail, several records.
      expect(rejects.filter((r) => r.startsWith('people') && r.endsWith('API_CONFLICT match')).length).toBeGreaterThan(
        0,
      );
    } finally {
      await box.close();
    }
  });
});
