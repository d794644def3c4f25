import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { formatRollbackSummary, reasonLines } from '../../src/cli/import-report.ts';
import { CrmClient } from '../../src/client/index.ts';
import { FerryError } from '../../src/errors/index.ts';
import { JournalWriter } from '../../src/journal/index.ts';
import { fingerprint } from '../../src/load/fingerprint.ts';
import {
  runImport,
  runRollback,
  type ImportEvent,
  type ImportOptionsInput,
  type ImportSummary,
} from '../../src/load/index.ts';
import { validatePlan } from '../../src/plan/validate.ts';
import type { SandboxOptions } from '../../src/sandbox/index.ts';
import { allPages as all, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const work = mkdtempSync(join(tmpdir(), 'ferry-import-'));
const sandboxes: TestSandbox[] = [];

afterEach(async () => {
  while (sandboxes.length > 0) await sandboxes.pop()?.close();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function sandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const started = await startTestSandbox(options);
  sandboxes.push(started);
  return started;
}

let folders = 0;
/** A folder holding a plan over copies of the generic mappings, and the contacts sample. */
function project(csv?: string): { dir: string; plan: string; csv: string } {
  folders += 1;
  const dir = join(work, `p${folders}`);
  mkdirSync(dir, { recursive: true });
  copyFileSync(join(ROOT, 'mappings/generic-organisations.yaml'), join(dir, 'organisations.yaml'));
  copyFileSync(join(ROOT, 'mappings/generic-people.yaml'), join(dir, 'people.yaml'));
  writeFileSync(join(dir, 'contacts.csv'), csv ?? readFileSync(join(ROOT, 'samples/contacts.csv')));
  writeFileSync(
    join(dir, 'plan.yaml'),
    [
      'version: 1',
      'steps:',
      '  - name: organisations',
      '    mapping: organisations.yaml',
      '    input: contacts.csv',
      '  - name: people',
      '    mapping: people.yaml',
      '    input: contacts.csv',
      '',
    ].join('\n'),
  );
  return { dir, plan: join(dir, 'plan.yaml'), csv: join(dir, 'contacts.csv') };
}

function clientFor(box: TestSandbox): CrmClient {
  return new CrmClient({
    baseUrl: box.url,
    auth: box.token,
    retry: { limit: 5, baseDelayMs: 1, maxDelayMs: 5, maxRetryAfterMs: 1000 },
  });
}

async function importInto(box: TestSandbox, options: ImportOptionsInput, signal?: AbortSignal): Promise<ImportSummary> {
  const client = clientFor(box);
  try {
    return await runImport(options, {
      client,
      account: { baseUrl: box.url, account: box.url },
      ...(signal ? { signal } : {}),
    });
  } finally {
    await client.close();
  }
}

function step(summary: ImportSummary, name: string) {
  const found = summary.steps.find((s) => s.step === name);
  if (!found) throw new Error(`no step ${name}`);
  return found;
}

describe('runImport: a plan into an empty account', () => {
  it('creates every row once, links people to their organisation, and a re-run sends no write', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    const partiesBefore = (await all(box, '/parties', 'parties')).length;

    const first = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(first.stopped).toBeNull();
    const orgs = step(first, 'organisations');
    const people = step(first, 'people');
    expect(people.created).toBe(people.rowsRead - people.skipped);
    expect(people.rejected).toBe(0);
    expect(orgs.rejected).toBe(0);
    expect(orgs.created).toBeGreaterThan(0);

    const parties = await all(box, '/parties', 'parties');
    expect(parties.length).toBe(partiesBefore + orgs.created + people.created);
    const anna = parties.find((party) => party.emailAddresses?.[0]?.address === 'anna.mueller@beispiel.de');
    expect(anna.organisation?.name).toBe('Müller & Söhne GmbH');
    // Every created record is in the success file with its id.
    const success = readFileSync(join(stateDir, 'results', 'people.success.csv'), 'utf8');
    expect(success.split('\r\n').filter((l) => l.includes(',created,')).length).toBe(people.created);
    expect(success).toContain(`,anna.mueller@beispiel.de,created,${anna.id},`);

    const again = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(step(again, 'people').unchanged).toBe(people.created);
    expect(step(again, 'organisations').unchanged).toBe(orgs.created);
    expect(step(again, 'people').created + step(again, 'people').updated).toBe(0);
    expect((await all(box, '/parties', 'parties')).length).toBe(parties.length);
    // Only the reads of the account's names: no write.
    expect(again.requests).toBeLessThan(first.requests);
  });

  it('sends one request per person: tags, custom fields and the organisation link go in the create', async () => {
    const box = await sandbox();
    const p = project();
    const client = clientFor(box);
    const summary = await runImport(
      { source: { kind: 'plan', planFile: p.plan }, stateDir: join(p.dir, 's') },
      { client, account: { baseUrl: box.url, account: box.url } },
    );
    await client.close();
    const written = step(summary, 'people').created + step(summary, 'organisations').created;
    // The reads of names happen once per run, whatever its size.
    const catalogReads = summary.requests - written;
    expect(catalogReads).toBeLessThan(20);
    const parties = await all(box, '/parties?embed=tags,fields', 'parties');
    const anna = parties.find((party) => party.emailAddresses?.[0]?.address === 'anna.mueller@beispiel.de');
    expect(anna.tags.map((t: any) => t.name.toLowerCase()).sort()).toEqual(['customer', 'vip']);
    expect(anna.fields.map((f: any) => f.definition.name).sort()).toEqual(['Customer since', 'VIP']);
  });
});

describe('runImport: re-runs of a changed file', () => {
  it('updates a changed row with its changed fields only, creates a new row, lists and deletes a removed one', async () => {
    const box = await sandbox();
    const original = readFileSync(join(ROOT, 'samples/contacts.csv'), 'utf8');
    const p = project(original);
    const stateDir = join(p.dir, '.crm-ferry');
    await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });

    const lines = original.split('\n');
    const changed = original
      .replace(
        'Anna,Müller,anna.mueller@beispiel.de,+49 30 1234567,Müller & Söhne GmbH,Geschäftsführerin',
        'Anna,Müller,anna.mueller@beispiel.de,+49 30 1234567,Müller & Söhne GmbH,Inhaberin',
      )
      .replace(`${lines.find((l) => l.startsWith('Kari,'))}\n`, '')
      .concat('Zoe,Zeta,zoe.zeta@example.org,,,Analyst,,,,,,,2024-02-02\n');
    expect(changed).not.toBe(original);
    writeFileSync(p.csv, changed);

    const rerun = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    const people = step(rerun, 'people');
    expect(people.updated).toBe(1);
    expect(people.created).toBe(1);
    expect(people.missing).toBe(1);
    const parties = await all(box, '/parties', 'parties');
    const anna = parties.filter((party) => party.emailAddresses?.[0]?.address === 'anna.mueller@beispiel.de');
    expect(anna).toHaveLength(1);
    expect(anna[0].jobTitle).toBe('Inhaberin');
    expect(parties.filter((party) => party.lastName === 'Zeta')).toHaveLength(1);

    {
      // Listed, by key, in the success file.
      const listed = readFileSync(join(stateDir, 'results', 'people.success.csv'), 'utf8')
        .split('\r\n')
        .filter((line) => line.includes(',missing,'));
      expect(listed).toHaveLength(1);
      expect(listed[0]).toMatch(/^0,[^,]+,missing,\d+,http/);
      const removed = await importInto(box, {
        source: { kind: 'plan', planFile: p.plan },
        stateDir,
        deleteMissing: true,
      });
      expect(step(removed, 'people').deleted).toBe(1);
      // Her organisation was named by her row only: it left the input too.
      expect(step(removed, 'organisations').deleted).toBe(1);
      expect(step(removed, 'people').updated + step(removed, 'people').created).toBe(0);
      const after = await all(box, '/parties', 'parties');
      expect(after.length).toBe(parties.length - 2);
      expect(after.some((party) => party.lastName === 'Ødegård' || party.name === 'Fjord Fisk AS')).toBe(false);
    }
  });
});

