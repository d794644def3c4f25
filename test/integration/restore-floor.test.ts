// The requests of a small restore, counted at the target sandbox's HTTP server, held to the floor
// (issue 28): one write per record, per additional party of a project, per file and per track of a
// party, the account's names read once, and one page of each list of records the account might
// already hold; restored again, the lists and no request per record.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runBackup, runRestore } from '../../src/backup/index.ts';
import { CrmClient, readAccountCatalog } from '../../src/client/index.ts';
import { seedBackupAccount } from '../helpers/backup-account.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

let a: TestSandbox;
let b: TestSandbox;
const dir = mkdtempSync(join(tmpdir(), 'ferry-restore-floor-'));
const out = join(dir, 'backup');
const TRACK_DATE = '2026-01-05';

const client = (box: TestSandbox) => new CrmClient({ baseUrl: box.url, auth: box.token });
const lines = (name: string): any[] =>
  readFileSync(join(out, name), 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));

/** Every request the sandbox's HTTP server is sent, by method and path. */
function requestsAt(box: TestSandbox): string[] {
  const seen: string[] = [];
  box.app.server.on('request', (request) => seen.push(`${request.method} ${String(request.url).replace(/\?.*$/, '')}`));
  return seen;
}

async function ok(box: TestSandbox, method: string, path: string, body?: unknown): Promise<any> {
  const answer = await box.v2(method, path, body);
  if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.text}`);
  return answer.body;
}

beforeAll(async () => {
  [a, b] = await Promise.all([startTestSandbox(), startTestSandbox()]);
  const seeded = await seedBackupAccount(a, 4, { people: 2, contacts: 2, attachmentEvery: 2 });
  // A track on an opportunity (taken on its create) and one on an organisation (which no create takes), from another day.
  const definitions = (await ok(a, 'GET', '/trackdefinitions')).trackDefinitions as any[];
  await ok(a, 'POST', '/tracks', {
    track: {
      definition: definitions.find((d) => d.captureRule === 'OPPORTUNITY').id,
      opportunity: { id: seeded.opportunities[0] },
    },
  });
  const review = (
    await ok(a, 'POST', '/trackdefinitions', {
      trackDefinition: {
        description: 'Account review',
        captureRule: 'PARTY',
        direction: 'START_DATE',
        taskDefinitions: [
          { description: 'Review the account', daysAfterRule: 'TRACK_START', daysAfter: 7, displayOrder: 0 },
        ],
      },
    })
  ).trackDefinition;
  await ok(a, 'POST', '/tracks', {
    track: { definition: review.id, party: { id: seeded.organisations[1] }, trackDateOn: TRACK_DATE },
  });
  const ca = client(a);
  await runBackup({ out, since: null }, { client: ca, account: { baseUrl: a.url, account: a.url } });
  await ca.close();
}, 60_000);

afterAll(async () => {
  await Promise.all([a?.close(), b?.close()]);
  rmSync(dir, { recursive: true, force: true });
});

describe('the requests of a restore', () => {
  it('into an empty account: the floor, and one page of each list of records it might hold', async () => {
    // The names, as any run reads them once.
    const probe = client(b);
    await readAccountCatalog(probe);
    const names = probe.transport.requestsSent;
    await probe.close();

    const seen = requestsAt(b);
    const cb = client(b);
    const summary = await runRestore({ from: out }, { client: cb, account: { baseUrl: b.url, account: b.url } });
    await cb.close();
    expect(summary.import.stopped).toBeNull();
    expect(summary.import.steps.reduce((sum, step) => sum + step.rejected, 0)).toBe(0);

    const tasks = lines('tasks.jsonl');
    const records =
      lines('parties.jsonl').length +
      lines('opportunities.jsonl').length +
      lines('kases.jsonl').length +
      lines('entries.jsonl').length +
      tasks.filter((t) => !t.hasTrack).length;
    const floor = {
      records,
      contacts: lines('kase-parties.jsonl').length,
      files: lines('attachments.jsonl').length,
      partyTracks: lines('tracks.jsonl').filter((t) => t.appliedTo.entity === 'parties').length,
      setup: 1, // the track definition Account review, which B lacks
      names, // GET /users/current among them: the user the notes are written as
    };
    expect(floor).toMatchObject({ contacts: 8, files: 4, partyTracks: 1 });
    const wanted = Object.values(floor).reduce((sum, n) => sum + n, 0) + 3;
    const byKind = (pattern: RegExp) => seen.filter((line) => pattern.test(line)).length;
    expect({
      total: seen.length,
      records: byKind(/^POST \/api\/v2\/(parties|opportunities|kases|entries|tasks)$/),
      contacts: byKind(/^POST \/api\/v2\/kases\/\d+\/parties\/\d+$/),
      files: byKind(/^POST \/api\/v2\/attachments\/upload$/),
      partyTracks: byKind(/^POST \/api\/v2\/tracks$/),
      setup: byKind(/^POST \/api\/v2\/trackdefinitions$/),
      lists: byKind(/^GET \/api\/v2\/(parties|opportunities|kases)$/),
      writer: byKind(/^GET \/api\/v2\/users\/current$/),
    }).toEqual({
      total: wanted,
      records: floor.records,
      contacts: floor.contacts,
      files: floor.files,
      partyTracks: 1,
      setup: 1,
      lists: 3,
      writer: 1,
    });
    expect(summary.requests).toBe(wanted);

    // The tracks: the opportunity's applied as it was created, the organisation's with its date.
    const ids = new Map((await allPages(b, '/parties', 'parties')).map((p) => [p.name ?? '', p.id]));
    const ofOrganisation = await allPages(b, `/parties/${ids.get('Company 1')}/tracks`, 'tracks');
    expect(ofOrganisation.map((t) => [t.description, t.trackDateOn])).toEqual([['Account review', TRACK_DATE]]);
    const deal = (await allPages(b, '/opportunities', 'opportunities')).find((o) => o.name === 'Deal 0');
    expect((await allPages(b, `/opportunities/${deal.id}/tracks`, 'tracks')).map((t) => t.description)).toEqual([
      'Deal follow-up',
    ]);
    expect(summary.links.tracks).toEqual({ onCreate: 2 + 1, ofParties: 1, onFound: 0, unresolved: 0 });
  }, 60_000);

  it('again, into the account that holds it all: the names and the lists, none a record', async () => {
    const seen = requestsAt(b);
    const cb = client(b);
    const summary = await runRestore(
      { from: out, stateDir: join(dir, 'again') },
      { client: cb, account: { baseUrl: b.url, account: b.url } },
    );
    await cb.close();
    for (const step of summary.import.steps)
      expect({ step: step.step, created: step.created, updated: step.updated, rejected: step.rejected }).toEqual({
        step: step.step,
        created: 0,
        updated: 0,
        rejected: 0,
      });
    expect(seen.filter((line) => !line.startsWith('GET '))).toEqual([]);
    // Every record read at most in a list: no GET of one record, and no list of one record's links.
    expect(
      seen.filter((line) => /^GET \/api\/v2\/(parties|opportunities|kases|entries|tasks)\/\d+/.test(line)),
    ).toEqual([]);
    const lists = seen.filter((line) => /^GET \/api\/v2\/(parties|opportunities|kases|entries|tasks)$/.test(line));
    expect(lists.sort()).toEqual([
      'GET /api/v2/entries',
      'GET /api/v2/kases',
      'GET /api/v2/opportunities',
      'GET /api/v2/parties',
      'GET /api/v2/tasks',
    ]);
    expect(seen.length).toBe(summary.import.requestsForNames + lists.length);
  }, 60_000);
});
