// crm-ferry restore between two sandboxes: a backup of A restored into an empty B gives the same
// records and links on every field a client can set (ids mapped); a second restore changes nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restoredIds, runBackup, runRestore } from '../../src/backup/index.ts';
import { CrmClient, RecordService } from '../../src/client/index.ts';
import { seedBackupAccount, type SeededAccount } from '../helpers/backup-account.ts';
import { runRollback } from '../../src/load/index.ts';
import { runVerify } from '../../src/verify/index.ts';
import { addPersonalToken } from '../../src/sandbox/auth.ts';
import { addEntry } from '../helpers/records.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let a: TestSandbox;
let b: TestSandbox;
const dir = mkdtempSync(join(tmpdir(), 'ferry-restore-'));
const out = join(dir, 'backup');
let seeded: SeededAccount;

const CHILD = fileURLToPath(new URL('../helpers/restore-child.ts', import.meta.url));

const client = (box: TestSandbox, token = box.token) => new CrmClient({ baseUrl: box.url, auth: token });
const KIM_TOKEN = 'kims-token-for-restore';
const SAM_TOKEN = 'sams-token-for-restore';

beforeAll(async () => {
  [a, b] = await Promise.all([startTestSandbox(), startTestSandbox()]);
  seeded = await seedBackupAccount(a, 9, { attachmentEvery: 2 });
  // Custom field values, with and without a data tag, on a few records.
  const defs = (await a.v2('GET', '/parties/fields/definitions')).body.definitions as Array<{
    id: number;
    name: string;
  }>;
  const industry = defs.find((d) => d.name === 'Industry')!.id;
  for (const id of seeded.organisations.slice(0, 3))
    await a.v2('PUT', `/parties/${id}`, { party: { fields: [{ definition: industry, value: 'Retail' }] } });
  const oppDefs = (await a.v2('GET', '/opportunities/fields/definitions')).body.definitions as Array<{
    id: number;
    name: string;
  }>;
  await a.v2('PUT', `/opportunities/${seeded.opportunities[1]}`, {
    opportunity: { fields: [{ definition: oppDefs.find((d) => d.name === 'Competitor')!.id, value: 'Initech' }] },
  });
  // Projects on stages past the first (a new project starts on the first): carried by the stage's name.
  await a.v2('PUT', `/kases/${seeded.kases[0]}`, { kase: { stage: { id: 103 } } });
  await a.v2('PUT', `/kases/${seeded.kases[2]}`, { kase: { stage: { id: 104 } } });
  // A note of another user than the Administrator, who restores: its author heads it in B.
  const kim = a.store.users.all().find((u) => u.username === 'kim')!;
  addPersonalToken(a.context, KIM_TOKEN, kim.id);
  const note = await a.call('POST', '/api/v2/entries', {
    token: KIM_TOKEN,
    body: {
      entry: { type: 'note', content: 'Kim was here\n\nwith two lines', party: { id: seeded.organisations[0] } },
    },
  });
  expect(note.status).toBe(201);
  const ca = client(a);
  await runBackup({ out, since: null }, { client: ca, account: { baseUrl: a.url, account: a.url } });
  await ca.close();
});

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

async function restore() {
  const cb = client(b);
  try {
    return await runRestore({ from: out }, { client: cb, account: { baseUrl: b.url, account: b.url } });
  } finally {
    await cb.close();
  }
}

const sortBy = <T>(list: T[], key: (item: T) => string): T[] => [...list].sort((x, y) => key(x).localeCompare(key(y)));
const items = (list: any[] | undefined, keys: string[]) =>
  sortBy(
    (list ?? []).map((item) => Object.fromEntries(keys.map((k) => [k, item[k] ?? null]))),
    (i) => JSON.stringify(i),
  );
const tags = (record: any) => (record.tags ?? []).map((t: any) => t.name).sort();
const fields = (record: any) =>
  sortBy(
    (record.fields ?? []).map((f: any) => ({ definition: f.definition.name, value: f.value })),
    (f: any) => f.definition,
  );

/**
 * Asserts that `box` holds A's records and links field by field, ids mapped through a restore's
 * journals (`ids`); `extra`: parties and entries the account had besides (made by hand); `writer`:
 * the full name of the user the restore wrote as.
 */