describe('runImport: another account behind the same address', () => {
  it('a state whose account had none of these users is refused before anything is written', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir, limit: 1 });
    const stateFile = join(stateDir, 'state.json');
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    const users = (await box.v2('GET', '/users')).body.users
      .map((u: { id: number }) => u.id)
      .sort((a: number, b: number) => a - b);
    expect(state.users).toEqual(users);
    // What a state written with another account's personal token, at the same address, holds.
    writeFileSync(stateFile, JSON.stringify({ ...state, users: [987654, 987655] }));
    const before = (await all(box, '/parties', 'parties')).length;
    const error = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'JOURNAL_ACCOUNT' });
    expect((error as FerryError).message).toContain("none of this account's users");
    expect((await all(box, '/parties', 'parties')).length).toBe(before);
    // One user in common is the same account (people join and leave): accepted, and remembered.
    writeFileSync(stateFile, JSON.stringify({ ...state, users: [users[0], 987654] }));
    expect(
      (await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir, limit: 1 })).stopped,
    ).toBeNull();
    expect(JSON.parse(readFileSync(stateFile, 'utf8')).users).toEqual([...users, 987654]);
  });

  it('a rollback runs the same check: it deletes nothing in an account none of whose users the state knows', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir, limit: 2 });
    const stateFile = join(stateDir, 'state.json');
    const state = JSON.parse(readFileSync(stateFile, 'utf8'));
    writeFileSync(stateFile, JSON.stringify({ ...state, users: [987654, 987655] }));
    const before = (await all(box, '/parties', 'parties')).length;
    const client = clientFor(box);
    try {
      const account = { baseUrl: box.url, account: box.url };
      for (const dryRun of [true, false]) {
        const error = await runRollback({ stateDir, dryRun }, { client, account }).then(
          () => null,
          (e: unknown) => e,
        );
        expect(error).toMatchObject({
          code: 'JOURNAL_ACCOUNT',
          message: expect.stringContaining("none of this account's users"),
        });
      }
      expect((await all(box, '/parties', 'parties')).length).toBe(before);
      // The state's own account: the rollback goes ahead.
      writeFileSync(stateFile, JSON.stringify(state));
      expect((await runRollback({ stateDir }, { client, account })).deleted).toBeGreaterThan(0);
    } finally {
      await client.close();
    }
  });
});

describe('runImport: the mapping changed between runs', () => {
  it('a changed key is refused before anything is written: every row would be created again', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    const before = (await all(box, '/parties', 'parties')).length;
    const people = join(p.dir, 'people.yaml');
    writeFileSync(
      people,
      readFileSync(people, 'utf8').replace('key: "{{email}}"', 'key: "{{first_name}} {{last_name}}"'),
    );
    const error = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({ code: 'MAPPING_INVALID', location: { file: people, yamlPath: 'key' } });
    expect((error as FerryError).message).toContain('every row would be created again');
    expect((await all(box, '/parties', 'parties')).length).toBe(before);
    // Other changes to the mapping are what re-runs are for.
    writeFileSync(
      people,
      readFileSync(people, 'utf8')
        .replace('key: "{{first_name}} {{last_name}}"', 'key: "{{email}}"')
        .replace('{ column: job_title, transform: [trim] }', '{ const: Staff }'),
    );
    const rerun = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(step(rerun, 'people')).toMatchObject({ created: 0, updated: 30 });
  });
});

describe('runImport: rejects', () => {
  it('writes rows the service refuses to the rejects file with the HTTP status, and --retry-rejects takes only those again', async () => {
    const box = await sandbox();
    const dir = join(work, 'rejects');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'people.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - { to: type, value: person }',
        '  - { to: firstName, value: { column: first } }',
        '  - { to: lastName, value: { column: last } }',
        '  - { to: email, value: { column: account } }',
        '',
      ].join('\n'),
    );
    // No e-mail check in the mapping: only the service refuses an address without an @.
    writeFileSync(
      join(dir, 'people.csv'),
      'id,first,last,account\nP1,Ada,Lovelace,ab1234@example.com\nP2,Grace,Hopper,wrong\nP3,Alan,Turing,cd5678@example.com\n',
    );
    const stateDir = join(dir, '.crm-ferry');
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'people.yaml'), inputFile: join(dir, 'people.csv') },
      stateDir,
    };
    const first = await importInto(box, options);
    const s = first.steps[0];
    expect(s?.created).toBe(2);
    expect(s?.rejected).toBe(1);
    const rejects = readFileSync(s?.rejectsFile ?? '', 'utf8');
    expect(rejects.split('\r\n')[0]).toBe(
      '\uFEFFid,first,last,account,_http_status,_row,_field,_code,_message,_rule,_raw',
    );
    expect(rejects).toMatch(/\r\nP2,Grace,Hopper,wrong,422,3,[^,]*,API_VALIDATION,/);
    // Said as the service's, which validate cannot know beforehand.
    expect(s?.reasons.find((r) => r.code === 'API_VALIDATION')?.byService).toBe(true);
    expect(reasonLines(s?.reasons ?? []).at(-1)).toMatch(
      /API_VALIDATION: refused by the service when sent, which only it could tell/,
    );
    // The service's own words, whole, on the column the value came from.
    expect(rejects).toMatch(
      /,API_VALIDATION,"account ""wrong"": is not an email address: ""wrong"" \(the service, at emailAddresses\[0\]\.address\)",/,
    );

    // Fixed, and a row added since: --retry-rejects takes the fixed row only.
    writeFileSync(
      join(dir, 'people.csv'),
      'id,first,last,account\nP1,Ada,Lovelace,ab1234@example.com\nP2,Grace,Hopper,ef9999@example.com\nP3,Alan,Turing,cd5678@example.com\nP4,Barbara,Liskov,gh1111@example.com\n',
    );
    const retry = await importInto(box, { ...options, retryRejects: true });
    expect(retry.steps[0]?.created).toBe(1);
    expect(retry.steps[0]?.unchanged).toBe(0);
    const parties = await all(box, '/parties', 'parties');
    expect(
      parties
        .filter((party) => ['Lovelace', 'Hopper', 'Turing', 'Liskov'].includes(party.lastName))
        .map((p) => p.lastName)
        .sort(),
    ).toEqual(['Hopper', 'Lovelace', 'Turing']);

    // A row the mapping refuses (no last name) is journalled too, so --retry-rejects finds it once fixed.
    writeFileSync(
      join(dir, 'people.yaml'),
      readFileSync(join(dir, 'people.yaml'), 'utf8').replace(
        '{ to: lastName, value: { column: last } }',
        '{ to: lastName, value: { column: last }, required: true }',
      ),
    );
    writeFileSync(
      join(dir, 'people.csv'),
      'id,first,last,account\nP1,Ada,Lovelace,ab1234@example.com\nP2,Grace,Hopper,ef9999@example.com\nP3,Alan,Turing,cd5678@example.com\nP5,Edsger,,ij2222@example.com\n',
    );
    const mapped = await importInto(box, options);
    expect(mapped.steps[0]).toMatchObject({ rejected: 1, unchanged: 3, missing: 0 });
    writeFileSync(
      join(dir, 'people.csv'),
      'id,first,last,account\nP1,Ada,Lovelace,ab1234@example.com\nP2,Grace,Hopper,ef9999@example.com\nP3,Alan,Turing,cd5678@example.com\nP5,Edsger,Dijkstra,ij2222@example.com\n',
    );
    const fixed = await importInto(box, { ...options, retryRejects: true });
    expect(fixed.steps[0]).toMatchObject({ created: 1, rejected: 0 });
  });
});

