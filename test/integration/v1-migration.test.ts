import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { runImport, runRollback, type ImportSummary } from '../../src/load/index.ts';
import { addPersonalToken } from '../../src/sandbox/auth.ts';
import { allPages as all, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { copyFromCheckout } from '../helpers/checkout-copy.ts';

// The bundled legacy account, migrated whole by the bundled plan into an empty sandbox.
const work = mkdtempSync(join(tmpdir(), 'ferry-v1-'));
copyFromCheckout(['mappings', 'samples/v1', 'samples/v1-migration'], work);
const PLAN = join(work, 'mappings/plans/v1-migration.yaml');
const STATE = join(work, 'state');

/** Every history item of the export files, as v1 wrote it: id, kind, date, author, text. */
const unescapeXml = (text: string): string =>
  text.replace(/&(amp|lt|gt|quot|apos|#(\d+));/g, (_, name: string, code?: string) =>
    code
      ? String.fromCharCode(Number(code))
      : (({ amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" } as Record<string, string>)[name] ?? ''),
  );

function historyItems(): Array<{
  id: string;
  type: string;
  entryDate: string;
  attachments: string[];
  creator: string;
  creatorName: string;
  subject: string;
  note: string;
}> {
  const files = [
    'samples/v1/parties.xml',
    'samples/v1/history.xml',
    'samples/v1-migration/kases.xml',
    'samples/v1/opportunities.xml',
  ];
  return files.flatMap((file) =>
    [...readFileSync(join(work, file), 'utf8').matchAll(/<historyItem>([\s\S]*?)<\/historyItem>/g)].map((m) => {
      const text = m[1] as string;
      const field = (name: string) => unescapeXml(new RegExp(`<${name}>([^<]*)</${name}>`).exec(text)?.[1] ?? '');
      return {
        id: field('id'),
        type: field('type'),
        entryDate: field('entryDate'),
        creator: field('creator'),
        creatorName: field('creatorName'),
        subject: field('subject'),
        note: field('note'),
        attachments: [...text.matchAll(/<filename>([^<]*)<\/filename>/g)].map((a) => a[1] as string),
      };
    }),
  );
}

let box: TestSandbox;
let first: ImportSummary;
let dryFirst: ImportSummary;
/** Requests the sandbox received during the first run, counted by the server. */
let firstReceived = 0;

async function migrate(dryRun = false): Promise<ImportSummary> {
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  try {
    return await runImport(
      { source: { kind: 'plan', planFile: PLAN }, stateDir: STATE, dryRun },
      { client, account: { baseUrl: box.url, account: box.url } },
    );
  } finally {
    await client.close();
  }
}

function idOf(step: string, key: string): number {
  return idOfIn(STATE, step, key);
}

/** The id a run of `state` gave the row `key` of `step`, from its success file. */
function idOfIn(state: string, step: string, key: string): number {
  for (const line of readFileSync(join(state, 'results', `${step}.success.csv`), 'utf8')
    .split('\n')
    .slice(1)) {
    const cells = line.split(',');
    if (cells[1] === key) return Number(cells[3]);
  }
  throw new Error(`no ${step} ${key} in the success file`);
}

beforeAll(async () => {
  box = await startTestSandbox();
  dryFirst = await migrate(true);
  let received = 0;
  const count = (): void => void (received += 1);
  box.app.server.on('request', count);
  first = await migrate();
  box.app.server.off('request', count);
  firstReceived = received;
});

afterAll(async () => {
  await box?.close();
  rmSync(work, { recursive: true, force: true });
});

describe('the bundled v1 account into an empty account', () => {
  it('writes every row, after a set-up that created the activity types and the track definition it lacked', () => {
    expect(first.stopped).toBeNull();
    expect(first.steps.map((s) => `${s.step} ${s.created}/${s.rejected}`)).toEqual([
      'organisations 1/0',
      'people 2/0',
      'opportunities 2/0',
      'kases 2/0',
      'notes 3/0',
      'kase-notes 3/0',
      'opportunity-notes 1/0',
      'history 3/0',
      'tasks 4/0',
    ]);
    expect(first.setup?.created.map((c) => `${c.kind} ${c.name}`)).toEqual([
      'activityType Email',
      'activityType Task completed',
      'trackDefinition Installation checklist',
    ]);
    expect(first.setup?.checklist).toEqual([]);
    // Every item the mappings carry is read, numbered ones included; what is left is named.
    const notCarried = Object.fromEntries(first.steps.map((s) => [s.step, s.notCarried.map((c) => c.column)]));
    expect(notCarried.notes).toEqual(['parent.type']);
    expect(notCarried.kases).toEqual(expect.arrayContaining(['track.1.trackDateOn']));
    expect(notCarried.kases?.filter((c) => c.startsWith('party.') || c === 'track.1.description')).toEqual([]);
  });

  it("the dry run before it gave the requests the run sent: names once, the set-up's creates, the rows", () => {
    // A quota is planned on this figure: the set-up's creates count, and the names are not read again after them.
    expect(firstReceived).toBe(first.requests);
    expect(dryFirst.dryRun).toMatchObject({
      requests: first.requests,
      requestsForNames: first.requestsForNames,
      requestsForSetup: 3,
    });
    expect(first.requestsForSetup).toBe(3);
    expect(dryFirst.steps.map((s) => s.created)).toEqual(first.steps.map((s) => s.created));
  });

  it('carries every history item as an entry with its v1 date, an activity type for its kind, its author and its attachments', async () => {
    const items = historyItems();
    expect(items.map((i) => i.id).sort()).toEqual([
      '701',
      '702',
      '703',
      '704',
      '705',
      '706',
      '707',
      '708',
      '709',
      '710',
    ]);
    const KIND: Record<string, string> = {
      Note: 'Note',
      Email: 'Email',
      Task: 'Task completed',
      Call: 'Call',
      Meeting: 'Meeting',
    };
    const STEP: Record<string, string> = {
      705: 'kase-notes',
      706: 'kase-notes',
      709: 'kase-notes',
      703: 'history',
      704: 'history',
      708: 'history',
      710: 'opportunity-notes',
    };
    for (const item of items) {
      const step = STEP[item.id] ?? 'notes';
      const entry = (await box.v2('GET', `/entries/${idOf(step, item.id)}?embed=activityType`)).body.entry;
      expect(entry.entryAt, item.id).toBe(item.entryDate);
      expect(entry.activityType.name, item.id).toBe(KIND[item.type]);
      expect(entry.content, item.id).toMatch(/^Originally by \w+ \w+ \(\w+\) on \d{4}-\d\d-\d\dT/);
      expect(
        entry.attachments.map((a: { filename: string }) => a.filename),
        item.id,
      ).toEqual(item.attachments);
    }
    // Each file with the type v1 gave it (engine-photo has no extension to go by).
    const offer = (await box.v2('GET', `/entries/${idOf('history', '708')}`)).body.entry;
    expect(
      offer.attachments.map((a: { filename: string; contentType: string }) => [a.filename, a.contentType]),
    ).toEqual([
      ['offer.txt', 'text/plain'],
      ['engine-photo', 'image/png'],
    ]);
    const opportunity = idOf('opportunities', '301');
    expect(
      (await box.v2('GET', `/opportunities/${opportunity}/entries`)).body.entries.map((e: { id: number }) => e.id),
    ).toEqual([offer.id]);
    const signing = (await box.v2('GET', `/opportunities/${idOf('opportunities', '302')}/entries`)).body.entries;
    expect(signing.map((e: { id: number }) => e.id)).toEqual([idOf('opportunity-notes', '710')]);
  });

  it('ends a completed v1 task completed, with its completion date in the detail', async () => {
    const task = (await box.v2('GET', `/tasks/${idOf('tasks', '1004')}?embed=kase`)).body.task;
    expect(task.status).toBe('COMPLETED');
    expect(task.detail).toBe('Part no. G-42\n\nCompleted on 2012-01-18T15:20:00Z (legacy account)');
    expect(task.kase.id).toBe(idOf('kases', '402'));
    expect((await box.v2('GET', `/tasks/${idOf('tasks', '1001')}`)).body.task.status).toBe('OPEN');
  });

  it('gives a project its additional contacts and its tracks', async () => {
    const kase = idOf('kases', '401');
    const contacts = await all(box, `/kases/${kase}/parties`, 'parties');
    expect(contacts.map((p) => p.id)).toEqual([idOf('people', '102')]);
    const tracks = await all(box, `/kases/${kase}/tracks`, 'tracks');
    expect(tracks.map((t) => t.description)).toEqual(['Installation checklist']);
  });

  it('a re-run changes nothing; an attachment added to a note in the export is uploaded on the next', async () => {
    const again = await migrate();
    expect(again.setup?.created).toEqual([]);
    expect(again.steps.every((s) => s.created + s.updated + s.rejected === 0)).toBe(true);

    const file = join(work, 'samples/v1/parties.xml');
    const xml = readFileSync(file, 'utf8').replace(
      '<note>Called about the engine.</note>',
      '<note>Called about the engine.</note>\n        <attachments><attachment><id>810</id><filename>call-notes.txt</filename><contentType>text/plain</contentType></attachment></attachments>',
    );
    writeFileSync(file, xml);
    mkdirSync(join(work, 'samples/v1/attachments/810'), { recursive: true });
    writeFileSync(join(work, 'samples/v1/attachments/810/call-notes.txt'), 'Asked about lead times.\n');
    const added = await migrate();
    expect(added.steps.find((s) => s.step === 'notes')).toMatchObject({ updated: 1, unchanged: 2, created: 0 });
    const entry = (await box.v2('GET', `/entries/${idOf('notes', '701')}`)).body.entry;
    expect(
      entry.attachments.map((a: { filename: string; contentType: string }) => [a.filename, a.contentType]),
    ).toEqual([['call-notes.txt', 'text/plain']]);
  });

  it('rollback of every run removes the records and what the set-up created', async () => {
    const client = new CrmClient({ baseUrl: box.url, auth: box.token });
    try {
      await runRollback({ stateDir: STATE, all: true }, { client, account: { baseUrl: box.url, account: box.url } });
    } finally {
      await client.close();
    }
    const types = (await all(box, '/activitytypes', 'activityTypes')).map((t) => t.name);
    expect(types).not.toContain('Task completed');
    expect(types).not.toContain('Email');
    expect((await all(box, '/trackdefinitions', 'trackDefinitions')).map((t) => t.description)).not.toContain(
      'Installation checklist',
    );
    expect(await all(box, '/kases', 'kases')).toEqual([]);
  });
});

describe('the v1 history imported by one of its authors', () => {
  it("keeps that author's notes byte for byte and heads the other author's", async () => {
    const own = await startTestSandbox({ tokens: ['jo-token'] });
    try {
      // Jo Smith, who wrote most of the v1 history, imports it with a token of her own.
      const team = own.store.teams.all()[0] as { id: number };
      const jo = own.store.users.insert({
        username: 'jsmith',
        name: 'Jo Smith',
        email: 'jo@sandbox.example',
        role: 'Administrator',
        defaultTeamId: team.id,
        teamIds: [team.id],
      });
      addPersonalToken(own.context, 'jo-token', jo.id);
      const state = join(work, 'state-jo');
      const client = new CrmClient({ baseUrl: own.url, auth: 'jo-token' });
      const summary = await runImport(
        { source: { kind: 'plan', planFile: PLAN }, stateDir: state },
        { client, account: { baseUrl: own.url, account: own.url } },
      ).finally(() => client.close());
      expect(summary.stopped).toBeNull();
      const entries = new Map((await all(own, '/entries', 'entries')).map((e) => [e.id as number, e]));
      const STEP: Record<string, string> = {
        705: 'kase-notes',
        706: 'kase-notes',
        709: 'kase-notes',
        703: 'history',
        704: 'history',
        708: 'history',
        710: 'opportunity-notes',
      };
      const authors = new Set<string>();
      for (const item of historyItems()) {
        const id = idOfIn(state, STEP[item.id] ?? 'notes', item.id);
        const text = item.subject === '' ? item.note : `${item.subject}\n\n${item.note}`;
        const expected =
          item.creator === 'jsmith'
            ? text
            : `Originally by ${item.creatorName} (${item.creator}) on ${item.entryDate}\n\n${text}`;
        expect(entries.get(id)?.content, item.id).toBe(expected);
        authors.add(item.creator);
      }
      expect([...authors].sort()).toEqual(['ajones', 'jsmith']);
    } finally {
      await own.close();
    }
  });
});
