import { cpSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadPlan } from '../../src/plan/index.ts';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * Run, then verify, for every ready-made plan with its sample and for a mapping in each way of
 * linking (a ref by key, a ref with fallback keys and a fallback name, an organisation by its plain
 * name, an owner by user name, numbered items with types, fields of a data tag): the account then
 * holds what the files hold, and verify says so. Then records changed by hand are reported, each
 * and only they, and rows and values the run did not carry are listed with their reasons apart
 * from the differences.
 *
 * Each plan writes into an account of its own (an in-process sandbox, started in milliseconds):
 * the service gives times in whole seconds, and verify takes a record made in the second a run
 * began for one added by hand, so two plans run in one second into one account would see each
 * other's records.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-verify-matrix-'));
let box: TestSandbox;
const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });

/** A fresh account for what follows; the one before is closed. */
async function freshAccount(): Promise<void> {
  await box?.close();
  box = await startTestSandbox();
}

/** Rows of a CSV result file. */
function csv(file: string): Array<Record<string, string>> {
  return parse(readFileSync(file, 'utf8'), { columns: true, bom: true }) as Array<Record<string, string>>;
}

/** The ids the run gave each key of a step, from its success file. */
function idsOf(state: string, step: string): Map<string, number> {
  return new Map(
    csv(join(dir, state, 'results', `${step}.success.csv`)).map((row) => [row.key as string, Number(row.id)]),
  );
}

async function runThenVerify(
  plan: string,
  state: string,
): Promise<{ verified: Awaited<ReturnType<typeof runCli>>; differences: Array<Record<string, string>> }> {
  await freshAccount();
  const run = await runCli(['run', plan, '--state-dir', state], { cwd: dir, env: env() });
  expect(run.code, run.stdout + run.stderr).toBe(0);
  const verified = await runCli(['verify', plan, '--state-dir', state], { cwd: dir, env: env() });
  return { verified, differences: csv(join(dir, state, 'results', 'verify.differences.csv')) };
}

// ---------------------------------------------------------------------------------------------
// Mappings in each way of linking, over one small sheet.

const PEOPLE = [
  'id,first,last,email,company,company_id,owner,phone.1.number,phone.1.type,phone.2.number,phone.2.type,contract_end,support,tags,notes',
  'P1,Anne,Köhler,anne@example.com,Köhler IT-Service GmbH,C0000000001,Sam Seller,+44 20 7946 0001,Work,+44 20 7946 0002,Mobile,2030-01-31,Gold,Customer;vip,',
  'P2,Ben,Adler,ben@example.com,Adler & Söhne KG,C0000000002,kim,+44 20 7946 0003,Work,,,,,Prospect,',
  'P3,Cara,Dunn,cara@example.com,Dunn Ltd,C0000009999,admin@sandbox.example,+44 20 7946 0004,Home,,,2031-05-01,Silver,Customer,',
  'P4,Dan,Eck,dan@example.com,köhler it-service gmbh,,Sam Seller,+44 20 7946 0005,Work,,,,,vip;Prospect,',
  'P5,Eva,Fink,eva@example.com,Adler & Söhne KG,C0000000002,Kim Keeper,,,,,2029-12-31,Bronze,Customer,',
  'P6,Finn,Gall,finn@example.com,Dunn Ltd,,sam,+44 20 7946 0006,Work,,,,,,',
  'P7,Gina,Hahn,gina@example.com,Köhler IT-Service GmbH,C0000000001,kim,,,,,,,vip,',
  'P8,Hugo,Ink,hugo@example.com,Adler & Söhne KG,C0000000002,kim,,,,,,,,',
  'P9,Ida,Jung,ida@example.com,Dunn Ltd,,kim,,,,,,,,',
  '',
].join('\n');

const ORGS = 'company_id,name\nC0000000001,Köhler IT-Service GmbH\nC0000000002,Adler & Söhne KG\n';

/** The start of both mappings of people: a person by the id column, with names. */
const PERSON = `version: 1
entity: party
key: "{{id}}"
fields:
  - { to: firstName, value: { column: first } }
  - { to: lastName, value: { column: last } }
`;

/** An organisation by its plain name, an owner by user name, numbered phones with types, tags, fields of the data tag Customer. */
const PLAIN = `${PERSON}  - { to: email, type: Work, value: { column: email, transform: [email] } }
  - { to: organisation, value: { column: company } }
  - { to: owner, value: { column: owner } }
  - to: phone
    items: numbered
    type: { column: phone.*.type }
    value: { column: phone.*.number }
  - { to: tags, value: { column: tags, transform: [{ split: ";" }] } }
  - { to: custom, definition: Contract end, tag: Customer, value: { column: contract_end } }
  - { to: custom, definition: Support level, tag: Customer, value: { column: support } }
`;

