// crm-ferry restore between two sandboxes: a backup of A restored into an empty B gives the same
// records and links on every field a client can set (ids mapped); a second restore changes nothing.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { restoredIds, runBackup, runRestore } from '../../src/backup/index.ts';
import { CrmClient } from '../../src/client/index.ts';
import { seedBackupAccount } from '../helpers/backup-account.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let a: TestSandbox;
let b: TestSandbox;
const dir = mkdtempSync(join(tmpdir(), 'ferry-restore-'));
const out = join(dir, 'backup');

const CHILD = fileURLToPath(new URL('../helpers/restore-child.ts', import.meta.url));

const client = (box: TestSandbox) => new CrmClient({ baseUrl: box.url, auth: box.token });

beforeAll(async () => {
  [a, b] = await Promise.all([startTestSandbox(), startTestSandbox()]);
  const seeded = await seedBackupAccount(a, 9, { attachmentEvery: 2 });
  // Custom field values, with and without a data tag, on a few records.
  const defs = (await a.v2('GET', '/parties/fields/definitions')).body.definitions as Array<{ id: number; name: string }>;
  const industry = defs.find((d) => d.name === 'Industry')!.id;
  for (const id of seeded.organisations.slice(0, 3)) await a.v2('PUT', `/parties/${id}`, { party: { fields: [{ definition: industry, value: 'Retail' }] } });
  const oppDefs = (await a.v2('GET', '/opportunities/fields/definitions')).body.definitions as Array<{ id: number; name: string }>;
  await a.v2('PUT', `/opportunities/${seeded.opportunities[1]}`, { opportunity: { fields: [{ definition: oppDefs.find((d) => d.name === 'Competitor')!.id, value: 'Initech' }] } });
  const ca = client(a);
  await runBackup({ out, since: null }, { client: ca, account: a.url });
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
const items = (list: any[] | undefined, keys: string[]) => sortBy((list ?? []).map((item) => Object.fromEntries(keys.map((k) => [k, item[k] ?? null]))), (i) => JSON.stringify(i));
const tags = (record: any) => (record.tags ?? []).map((t: any) => t.name).sort();
const fields = (record: any) => sortBy((record.fields ?? []).map((f: any) => ({ definition: f.definition.name, value: f.value })), (f: any) => f.definition);

describe('restore', () => {
  it('gives B the same records and links as A, field by field, ids mapped', async () => {
    const summary = await restore();
    expect(summary.import.stopped).toBeNull();
    expect(summary.missing).toEqual([]);
    const ids = await restoredIds(summary.stateDir);
    const party = (id: number) => ids.get(`organisations/${id}`) ?? ids.get(`people/${id}`);

    const partiesA = await allPages(a, '/parties?embed=tags,fields', 'parties');
    const partiesB = new Map((await allPages(b, '/parties?embed=tags,fields', 'parties')).map((p) => [p.id, p]));
    expect(partiesB.size).toBe(partiesA.length);
    for (const p of partiesA) {
      const q = partiesB.get(party(p.id)!);
      const view = (r: any, org: number | null) => ({ type: r.type, name: r.name ?? null, firstName: r.firstName ?? null, lastName: r.lastName ?? null, title: r.title ?? null, jobTitle: r.jobTitle ?? null, about: r.about ?? null, organisation: org, owner: r.owner?.username ?? null, team: r.team?.name ?? null, emails: items(r.emailAddresses, ['type', 'address']), phones: items(r.phoneNumbers, ['type', 'number']), websites: items(r.websites, ['type', 'service', 'address']), addresses: items(r.addresses, ['type', 'street', 'city', 'state', 'zip', 'country']), tags: tags(r), fields: fields(r) });
      expect(view(q, q?.organisation?.id ?? null)).toEqual(view(p, p.organisation ? party(p.organisation.id)! : null));
    }

    const oppsA = await allPages(a, '/opportunities?embed=tags,fields', 'opportunities');
    const oppsB = new Map((await allPages(b, '/opportunities?embed=tags,fields', 'opportunities')).map((o) => [o.id, o]));
    expect(oppsB.size).toBe(oppsA.length);
    for (const o of oppsA) {
      const q = oppsB.get(ids.get(`opportunities/${o.id}`)!);
      const view = (r: any, partyId: number) => ({ name: r.name, description: r.description ?? null, party: partyId, milestone: r.milestone?.name, value: r.value ?? null, expectedCloseOn: r.expectedCloseOn ?? null, closedOn: r.closedOn ?? null, lostReason: r.lostReason ?? null, durationBasis: r.durationBasis ?? null, owner: r.owner?.username ?? null, team: r.team?.name ?? null, tags: tags(r), fields: fields(r) });
      expect(view(q, q.party.id)).toEqual(view(o, party(o.party.id)!));
    }

    const kasesA = await allPages(a, '/kases?embed=tags,fields', 'kases');
    const kasesB = new Map((await allPages(b, '/kases?embed=tags,fields', 'kases')).map((k) => [k.id, k]));
    expect(kasesB.size).toBe(kasesA.length);
    for (const k of kasesA) {
      const mapped = ids.get(`kases/${k.id}`)!;
      const q = kasesB.get(mapped);
      const view = (r: any, partyId: number, opp: number | null) => ({ name: r.name, description: r.description ?? null, party: partyId, opportunity: opp, status: r.status, startOn: r.startOn ?? null, expectedCloseOn: r.expectedCloseOn ?? null, closedOn: r.closedOn ?? null, owner: r.owner?.username ?? null, team: r.team?.name ?? null, tags: tags(r), fields: fields(r) });
      expect(view(q, q.party.id, q.opportunity?.id ?? null)).toEqual(view(k, party(k.party.id)!, k.opportunity ? ids.get(`opportunities/${k.opportunity.id}`)! : null));
      const extraA = (await allPages(a, `/kases/${k.id}/parties`, 'parties')).map((p) => party(p.id)).sort();
      const extraB = (await allPages(b, `/kases/${mapped}/parties`, 'parties')).map((p) => p.id).sort();
      expect(extraB).toEqual(extraA);
      const tracksA = (await allPages(a, `/kases/${k.id}/tracks`, 'tracks')).map((t) => ({ description: t.description, trackDateOn: t.trackDateOn }));
      const tracksB = (await allPages(b, `/kases/${mapped}/tracks`, 'tracks')).map((t) => ({ description: t.description, trackDateOn: t.trackDateOn }));
      expect(tracksB).toEqual(tracksA);
    }

    const entriesA = await allPages(a, '/entries?embed=party,kase,opportunity,activityType', 'entries');
    const entriesB = new Map((await allPages(b, '/entries?embed=party,kase,opportunity,activityType', 'entries')).map((e) => [e.id, e]));
    expect(entriesB.size).toBe(entriesA.length);
    for (const e of entriesA) {
      const q = entriesB.get(ids.get(`entries/${e.id}`)!);
      const view = (r: any, on: number | null) => ({ type: r.type, content: r.content, on, activityType: r.activityType?.name, entryAt: r.entryAt, attachments: items(r.attachments, ['filename', 'contentType', 'size']) });
      expect(view(q, q.party?.id ?? null)).toEqual(view(e, e.party ? party(e.party.id)! : null));
    }

    const tasksA = await allPages(a, '/tasks?status=open,completed,pending&embed=party', 'tasks');
    const tasksB = await allPages(b, '/tasks?status=open,completed,pending&embed=party', 'tasks');
    const taskView = (r: any, on: number | null) => ({ description: r.description, detail: r.detail ?? null, on, dueOn: r.dueOn, status: r.status, hasTrack: r.hasTrack ?? false, category: r.category?.name ?? null, owner: r.owner?.username ?? null });
    const key = (t: any) => JSON.stringify(t);
    expect(sortBy(tasksB.map((t) => taskView(t, t.party?.id ?? null)), key)).toEqual(sortBy(tasksA.map((t) => taskView(t, t.party ? party(t.party.id)! : null)), key));
  }, 60_000);

  it('a second restore changes nothing', async () => {
    const before = (await allPages(b, '/parties', 'parties')).length;
    const summary = await restore();
    for (const step of summary.import.steps) expect({ step: step.step, created: step.created, updated: step.updated }).toEqual({ step: step.step, created: 0, updated: 0 });
    expect(summary.links.kaseParties.added).toBe(0);
    expect(summary.links.tracks.added).toBe(0);
    expect((await allPages(b, '/parties', 'parties')).length).toBe(before);
  }, 60_000);
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
      await expect(runRestore({ from: out, workDir: work }, { client: cc, account: { baseUrl: c.url, account: c.url } })).rejects.toMatchObject({
        code: 'CONFIG_MISSING',
        message: expect.stringContaining(`task category ${category.name}`),
      });
      expect((await parties()).length).toBe(before);
      const summary = await runRestore({ from: out, workDir: work, allowMissing: true }, { client: cc, account: { baseUrl: c.url, account: c.url } });
      await cc.close();
      expect(summary.missing).toEqual([{ kind: 'task category', name: category.name, creatable: false }]);
      expect((await parties()).length).toBe(before + (await allPages(a, '/parties', 'parties')).length);
    } finally {
      await c.close();
    }
  }, 60_000);
});