describe('runImport: a row that could not be read', () => {
  it('is taken by --retry-rejects once the file is fixed, though it had no key to journal', async () => {
    const box = await sandbox();
    const dir = join(work, 'unread');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'people.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - { to: type, value: person }',
        '  - { to: lastName, value: { column: last } }',
        '',
      ].join('\n'),
    );
    // An unclosed quote: that row cannot be read, the rows after it can.
    writeFileSync(join(dir, 'people.csv'), 'id,last\nP1,Lovelace\nP2,"Hopper\nP3,Turing\n');
    const stateDir = join(dir, '.crm-ferry');
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'people.yaml'), inputFile: join(dir, 'people.csv') },
      stateDir,
    };
    const first = await importInto(box, options);
    expect(first.steps[0]).toMatchObject({ created: 2, rejected: 1 });
    expect(readFileSync(first.steps[0]?.rejectsFile ?? '', 'utf8')).toContain('SOURCE_MALFORMED_RECORD');

    writeFileSync(join(dir, 'people.csv'), 'id,last\nP1,Lovelace\nP2,Hopper\nP3,Turing\n');
    const retry = await importInto(box, { ...options, retryRejects: true });
    expect(retry.steps[0]).toMatchObject({ created: 1, rejected: 0 });
    expect(
      (await all(box, '/parties', 'parties')).filter((p) => ['Lovelace', 'Hopper', 'Turing'].includes(p.lastName)),
    ).toHaveLength(3);
    // The input reads whole now: a row added later is for a plain run, not for --retry-rejects.
    writeFileSync(join(dir, 'people.csv'), 'id,last\nP1,Lovelace\nP2,Hopper\nP3,Turing\nP4,Liskov\n');
    expect((await importInto(box, { ...options, retryRejects: true })).steps[0]).toMatchObject({
      created: 0,
      rejected: 0,
    });
    // And the rejects file of the first run is gone: this run rejected nothing.
    expect(existsSync(join(stateDir, 'results', 'people.rejects.csv'))).toBe(false);
  });
});

describe('runImport: a result file that cannot be written', () => {
  it('stops the run with the error and still returns the summary; the next run goes on', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir, limit: 2 });
    // Something in the way of the file's last step (its rename), as a full disk would be.
    rmSync(join(stateDir, 'results', 'people.success.csv'));
    mkdirSync(join(stateDir, 'results', 'people.success.csv', 'x'), { recursive: true });
    const summary = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(summary.stopped).toMatchObject({ code: 'EXPORT_WRITE' });
    expect(summary.stopped?.hint).toContain('run the same command again');
    rmSync(join(stateDir, 'results', 'people.success.csv'), { recursive: true });
    const again = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(again.stopped).toBeNull();
    expect(step(again, 'people').created).toBe(0);
    expect(step(again, 'people').unchanged).toBe(30);
  });
});

describe('runImport --dry-run after a run with rejects', () => {
  it("keeps the last run's rejects file: a dry run cannot know what the service refuses", async () => {
    const box = await sandbox();
    const dir = join(work, 'dry-rejects');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'people.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - { to: type, value: person }',
        '  - { to: lastName, value: { column: last } }',
        '  - { to: email, value: { column: account } }',
        '',
      ].join('\n'),
    );
    // P2: only the service refuses its e-mail address. P3: cannot be read (an unclosed quote).
    writeFileSync(
      join(dir, 'people.csv'),
      'id,last,account\nP1,Lovelace,ab1234@example.com\nP2,Hopper,wrong\nP3,"Turing,cd5678@example.com\n',
    );
    const stateDir = join(dir, '.crm-ferry');
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'people.yaml'), inputFile: join(dir, 'people.csv') },
      stateDir,
    };
    const real = await importInto(box, options);
    expect(real.steps[0]).toMatchObject({ created: 1, rejected: 2 });
    const dry = await importInto(box, { ...options, dryRun: true });
    expect(dry.steps[0]?.rejected).toBe(1);
    expect(dry.steps[0]?.rejectsFile).toBe(join(stateDir, 'results', 'people.dry-run.rejects.csv'));
    const rejects = readFileSync(join(stateDir, 'results', 'people.rejects.csv'), 'utf8');
    expect(rejects).toContain('API_VALIDATION');
    expect(rejects).toContain('SOURCE_MALFORMED_RECORD');
  });
});