async function expectSameAsA(
  box: TestSandbox,
  ids: Map<string, number>,
  extra: { parties: number; entries: number } = { parties: 0, entries: 0 },
  writer = 'Alex Admin',
): Promise<void> {
  const party = (id: number) => ids.get(`organisations/${id}`) ?? ids.get(`people/${id}`);

  const partiesA = await allPages(a, '/parties?embed=tags,fields', 'parties');
  const partiesB = new Map((await allPages(box, '/parties?embed=tags,fields', 'parties')).map((p) => [p.id, p]));
  expect(partiesB.size).toBe(partiesA.length + extra.parties);
  for (const p of partiesA) {
    const q = partiesB.get(party(p.id)!);
    const view = (r: any, org: number | null) => ({
      type: r.type,
      name: r.name ?? null,
      firstName: r.firstName ?? null,
      lastName: r.lastName ?? null,
      title: r.title ?? null,
      jobTitle: r.jobTitle ?? null,
      about: r.about ?? null,
      organisation: org,
      owner: r.owner?.username ?? null,
      team: r.team?.name ?? null,
      emails: items(r.emailAddresses, ['type', 'address']),
      phones: items(r.phoneNumbers, ['type', 'number']),
      websites: items(r.websites, ['type', 'service', 'address']),
      addresses: items(r.addresses, ['type', 'street', 'city', 'state', 'zip', 'country']),
      tags: tags(r),
      fields: fields(r),
    });
    expect(view(q, q?.organisation?.id ?? null)).toEqual(view(p, p.organisation ? party(p.organisation.id)! : null));
  }

  const oppsA = await allPages(a, '/opportunities?embed=tags,fields', 'opportunities');
  const oppsB = new Map(
    (await allPages(box, '/opportunities?embed=tags,fields', 'opportunities')).map((o) => [o.id, o]),
  );
  expect(oppsB.size).toBe(oppsA.length);
  for (const o of oppsA) {
    const q = oppsB.get(ids.get(`opportunities/${o.id}`)!);
    const view = (r: any, partyId: number) => ({
      name: r.name,
      description: r.description ?? null,
      party: partyId,
      milestone: r.milestone?.name,
      value: r.value ?? null,
      expectedCloseOn: r.expectedCloseOn ?? null,
      closedOn: r.closedOn ?? null,
      lostReason: r.lostReason ?? null,
      durationBasis: r.durationBasis ?? null,
      owner: r.owner?.username ?? null,
      team: r.team?.name ?? null,
      tags: tags(r),
      fields: fields(r),
    });
    expect(view(q, q.party.id)).toEqual(view(o, party(o.party.id)!));
  }

  const kasesA = await allPages(a, '/kases?embed=tags,fields', 'kases');
  const kasesB = new Map((await allPages(box, '/kases?embed=tags,fields', 'kases')).map((k) => [k.id, k]));
  expect(kasesB.size).toBe(kasesA.length);
  for (const k of kasesA) {
    const mapped = ids.get(`kases/${k.id}`)!;
    const q = kasesB.get(mapped);
    const view = (r: any, partyId: number, opp: number | null) => ({
      name: r.name,
      description: r.description ?? null,
      party: partyId,
      opportunity: opp,
      status: r.status,
      stage: r.stage?.name ?? null,
      startOn: r.startOn ?? null,
      expectedCloseOn: r.expectedCloseOn ?? null,
      closedOn: r.closedOn ?? null,
      owner: r.owner?.username ?? null,
      team: r.team?.name ?? null,
      tags: tags(r),
      fields: fields(r),
    });
    expect(view(q, q.party.id, q.opportunity?.id ?? null)).toEqual(
      view(k, party(k.party.id)!, k.opportunity ? ids.get(`opportunities/${k.opportunity.id}`)! : null),
    );
    const extraA = (await allPages(a, `/kases/${k.id}/parties`, 'parties')).map((p) => party(p.id)).sort();
    const extraB = (await allPages(box, `/kases/${mapped}/parties`, 'parties')).map((p) => p.id).sort();
    expect(extraB).toEqual(extraA);
    const tracksA = (await allPages(a, `/kases/${k.id}/tracks`, 'tracks')).map((t) => ({
      description: t.description,
      trackDateOn: t.trackDateOn,
    }));
    const tracksB = (await allPages(box, `/kases/${mapped}/tracks`, 'tracks')).map((t) => ({
      description: t.description,
      trackDateOn: t.trackDateOn,
    }));
    expect(tracksB).toEqual(tracksA);
  }

  const entriesA = await allPages(a, '/entries?embed=party,kase,opportunity,activityType', 'entries');
  const entriesB = new Map(
    (await allPages(box, '/entries?embed=party,kase,opportunity,activityType', 'entries')).map((e) => [e.id, e]),
  );
  expect(entriesB.size).toBe(entriesA.length + extra.entries);
  for (const e of entriesA) {
    const q = entriesB.get(ids.get(`entries/${e.id}`)!);
    const view = (r: any, on: number | null, content: string) => ({
      type: r.type,
      content,
      on,
      activityType: r.activityType?.name,
      entryAt: r.entryAt,
      attachments: items(r.attachments, ['filename', 'contentType', 'size']),
    });
    // The service writes a note as the restoring user: the author's own notes come back byte for
    // byte; another author's name heads the text.
    const authored = e.creator.name === writer ? e.content : `Originally by ${e.creator.name}\n\n${e.content}`;
    expect(view(q, q.party?.id ?? null, q.content)).toEqual(view(e, e.party ? party(e.party.id)! : null, authored));
  }

  const tasksA = await allPages(a, '/tasks?status=open,completed,pending&embed=party', 'tasks');
  const tasksB = await allPages(box, '/tasks?status=open,completed,pending&embed=party', 'tasks');
  const taskView = (r: any, on: number | null) => ({
    description: r.description,
    detail: r.detail ?? null,
    on,
    dueOn: r.dueOn,
    status: r.status,
    hasTrack: r.hasTrack ?? false,
    category: r.category?.name ?? null,
    owner: r.owner?.username ?? null,
  });
  const key = (t: any) => JSON.stringify(t);
  expect(
    sortBy(
      tasksB.map((t) => taskView(t, t.party?.id ?? null)),
      key,
    ),
  ).toEqual(
    sortBy(
      tasksA.map((t) => taskView(t, t.party ? party(t.party.id)! : null)),
      key,
    ),
  );
}

