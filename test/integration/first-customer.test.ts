import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { openSource } from '../../src/sources/index.ts';
import { runCli } from '../helpers/fake-io.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * A consultant's first customer: a companies file and a contacts file that links to it by company
 * number, with the company's name beside the number. Some companies hold values the account's
 * custom fields refuse (a sector that is no choice of the Industry list, an account number off the
 * Text field's pattern); their contacts fall back to the company's name. Then the customer fixes
 * the companies file and the plan runs again.
 */
const COMPANIES = [
  'KvK,Naam,Sector,Klantnummer',
  '10000001,Bakkerij de Vries,Retail,NL-10001',
  '10000002,Groothandel Jansen,Groothandel,NL-10002',
  '10000003,Software Smit,Software,NL-10003',
  '10000004,Boerderij Visser,Agriculture,10004',
  '10000005,Bank Mulder,Finance,NL-10005',
  '10000006,Fabriek Bos,Staalbouw,X-1',
  '10000007,Winkel Meijer,Retail,NL-10007',
];
/** The customer's fix: the sectors mapped to choices the account offers, the numbers written as the field takes them. */
const COMPANIES_FIXED = COMPANIES.map((line) =>
  line
    .replace(',Groothandel,', ',Retail,')
    .replace(',Agriculture,10004', ',Agriculture,NL-10004')
    .replace(',Staalbouw,X-1', ',Manufacturing,NL-10006'),
);
const CONTACTS = [
  'Id,Voornaam,Achternaam,E-mail,KvK,Bedrijf',
  '1,Anna,de Vries,anna@devries.example,10000001,Bakkerij de Vries',
  '2,Bram,Jansen,bram@jansen.example,10000002,Groothandel Jansen',
  '3,Cor,Jansen,cor@jansen.example,10000002,Groothandel Jansen',
  '4,Dirk,Smit,dirk@smit.example,10000003,Software Smit',
  '5,Eva,Visser,eva@visser.example,10000004,Boerderij Visser',
  '6,Fleur,Mulder,fleur@mulder.example,10000005,Bank Mulder',
  '7,Gijs,Bos,gijs@bos.example,10000006,Fabriek Bos',
  '8,Hanna,Meijer,hanna@meijer.example,10000007,Winkel Meijer',
  '9,Ivo,Bos,ivo@bos.example,10000006,Fabriek Bos',
];
const COMPANIES_MAPPING = `version: 1
entity: party
key: "{{KvK}}"
fields:
  - { to: type, value: organisation }
  - { to: name, value: { column: Naam }, required: true }
  - { to: custom, definition: Industry, tag: null, value: { column: Sector } }
  - { to: custom, definition: Account number, tag: null, value: { column: Klantnummer } }
`;
const CONTACTS_MAPPING = `version: 1
entity: party
key: "{{Id}}"
fields:
  - { to: type, value: person }
  - { to: firstName, value: { column: Voornaam } }
  - { to: lastName, value: { column: Achternaam } }
  - { to: email, type: Work, value: { column: E-mail, transform: [email] } }
  - to: organisation
    ref: companies
    key: "{{KvK}}"
    value: { column: Bedrijf }
`;
const PLAN = `version: 1
steps:
  - { name: companies, mapping: companies.yaml, input: companies.csv }
  - { name: contacts, mapping: contacts.yaml, input: contacts.csv }
`;

let box: TestSandbox;
let dir: string;
const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });

async function rows(file: string): Promise<Array<Record<string, unknown>>> {
  const opened = await openSource(file, {});
  const out: Array<Record<string, unknown>> = [];
  for await (const item of opened.items) if (item.kind === 'row') out.push(item.values);
  return out;
}

/** A rejects file's lines as `row code field: reason`, in row order. */
async function rejectLines(file: string): Promise<string[]> {
  return (await rows(file)).map((r) => `${r._row} ${r._code} ${r._field}: ${r._message}`);
}

/** The warnings of the run's success file and of validate's warnings file, as `row CODE`. */
async function successWarnings(file: string): Promise<string[]> {
  const out: string[] = [];
  for (const r of await rows(file)) {
    for (const part of String(r.warnings ?? '').split(' | ')) {
      const code = /^(\S+) /.exec(part)?.[1];
      if (code) out.push(`${r._row} ${code}`);
    }
  }
  return out.sort();
}

async function parties(): Promise<Array<Record<string, any>>> {
  return allPages(box, '/parties', 'parties');
}

beforeAll(async () => {
  box = await startTestSandbox();
  dir = mkdtempSync(join(tmpdir(), 'ferry-first-customer-'));
  writeFileSync(join(dir, 'companies.csv'), `${COMPANIES.join('\n')}\n`);
  writeFileSync(join(dir, 'contacts.csv'), `${CONTACTS.join('\n')}\n`);
  writeFileSync(join(dir, 'companies.yaml'), COMPANIES_MAPPING);
  writeFileSync(join(dir, 'contacts.yaml'), CONTACTS_MAPPING);
  writeFileSync(join(dir, 'plan.yaml'), PLAN);
});