describe('runImport: a linked row refused on a re-run', () => {
  it('rows that link to it keep linking to the record an earlier run wrote for it', async () => {
    // Answers take a while, so that most people are linked after the organisation was refused.
    const box = await sandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 10, latencyJitterMs: 0 } });
    folders += 1;
    const dir = join(work, `linked${folders}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'orgs.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - { to: type, value: organisation }',
        '  - { to: name, value: { column: name } }',
        '  - { to: custom, definition: Account number, tag: null, value: { column: account } }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'people.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - { to: type, value: person }',
        '  - { to: lastName, value: { column: last } }',
        '  - { to: jobTitle, value: { column: title } }',
        '  - { to: organisation, ref: orgs, key: "{{org}}" }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'plan.yaml'),
      'version: 1\nsteps:\n  - { name: orgs, mapping: orgs.yaml, input: orgs.csv }\n  - { name: people, mapping: people.yaml, input: people.csv }\n',
    );
    writeFileSync(join(dir, 'orgs.csv'), 'id,name,account\nO1,Acme Ltd,AB-1234\n');
    const people = (title: string): string =>
      `id,last,title,org\n${Array.from({ length: 12 }, (_, i) => `P${i},Lovelace${i},${title},O1`).join('\n')}\n`;
    writeFileSync(join(dir, 'people.csv'), people('Engineer'));
    const options: ImportOptionsInput = {
      source: { kind: 'plan', planFile: join(dir, 'plan.yaml') },
      stateDir: join(dir, 's'),
      concurrency: 2,
    };
    await importInto(box, options);
    // The organisation's row now holds a value the account refuses; the person's row changed too.
    writeFileSync(join(dir, 'orgs.csv'), 'id,name,account\nO1,Acme Ltd,not-an-account-number\n');
    writeFileSync(join(dir, 'people.csv'), people('Countess'));
    const rerun = await importInto(box, options);
    expect(step(rerun, 'orgs').rejected).toBe(1);
    expect(step(rerun, 'people')).toMatchObject({ updated: 12, rejected: 0 });
    const linked = (await all(box, '/parties', 'parties')).filter((party) =>
      String(party.lastName).startsWith('Lovelace'),
    );
    expect(linked.map((p) => `${p.jobTitle} at ${p.organisation?.name}`)).toEqual(
      Array(12).fill('Countess at Acme Ltd'),
    );
  });
});

describe('runImport: the state belongs to one account', () => {
  it('refuses to go on with a state written against another account', async () => {
    const a = await sandbox();
    const b = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    await importInto(a, { source: { kind: 'plan', planFile: p.plan }, stateDir, limit: 2 });
    const before = (await all(b, '/parties', 'parties')).length;
    const error = await importInto(b, { source: { kind: 'plan', planFile: p.plan }, stateDir }).catch(
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).code).toBe('JOURNAL_ACCOUNT');
    expect((error as FerryError).message).toContain(a.url);
    expect((await all(b, '/parties', 'parties')).length).toBe(before);
  });
});

describe('runImport: two mappings of one name in one folder', () => {
  it('the second is refused before it writes: the two would share one journal', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    // A copy of the mapping for another file, its `name:` left as it was.
    copyFileSync(join(p.dir, 'organisations.yaml'), join(p.dir, 'suppliers.yaml'));
    const header = readFileSync(p.csv, 'utf8').split('\n')[0];
    writeFileSync(
      join(p.dir, 'suppliers.csv'),
      `${header}\nSam,Supply,sam@supplier.example,,Supplier One Ltd,Buyer,Main St 1,Leeds,LS1,United Kingdom,,,2024-01-01\n`,
    );
    const first = await importInto(box, {
      source: { kind: 'mapping', mappingFile: join(p.dir, 'organisations.yaml'), inputFile: p.csv },
      stateDir,
    });
    expect(first.steps[0]?.created).toBeGreaterThan(0);
    const before = (await all(box, '/parties', 'parties')).length;
    for (const dryRun of [true, false]) {
      const error = await importInto(box, {
        source: {
          kind: 'mapping',
          mappingFile: join(p.dir, 'suppliers.yaml'),
          inputFile: join(p.dir, 'suppliers.csv'),
        },
        stateDir,
        dryRun,
        deleteMissing: true,
      }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: 'USAGE',
        message: expect.stringContaining(
          `was written by runs of ${join(p.dir, 'organisations.yaml')}; ${join(p.dir, 'suppliers.yaml')} has a step of the same name`,
        ),
      });
    }
    expect((await all(box, '/parties', 'parties')).length).toBe(before);
    // The first mapping goes on as before; so does the second once it has a name of its own.
    expect(
      (
        await importInto(box, {
          source: { kind: 'mapping', mappingFile: join(p.dir, 'organisations.yaml'), inputFile: p.csv },
          stateDir,
        })
      ).steps[0]?.created,
    ).toBe(0);
    writeFileSync(
      join(p.dir, 'suppliers.yaml'),
      readFileSync(join(p.dir, 'suppliers.yaml'), 'utf8').replace(/^name: .*$/m, 'name: suppliers'),
    );
    const own = await importInto(box, {
      source: { kind: 'mapping', mappingFile: join(p.dir, 'suppliers.yaml'), inputFile: join(p.dir, 'suppliers.csv') },
      stateDir,
    });
    expect(own.steps[0]).toMatchObject({ step: 'suppliers', created: 1 });
  });
});

describe('runImport --dry-run', () => {
  it('counts what a run would send and writes nothing to the account', async () => {
    const box = await sandbox({ rateLimit: { limit: 4000, windowSeconds: 3600 } });
    const p = project();
    const before = (await all(box, '/parties', 'parties')).length;
    const summary = await importInto(box, {
      source: { kind: 'plan', planFile: p.plan },
      stateDir: join(p.dir, 's'),
      dryRun: true,
    });
    expect((await all(box, '/parties', 'parties')).length).toBe(before);
    const creates = step(summary, 'people').created + step(summary, 'organisations').created;
    expect(creates).toBeGreaterThan(30);
    const dry = summary.dryRun as NonNullable<typeof summary.dryRun>;
    // The names are read by the run too, and both steps look their rows up (match:): they count.
    // Of the account's names, the two mappings hold only users and custom fields of parties: two
    // requests, where the whole catalog (teams, pipelines and their milestones, ...) is twelve here.
    expect(summary.requestsForNames).toBe(2);
    expect(dry.lookUps).toBeGreaterThan(0);
    expect(dry.lookUpValues).toBe(creates);
    expect(dry.requests).toBe(summary.requestsForNames + dry.lookUps + creates);
    expect(dry.limitPerHour).toBe(4000);
    expect(dry.estimatedSeconds).toBe(Math.ceil((dry.requests / 4000) * 3600));
    expect(dry.samples).toHaveLength(3);
    // The run sends that, but for look-ups shared by fewer rows: one a value at most.
    const run = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir: join(p.dir, 's') });
    expect(run.requests).toBeGreaterThan(summary.requestsForNames + creates);
    expect(run.requests).toBeLessThanOrEqual(dry.requests - dry.lookUps + dry.lookUpValues);
  });

  it("reads all of the account's names for a plan with a set-up, which creates what the account lacks", async () => {
    const box = await sandbox();
    const p = project();
    writeFileSync(p.plan, `${readFileSync(p.plan, 'utf8')}setup: {}\n`);
    const summary = await importInto(box, {
      source: { kind: 'plan', planFile: p.plan },
      stateDir: join(p.dir, 's'),
      dryRun: true,
    });
    // Users, teams, pipelines and the milestones of the one, activity types, task categories,
    // custom fields of three entities, track definitions, stages, lost reasons, the token's user.
    expect(summary.requestsForNames).toBe(13);
    expect(summary.setup?.dryRun).toBe(true);
  });
});

describe('runImport: exactly once when answers are lost', () => {
  it('with dropped connections after writes and 5xx answers, every row exists once', async () => {
    const box = await sandbox({
      faults: { errorRate: 0.1, dropAfterWriteRate: 0.15, latencyMs: 0, latencyJitterMs: 0 },
      seed: 7,
    });
    const p = project();
    const before = await all(box, '/parties', 'parties');
    let summary = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir: join(p.dir, 's') });
    // A run stopped by a fault that outlasts the retries is simply run again.
    for (let i = 0; i < 5 && summary.stopped; i += 1)
      summary = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir: join(p.dir, 's') });
    expect(summary.stopped).toBeNull();
    const after = await all(box, '/parties', 'parties');
    const added = after.filter((party) => !before.some((b) => b.id === party.id));
    const people = added.filter((party) => party.type === 'person');
    const emails = people.map((party) => party.emailAddresses?.[0]?.address);
    expect(new Set(emails).size).toBe(emails.length);
    expect(people.length).toBe(30);
    const names = added.filter((party) => party.type === 'organisation').map((o) => o.name);
    expect(new Set(names).size).toBe(names.length);
  });

  it('a create whose result was never journalled is found in the account, not sent again', async () => {
    const box = await sandbox();
    const dir = join(work, 'pending');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'orgs.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - to: type',
        '    value: organisation',
        '  - to: name',
        '    value: { column: name }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'orgs.csv'), 'id,name\nO1,Applied Before Crash Ltd\nO2,Never Sent Ltd\n');
    const stateDir = join(dir, '.crm-ferry');
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'orgs.yaml'), inputFile: join(dir, 'orgs.csv') },
      stateDir,
    };
    // A first run with no rows creates the state for this account.
    await importInto(box, { ...options, limit: 1, dryRun: true });
    // What a crash leaves: two intents, one of which the service applied.
    const created = await box.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Applied Before Crash Ltd' },
    });
    expect(created.status).toBe(201);
    const journal = await JournalWriter.open(join(stateDir, 'journal', 'orgs.jsonl'));
    const at = new Date(Date.now() - 1000).toISOString();
    for (const [k, name] of [
      ['O1', 'Applied Before Crash Ltd'],
      ['O2', 'Never Sent Ltd'],
    ] as const) {
      const body = { type: 'organisation', name };
      await journal.append({
        t: 'intent',
        k,
        op: 'create',
        run: 'crashed',
        at,
        fp: fingerprint({ body, attachments: [] }),
        body,
      });
    }
    await journal.close();

    const summary = await importInto(box, options);
    expect(summary.reconciled).toEqual({ applied: 1, notApplied: 1 });
    expect(summary.steps[0]?.unchanged).toBe(1);
    expect(summary.steps[0]?.created).toBe(1);
    const parties = await all(box, '/parties', 'parties');
    expect(parties.filter((party) => party.name === 'Applied Before Crash Ltd')).toHaveLength(1);
    expect(parties.filter((party) => party.name === 'Never Sent Ltd')).toHaveLength(1);
  });

  it('an unconfirmed create takes the newest record with its values, so a rollback never deletes an older twin', async () => {
    // The service's clock, moved forward by the test rather than waited for.
    let ahead = 0;
    const serviceNow = (): Date => new Date(Date.now() + ahead);
    const box = await sandbox({ now: serviceNow });
    const dir = join(work, 'twin');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'orgs.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - { to: type, value: organisation }',
        '  - { to: name, value: { column: name } }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'orgs.csv'), 'id,name\nO1,Twin Trading Ltd\n');
    const stateDir = join(dir, '.crm-ferry');
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'orgs.yaml'), inputFile: join(dir, 'orgs.csv') },
      stateDir,
    };
    await importInto(box, { ...options, dryRun: true });
    // The account had a record with the same values before (imported earlier by someone else).
    const older = await box.v2('POST', '/parties', { party: { type: 'organisation', name: 'Twin Trading Ltd' } });
    // The service's times have whole seconds: the run's own create comes a second later.
    ahead += 1100;
    const body = { type: 'organisation', name: 'Twin Trading Ltd' };
    const journal = await JournalWriter.open(join(stateDir, 'journal', 'orgs.jsonl'));
    await journal.append({
      t: 'intent',
      k: 'O1',
      op: 'create',
      run: 'crashed',
      at: serviceNow().toISOString(),
      fp: fingerprint({ body, attachments: [] }),
      body,
    });
    await journal.close();
    const mine = await box.v2('POST', '/parties', { party: body });

    const summary = await importInto(box, options);
    expect(summary.reconciled).toEqual({ applied: 1, notApplied: 0 });
    const success = readFileSync(join(stateDir, 'results', 'orgs.success.csv'), 'utf8');
    expect(success).toContain(`,O1,unchanged,${mine.body.party.id},`);

    const client = clientFor(box);
    await runRollback({ stateDir }, { client, account: { baseUrl: box.url, account: box.url } });
    await client.close();
    const left = (await all(box, '/parties', 'parties'))
      .filter((party) => party.name === 'Twin Trading Ltd')
      .map((party) => party.id);
    expect(left).toEqual([older.body.party.id]);
  });
});

describe('runImport: interrupted', () => {
  it('stops taking rows on the signal, and the re-run finishes without duplicates', async () => {
    const box = await sandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 20, latencyJitterMs: 0 } });
    const p = project();
    const before = (await all(box, '/parties', 'parties')).length;
    const controller = new AbortController();
    const client = clientFor(box);
    let rows = 0;
    const first = await runImport(
      { source: { kind: 'plan', planFile: p.plan }, stateDir: join(p.dir, 's'), concurrency: 2 },
      {
        client,
        account: { baseUrl: box.url, account: box.url },
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'row' && ++rows === 10) controller.abort();
        },
      },
    );
    await client.close();
    expect(first.interrupted).toBe(true);
    // Rows cut short while waiting to be sent are not reached, not an error.
    expect(first.stopped).toBeNull();
    const written = (await all(box, '/parties', 'parties')).length - before;
    expect(written).toBeGreaterThanOrEqual(10);
    expect(written).toBeLessThan(56);
    const second = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir: join(p.dir, 's') });
    expect(second.interrupted).toBe(false);
    // Rows whose intent was written while they waited for a slot, but never sent, were cancelled
    // by the first run: nothing is left to look up.
    expect(second.reconciled).toEqual({ applied: 0, notApplied: 0 });
    const total = step(second, 'people').created + step(second, 'people').unchanged;
    expect(total).toBe(30);
    const parties = await all(box, '/parties', 'parties');
    const emails = parties
      .filter((x) => x.type === 'person')
      .map((x) => x.emailAddresses?.[0]?.address)
      .filter(Boolean);
    expect(new Set(emails).size).toBe(emails.length);
  });
});

describe('runImport: interrupted while rows wait for the rate limit', () => {
  it('rows waiting to be sent stop quietly: interrupted, not reached, no error', async () => {
    // 4 requests a second: a few rows go out, the others wait in the rate governor when Ctrl-C comes.
    const box = await sandbox({ rateLimit: { limit: 4, windowSeconds: 1 } });
    const p = project();
    const controller = new AbortController();
    const client = clientFor(box);
    let rows = 0;
    const first = await runImport(
      { source: { kind: 'plan', planFile: p.plan }, stateDir: join(p.dir, 's'), concurrency: 8 },
      {
        client,
        account: { baseUrl: box.url, account: box.url },
        signal: controller.signal,
        onEvent: (event) => {
          if (event.type === 'row' && ++rows === 2) controller.abort();
        },
      },
    );
    await client.close();
    expect(first.interrupted).toBe(true);
    expect(first.stopped).toBeNull();
    expect(first.steps.reduce((sum, s) => sum + s.notReached, 0)).toBeGreaterThan(0);
  }, 30_000);
});

describe('runRollback', () => {
  it('undoes the last run (an update set back), then the one before (its creates deleted), resumably', async () => {
    const box = await sandbox();
    const original = readFileSync(join(ROOT, 'samples/contacts.csv'), 'utf8');
    const p = project(original);
    const stateDir = join(p.dir, '.crm-ferry');
    const before = (await all(box, '/parties', 'parties')).length;
    const first = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    const createdCount = step(first, 'people').created + step(first, 'organisations').created;
    writeFileSync(p.csv, original.replace(',Geschäftsführerin,', ',Inhaberin,'));
    const second = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(step(second, 'people').updated).toBe(1);
    const annaOf = async () =>
      (await all(box, '/parties', 'parties')).find(
        (party) => party.emailAddresses?.[0]?.address === 'anna.mueller@beispiel.de',
      );
    expect((await annaOf()).jobTitle).toBe('Inhaberin');

    const client = clientFor(box);
    const account = { baseUrl: box.url, account: box.url };
    try {
      const preview = await runRollback({ stateDir, dryRun: true }, { client, account });
      expect(preview.restored).toBe(1);
      expect(preview.deleted).toBe(0);
      expect((await annaOf()).jobTitle).toBe('Inhaberin');

      const undoUpdate = await runRollback({ stateDir }, { client, account });
      expect(undoUpdate.runs).toEqual([second.run]);
      expect(undoUpdate.restored).toBe(1);
      expect((await annaOf()).jobTitle).toBe('Geschäftsführerin');

      const undoCreates = await runRollback({ stateDir }, { client, account });
      expect(undoCreates.runs).toEqual([first.run]);
      expect(undoCreates.deleted).toBe(createdCount);
      // People go before their organisations.
      expect(undoCreates.steps.map((s) => s.step)).toEqual(['people', 'organisations']);
      // Scheduled deletes (202) are followed to their end.
      expect((await all(box, '/parties', 'parties')).length).toBe(before);

      const nothing = await runRollback({ stateDir }, { client, account });
      expect(nothing.runs).toEqual([]);
    } finally {
      await client.close();
    }
    // The journal knows the records are gone: importing again creates them again.
    const again = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(step(again, 'people').created + step(again, 'organisations').created).toBe(createdCount);
  });
});

describe('runImport: match:', () => {
  const MATCH_MAPPING = (onMatch: string) =>
    [
      'version: 1',
      'entity: party',
      'key: "{{id}}"',
      `match: { by: email, onMatch: ${onMatch} }`,
      'fields:',
      '  - { to: type, value: person }',
      '  - { to: firstName, value: { column: first } }',
      '  - { to: lastName, value: { column: last } }',
      '  - { to: jobTitle, value: { column: title } }',
      '  - { to: email, type: Work, value: { column: email } }',
      '  - { to: tags, value: { column: tags, transform: [{ split: ";" }] } }',
      '',
    ].join('\n');

  async function setUp(onMatch: string, csv: string) {
    const box = await sandbox();
    const existing = await box.v2('POST', '/parties', {
      party: {
        type: 'person',
        firstName: 'Ada',
        lastName: 'Lovelace',
        jobTitle: 'Countess',
        emailAddresses: [{ type: 'Home', address: 'Ada@Example.org' }],
        tags: [{ name: 'legacy' }],
      },
    });
    expect(existing.status).toBe(201);
    folders += 1;
    const dir = join(work, `match${folders}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'people.yaml'), MATCH_MAPPING(onMatch));
    writeFileSync(join(dir, 'people.csv'), csv);
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'people.yaml'), inputFile: join(dir, 'people.csv') },
      stateDir: join(dir, '.crm-ferry'),
    };
    return { box, id: existing.body.party.id as number, options };
  }

  const CSV =
    'id,first,last,title,email,tags\nA,Ada,Lovelace,Analyst,ada@example.org,imported\nB,Alan,Turing,Codebreaker,alan@example.org,imported\n';

  it('update: writes the row into the record found by e-mail, keeps what the account had, and rollback sets it back', async () => {
    const { box, id, options } = await setUp('update', CSV);
    const summary = await importInto(box, options);
    expect(summary.steps[0]).toMatchObject({ matched: 1, created: 1, rejected: 0 });
    const ada = (await box.v2('GET', `/parties/${id}?embed=tags`)).body.party;
    expect(ada.jobTitle).toBe('Analyst');
    expect(ada.tags.map((t: any) => t.name).sort()).toEqual(['imported', 'legacy']);
    // The existing address is kept; the row's (same address) is not added twice.
    expect(ada.emailAddresses).toHaveLength(1);
    expect((await all(box, '/parties', 'parties')).filter((p) => p.lastName === 'Lovelace')).toHaveLength(1);

    const again = await importInto(box, options);
    expect(again.steps[0]).toMatchObject({ unchanged: 2, matched: 0, created: 0 });

    const client = clientFor(box);
    const undone = await runRollback(
      { stateDir: options.stateDir },
      { client, account: { baseUrl: box.url, account: box.url } },
    );
    await client.close();
    expect(undone).toMatchObject({ deleted: 1, restored: 1 });
    const back = (await box.v2('GET', `/parties/${id}?embed=tags`)).body.party;
    expect(back.jobTitle).toBe('Countess');
    expect(back.tags.map((t: any) => t.name)).toEqual(['legacy']);
  });

  it('looks rows up in batches: one filter query for many rows', async () => {
    const rows = Array.from({ length: 40 }, (_, i) => `R${i},First${i},Last${i},,r${i}@example.org,`);
    const { box, options } = await setUp('update', `id,first,last,title,email,tags\n${rows.join('\n')}\n`);
    const client = clientFor(box);
    const log: string[] = [];
    const traced = new CrmClient({ baseUrl: box.url, auth: box.token, log: (line) => log.push(line) });
    await runImport(options, { client: traced, account: { baseUrl: box.url, account: box.url } });
    await traced.close();
    await client.close();
    const filters = log.filter((line) => line.includes('/filters/results') && line.includes('->'));
    expect(filters.length).toBeGreaterThanOrEqual(1);
    expect(filters.length).toBeLessThanOrEqual(2);
  });

  it('looks rows up in batches when the writes are slow: rows come in one at a time as writes end, their look-ups still share queries', async () => {
    // Every answer takes 20 ms, two writes at a time: rows reach their look-up a write apart, never
    // 50 within the 15 ms gather. The run must ask for the rows it has read ahead, not row by row.
    const box = await sandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 20, latencyJitterMs: 0 } });
    const rows = 150;
    const existing = await Promise.all(
      Array.from({ length: rows / 3 }, (_, k) =>
        box.v2('POST', '/parties', {
          party: {
            type: 'person',
            firstName: `First${3 * k}`,
            lastName: 'Before',
            emailAddresses: [{ type: 'Home', address: `r${3 * k}@example.org` }],
          },
        }),
      ),
    );
    expect(existing.every((answer) => answer.status === 201)).toBe(true);
    folders += 1;
    const dir = join(work, `match${folders}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'people.yaml'), MATCH_MAPPING('update'));
    writeFileSync(
      join(dir, 'people.csv'),
      `id,first,last,title,email,tags\n${Array.from({ length: rows }, (_, i) => `R${i},First${i},Last${i},,r${i}@example.org,`).join('\n')}\n`,
    );
    const log: string[] = [];
    const traced = new CrmClient({ baseUrl: box.url, auth: box.token, log: (line) => log.push(line) });
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'people.yaml'), inputFile: join(dir, 'people.csv') },
      stateDir: join(dir, '.crm-ferry'),
      concurrency: 2,
    };
    const dry = await runImport(
      { ...options, dryRun: true },
      { client: traced, account: { baseUrl: box.url, account: box.url } },
    );
    log.length = 0;
    const summary = await runImport(options, { client: traced, account: { baseUrl: box.url, account: box.url } });
    await traced.close();
    // Answers stay right: every third row finds its person, the others are created, none twice.
    expect(summary.steps[0]).toMatchObject({ matched: rows / 3, created: rows - rows / 3, rejected: 0 });
    expect(
      (await all(box, '/parties', 'parties')).filter((p) =>
        String(p.emailAddresses?.[0]?.address ?? '').endsWith('@example.org'),
      ),
    ).toHaveLength(rows);
    const filters = log.filter((line) => line.includes('/filters/results') && line.includes('->'));
    expect(filters.length).toBeLessThanOrEqual(rows / 25 + 2);
    // A step that waits for no other step's records sends full queries but its last, as its dry run says.
    expect(dry.dryRun?.lookUps).toBe(rows / 50);
    expect(filters).toHaveLength(rows / 50);
  });

  it('skip: leaves the record as it is, and a re-run sends nothing for it', async () => {
    const { box, id, options } = await setUp('skip', CSV);
    const summary = await importInto(box, options);
    expect(summary.steps[0]).toMatchObject({ matched: 1, created: 1 });
    expect((await box.v2('GET', `/parties/${id}`)).body.party.jobTitle).toBe('Countess');
    const again = await importInto(box, options);
    expect(again.steps[0]).toMatchObject({ matched: 1, unchanged: 1, updated: 0 });
  });

  it('reject: the row goes to the rejects file; two rows with one e-mail are reported, not merged', async () => {
    const { box, options } = await setUp('reject', `${CSV}C,Alan,Turing2,Again,ALAN@example.org,\n`);
    const summary = await importInto(box, options);
    expect(summary.steps[0]).toMatchObject({ created: 1, rejected: 2, matched: 0 });
    const rejects = readFileSync(summary.steps[0]?.rejectsFile ?? '', 'utf8');
    expect(rejects).toMatch(/A,Ada,Lovelace,.*409,2,match,API_CONFLICT,"?The account has this record already/);
    expect(rejects).toMatch(/C,Alan,Turing2,.*,4,match,MAPPING_VALUE,The row with key 'B' has the same email/);
  });
});

describe('runImport: organisations named by many rows', () => {
  it('creates each organisation once, whatever the concurrency; a row giving it other values is rejected, and validate says the same', async () => {
    const box = await sandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 10, latencyJitterMs: 0 } });
    folders += 1;
    const dir = join(work, `named${folders}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'orgs.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{company}}"',
        'fields:',
        '  - { to: type, value: organisation }',
        '  - { to: name, value: { column: company } }',
        '  - { to: phone, type: Work, value: { column: switchboard } }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'people.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{email}}"',
        'fields:',
        '  - { to: type, value: person }',
        '  - { to: lastName, value: { column: last } }',
        '  - { to: email, type: Work, value: { column: email } }',
        '  - { to: organisation, ref: orgs, key: "{{company}}" }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'plan.yaml'),
      'version: 1\nsteps:\n  - { name: orgs, mapping: orgs.yaml, input: contacts.csv }\n  - { name: people, mapping: people.yaml, input: contacts.csv }\n',
    );
    const rows = Array.from(
      { length: 24 },
      (_, i) =>
        `Person${i},p${i}@example.org,${i % 3 === 0 ? 'Globex' : 'Acme Ltd'},${i % 3 === 0 ? '+44 20 7946 0001' : '+44 20 7946 0000'}`,
    );
    // One Acme row gives the organisation another switchboard: which one is meant, only the user knows.
    rows.push('Odd,odd@example.org,Acme Ltd,+44 20 7946 0999');
    writeFileSync(join(dir, 'contacts.csv'), `last,email,company,switchboard\n${rows.join('\n')}\n`);
    const plan = join(dir, 'plan.yaml');

    const checked = await validatePlan({ planFile: plan, rejectsDir: join(dir, 'validate') });
    expect(checked.steps.map((s) => [s.step, s.ok, s.rejected])).toEqual([
      ['orgs', 24, 1],
      ['people', 25, 0],
    ]);

    const summary = await importInto(box, {
      source: { kind: 'plan', planFile: plan },
      stateDir: join(dir, 's'),
      concurrency: 16,
    });
    expect(step(summary, 'orgs')).toMatchObject({ created: 2, repeated: 22, rejected: 1 });
    expect(step(summary, 'people')).toMatchObject({ created: 25, rejected: 0 });
    const rejects = readFileSync(step(summary, 'orgs').rejectsFile ?? '', 'utf8');
    expect(rejects).toContain(
      "Odd,odd@example.org,Acme Ltd,+44 20 7946 0999,,26,key,MAPPING_VALUE,Duplicate key 'Acme Ltd': an earlier row of step orgs has the same key with other values",
    );
    const parties = await all(box, '/parties', 'parties');
    expect(parties.filter((p) => p.name === 'Acme Ltd')).toHaveLength(1);
    expect(parties.filter((p) => p.name === 'Globex')).toHaveLength(1);
    const acme = parties.find((p) => p.name === 'Acme Ltd');
    expect(parties.filter((p) => p.type === 'person' && p.organisation?.id === acme.id)).toHaveLength(17);

    // A re-run: the repeated rows again send nothing.
    const again = await importInto(box, {
      source: { kind: 'plan', planFile: plan },
      stateDir: join(dir, 's'),
      concurrency: 16,
    });
    expect(step(again, 'orgs')).toMatchObject({ created: 0, unchanged: 2, repeated: 22 });
    expect(step(again, 'people')).toMatchObject({ created: 0, unchanged: 25 });
  });
});