describe('restore killed with SIGKILL', () => {
  it('is continued by the same restore and ends with every record once', async () => {
    const d = await startTestSandbox({ faults: { latencyMs: 15 } });
    try {
      const work = join(dir, 'restore-d');
      // The inputs and state of a restore into this account go in a folder of their own.
      const child = spawn(process.execPath, ['--import', 'tsx', CHILD, out, d.url, d.token, work], { stdio: ['ignore', 'pipe', 'pipe'] });
      const ended = new Promise((done) => child.on('close', done));
      const lines = createInterface({ input: child.stdout! });
      await new Promise<void>((resolve, reject) => {
        lines.on('line', (line) => line === 'writing' && resolve());
        child.once('exit', () => reject(new Error('the restore ended before it could be killed')));
      });
      await new Promise((r) => setTimeout(r, 150));
      child.kill('SIGKILL');
      await ended;
      const partial = (await allPages(d, '/parties', 'parties')).length;
      const expected = (await allPages(a, '/parties', 'parties')).length;
      expect(partial).toBeLessThan(expected);
      const cd = client(d);
      const summary = await runRestore({ from: out, workDir: work }, { client: cd, account: { baseUrl: d.url, account: d.url } });
      await cd.close();
      expect(summary.import.stopped).toBeNull();
      // Tasks of every status: those of the tracks too, which the links made after the import.
      for (const [path, key] of [['/parties', 'parties'], ['/opportunities', 'opportunities'], ['/kases', 'kases'], ['/entries', 'entries'], ['/tasks?status=open,completed,pending', 'tasks']] as const) {
        expect({ path, count: (await allPages(d, path, key)).length }).toEqual({ path, count: (await allPages(a, path, key)).length });
      }
      expect(summary.links.kaseParties.added + summary.links.kaseParties.present).toBe((await allPages(a, '/kases', 'kases')).length);
      const names = (await allPages(d, '/parties', 'parties')).map((p) => p.name ?? `${p.firstName} ${p.lastName}`);
      expect(new Set(names).size).toBe(names.length);
    } finally {
      await d.close();
    }
  }, 90_000);
});