const ORGS_MAPPING =
  'version: 1\nentity: party\nkey: "{{company_id}}"\nfields:\n  - { to: name, value: { column: name } }\n';

/** An organisation by the key of another step, then by its name as a key, then by its plain name. */
const FALLBACK = `${PERSON}  - to: organisation
    ref: orgs
    key: ["{{company_id}}", "{{company}}"]
    value: { column: company }
  - { to: owner, value: { column: owner } }
`;

beforeAll(async () => {
  for (const folder of ['mappings', 'samples']) cpSync(join(ROOT, folder), join(dir, folder), { recursive: true });
  writeFileSync(join(dir, 'people.csv'), PEOPLE);
  writeFileSync(join(dir, 'orgs.csv'), ORGS);
  writeFileSync(join(dir, 'orgs.yaml'), ORGS_MAPPING);
  writeFileSync(join(dir, 'plain.yaml'), PLAIN);
  writeFileSync(join(dir, 'fallback.yaml'), FALLBACK);
  writeFileSync(
    join(dir, 'fallback-plan.yaml'),
    'version: 1\nsteps:\n  - { name: orgs, mapping: orgs.yaml, input: orgs.csv }\n  - { name: people, mapping: fallback.yaml, input: people.csv }\n',
  );
  writeFileSync(
    join(dir, 'plain-plan.yaml'),
    'version: 1\nsteps:\n  - { name: people, mapping: plain.yaml, input: people.csv }\n',
  );
});

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Every ready-made plan, and the plans beside the samples. */
const READY_PLANS = [
  ...readdirSync(join(ROOT, 'mappings/plans')).map((name) => `mappings/plans/${name}`),
  ...readdirSync(join(ROOT, 'samples/plans'))
    .filter((name) => name.endsWith('.plan.yaml'))
    .map((name) => `samples/plans/${name}`),
].sort();

describe('run, then verify: exit 0 and no difference', () => {
  it('covers every ready-made mapping (restore reads its own, from a backup)', async () => {
    const used = new Set<string>();
    for (const plan of READY_PLANS)
      for (const step of (await loadPlan(join(ROOT, plan))).steps) used.add(relative(ROOT, step.mappingFile));
    const ready = readdirSync(join(ROOT, 'mappings')).filter(
      (name) => name.endsWith('.yaml') && !name.startsWith('restore-'),
    );
    expect(ready.filter((name) => !used.has(`mappings/${name}`))).toEqual([]);
  });

  it.each(READY_PLANS)('%s', async (plan) => {
    const { verified, differences } = await runThenVerify(plan, `state-${basename(plan, '.yaml')}`);
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(differences).toEqual([]);
    expect(verified.stdout).toMatch(
      /(The account holds what the file holds|No difference): (\d+) of \2 rows? (is|are) in the account as in the file/,
    );
  });

  it('a ref with fallback keys and a fallback name', async () => {
    const { verified, differences } = await runThenVerify('fallback-plan.yaml', 'state-fallback');
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(differences).toEqual([]);
    // P3 and P6 fell back on the plain name, P4 and P9 too: the service made Dunn Ltd for them, no one by hand.
    expect(verified.stdout).toMatch(/Step orgs:[^]*extra\s+0\n/);
    expect(verified.stdout).toContain(
      'The account holds what the file holds: 11 of 11 rows are in the account as in the file.',
    );
  });

  // The records changed by hand below are this plan's.
  it('an organisation by plain name, owners by user name, numbered items with types, tags, fields of a data tag', async () => {
    const { verified, differences } = await runThenVerify('plain-plan.yaml', 'state-plain');
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(differences).toEqual([]);
    expect(verified.stdout).toContain('9 of 9 rows are in the account as in the file');
  });
});