describe('restore', () => {
  it('gives B the same records and links as A, field by field, ids mapped', async () => {
    const summary = await restore();
    expect(summary.import.stopped).toBeNull();
    expect(summary.missing).toEqual([]);
    await expectSameAsA(b, await restoredIds(summary.stateDir));
  }, 60_000);

  it("keeps the Administrator's notes byte for byte and heads Kim's with her name", async () => {
    const notes = (await allPages(b, '/entries', 'entries')).filter((e) => e.type === 'note');
    const kims = notes.filter((e) => e.content.startsWith('Originally by '));
    expect(kims.map((e) => e.content)).toEqual(['Originally by Kim Keeper\n\nKim was here\n\nwith two lines']);
    expect(notes.filter((e) => e.content.startsWith('Met ')).length).toBe(notes.length - 1);
  });

  it('a second restore changes nothing', async () => {
    const before = await countsOf(b);
    const summary = await restore();
    for (const step of summary.import.steps)
      expect({ step: step.step, created: step.created, updated: step.updated }).toEqual({
        step: step.step,
        created: 0,
        updated: 0,
      });
    expect(summary.links.tracks.ofParties).toBe(0);
    expect(await countsOf(b)).toEqual(before);
  }, 60_000);
});

/** How many records of each kind an account holds (tasks of every status). */
async function countsOf(box: TestSandbox): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const [path, key] of [
    ['/parties', 'parties'],
    ['/opportunities', 'opportunities'],
    ['/kases', 'kases'],
    ['/entries', 'entries'],
    ['/tasks?status=open,completed,pending', 'tasks'],
  ] as const)
    counts[key] = (await allPages(box, path, key)).length;
  return counts;
}

const created = (summary: Awaited<ReturnType<typeof runRestore>>) =>
  Object.fromEntries(summary.import.steps.map((s) => [s.step, s.created]));