describe('runImport --full and --limit', () => {
  it('--limit takes the first rows of each step; --full writes values changed in the service back, one read per row', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    const before = (await all(box, '/parties', 'parties')).length;
    const sample = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir, limit: 3 });
    expect(sample.steps.map((s) => s.rowsRead)).toEqual([3, 3]);
    expect(sample.steps.map((s) => s.missing)).toEqual([0, 0]);
    const afterSample = await all(box, '/parties', 'parties');
    expect(afterSample.length - before).toBe(step(sample, 'organisations').created + step(sample, 'people').created);
    expect(step(sample, 'people').created).toBe(3);

    const first = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(step(first, 'people').unchanged).toBe(3);
    // Someone changes a record in the service; the file does not change.
    const anna = (await all(box, '/parties', 'parties')).find(
      (party) => party.emailAddresses?.[0]?.address === 'anna.mueller@beispiel.de',
    );
    expect((await box.v2('PUT', `/parties/${anna.id}`, { party: { jobTitle: 'Changed in the service' } })).status).toBe(
      200,
    );

    const plain = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(step(plain, 'people').updated).toBe(0);
    expect((await box.v2('GET', `/parties/${anna.id}`)).body.party.jobTitle).toBe('Changed in the service');

    const full = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir, full: true });
    expect(step(full, 'people').updated).toBe(1);
    expect((await box.v2('GET', `/parties/${anna.id}`)).body.party.jobTitle).toBe('Geschäftsführerin');
    // Nothing else differed: one read per row, one write.
    const rows =
      step(full, 'people').unchanged +
      step(full, 'people').updated +
      step(full, 'organisations').unchanged +
      step(full, 'organisations').updated;
    expect(full.requests - full.requestsForNames).toBe(rows + 1);

    // Rollback of that run sets the service's value back.
    const client = clientFor(box);
    await runRollback({ stateDir }, { client, account: { baseUrl: box.url, account: box.url } });
    await client.close();
    expect((await box.v2('GET', `/parties/${anna.id}`)).body.party.jobTitle).toBe('Changed in the service');
  });
});

