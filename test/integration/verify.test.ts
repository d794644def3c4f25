import { copyFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { stringify } from 'csv-stringify/sync';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { copyFromCheckout } from '../helpers/checkout-copy.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-verify-'));
const state = join(dir, '.crm-ferry');
let box: TestSandbox;

const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });

/** The ids the run's success file gives each key of a step. */
function idsOf(step: string): Map<string, number> {
  const rows = parse(readFileSync(join(state, 'results', `${step}.success.csv`), 'utf8'), {
    columns: true,
    bom: true,
  }) as Array<{ key: string; id: string }>;
  return new Map(rows.map((row) => [row.key, Number(row.id)]));
}

function differences(file = join(state, 'results', 'verify.differences.csv')): Array<Record<string, string>> {
  return parse(readFileSync(file, 'utf8'), { columns: true, bom: true }) as Array<Record<string, string>>;
}

beforeAll(async () => {
  box = await startTestSandbox();
  copyFileSync(join(ROOT, 'mappings/generic-organisations.yaml'), join(dir, 'organisations.yaml'));
  copyFileSync(join(ROOT, 'mappings/generic-people.yaml'), join(dir, 'people.yaml'));
  copyFileSync(join(ROOT, 'samples/contacts.csv'), join(dir, 'contacts.csv'));
  writeFileSync(
    join(dir, 'plan.yaml'),
    'version: 1\nsteps:\n  - { name: organisations, mapping: organisations.yaml, input: contacts.csv }\n  - { name: people, mapping: people.yaml, input: contacts.csv }\n',
  );
  const run = await runCli(['run', 'plan.yaml'], { cwd: dir, env: env() });
  expect(run.code, run.stderr).toBe(0);
});

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('crm-ferry verify', () => {
  it('finds an untouched migration clean, and says its requests before reading the records', async () => {
    const { code, stdout, stderr } = await runCli(['verify', 'plan.yaml', '--json'], { cwd: dir, env: env() });
    expect(code, stderr).toBe(0);
    const events = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    const [plan, end] = events;
    expect(plan.type).toBe('plan');
    // 30 organisations and 30 people: one filter page of 100 each.
    expect(plan.steps).toEqual([
      { step: 'organisations', records: idsOf('organisations').size, requests: 1 },
      { step: 'people', records: idsOf('people').size, requests: 1 },
    ]);
    expect(plan.requests).toBe(2);
    // Of the account's names only the users and the parties' custom fields, all the mappings hold.
    expect(plan.requestsForNames).toBe(2);
    expect(end.summary.matches).toBe(true);
    // What it said is what it sent.
    expect(end.summary.requests).toBe(plan.requestsForNames + plan.requestsForAdded + plan.requests);
    for (const step of end.summary.steps) {
      expect(step.found).toBe(idsOf(step.step).size);
      expect([step.missing, step.extra, step.differing, step.unresolved]).toEqual([0, 0, 0, 0]);
    }
    expect(differences()).toEqual([]);
  });

  it('reports a record edited, one deleted and one added by hand, in the CSV and in the HTML report', async () => {
    const people = idsOf('people');
    const [edited, deleted] = [...people.keys()] as [string, string];
    expect(
      (await box.v2('PUT', `/parties/${people.get(edited)}`, { party: { lastName: 'Edited <by hand>' } })).status,
    ).toBe(200);
    expect((await box.v2('DELETE', `/parties/${people.get(deleted)}`)).status).toBeLessThan(300);
    const added = await box.v2('POST', '/parties', { party: { type: 'person', firstName: 'Hand', lastName: 'Made' } });
    expect(added.status).toBe(201);

    const { code, stdout, stderr } = await runCli(['verify', 'plan.yaml', '--report', 'verify.html'], {
      cwd: dir,
      env: env(),
    });
    expect(code, stderr).toBe(3);
    expect(stderr).toMatch(/Reading 60 records of the account \(organisations 30, people 30\): 2 requests/);
    expect(stdout).toMatch(/differing\s+1\n/);
    expect(stdout).toMatch(/The account differs from the file: 3 differences/);
    expect(stdout).toContain('Report: verify.html');

    const rows = differences();
    const original = readFileSync(join(dir, 'contacts.csv'), 'utf8')
      .split('\n')
      .find((line) => line.includes(edited)) as string;
    expect(rows).toContainEqual(
      expect.objectContaining({
        step: 'people',
        kind: 'differs',
        key: edited,
        field: 'lastName',
        in_account: 'Edited <by hand>',
        id: String(people.get(edited)),
      }),
    );
    expect(original).toContain(rows.find((r) => r.kind === 'differs')?.in_file);
    expect(rows).toContainEqual(
      expect.objectContaining({
        step: 'people',
        kind: 'missing',
        key: deleted,
        in_account: `record ${people.get(deleted)} is no longer in the account`,
      }),
    );
    expect(rows).toContainEqual(
      expect.objectContaining({ step: 'people', kind: 'extra', key: '', id: String(added.body.party.id) }),
    );
    expect(rows.find((r) => r.kind === 'extra')?.in_account).toMatch(
      /^Hand Made \(record \d+\), added to the account on /,
    );
    expect(rows).toHaveLength(3);

    const html = readFileSync(join(dir, 'verify.html'), 'utf8');
    expect(html).toContain(
      `<tr data-kind="differs" data-step="people" data-key="${edited}" data-field="lastName" data-changed-in="account">`,
    );
    // Escaped: what someone typed into the account is shown, never taken for markup.
    expect(html).toContain('Edited &lt;by hand&gt;');
    expect(html).not.toContain('<by hand>');
    expect(html).toContain(`data-kind="missing" data-step="people" data-key="${deleted}"`);
    expect(html).toMatch(
      /data-kind="extra" data-step="people" data-key="" data-field="" data-changed-in="account">.*Hand Made \(record \d+\)/,
    );
    expect(html).toMatch(/data-step="people" data-count="differing">1</);
    expect(html).not.toContain(box.token);
  });

  it('lists as extra a record whose row has left the input', async () => {
    const records = parse(readFileSync(join(dir, 'contacts.csv'), 'utf8'), { bom: true }) as string[][];
    const company = records[1]?.[4] as string;
    // Every row of one company goes: its organisation is the run's, and no row has it any more.
    writeFileSync(join(dir, 'fewer.csv'), stringify(records.filter((row) => row[4] !== company)));
    writeFileSync(
      join(dir, 'fewer.yaml'),
      'version: 1\nsteps:\n  - { name: organisations, mapping: organisations.yaml, input: fewer.csv }\n',
    );
    const { code, stdout, stderr } = await runCli(
      ['verify', 'fewer.yaml', '--state-dir', '.crm-ferry', '--differences', 'orgs-diff.csv'],
      { cwd: dir, env: env() },
    );
    expect(code, stderr).toBe(3);
    expect(stdout).toMatch(/extra\s+1\n/);
    expect(differences(join(dir, 'orgs-diff.csv'))).toEqual([
      expect.objectContaining({
        step: 'organisations',
        kind: 'extra',
        key: company,
        in_file: 'no row with this key',
        id: String(idsOf('organisations').get(company)),
      }),
    ]);
  });

  it('verifies an import of one file with --mapping and --input, by the state folder rules of import', async () => {
    // An account of its own: the plan's organisations, made the same second in the same account, would be extra.
    const other = await startTestSandbox();
    const otherEnv = { CRM_FERRY_BASE_URL: other.url, CRM_FERRY_TOKEN: other.token };
    let verified: { code: number; stdout: string; stderr: string };
    try {
      const imported = await runCli(
        ['import', '--mapping', 'organisations.yaml', '--input', 'contacts.csv', '--state-dir', 'single'],
        { cwd: dir, env: otherEnv },
      );
      expect(imported.code, imported.stderr).toBe(0);
      verified = await runCli(
        ['verify', '--mapping', 'organisations.yaml', '--input', 'contacts.csv', '--state-dir', 'single'],
        { cwd: dir, env: otherEnv },
      );
    } finally {
      await other.close();
    }
    const { code, stdout, stderr } = verified;
    expect(code, stdout + stderr).toBe(0);
    expect(stdout).toMatch(
      /Step generic-organisations: contacts.csv with organisations.yaml\n  rows in the source\s+30\n/,
    );
    expect(stdout).toContain('The account holds what the file holds: 30 of 30 rows are in the account as in the file.');
  });

  it('verifies every kind of record clean: a whole v1 migration (parties, opportunities, projects, notes, tasks)', async () => {
    const v1 = mkdtempSync(join(tmpdir(), 'ferry-verify-v1-'));
    // An account of its own: records another test made in the second this run began would be extra.
    const own = await startTestSandbox();
    const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: own.url, CRM_FERRY_TOKEN: own.token });
    try {
      copyFromCheckout(['mappings', 'samples'], v1);
      const plan = 'mappings/plans/v1-migration.yaml';
      const run = await runCli(['run', plan], { cwd: v1, env: env() });
      expect(run.code, run.stdout + run.stderr).toBe(0);
      const { code, stdout, stderr } = await runCli(['verify', plan, '--json'], { cwd: v1, env: env() });
      expect(code, stdout + stderr).toBe(0);
      const [planned, end] = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      // A filter page for each step of parties, projects or opportunities; a GET per note and per task.
      const requests = Object.fromEntries(
        planned.steps.map((s: { step: string; records: number; requests: number }) => [
          s.step,
          [s.records, s.requests],
        ]),
      );
      expect(requests).toEqual({
        organisations: [1, 1],
        people: [2, 1],
        opportunities: [2, 1],
        kases: [2, 1],
        notes: [3, 3],
        'kase-notes': [3, 3],
        'opportunity-notes': [1, 1],
        history: [3, 3],
        tasks: [4, 4],
      });
      expect(end.summary.requests).toBe(planned.requestsForNames + planned.requestsForAdded + planned.requests);
      expect(end.summary.steps.map((s: { found: number }) => s.found)).toEqual([1, 2, 2, 2, 3, 3, 1, 3, 4]);
      expect(end.summary.notListed).toEqual([]);

      // A note and a task added by hand to migrated records: extra, under the step that writes
      // notes on projects and the task step; the listing costs a request each (10 notes and 4 tasks written).
      const kase = (await own.v2('GET', '/kases?perPage=100')).body.kases[0];
      const opportunity = (await own.v2('GET', '/opportunities?perPage=100')).body.opportunities[0];
      const note = await own.v2('POST', '/entries', {
        entry: { type: 'note', kase: { id: kase.id }, content: 'Called about the delivery\nby hand' },
      });
      expect(note.status).toBe(201);
      const task = await own.v2('POST', '/tasks', {
        task: { description: 'Send the revised quote', opportunity: { id: opportunity.id }, dueOn: '2030-01-01' },
      });
      expect(task.status).toBe(201);
      // A track applied by hand brings the service's own tasks: not for verify to count.
      const definition = await own.v2('POST', '/trackdefinitions', {
        trackDefinition: {
          description: 'Follow-up',
          captureRule: 'KASE',
          taskDefinitions: [{ description: 'Call back', daysAfter: 3 }],
        },
      });
      expect(definition.status, definition.text).toBe(201);
      expect(
        (await own.v2('POST', '/tracks', { track: { definition: definition.body.trackDefinition.id, kase: kase.id } }))
          .status,
      ).toBe(201);
      expect(
        (await own.v2('GET', '/tasks?perPage=100')).body.tasks.some((t: { hasTrack: boolean }) => t.hasTrack),
      ).toBe(true);
      const again = await runCli(['verify', plan], { cwd: v1, env: env() });
      expect(again.code, again.stdout + again.stderr).toBe(3);
      expect(again.stdout).toMatch(/Step kase-notes: [^\n]*\n(?:  .*\n)*?  extra\s+1\n/);
      expect(again.stdout).toMatch(/Step tasks: [^\n]*\n(?:  .*\n)*?  extra\s+1\n/);
      expect(again.stdout).toContain('The account differs from the file: 2 differences');
      expect(again.stderr).toMatch(
        /after \d+ to read the account's names and 5 to list what was created since the first run/,
      );
      const rows = differences(join(v1, 'mappings/plans/.crm-ferry/results/verify.differences.csv'));
      expect(rows).toEqual([
        expect.objectContaining({
          step: 'kase-notes',
          kind: 'extra',
          id: String(note.body.entry.id),
          in_account: expect.stringMatching(/^"Called about the delivery" \(record \d+\), added to the account on /),
        }),
        expect.objectContaining({
          step: 'tasks',
          kind: 'extra',
          id: String(task.body.task.id),
          in_account: expect.stringMatching(/^"Send the revised quote" \(record \d+\)/),
        }),
      ]);

      // More notes than the listing's cap (a request for every 100 written, and one more: 200):
      // those beyond are not looked at, and the summary says so.
      for (let i = 0; i < 220; i++)
        expect(
          (await own.v2('POST', '/entries', { entry: { type: 'note', kase: { id: kase.id }, content: `Note ${i}` } }))
            .status,
        ).toBe(201);
      const capped = await runCli(['verify', plan, '--json'], { cwd: v1, env: env() });
      const cappedEnd = JSON.parse(capped.stdout.trim().split('\n').at(-1) as string);
      expect(cappedEnd.summary.notListed).toEqual([{ entity: 'entry', listed: 200 }]);
      expect(cappedEnd.summary.steps.find((s: { step: string }) => s.step === 'kase-notes').extra).toBeLessThanOrEqual(
        200,
      );
      const text = await runCli(['verify', plan], { cwd: v1, env: env() });
      expect(text.stdout).toContain(
        'Notes added by hand: looked for among the first 200 notes the account lists, a request for every 100 the runs wrote and one more; the account holds more, and one added beyond them is not seen.',
      );
    } finally {
      await own.close();
      rmSync(v1, { recursive: true, force: true });
    }
  });

  it('reads the records of thousands of rows a window at a time: the queries it announced, each difference in row order', async () => {
    const big = mkdtempSync(join(tmpdir(), 'ferry-verify-big-'));
    const own = await startTestSandbox();
    try {
      const rows = 3500;
      const lines = (skip: (i: number) => boolean): string =>
        [
          'id,first,last',
          ...Array.from({ length: rows }, (_, i) => i)
            .filter((i) => !skip(i))
            .map((i) => `P${i},First${i},Last${i}`),
        ].join('\n');
      writeFileSync(
        join(big, 'people.yaml'),
        [
          'version: 1',
          'entity: party',
          'key: "{{id}}"',
          'fields:',
          '  - { to: type, value: person }',
          '  - { to: firstName, value: { column: first } }',
          '  - { to: lastName, value: { column: last } }',
          '',
        ].join('\n'),
      );
      writeFileSync(join(big, 'people.csv'), `${lines(() => false)}\n`);
      const ownEnv = { CRM_FERRY_BASE_URL: own.url, CRM_FERRY_TOKEN: own.token };
      const args = ['--mapping', 'people.yaml', '--input', 'people.csv'];
      const run = await runCli(['import', ...args, '--concurrency', '16'], { cwd: big, env: ownEnv });
      expect(run.code, run.stderr).toBe(0);
      const ids = new Map(
        (
          parse(readFileSync(join(big, '.crm-ferry', 'results', 'people.success.csv'), 'utf8'), {
            columns: true,
            bom: true,
          }) as Array<{ key: string; id: string }>
        ).map((row) => [row.key, Number(row.id)]),
      );
      expect(ids.size).toBe(rows);
      // An edit past the first windows, a record deleted, and rows gone from the file (one early, one late).
      expect((await own.v2('PUT', `/parties/${ids.get('P2700')}`, { party: { lastName: 'Edited' } })).status).toBe(200);
      expect((await own.v2('DELETE', `/parties/${ids.get('P1500')}`)).status).toBeLessThan(300);
      writeFileSync(join(big, 'people.csv'), `${lines((i) => i === 100 || i === 3400)}\n`);

      const { code, stdout, stderr } = await runCli(['verify', ...args, '--json'], { cwd: big, env: ownEnv });
      // 3: differences found.
      expect(code, stderr).toBe(3);
      const events = stdout
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      const [plan, end] = [events[0], events.at(-1)];
      expect(plan.steps).toEqual([{ step: 'people', records: rows, requests: rows / 100 }]);
      expect(end.summary.requests).toBe(plan.requestsForNames + plan.requestsForAdded + plan.requests);
      expect(end.summary.steps[0]).toMatchObject({
        rows: rows - 2,
        found: rows - 3,
        missing: 1,
        extra: 2,
        differing: 1,
      });
      expect(
        differences(join(big, '.crm-ferry', 'results', 'verify.differences.csv')).map((row) => [
          row.kind,
          row.key,
          row.changed_in,
        ]),
      ).toEqual([
        ['missing', 'P1500', 'account'],
        ['differs', 'P2700', 'account'],
        ['extra', 'P100', 'source'],
        ['extra', 'P3400', 'source'],
      ]);
    } finally {
      await own.close();
      rmSync(big, { recursive: true, force: true });
    }
  });

  it.each([
    [['verify'], /verify needs the PLAN of the run, or --mapping M and --input F/],
    [['verify', 'plan.yaml', '--mapping', 'people.yaml'], /give verify a PLAN or --mapping M --input F, not both/],
    [['verify', 'plan.yaml', '--report', 'out.txt'], /--report writes an HTML page: give a name ending in .html/],
    [['verify', 'plan.yaml', '--state-dir', 'nowhere'], /there is no import state in .*nowhere/],
  ])('%j exits 2 with one clear line', async (args, message) => {
    const { code, stderr } = await runCli(args, { cwd: dir, env: env() });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });
});