describe('restore into an account that holds the records already, with a new state folder', () => {
  it('finds every record the first restore made, adds nothing and changes nothing', async () => {
    const firstIds = await restoredIds(join(out, 'restore', 'state'));
    const counts = await countsOf(b);
    const records = async () =>
      JSON.stringify([
        await allPages(b, '/parties?embed=tags,fields', 'parties'),
        await allPages(b, '/opportunities?embed=tags,fields', 'opportunities'),
        await allPages(b, '/kases?embed=tags,fields', 'kases'),
      ]);
    const before = await records();
    // verify takes a note made in the second its first run began as added by hand (the service
    // gives whole seconds): the second restore begins in a later second than the first one's notes.
    await new Promise((done) => setTimeout(done, 1000 - (Date.now() % 1000) + 10));
    const cb = client(b);
    const summary = await runRestore(
      { from: out, stateDir: join(dir, 'state-b2') },
      { client: cb, account: { baseUrl: b.url, account: b.url } },
    );
    await cb.close();
    expect(summary.import.stopped).toBeNull();
    for (const step of summary.import.steps)
      expect({ step: step.step, created: step.created, updated: step.updated, rejected: step.rejected }).toEqual({
        step: step.step,
        created: 0,
        updated: 0,
        rejected: 0,
      });
    const matched = summary.import.steps.reduce((sum, step) => sum + step.matched, 0);
    expect(matched).toBe(counts.parties! + counts.opportunities! + counts.kases!);
    // verify over the new state: the records it found hold what the backup holds.
    const cv = client(b);
    const verified = await runVerify(
      { source: { kind: 'plan', planFile: summary.plan }, stateDir: summary.stateDir },
      { client: cv, account: { baseUrl: b.url, account: b.url } },
    );
    await cv.close();
    expect(verified.differences).toEqual([]);
    expect(verified.matches).toBe(true);
    // Its inputs went beside its state folder: the first restore's plan still describes the first
    // restore (its entries and tasks were all written), and verify of it finds no difference.
    expect(summary.plan).toBe(join(dir, 'state-b2-inputs', 'plan.yaml'));
    const cf = client(b);
    const first = await runVerify(
      {
        source: { kind: 'plan', planFile: join(out, 'restore', 'plan.yaml') },
        stateDir: join(out, 'restore', 'state'),
      },
      { client: cf, account: { baseUrl: b.url, account: b.url } },
    );
    await cf.close();
    expect(first.differences).toEqual([]);
    const tasksOfA = (await allPages(a, '/tasks?status=open,completed,pending', 'tasks')).filter(
      (t) => !t.hasTrack,
    ).length;
    expect(summary.entries.present).toEqual({ entries: counts.entries, tasks: tasksOfA });
    // The account's entries and tasks in a list each: shorter than a request per record found.
    expect(summary.lookedAt).toEqual({ records: matched, requests: 2 });
    // The tracks are the found projects' own, which they keep.
    expect(summary.links.tracks).toMatchObject({
      onCreate: 0,
      ofParties: 0,
      onFound: readFileSync(join(out, 'tracks.jsonl'), 'utf8').split('\n').filter(Boolean).length,
    });
    expect(await countsOf(b)).toEqual(counts);
    // Not one field written: the records read back as they were, updatedAt included.
    expect(await records()).toBe(before);
    // Each record found is the one the first restore made.
    const again = await restoredIds(summary.stateDir);
    for (const step of ['organisations', 'people', 'opportunities', 'kases']) {
      const keys = [...again.keys()].filter((k) => k.startsWith(`${step}/`));
      expect(keys.length).toBeGreaterThan(0);
      for (const key of keys) expect({ key, id: again.get(key) }).toEqual({ key, id: firstIds.get(key) });
    }
    await expectSameAsA(b, firstIds);
  }, 60_000);
});

describe('restore given the default state folder by name', () => {
  it('goes on with the restore of that folder: its inputs stay in DIR/restore, nothing is written', async () => {
    const cb = client(b);
    const summary = await runRestore(
      { from: out, stateDir: join(out, 'restore', 'state') },
      { client: cb, account: { baseUrl: b.url, account: b.url } },
    );
    await cb.close();
    expect(summary.plan).toBe(join(out, 'restore', 'plan.yaml'));
    expect(summary.import.stopped).toBeNull();
    for (const step of summary.import.steps)
      expect({ step: step.step, created: step.created, updated: step.updated }).toEqual({
        step: step.step,
        created: 0,
        updated: 0,
      });
  }, 60_000);
});

