// A journal that is not what its runs wrote (cut in half, a line's id changed with its checksum
// made again) and a rollback pointed at records the run did not make; the modes of the files that
// hold account data. Issue 24, items 5, 6 and 15.
import { lstatSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { journalLine, type JournalEntry } from '../../src/journal/index.ts';
import { runImport, runRollback } from '../../src/load/index.ts';
import { validateMapping } from '../../src/plan/validate.ts';
import { runCli } from '../helpers/fake-io.ts';
import { allPages } from '../helpers/sandbox.ts';
import { sandboxForFile } from '../helpers/sandbox-client.ts';

const work = mkdtempSync(join(tmpdir(), 'ferry-journal-untrusted-'));
const sandbox = sandboxForFile();
afterAll(() => rmSync(work, { recursive: true, force: true }));

const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: sandbox.box.url, CRM_FERRY_TOKEN: sandbox.box.token });
const account = (): { baseUrl: string; account: string } => ({ baseUrl: sandbox.box.url, account: sandbox.box.url });

/** Imports a folder made by people() into its own state. */
function importPeople(
  p: { mapping: string; input: string; state: string },
  options: { reconcile?: boolean } = {},
): ReturnType<typeof runImport> {
  return runImport(
    { source: { kind: 'mapping', mappingFile: p.mapping, inputFile: p.input }, stateDir: p.state, ...options },
    { client: sandbox.client, account: account() },
  );
}

function rollback(state: string): ReturnType<typeof runRollback> {
  return runRollback({ stateDir: state }, { client: sandbox.client, account: account() });
}

let folders = 0;
/** A folder with a mapping of people (no `match:`: a row the journal does not know is created) and `rows` of them, last names `<tag> <i>`. */
function people(tag: string, rows: number, extra = ''): { dir: string; mapping: string; input: string; state: string } {
  folders += 1;
  const dir = join(work, `f${folders}`);
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'people.csv'),
    `id,first,last,email\n${Array.from({ length: rows }, (_, i) => `${tag}${i},First${i},${tag} ${i},${tag.toLowerCase()}${i}@example.org`).join('\n')}\n${extra}`,
  );
  writeFileSync(
    join(dir, 'people.yaml'),
    [
      'version: 1',
      'name: people',
      'entity: party',
      'key: "{{id}}"',
      'fields:',
      '  - { to: type, value: person }',
      '  - { to: firstName, value: { column: first } }',
      '  - { to: lastName, value: { column: last } }',
      '  - { to: email, type: Work, value: { column: email } }',
      '',
    ].join('\n'),
  );
  return { dir, mapping: join(dir, 'people.yaml'), input: join(dir, 'people.csv'), state: join(dir, '.crm-ferry') };
}

async function named(prefix: string): Promise<Array<{ id: number; lastName: string }>> {
  return (await allPages(sandbox.box, '/parties', 'parties')).filter((p: { lastName?: string }) =>
    p.lastName?.startsWith(`${prefix} `),
  );
}

function journalOf(state: string): string {
  return join(state, 'journal', 'people.jsonl');
}