describe('runImport: match by a custom field', () => {
  it('finds the record by the field value and updates it; rows without a record are created', async () => {
    const box = await sandbox();
    const definitions = (await box.v2('GET', '/parties/fields/definitions')).body.definitions as Array<{
      id: number;
      name: string;
    }>;
    const accountNumber = definitions.find((d) => d.name === 'Account number');
    expect(accountNumber).toBeDefined();
    const existing = await box.v2('POST', '/parties', {
      party: {
        type: 'organisation',
        name: 'Old Name Ltd',
        fields: [{ definition: { id: accountNumber?.id }, value: 'AB-1234' }],
      },
    });
    expect(existing.status).toBe(201);
    folders += 1;
    const dir = join(work, `custom${folders}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'orgs.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'match: { by: custom, definition: Account number, onMatch: update }',
        'fields:',
        '  - { to: type, value: organisation }',
        '  - { to: name, value: { column: name } }',
        '  - { to: custom, definition: Account number, tag: null, value: { column: account } }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'orgs.csv'), 'id,name,account\nO1,New Name Ltd,AB-1234\nO2,Other Ltd,CD-5678\n');
    const summary = await importInto(box, {
      source: { kind: 'mapping', mappingFile: join(dir, 'orgs.yaml'), inputFile: join(dir, 'orgs.csv') },
      stateDir: join(dir, 's'),
    });
    expect(summary.steps[0]).toMatchObject({ matched: 1, created: 1, rejected: 0 });
    expect((await box.v2('GET', `/parties/${existing.body.party.id}`)).body.party.name).toBe('New Name Ltd');
    expect(
      (await all(box, '/parties', 'parties')).filter((party) => ['New Name Ltd', 'Old Name Ltd'].includes(party.name)),
    ).toHaveLength(1);
  });
});

describe('runRollback: tags', () => {
  it('says which tags the undone records carried that no record carries now: the interface cannot delete a tag', async () => {
    const box = await sandbox();
    const dir = join(work, 'rollback-tags');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'people.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - { to: type, value: person }',
        '  - { to: lastName, value: { column: last } }',
        '  - { to: tags, value: { column: tag1 } }',
        '  - { to: tags, value: { column: tag2 } }',
        '',
      ].join('\n'),
    );
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'people.yaml'), inputFile: join(dir, 'people.csv') },
      stateDir: join(dir, '.crm-ferry'),
    };
    writeFileSync(join(dir, 'people.csv'), 'id,last,tag1,tag2\nP1,Lovelace,Shared-Tag,\n');
    await importInto(box, options);
    writeFileSync(
      join(dir, 'people.csv'),
      'id,last,tag1,tag2\nP1,Lovelace,Shared-Tag,\nP2,Hopper,shared-tag,Fresh-Tag\n',
    );
    expect((await importInto(box, options)).steps[0]).toMatchObject({ created: 1, unchanged: 1 });
    const client = clientFor(box);
    const account = { baseUrl: box.url, account: box.url };
    try {
      const preview = await runRollback({ stateDir: options.stateDir, dryRun: true }, { client, account });
      expect(preview.tagsLeft).toEqual([{ entity: 'party', names: ['Fresh-Tag', 'shared-tag'] }]);
      const undone = await runRollback({ stateDir: options.stateDir }, { client, account });
      expect(undone.deleted).toBe(1);
      // Lovelace still carries Shared-Tag; Fresh-Tag is on no record, and stays in the account's list.
      expect(undone.tagsLeft).toEqual([{ entity: 'party', names: ['Fresh-Tag'] }]);
      expect((await all(box, '/parties/tags', 'tags')).map((t) => t.name)).toContain('Fresh-Tag');
      expect(formatRollbackSummary(undone, false)).toContain(
        "the interface has no request to delete a tag, only to take it off a record. No record carries these any more: Fresh-Tag (parties); remove them in the account's settings",
      );
    } finally {
      await client.close();
    }
  });
});

describe('runRollback --all', () => {
  it('undoes every run of the state at once', async () => {
    const box = await sandbox();
    const original = readFileSync(join(ROOT, 'samples/contacts.csv'), 'utf8');
    const p = project(original);
    const stateDir = join(p.dir, '.crm-ferry');
    const before = (await all(box, '/parties', 'parties')).length;
    const first = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir, limit: 5 });
    const second = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(step(second, 'people').created).toBeGreaterThan(0);
    const client = clientFor(box);
    const account = { baseUrl: box.url, account: box.url };
    try {
      const preview = await runRollback({ stateDir, all: true, dryRun: true }, { client, account });
      expect([...preview.runs].sort()).toEqual([first.run, second.run].sort());
      expect((await all(box, '/parties', 'parties')).length).toBeGreaterThan(before);
      const undone = await runRollback({ stateDir, all: true }, { client, account });
      expect(undone.deleted).toBe(preview.deleted);
      expect((await all(box, '/parties', 'parties')).length).toBe(before);
      expect((await runRollback({ stateDir, all: true }, { client, account })).runs).toEqual([]);
    } finally {
      await client.close();
    }
  });
});

describe('runImport: progress', () => {
  it('progress events carry each step rows read and, once counted, its total', async () => {
    const box = await sandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 10, latencyJitterMs: 0 } });
    const p = project();
    const client = clientFor(box);
    const progress: Array<Extract<ImportEvent, { type: 'progress' }>> = [];
    const summary = await runImport(
      { source: { kind: 'plan', planFile: p.plan }, stateDir: join(p.dir, 's'), concurrency: 2, limit: 20 },
      {
        client,
        account: { baseUrl: box.url, account: box.url },
        progressEveryMs: 20,
        onEvent: (event) => event.type === 'progress' && progress.push(event),
      },
    );
    await client.close();
    expect(progress.length).toBeGreaterThan(2);
    const last = progress.at(-1);
    // --limit 20 caps the total of each step.
    expect(last?.steps.map((s) => [s.step, s.total])).toEqual([
      ['organisations', 20],
      ['people', 20],
    ]);
    expect(last?.requests).toBeGreaterThan(0);
    expect(step(summary, 'people').rowsRead).toBe(20);
  });
});

describe('runRollback: scheduled deletes', () => {
  it('follows a 202 delete job to its end (an organisation that got a note in the service meanwhile)', async () => {
    const box = await sandbox();
    folders += 1;
    const dir = join(work, `scheduled${folders}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'orgs.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'fields:',
        '  - { to: type, value: organisation }',
        '  - { to: name, value: { column: name } }',
        '',
      ].join('\n'),
    );
    writeFileSync(join(dir, 'orgs.csv'), 'id,name\nO1,Scheduled Delete Ltd\n');
    const stateDir = join(dir, 's');
    const summary = await importInto(box, {
      source: { kind: 'mapping', mappingFile: join(dir, 'orgs.yaml'), inputFile: join(dir, 'orgs.csv') },
      stateDir,
    });
    const id = (await all(box, '/parties', 'parties')).find((party) => party.name === 'Scheduled Delete Ltd')?.id;
    expect(summary.steps[0]?.created).toBe(1);
    // A note someone wrote on it since: deleting the organisation drags the note along, which the service schedules.
    expect(
      (await box.v2('POST', '/entries', { entry: { type: 'note', party: { id }, content: 'Called them' } })).status,
    ).toBe(201);
    const log: string[] = [];
    const client = new CrmClient({ baseUrl: box.url, auth: box.token, log: (line) => log.push(line) });
    const undone = await runRollback({ stateDir }, { client, account: { baseUrl: box.url, account: box.url } });
    await client.close();
    expect(undone.deleted).toBe(1);
    expect(log.some((line) => line.startsWith('DELETE') && line.endsWith('-> 202'))).toBe(true);
    expect(log.some((line) => line.includes('/jobs/'))).toBe(true);
    expect((await box.v2('GET', `/parties/${id}`)).status).toBe(404);
  });
});