describe('restore into an account that holds part of the backup', () => {
  it('creates only what is missing: a person deleted by hand with their note and task, a note and a task of others', async () => {
    const c = await startTestSandbox();
    try {
      const cc = client(c);
      const account = { baseUrl: c.url, account: c.url };
      const work = join(dir, 'restore-part');
      const first = await runRestore({ from: out, workDir: work }, { client: cc, account });
      const firstIds = await restoredIds(first.stateDir);
      // By hand: person 1 goes, the note of person 3 and the task of person 5 go, an organisation comes.
      const records = new RecordService(cc);
      await records.remove('party', firstIds.get(`people/${seeded.people[1]}`)!);
      await records.remove('entry', firstIds.get(`entries/${seeded.entries[3]}`)!);
      const task5 = (await allPages(c, '/tasks?status=open,completed,pending', 'tasks')).find(
        (t) => t.description === 'Call back 5',
      )!;
      await records.remove('task', task5.id);
      const hand = (await c.v2('POST', '/parties', { party: { type: 'organisation', name: 'Made by hand Ltd' } })).body
        .party;
      // Many notes of its own: the account's list of entries is longer than looking record by record.
      const NOTES = 2_000;
      for (let i = 0; i < NOTES; i += 1) addEntry(c.store, { content: `Hand note ${i}`, partyId: hand.id });
      const before = await countsOf(c);
      const all = await countsOf(a);
      expect(before.parties).toBe(all.parties!); // one gone, one added

      const summary = await runRestore(
        { from: out, workDir: work, stateDir: join(dir, 'state-part-2') },
        { client: cc, account },
      );
      await cc.close();
      expect(summary.import.stopped).toBeNull();
      expect(created(summary)).toEqual({
        organisations: 0,
        people: 1,
        opportunities: 0,
        kases: 0,
        entries: all.entries! - (before.entries! - NOTES),
        tasks: all.tasks! - before.tasks!,
      });
      expect(summary.import.steps.reduce((sum, step) => sum + step.rejected + step.updated, 0)).toBe(0);
      // Record by record: one request for each record found (each has fewer than 100 entries) and
      // one for the tasks, after the account's list was given up at half a request per record
      // (17 pages, the 18th to know it goes on, one read ahead).
      expect(summary.lookedAt.records).toBe(4 * 9 - 1);
      expect(summary.lookedAt.requests).toBeGreaterThanOrEqual(4 * 9 - 1 + 1);
      expect(summary.lookedAt.requests).toBeLessThanOrEqual(4 * 9 - 1 + 1 + 19);
      expect(await countsOf(c)).toEqual({ ...all, parties: all.parties! + 1, entries: all.entries! + NOTES });
      const ids = new Map([...firstIds, ...(await restoredIds(summary.stateDir))]);
      await expectSameAsA(c, ids, { parties: 1, entries: NOTES });
    } finally {
      await c.close();
    }
  }, 90_000);
});

describe("restore by another user than the notes' author", () => {
  it('heads every note with its author, and a second restore reads that form and adds nothing', async () => {
    const c = await startTestSandbox();
    try {
      const sam = c.store.users.all().find((u) => u.username === 'sam')!;
      addPersonalToken(c.context, SAM_TOKEN, sam.id);
      const cc = client(c, SAM_TOKEN);
      const account = { baseUrl: c.url, account: c.url };
      const work = join(dir, 'restore-sam');
      const first = await runRestore({ from: out, workDir: work }, { client: cc, account });
      expect(first.import.stopped).toBeNull();
      await expectSameAsA(c, await restoredIds(first.stateDir), undefined, 'Sam Seller');
      const notes = (await allPages(c, '/entries', 'entries')).filter((e) => e.type === 'note');
      expect(notes.filter((e) => e.content.startsWith('Originally by Alex Admin\n\nMet ')).length).toBe(
        notes.length - 1,
      );
      const before = await countsOf(c);
      const again = await runRestore(
        { from: out, workDir: work, stateDir: join(dir, 'state-sam-2') },
        { client: cc, account },
      );
      await cc.close();
      for (const step of again.import.steps)
        expect({ step: step.step, created: step.created, updated: step.updated }).toEqual({
          step: step.step,
          created: 0,
          updated: 0,
        });
      expect(again.entries.present.entries).toBe(notes.length);
      expect(await countsOf(c)).toEqual(before);
    } finally {
      await c.close();
    }
  }, 90_000);
});

describe('restore into an account that lacks configuration', () => {
  it('lists what is missing and writes nothing (CONFIG_MISSING), unless allowMissing', async () => {
    const c = await startTestSandbox();
    try {
      const category = c.store.taskCategories.all()[0]!;
      c.store.taskCategories.delete(category.id);
      const cc = client(c);
      const parties = () => allPages(c, '/parties', 'parties');
      const before = (await parties()).length;
      const work = join(dir, 'restore-c');
      await expect(
        runRestore({ from: out, workDir: work }, { client: cc, account: { baseUrl: c.url, account: c.url } }),
      ).rejects.toMatchObject({
        code: 'CONFIG_MISSING',
        message: expect.stringContaining(`task category ${category.name}`),
      });
      expect((await parties()).length).toBe(before);
      const summary = await runRestore(
        { from: out, workDir: work, allowMissing: true },
        { client: cc, account: { baseUrl: c.url, account: c.url } },
      );
      await cc.close();
      expect(summary.missing).toEqual([{ kind: 'task category', name: category.name, creatable: false }]);
      expect((await parties()).length).toBe(before + (await allPages(a, '/parties', 'parties')).length);
    } finally {
      await c.close();
    }
  }, 60_000);
});