describe('records changed by hand', () => {
  it('are reported, each with what changed and where, and only they: not a change to a field the mapping does not write', async () => {
    const ids = idsOf('state-plain', 'people');
    const id = (key: string): number => ids.get(key) as number;
    const read = async (key: string): Promise<any> =>
      (await box.v2('GET', `/parties/${id(key)}?embed=tags,fields`)).body.party;
    const put = async (key: string, party: object): Promise<void> => {
      const answer = await box.v2('PUT', `/parties/${id(key)}`, { party });
      expect(answer.status, answer.text).toBe(200);
    };
    // A plain field; an item of a list (the e-mail address); a numbered item with its type; a tag;
    // a field of a data tag; the owner; the organisation linked by name.
    await put('P1', { lastName: 'Köhler-Braun' });
    const ben = await read('P2');
    await put('P2', {
      emailAddresses: [
        { id: ben.emailAddresses[0].id, _delete: true },
        { type: 'Work', address: 'ben.adler@example.com' },
      ],
    });
    const cara = await read('P3');
    await put('P3', { phoneNumbers: [{ id: cara.phoneNumbers[0].id, type: 'Home', number: '+44 20 7946 0999' }] });
    const dan = await read('P4');
    await put('P4', { tags: [{ id: dan.tags.find((t: { name: string }) => t.name === 'vip').id, _delete: true }] });
    const eva = await read('P5');
    const support = eva.fields.find((f: { definition: { name: string } }) => f.definition.name === 'Support level');
    await put('P5', { fields: [{ id: support.id, definition: { id: support.definition.id }, value: 'Gold' }] });
    await put('P6', {
      owner: {
        id: (await box.v2('GET', '/users')).body.users.find((u: { username: string }) => u.username === 'admin').id,
      },
    });
    await put('P7', { organisation: { name: 'Adler & Söhne KG' } });
    // One deleted, one added, one changed only where the mapping writes nothing.
    expect((await box.v2('DELETE', `/parties/${id('P8')}`)).status).toBeLessThan(300);
    const added = await box.v2('POST', '/parties', { party: { type: 'person', firstName: 'Hand', lastName: 'Made' } });
    expect(added.status).toBe(201);
    await put('P9', { jobTitle: 'Head of Everything', about: 'Changed where the mapping writes nothing' });

    const { code, stdout, stderr } = await runCli(
      ['verify', 'plain-plan.yaml', '--state-dir', 'state-plain', '--report', 'changed.html'],
      { cwd: dir, env: env() },
    );
    expect(code, stdout + stderr).toBe(3);
    const found = csv(join(dir, 'state-plain/results/verify.differences.csv')).map(
      (d) => `${d.kind} ${d.changed_in} ${d.key} ${d.field}`,
    );
    expect(found.sort()).toEqual(
      [
        'differs account P1 lastName',
        'differs account P2 emailAddresses',
        'differs account P3 phoneNumbers',
        'differs account P4 tags',
        'differs account P5 fields',
        'differs account P6 owner',
        'differs account P7 organisation',
        'missing account P8 ',
        'extra account  ',
      ].sort(),
    );
    const rows = csv(join(dir, 'state-plain/results/verify.differences.csv'));
    // Rows as a spreadsheet shows them: the header is row 1, P1 row 2.
    expect(rows.find((d) => d.key === 'P1')).toMatchObject({ row: '2', in_file: 'Köhler', in_account: 'Köhler-Braun' });
    // Said as a person reads them: names, not ids; a list's items the account lacks, then what it holds.
    expect(rows.find((d) => d.key === 'P7')).toMatchObject({
      row: '8',
      in_file: 'Köhler IT-Service GmbH',
      in_account: 'Adler & Söhne KG',
    });
    expect(rows.find((d) => d.key === 'P6')).toMatchObject({ in_file: 'sam', in_account: 'Alex Admin' });
    expect(rows.find((d) => d.key === 'P5')).toMatchObject({
      in_file: 'Support level: Bronze',
      in_account: 'Contract end: 2029-12-31; Support level: Gold',
    });
    expect(rows.find((d) => d.key === 'P2')).toMatchObject({
      in_file: 'Work: ben@example.com',
      in_account: 'Work: ben.adler@example.com',
    });
    expect(rows.find((d) => d.kind === 'extra')?.in_account).toMatch(
      /^Hand Made \(record \d+\), added to the account on /,
    );
    expect(stdout).toContain('The account differs from the file: 9 differences, each in the differences file.');
  });
});