describe('runRollback: interrupted', () => {
  it('stops on the signal; run again, it finishes what is left, and then there is nothing more to undo', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    const before = (await all(box, '/parties', 'parties')).length;
    const first = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    const created = step(first, 'people').created + step(first, 'organisations').created;
    const account = { baseUrl: box.url, account: box.url };
    const controller = new AbortController();
    let deletes = 0;
    const client = new CrmClient({
      baseUrl: box.url,
      auth: box.token,
      log: (line) => line.startsWith('DELETE') && line.includes('->') && ++deletes === 5 && controller.abort(),
    });
    const cut = await runRollback({ stateDir, concurrency: 1 }, { client, account, signal: controller.signal });
    await client.close();
    expect(cut.interrupted).toBe(true);
    const left = (await all(box, '/parties', 'parties')).length - before;
    expect(left).toBeGreaterThan(0);
    expect(left).toBeLessThan(created);

    const again = clientFor(box);
    try {
      const rest = await runRollback({ stateDir }, { client: again, account });
      expect(rest.runs).toEqual([first.run]);
      expect(rest.interrupted).toBe(false);
      expect(rest.deleted).toBe(left);
      expect((await all(box, '/parties', 'parties')).length).toBe(before);
      expect((await runRollback({ stateDir }, { client: again, account })).runs).toEqual([]);
    } finally {
      await again.close();
    }
  });
});