describe('restore killed with SIGKILL', () => {
  // Killed in the first run (the records) a while after its first row, or in the second (the
  // entries and tasks) at its first note, each followed by the same restore.
  it.each([
    { run: 'records', step: undefined, minRecords: 1, latencyMs: 15, counted: ['/parties', 'parties'] },
    { run: 'entries and tasks', step: 'entries', minRecords: 0, latencyMs: 40, counted: ['/entries', 'entries'] },
  ] as const)(
    'killed in the run of the $run is continued by the same restore and ends with every record once',
    async ({ step, minRecords, latencyMs, counted }) => {
      const d = await startTestSandbox({ faults: { latencyMs } });
      try {
        const work = join(dir, `restore-d-${step ?? 'records'}`);
        // The inputs and state of a restore into this account go in a folder of their own.
        const child = spawn(
          process.execPath,
          ['--import', 'tsx', CHILD, out, d.url, d.token, work, ...(step ? [step] : [])],
          { stdio: ['ignore', 'pipe', 'pipe'] },
        );
        const ended = new Promise((done) => child.on('close', done));
        const lines = createInterface({ input: child.stdout! });
        await new Promise<void>((resolve, reject) => {
          lines.on('line', (line) => line === 'writing' && resolve());
          child.once('exit', () => reject(new Error('the restore ended before it could be killed')));
        });
        // Killed once the account holds one more record of the kind counted (an event of the
        // account, not a delay): the rest of the run, slowed by the latency, is then cut off.
        const table = counted[1] === 'parties' ? d.store.parties : d.store.entries;
        const before = table.size;
        while (table.size < before + minRecords && child.exitCode === null) await new Promise((r) => setTimeout(r, 5));
        child.kill('SIGKILL');
        await ended;
        const partial = (await allPages(d, counted[0], counted[1])).length;
        const expected = (await allPages(a, counted[0], counted[1])).length;
        expect(partial).toBeLessThan(expected);
        const cd = client(d);
        const summary = await runRestore(
          { from: out, workDir: work },
          { client: cd, account: { baseUrl: d.url, account: d.url } },
        );
        await cd.close();
        expect(summary.import.stopped).toBeNull();
        // Tasks of every status: those of the tracks too, which the links made after the import.
        for (const [path, key] of [
          ['/parties', 'parties'],
          ['/opportunities', 'opportunities'],
          ['/kases', 'kases'],
          ['/entries', 'entries'],
          ['/tasks?status=open,completed,pending', 'tasks'],
        ] as const) {
          expect({ path, count: (await allPages(d, path, key)).length }).toEqual({
            path,
            count: (await allPages(a, path, key)).length,
          });
        }
        // Every project has its additional party once.
        let contacts = 0;
        for (const kase of await allPages(d, '/kases', 'kases'))
          contacts += (await allPages(d, `/kases/${kase.id}/parties`, 'parties')).length;
        expect(contacts).toBe(summary.links.kaseParties);
        expect(contacts).toBe((await allPages(a, '/kases', 'kases')).length);
        const names = (await allPages(d, '/parties', 'parties')).map((p) => p.name ?? `${p.firstName} ${p.lastName}`);
        expect(new Set(names).size).toBe(names.length);
      } finally {
        await d.close();
      }
    },
    90_000,
  );
});