describe('rows rejected and values left out by the run', () => {
  const MAPPING = `version: 1
entity: party
key: "{{Kundennummer}}"
fields:
  - { to: firstName, value: { column: Vorname } }
  - { to: lastName, value: { column: Nachname }, required: true }
  - { to: email, type: Work, value: { column: E-mail, transform: [email] }, onInvalid: drop }
  - { to: custom, definition: Customer since, tag: null, value: { column: Date de naissance, transform: [{ date: dd/MM/yyyy }] } }
`;
  const SHEET = [
    'Kundennummer,Vorname,Nachname,E-mail,Date de naissance',
    'K-1,Anne,Roux,anne@example.com,01/02/1980',
    'K-2,Bea,Stein,anne@@example,02/03/1981',
    'K-3,Carl,,carl@example.com,03/04/1982',
    'K-4,Dora,Thal,dora@example.com,31/02/1980',
    'K-5,Emil,Ulm,emil@example.com,',
    '',
  ].join('\n');

  it('verify exits 0, and lists both with their reasons in the summary and the file, apart from the differences; --strict exits 3', async () => {
    writeFileSync(join(dir, 'kunden.csv'), SHEET);
    writeFileSync(join(dir, 'kunden.yaml'), MAPPING);
    await freshAccount();
    const validated = await runCli(['validate', '--mapping', 'kunden.yaml', '--input', 'kunden.csv'], {
      cwd: dir,
      env: env(),
    });
    expect(validated.code).toBe(3);
    const run = await runCli(
      ['import', '--mapping', 'kunden.yaml', '--input', 'kunden.csv', '--state-dir', 'state-kunden'],
      { cwd: dir, env: env() },
    );
    expect(run.code, run.stdout + run.stderr).toBe(3);
    // The run's summary says each reason as the data owner reads it.
    expect(run.stdout).toContain('Date de naissance "31/02/1980" is not a date (dd/MM/yyyy) (first at row 5)');
    expect(run.stdout).toContain('Nachname is empty, and the mapping needs a value there (first at row 4)');

    const verified = await runCli(
      ['verify', '--mapping', 'kunden.yaml', '--input', 'kunden.csv', '--state-dir', 'state-kunden'],
      { cwd: dir, env: env() },
    );
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    expect(verified.stdout).toContain(
      'No difference: 3 of 5 rows are in the account as in the file; 2 rows were not carried, each for the reason listed; 1 value was left out of the records written, each for the reason listed.',
    );
    expect(verified.stdout).toContain(
      'kunden, row 3 (K-2): value left out: E-mail "anne@@example" is not an e-mail address: left out of the record',
    );
    expect(verified.stdout).toContain(
      'kunden, row 4 (K-3): row not carried: Nachname is empty, and the mapping needs a value there',
    );
    expect(verified.stdout).toContain(
      'kunden, row 5 (K-4): row not carried: Date de naissance "31/02/1980" is not a date (dd/MM/yyyy)',
    );
    expect(csv(join(dir, 'state-kunden/results/verify.differences.csv'))).toEqual([]);
    const notCarried = csv(join(dir, 'state-kunden/results/verify.not-carried.csv'));
    expect(notCarried.map((n) => [n.kind, n.row, n.key, n.column, n.value, n.reason, n.rule])).toEqual([
      [
        'dropped',
        '3',
        'K-2',
        'E-mail',
        'anne@@example',
        'E-mail "anne@@example" is not an e-mail address: left out of the record',
        'fields[2].value.transform[0]',
      ],
      ['rejected', '4', 'K-3', 'Nachname', '', 'Nachname is empty, and the mapping needs a value there', 'fields[1]'],
      [
        'rejected',
        '5',
        'K-4',
        'Date de naissance',
        '31/02/1980',
        'Date de naissance "31/02/1980" is not a date (dd/MM/yyyy)',
        'fields[3].value.transform[0]',
      ],
    ]);

    // One row number for a record in every file: the rejects file, the warnings file, the success
    // file and verify's all say row 3 for K-2 and row 5 for K-4.
    const rejects = csv(join(dir, 'state-kunden/results/kunden.rejects.csv'));
    expect(rejects.map((r) => [r.Kundennummer, r._row, r._message, r._rule])).toEqual([
      ['K-3', '4', 'Nachname is empty, and the mapping needs a value there', 'fields[1]'],
      ['K-4', '5', 'Date de naissance "31/02/1980" is not a date (dd/MM/yyyy)', 'fields[3].value.transform[0]'],
    ]);
    const warnings = csv(join(dir, 'warnings.csv'));
    expect(warnings.map((w) => [w.Kundennummer, w._row, w._code, w._message, w._rule])).toEqual([
      [
        'K-2',
        '3',
        'VALUE_DROPPED',
        'E-mail "anne@@example" is not an e-mail address: left out of the record',
        'fields[2].value.transform[0]',
      ],
    ]);
    const success = csv(join(dir, 'state-kunden/results/kunden.success.csv'));
    expect(success.find((s) => s.key === 'K-2')).toMatchObject({
      _row: '3',
      warnings: 'VALUE_DROPPED email: E-mail "anne@@example" is not an e-mail address: left out of the record',
    });

    const strict = await runCli(
      ['verify', '--mapping', 'kunden.yaml', '--input', 'kunden.csv', '--state-dir', 'state-kunden', '--strict'],
      { cwd: dir, env: env() },
    );
    expect(strict.code).toBe(3);
    expect(strict.stdout).toContain(
      'No difference, but --strict counts what was not carried: 3 of 5 rows are in the account as in the file;',
    );
  });
});