describe('runImport after an interrupted rollback', () => {
  it('is refused, saying which rollback and why, and goes ahead once the rollback is finished', async () => {
    const box = await sandbox();
    const p = project();
    const stateDir = join(p.dir, '.crm-ferry');
    const plan: ImportOptionsInput = { source: { kind: 'plan', planFile: p.plan }, stateDir };
    await importInto(box, plan);
    // A second run updates every person; its rollback sets them back, and is cut off after three.
    const people = join(p.dir, 'people.yaml');
    writeFileSync(
      people,
      readFileSync(people, 'utf8').replace('value: { column: job_title, transform: [trim] }', 'value: Interim Title'),
    );
    const second = await importInto(box, plan);
    expect(step(second, 'people').updated).toBeGreaterThan(0);
    const account = { baseUrl: box.url, account: box.url };
    const controller = new AbortController();
    let updates = 0;
    const cutClient = new CrmClient({
      baseUrl: box.url,
      auth: box.token,
      log: (line) => line.startsWith('PUT') && line.includes('->') && ++updates === 1 && controller.abort(),
    });
    const cut = await runRollback(
      { stateDir, concurrency: 1 },
      { client: cutClient, account, signal: controller.signal },
    );
    await cutClient.close();
    expect(cut.interrupted).toBe(true);
    const snapshot = JSON.stringify(await all(box, '/parties', 'parties'));

    for (const dryRun of [false, true]) {
      const error = await importInto(box, { ...plan, dryRun }).then(
        () => null,
        (e: unknown) => e,
      );
      expect(error).toMatchObject({
        code: 'USAGE',
        message: expect.stringContaining(`a rollback of run ${second.run} in ${stateDir}`),
      });
      expect((error as FerryError).message).toContain('did not finish');
      expect((error as FerryError).hint).toMatch(/Finish the rollback first/);
    }
    expect(JSON.stringify(await all(box, '/parties', 'parties'))).toBe(snapshot);

    // The rollback goes on where it stopped (the same run undone), and then the run goes ahead.
    const client = clientFor(box);
    try {
      const rest = await runRollback({ stateDir, all: true }, { client, account });
      expect(rest.runs).toEqual([second.run]);
      expect(rest.interrupted).toBe(false);
    } finally {
      await client.close();
    }
    const titles = (await all(box, '/parties', 'parties')).map((party) => party.jobTitle);
    expect(titles).toContain('Geschäftsführerin');
    expect(titles).not.toContain('Interim Title');
    const third = await importInto(box, plan);
    expect(step(third, 'people').updated).toBeGreaterThan(0);
    expect((await all(box, '/parties', 'parties')).map((party) => party.jobTitle)).toContain('Interim Title');
  });
});

describe('runImport --retry-rejects FILE in a plan', () => {
  it('writes the fixed rows of <step>.rejects.csv into that step, and leaves the input as the source of the others', async () => {
    const box = await sandbox();
    const p = project(readFileSync(join(ROOT, 'samples/contacts.csv'), 'utf8').replace('Kari,Ødegård,', 'Kari,,'));
    const stateDir = join(p.dir, '.crm-ferry');
    const first = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir });
    expect(step(first, 'people').rejected).toBe(1);
    const rejects = join(stateDir, 'results', 'people.rejects.csv');
    const fixed = join(p.dir, 'people.rejects.csv');
    writeFileSync(fixed, readFileSync(rejects, 'utf8').replace('Kari,,', 'Kari,Ødegård,'));
    const retry = await importInto(box, { source: { kind: 'plan', planFile: p.plan }, stateDir, retryFile: fixed });
    expect(step(retry, 'people')).toMatchObject({ rowsRead: 1, created: 1, rejected: 0, missing: 0 });
    expect(step(retry, 'organisations')).toMatchObject({ created: 0, updated: 0, missing: 0 });
    const kari = (await all(box, '/parties', 'parties')).filter((party) => party.lastName === 'Ødegård');
    expect(kari).toHaveLength(1);
    expect(kari[0]?.organisation?.name).toBe('Fjord Fisk AS');
  });
});

describe('runImport: match by name', () => {
  it('finds a person by first and last name (case and spaces aside) and leaves it as it is under onMatch: skip', async () => {
    const box = await sandbox();
    const existing = await box.v2('POST', '/parties', {
      party: { type: 'person', firstName: 'Grace', lastName: 'Hopper', jobTitle: 'Rear Admiral' },
    });
    expect(existing.status).toBe(201);
    folders += 1;
    const dir = join(work, `byname${folders}`);
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'people.yaml'),
      [
        'version: 1',
        'entity: party',
        'key: "{{id}}"',
        'match: { by: name, onMatch: skip }',
        'fields:',
        '  - { to: type, value: person }',
        '  - { to: firstName, value: { column: first } }',
        '  - { to: lastName, value: { column: last } }',
        '  - { to: jobTitle, value: { column: title } }',
        '',
      ].join('\n'),
    );
    writeFileSync(
      join(dir, 'people.csv'),
      'id,first,last,title\nP1,grace,HOPPER ,Programmer\nP2,Katherine,Johnson,Mathematician\n',
    );
    const options: ImportOptionsInput = {
      source: { kind: 'mapping', mappingFile: join(dir, 'people.yaml'), inputFile: join(dir, 'people.csv') },
      stateDir: join(dir, 's'),
    };
    const summary = await importInto(box, options);
    expect(summary.steps[0]).toMatchObject({ matched: 1, created: 1, rejected: 0 });
    expect((await box.v2('GET', `/parties/${existing.body.party.id}`)).body.party.jobTitle).toBe('Rear Admiral');
    expect(
      (await all(box, '/parties', 'parties')).filter((party) =>
        String(party.lastName).toLowerCase().startsWith('hopper'),
      ),
    ).toHaveLength(1);
    const success = readFileSync(summary.steps[0]?.successFile ?? '', 'utf8');
    expect(success).toContain(`,P1,matched,${existing.body.party.id},`);
  });
});