describe('restore of configuration and of entries the interface cannot create', () => {
  // A source account of its own: a pipeline with milestones, an activity type and a track
  // definition that a fresh account lacks, used by its records; an email, a completed task (whose
  // entry the service files) and the entry of a completed task whose task is gone.
  let src: TestSandbox;
  let e: TestSandbox;
  const out2 = join(dir, 'backup-2');
  const work = join(dir, 'restore-e');
  let org0: number;
  let org1: number;
  const EMAIL_AT = '2026-03-01T10:00:00Z';

  beforeAll(async () => {
    [src, e] = await Promise.all([startTestSandbox(), startTestSandbox()]);
    const seeded2 = await seedBackupAccount(src, 2);
    [org0, org1] = seeded2.organisations as [number, number];
    const ok = async (method: string, path: string, body?: unknown) => {
      const answer = await src.v2(method, path, body);
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
      return answer.body as any;
    };
    const pipeline = (
      await ok('POST', '/pipelines', { pipeline: { name: 'Template sales', description: 'From the template' } })
    ).pipeline;
    const qualified = (
      await ok('POST', '/milestones', {
        milestone: { name: 'Qualified', pipeline: { id: pipeline.id }, probability: 20 },
      })
    ).milestone;
    await ok('POST', '/milestones', {
      milestone: { name: 'Signed', pipeline: { id: pipeline.id }, probability: 100, complete: true },
    });
    const visit = (await ok('POST', '/activitytypes', { activityType: { name: 'Site visit', icon: { id: 'CAR' } } }))
      .activityType;
    const onboarding = (
      await ok('POST', '/trackdefinitions', {
        trackDefinition: {
          description: 'Customer onboarding',
          captureRule: 'KASE',
          direction: 'START_DATE',
          taskDefinitions: [
            { description: 'Kick-off call', daysAfterRule: 'TRACK_START', daysAfter: 2, displayOrder: 0 },
            { description: 'First review', daysAfterRule: 'LAST_TASK', daysAfter: 14, displayOrder: 1 },
          ],
        },
      })
    ).trackDefinition;
    await ok('POST', '/opportunities', {
      opportunity: { name: 'Template deal', party: { id: org0 }, milestone: { id: qualified.id } },
    });
    await ok('POST', '/entries', {
      entry: { type: 'note', content: 'Visited the site', party: { id: org0 }, activityType: visit.id },
    });
    await ok('POST', '/kases', {
      kase: { name: 'Template onboarding', party: { id: org0 }, tracks: [{ definition: onboarding.id }] },
    });
    const [person0] = seeded2.people as [number];
    addEntry(src.store, {
      type: 'email',
      content: 'Please find the quote attached.',
      subject: 'Quote',
      partyIds: [org0, person0],
      activityTypeId: null,
      entryAt: EMAIL_AT,
      participants: [
        { id: 1, address: 'ann@example.test', name: 'Ann0 Smith', role: 'FROM' },
        { id: 2, address: 'sales@example.test', name: 'Sales', role: 'TO' },
      ],
    });
    await ok('POST', '/tasks', {
      task: { description: 'Send contract', party: { id: org0 }, dueOn: '2026-03-02', status: 'COMPLETED' },
    });
    addEntry(src.store, {
      type: 'task',
      content: 'Old follow-up',
      partyId: org1,
      activityTypeId: null,
      entryAt: '2025-01-01T09:00:00Z',
    });
    const cs = client(src);
    await runBackup({ out: out2, since: null }, { client: cs, account: { baseUrl: src.url, account: src.url } });
    await cs.close();
  }, 60_000);

  afterAll(async () => {
    await Promise.all([src?.close(), e?.close()]);
  });

  const restoreInto = async (box: TestSandbox, options: { workDir: string; stateDir?: string }) => {
    const cc = client(box);
    try {
      return await runRestore(
        { from: out2, ...options },
        { client: cc, account: { baseUrl: box.url, account: box.url } },
      );
    } finally {
      await cc.close();
    }
  };

  it('creates the pipeline, milestones, activity types and track definition the account lacks, and the records use them', async () => {
    const summary = await restoreInto(e, { workDir: work });
    expect(summary.import.stopped).toBeNull();
    expect(summary.missing).toEqual([]);
    const made = (summary.import.setup?.created ?? []).map((c) => `${c.kind} ${c.name}`).sort();
    expect(made).toEqual([
      'activityType Email',
      'activityType Site visit',
      'activityType Task completed',
      'milestone Qualified',
      'milestone Signed',
      'pipeline Template sales',
      'trackDefinition Customer onboarding',
    ]);
    // The joined summary of the two runs counts the set-up's creates (the first run's) as the set-up's, not the rows'.
    expect(summary.import.requestsForSetup).toBe(made.length);
    const opportunity = (await allPages(e, '/opportunities', 'opportunities')).find((o) => o.name === 'Template deal');
    expect(opportunity.milestone.name).toBe('Qualified');
    const pipeline = ((await e.v2('GET', '/pipelines')).body.pipelines as any[]).find(
      (p) => p.name === 'Template sales',
    );
    expect(pipeline.description).toBe('From the template');
    const milestones = (await e.v2('GET', `/pipelines/${pipeline.id}/milestones`)).body.milestones as any[];
    expect(
      milestones
        .map((m) => ({ name: m.name, probability: m.probability, complete: m.complete }))
        .sort((x, y) => x.name.localeCompare(y.name)),
    ).toEqual([
      { name: 'Qualified', probability: 20, complete: false },
      { name: 'Signed', probability: 100, complete: true },
    ]);
    const definition = ((await e.v2('GET', '/trackdefinitions')).body.trackDefinitions as any[]).find(
      (d) => d.description === 'Customer onboarding',
    );
    expect({
      captureRule: definition.captureRule,
      tasks: definition.taskDefinitions.map((t: any) => [t.description, t.daysAfterRule, t.daysAfter]),
    }).toEqual({
      captureRule: 'KASE',
      tasks: [
        ['Kick-off call', 'TRACK_START', 2],
        ['First review', 'LAST_TASK', 14],
      ],
    });
    const kase = (await allPages(e, '/kases', 'kases')).find((k) => k.name === 'Template onboarding');
    expect((await allPages(e, `/kases/${kase.id}/tracks`, 'tracks')).map((t) => t.description)).toEqual([
      'Customer onboarding',
    ]);
    const visit = (await allPages(e, '/entries?embed=activityType', 'entries')).find(
      (x) => x.content === 'Visited the site',
    ); // the restoring user's own note, as it was
    expect(visit.activityType.name).toBe('Site visit');
  }, 60_000);

  it('carries an email as a note headed by what it was, leaves out the entry the service files again for a restored completed task, and carries one whose task is gone', async () => {
    const ids = await restoredIds(join(work, 'state'));
    const target0 = ids.get(`organisations/${org0}`)!;
    const target1 = ids.get(`organisations/${org1}`)!;
    const entries = await allPages(e, '/entries?embed=party,activityType', 'entries');
    const email = entries.filter((x) => x.party?.id === target0 && x.content.startsWith('Originally an email'));
    expect(
      email.map((x) => ({ type: x.type, content: x.content, activityType: x.activityType?.name, entryAt: x.entryAt })),
    ).toEqual([
      {
        type: 'note',
        content:
          'Originally an email\nFrom: Ann0 Smith <ann@example.test>\nTo: Sales <sales@example.test>\nSubject: Quote\nAlso filed on: Ann0 Smith\n\nPlease find the quote attached.',
        activityType: 'Email',
        entryAt: new Date(EMAIL_AT).toISOString().replace('.000Z', 'Z'),
      },
    ]);
    // Send contract: restored completed, so the service filed its entry; nothing else records it.
    expect(
      entries.filter((x) => x.content.includes('Send contract')).map((x) => ({ type: x.type, on: x.party?.id })),
    ).toEqual([{ type: 'task', on: target0 }]);
    const orphan = entries.filter((x) => x.content.includes('Old follow-up'));
    expect(
      orphan.map((x) => ({ type: x.type, content: x.content, activityType: x.activityType?.name, on: x.party?.id })),
    ).toEqual([
      {
        type: 'note',
        content: 'Originally the entry of a completed task\n\nOld follow-up',
        activityType: 'Task completed',
        on: target1,
      },
    ]);
    expect(entries.length).toBe((await allPages(src, '/entries', 'entries')).length);
  }, 60_000);

  it('restored again with a new state folder, adds nothing: carried notes included', async () => {
    const counts = await countsOf(e);
    const summary = await restoreInto(e, { workDir: work, stateDir: join(dir, 'state-e2') });
    expect(summary.import.stopped).toBeNull();
    expect(Object.values(created(summary)).every((n) => n === 0)).toBe(true);
    expect(summary.import.setup?.created).toEqual([]);
    expect(summary.entries.carried).toEqual({ emails: 0, taskEntries: 0 });
    expect(summary.entries.leftOut.taskEntries).toBe(1);
    expect(await countsOf(e)).toEqual(counts);
  }, 60_000);

  it('rollback of the restore removes its records and the configuration its set-up created', async () => {
    const ce = client(e);
    const rolled = await runRollback(
      { stateDir: join(work, 'state'), all: true },
      { client: ce, account: { baseUrl: e.url, account: e.url } },
    );
    await ce.close();
    expect(rolled.deleted).toBeGreaterThan(0);
    expect((await allPages(e, '/parties', 'parties')).length).toBe(0);
    expect(((await e.v2('GET', '/pipelines')).body.pipelines as any[]).map((p) => p.name)).not.toContain(
      'Template sales',
    );
    expect(((await e.v2('GET', '/activitytypes')).body.activityTypes as any[]).map((t) => t.name)).not.toContain(
      'Site visit',
    );
    expect(
      ((await e.v2('GET', '/trackdefinitions')).body.trackDefinitions as any[]).map((d) => d.description),
    ).not.toContain('Customer onboarding');
  }, 60_000);

  it('still stops with CONFIG_MISSING for a custom field the account lacks, naming it and not what set-up creates', async () => {
    const f = await startTestSandbox();
    try {
      const industry = f.store.fieldDefinitions.all().find((d) => d.name === 'Industry')!;
      f.store.fieldDefinitions.delete(industry.id);
      await expect(restoreInto(f, { workDir: join(dir, 'restore-f') })).rejects.toMatchObject({
        code: 'CONFIG_MISSING',
        message: expect.stringMatching(/lacks 1 item .*that the interface cannot create: custom field Industry/),
      });
      expect((await allPages(f, '/parties', 'parties')).length).toBe(0);
      expect(((await f.v2('GET', '/pipelines')).body.pipelines as any[]).map((p) => p.name)).not.toContain(
        'Template sales',
      );
    } finally {
      await f.close();
    }
  }, 60_000);
});