describe('a journal cut in half', () => {
  it('is refused by the next import, which sends nothing; --reconcile finds what the lost lines had, and creates no duplicate', async () => {
    const p = people('Half', 140);
    const args = ['import', '--mapping', p.mapping, '--input', p.input, '--state-dir', p.state];
    expect((await runCli(args, { cwd: p.dir, env: env() })).code).toBe(0);
    expect(await named('Half')).toHaveLength(140);

    // Cut at a line boundary, as a copy that stopped half way leaves it.
    const lines = readFileSync(journalOf(p.state), 'utf8').split('\n');
    writeFileSync(journalOf(p.state), `${lines.slice(0, Math.floor(lines.length / 2)).join('\n')}\n`);
    const refused = await runCli(args, { cwd: p.dir, env: env() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/\[JOURNAL_CORRUPT\].*people\.jsonl is not what its runs wrote/);
    expect(refused.stderr).toContain('--reconcile');
    expect(await named('Half')).toHaveLength(140);

    const reconciled = await runCli([...args, '--reconcile'], { cwd: p.dir, env: env() });
    expect(reconciled.code, reconciled.stderr).toBe(0);
    expect(reconciled.stdout).toMatch(/matched\s+\d+/);
    expect(await named('Half')).toHaveLength(140);

    // The journal is whole again: the next run needs no flag and sends no write.
    const again = await runCli(args, { cwd: p.dir, env: env() });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stdout).toMatch(/unchanged\s+140/);
    expect(await named('Half')).toHaveLength(140);
  });

  it('--reconcile writes what a row holds now and its record lacks, and creates the rows the account has not', async () => {
    const p = people('Changed', 10);
    writeFileSync(
      p.mapping,
      readFileSync(p.mapping, 'utf8').concat('  - { to: jobTitle, value: { column: title } }\n'),
    );
    writeFileSync(
      p.input,
      readFileSync(p.input, 'utf8')
        .replace('id,first,last,email', 'id,first,last,email,title')
        .replace(/\n/g, ',Clerk\n')
        .replace('id,first,last,email,title,Clerk', 'id,first,last,email,title'),
    );
    await importPeople(p);
    writeFileSync(journalOf(p.state), '');
    // A job title changed since, and two rows more. (A row whose name or first e-mail address
    // changed is not recognised: those are what the look-up goes by.)
    writeFileSync(
      p.input,
      readFileSync(p.input, 'utf8')
        .replace('changed3@example.org,Clerk', 'changed3@example.org,Head clerk')
        .concat(
          'Changed10,First10,Changed 10,changed10@example.org,Clerk\nChanged11,First11,Changed 11,changed11@example.org,Clerk\n',
        ),
    );
    const summary = await importPeople(p, { reconcile: true });
    const step = summary.steps[0];
    expect(step?.matched).toBe(10);
    expect(step?.created).toBe(2);
    expect(summary.reconciled.applied).toBe(10);
    const records = await named('Changed');
    expect(records).toHaveLength(12);
    expect(records.find((r) => r.lastName === 'Changed 3')).toMatchObject({ jobTitle: 'Head clerk' });
    expect(records.find((r) => r.lastName === 'Changed 4')).toMatchObject({ jobTitle: 'Clerk' });
  });

  it('--fresh and --reconcile together are refused', async () => {
    const p = people('Both', 1);
    const { code, stderr } = await runCli(
      ['import', '--mapping', p.mapping, '--input', p.input, '--fresh', '--yes', '--reconcile'],
      { cwd: p.dir, env: env() },
    );
    expect(code).toBe(2);
    expect(stderr).toContain('--fresh starts a new state, in which --reconcile finds nothing to look up');
  });
});