afterAll(async () => {
  await box?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

describe("a consultant's first customer: companies and the contacts that link to them", () => {
  let before: number[];

  it('validate --online rejects what the run rejects, row for row, with the same reasons in words', async () => {
    before = (await parties()).map((p) => p.id as number);
    const checked = await runCli(['validate', '--plan', 'plan.yaml', '--online', '--rejects-dir', 'checked'], {
      cwd: dir,
      env: env(),
    });
    expect(checked.code, checked.stderr).toBe(3);
    const validateRejects = await rejectLines(join(dir, 'checked', 'companies.rejects.csv'));
    expect(validateRejects).toHaveLength(3);
    // The service's refusal, said before the run: the column, the value, and what the field takes.
    expect(validateRejects[0]).toMatch(
      /^3 MAPPING_VALUE fields\[2\]: .*Sector "Groothandel" is not one of the choices of Industry: Agriculture, Finance, Manufacturing, Retail, Software, Other/,
    );
    expect(validateRejects[1]).toMatch(
      /^5 MAPPING_VALUE fields\[3\]: .*Klantnummer "10004" is not text matching the pattern of Account number/,
    );
    // Two problems in one row are two reasons.
    expect(validateRejects[2]).toMatch(/Sector "Staalbouw".*\n?.*Klantnummer "X-1"/s);
    const validateWarnings = (await rows(join(dir, 'checked', 'contacts.warnings.csv')))
      .map((r) => `${r._row} ${r._code}`)
      .sort();

    const run = await runCli(['run', 'plan.yaml'], { cwd: dir, env: env() });
    expect(run.code, run.stderr).toBe(3);
    const state = join(dir, '.crm-ferry', 'results');
    expect(await rejectLines(join(state, 'companies.rejects.csv'))).toEqual(validateRejects);
    // The contacts of a rejected company are linked by its name, and say so: in validate and the run alike.
    expect(validateWarnings).toEqual([
      '10 LINK_BY_NAME',
      '3 LINK_BY_NAME',
      '4 LINK_BY_NAME',
      '6 LINK_BY_NAME',
      '8 LINK_BY_NAME',
    ]);
    expect(await successWarnings(join(state, 'contacts.success.csv'))).toEqual(validateWarnings);
    // Each company made by name exists once, though two contacts name it.
    const names = (await parties()).filter((p) => p.type === 'organisation').map((p) => p.name as string);
    expect(names.sort()).toEqual([
      'Bakkerij de Vries',
      'Bank Mulder',
      'Boerderij Visser',
      'Fabriek Bos',
      'Groothandel Jansen',
      'Software Smit',
      'Winkel Meijer',
    ]);
  });

  it('verify counts the organisations made by name as the run’s: nothing extra', async () => {
    const verified = await runCli(['verify', 'plan.yaml', '--report', 'report.html'], { cwd: dir, env: env() });
    expect(verified.stdout + verified.stderr).toMatch(/extra +0\n/);
    expect(verified.stdout + verified.stderr).not.toMatch(/extra +[1-9]/);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it('after the fix, a second run writes the rest: no organisation twice, every contact on its company', async () => {
    writeFileSync(join(dir, 'companies.csv'), `${COMPANIES_FIXED.join('\n')}\n`);
    const checked = await runCli(['validate', '--plan', 'plan.yaml', '--online', '--rejects-dir', 'checked'], {
      cwd: dir,
      env: env(),
    });
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    const run = await runCli(['run', 'plan.yaml'], { cwd: dir, env: env() });
    expect(run.code, run.stdout + run.stderr).toBe(0);
    const all = await parties();
    const organisations = all.filter((p) => p.type === 'organisation');
    expect(organisations.map((p) => p.name as string).sort()).toEqual([
      'Bakkerij de Vries',
      'Bank Mulder',
      'Boerderij Visser',
      'Fabriek Bos',
      'Groothandel Jansen',
      'Software Smit',
      'Winkel Meijer',
    ]);
    const byName = new Map(organisations.map((o) => [o.name as string, o]));
    // The companies fixed now hold their fields.
    const industry = (o: Record<string, any>): unknown =>
      (o.fields as Array<{ definition: { name: string }; value: unknown }>).find(
        (f) => f.definition.name === 'Industry',
      )?.value;
    const jansen = (await box.v2('GET', `/parties/${byName.get('Groothandel Jansen')?.id}?embed=fields`)).body.party;
    expect(industry(jansen)).toBe('Retail');
    for (const line of CONTACTS.slice(1)) {
      const [, first, , , , company] = line.split(',');
      const person = all.find((p) => p.type === 'person' && p.firstName === first);
      expect(person?.organisation?.id, `${first}'s organisation`).toBe(byName.get(company as string)?.id);
    }
    const verified = await runCli(['verify', 'plan.yaml'], { cwd: dir, env: env() });
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout + verified.stderr).toMatch(/extra +0\n/);
    expect(verified.stdout + verified.stderr).not.toMatch(/extra +[1-9]/);
  });

  it('rollback --all leaves the account as it was before the first run', async () => {
    const back = await runCli(['rollback', 'plan.yaml', '--all'], { cwd: dir, env: env() });
    expect(back.code, back.stdout + back.stderr).toBe(0);
    expect((await parties()).map((p) => p.id as number)).toEqual(before);
    expect(readFileSync(join(dir, 'plan.yaml'), 'utf8')).toBe(PLAN);
  });
});