describe('rollback deletes only what the run made', () => {
  /** The journal with the `done` line of row `key` given another record's id, its checksum made again. */
  function retarget(state: string, key: string, id: number): void {
    const text = readFileSync(journalOf(state), 'utf8').split('\n').filter(Boolean);
    const out = text.map((line) => {
      const entry = JSON.parse(line.slice(0, line.lastIndexOf('\t'))) as JournalEntry;
      return entry.t === 'done' && entry.k === key ? journalLine({ ...entry, id }).trimEnd() : line;
    });
    writeFileSync(journalOf(state), `${out.join('\n')}\n`);
  }

  /** state.json without the journals' seals, as a state kept before they were. */
  function unseal(state: string): void {
    const file = join(state, 'state.json');
    const { journals: _journals, ...rest } = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
    writeFileSync(file, JSON.stringify(rest));
  }

  /** Three people imported in a state of their own, one in another; the first's done line then names the other's record. */
  async function pointedAtAnother(
    tag: string,
    otherTag: string,
  ): Promise<{ mine: ReturnType<typeof people>; victim: { id: number } }> {
    const mine = people(tag, 3);
    const other = people(otherTag, 1);
    await importPeople(other);
    await importPeople(mine);
    const [victim] = await named(otherTag);
    retarget(mine.state, `${tag}0`, victim?.id as number);
    return { mine, victim: victim as { id: number } };
  }

  it("a done line given another run's record: the journal is refused, nothing is deleted", async () => {
    const { mine } = await pointedAtAnother('Mine', 'Other');
    const error = await rollback(mine.state).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toMatchObject({ code: 'JOURNAL_CORRUPT' });
    expect(await named('Other')).toHaveLength(1);
    expect(await named('Mine')).toHaveLength(3);
  });

  it("in a state without seals, the record of another run is left and listed, and the run's own are deleted", async () => {
    const { mine, victim } = await pointedAtAnother('Own', 'Foreign');
    unseal(mine.state);
    const summary = await rollback(mine.state);
    expect(await named('Foreign')).toHaveLength(1);
    expect(summary.kept).toEqual([
      {
        step: 'people',
        key: 'Own0',
        id: victim.id,
        reason: expect.stringContaining('does not hold what the run wrote'),
      },
    ]);
    expect(summary.deleted).toBe(2);
    // Own0's record lost its line: it stays, the two others are gone.
    expect((await named('Own')).map((r) => r.lastName)).toEqual(['Own 0']);
    const { stdout } = await runCli(['rollback', '--state-dir', mine.state, '--dry-run'], {
      cwd: mine.dir,
      env: env(),
    });
    expect(stdout).toMatch(/Nothing to roll back/);
  });

  it("a record made long before the run, with the same values, is left: it is not the run's", async () => {
    const mine = people('Twin', 2);
    await importPeople(mine);
    // Another record with Twin1's values, dated an hour before the run.
    const twin = await sandbox.box.v2('POST', '/parties', {
      party: {
        type: 'person',
        firstName: 'First1',
        lastName: 'Twin 1',
        emailAddresses: [{ type: 'Work', address: 'twin1@example.org' }],
      },
    });
    const record = sandbox.box.store.parties.get(twin.body.party.id) as unknown as Record<string, unknown>;
    record.createdAt = new Date(Date.now() - 3_600_000).toISOString();
    retarget(mine.state, 'Twin1', twin.body.party.id);
    unseal(mine.state);
    const summary = await rollback(mine.state);
    expect(summary.kept).toEqual([
      {
        step: 'people',
        key: 'Twin1',
        id: twin.body.party.id,
        reason: expect.stringMatching(/^it was made .*, not while the run created the row's record/),
      },
    ]);
    expect((await named('Twin')).map((r) => r.id)).toContain(twin.body.party.id);
  });

  it('a record changed in the account since the run is left and listed', async () => {
    const mine = people('Edited', 2);
    await importPeople(mine);
    const [first] = (await named('Edited')).sort((a, b) => a.id - b.id);
    await sandbox.box.v2('PUT', `/parties/${first?.id}`, { party: { lastName: 'Edited by hand' } });
    const summary = await rollback(mine.state);
    expect(summary.kept.map((k) => k.id)).toEqual([first?.id]);
    expect(summary.deleted).toBe(1);
    const { stdout } = await runCli(['rollback', '--state-dir', mine.state, '--dry-run', '--all'], {
      cwd: mine.dir,
      env: env(),
    });
    expect(stdout).not.toContain('Left');
  });
});

describe('files holding account data are 0600 in 0700 folders, whatever the umask', () => {
  it("the state folder, journal, results and rejects of a run; validate's rejects and warnings", async () => {
    const umask = process.umask(0);
    try {
      // A row without a last name is rejected; one with an e-mail address that is not one is a warning.
      const p = people('Modes', 2, 'bad,First,,bad@example.org\nwarn,First,Modes warn,not-an-address\n');
      writeFileSync(
        p.mapping,
        readFileSync(p.mapping, 'utf8')
          .replace('{ column: last } }', '{ column: last }, required: true }')
          .replace('{ column: email } }', '{ column: email, transform: [email] }, onInvalid: drop }'),
      );
      const summary = await importPeople(p);
      expect(summary.steps[0]?.rejected).toBe(1);
      for (const folder of [p.state, join(p.state, 'journal'), join(p.state, 'results')])
        expect(lstatSync(folder).mode & 0o777, folder).toBe(0o700);
      for (const file of [
        join(p.state, 'state.json'),
        join(p.state, 'steps.json'),
        journalOf(p.state),
        ...readdirSync(join(p.state, 'results')).map((name) => join(p.state, 'results', name)),
      ]) {
        expect(lstatSync(file).mode & 0o777, file).toBe(0o600);
      }
      expect(readdirSync(join(p.state, 'results')).sort()).toEqual(['people.rejects.csv', 'people.success.csv']);

      const report = (
        await validateMapping({ mappingFile: p.mapping, inputFile: p.input, rejectsFile: join(p.dir, 'rejects.csv') })
      ).steps[0];
      expect(report?.rejectsFile).not.toBeNull();
      expect(report?.warningsFile).not.toBeNull();
      for (const file of [report?.rejectsFile, report?.warningsFile])
        expect(lstatSync(file as string).mode & 0o777, file as string).toBe(0o600);
    } finally {
      process.umask(umask);
    }
  });
});
