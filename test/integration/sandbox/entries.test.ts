import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { EntryRec, KaseRec, OpportunityRec, PartyRec } from '../../../src/sandbox/index.ts';
import { contentDisposition } from '../../../src/sandbox/routes/entries.ts';
import {
  addEntry,
  addKase as addStoredKase,
  addOpportunity as addStoredOpportunity,
  addParty as addStoredParty,
} from '../../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

const START = Date.parse('2025-03-01T10:00:00Z');

/** A sandbox whose clock the tests move by hand. */
async function startClocked(
  options: Parameters<typeof startTestSandbox>[0] = {},
): Promise<{ sandbox: TestSandbox; advance: (ms: number) => void }> {
  let now = START;
  const sandbox = await startTestSandbox({ now: () => new Date(now), ...options });
  return { sandbox, advance: (ms) => (now += ms) };
}

// Parties, projects and opportunities have their own route modules; these tests put records into
// the store directly so they depend on nothing but the entry routes.
// Records put straight into the store: no owner, dated 2025-01-01, which these tests rely on.
const STORED = { ownerId: null, createdAt: '2025-01-01T00:00:00Z', updatedAt: '2025-01-01T00:00:00Z' };

function addParty(sandbox: TestSandbox, lastName: string): PartyRec {
  return addStoredParty(sandbox.store, { ...STORED, firstName: 'Pat', lastName });
}

function addKase(sandbox: TestSandbox, partyId: number, name: string): KaseRec {
  return addStoredKase(sandbox.store, partyId, { ...STORED, name });
}

function addOpportunity(sandbox: TestSandbox, partyId: number, name: string): OpportunityRec {
  const milestone = sandbox.store.milestones.all()[0];
  if (!milestone) throw new Error('the seeded account has no milestone');
  return addStoredOpportunity(sandbox.store, partyId, {
    ...STORED,
    name,
    milestoneId: milestone.id,
    value: null,
    expectedCloseOn: null,
    probability: 10,
  });
}

function addStoredEntry(sandbox: TestSandbox, fields: Partial<EntryRec>): EntryRec {
  const admin = sandbox.store.users.all()[0];
  if (!admin) throw new Error('the seeded account has no user');
  const at = '2025-02-01T00:00:00Z';
  return addEntry(sandbox.store, {
    content: 'stored',
    creatorId: admin.id,
    entryAt: at,
    createdAt: at,
    updatedAt: at,
    ...fields,
  });
}

async function upload(
  sandbox: TestSandbox,
  name: string,
  bytes: Buffer,
  type = 'application/octet-stream',
): Promise<string> {
  const answer = await sandbox.call('POST', '/api/v2/attachments/upload', {
    rawBody: bytes,
    headers: { 'content-type': type, 'x-attachment-filename': encodeURIComponent(name) },
  });
  expect(answer.status).toBe(200);
  expect(Object.keys(answer.body)).toEqual(['upload']);
  expect(typeof answer.body.upload.token).toBe('string');
  return answer.body.upload.token as string;
}

function fieldsOf(body: { errors?: Array<{ field: string }> }): string[] {
  return (body.errors ?? []).map((e) => e.field);
}

describe('spec 4.4 entries: create, read and lists', () => {
  let sandbox: TestSandbox;
  let advance: (ms: number) => void;
  let party: PartyRec;
  let other: PartyRec;
  let kase: KaseRec;
  let opportunity: OpportunityRec;

  beforeAll(async () => {
    ({ sandbox, advance } = await startClocked());
    party = addParty(sandbox, 'Entryson');
    other = addParty(sandbox, 'Otherby');
    kase = addKase(sandbox, party.id, 'Roll-out');
    opportunity = addOpportunity(sandbox, party.id, 'Big deal');
  });
  afterAll(() => sandbox.close());

  it('creates a note with defaults: 201, Location, creator, Note activity type, entryAt now', async () => {
    const answer = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, content: 'First call' },
    });
    expect(answer.status).toBe(201);
    const entry = answer.body.entry;
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/entries/${entry.id}`);
    expect(entry).toMatchObject({
      type: 'note',
      content: 'First call',
      creator: { username: 'admin', name: 'Alex Admin' },
      activityType: { id: -1, name: 'Note' },
      entryAt: '2025-03-01T10:00:00Z',
      createdAt: '2025-03-01T10:00:00Z',
      party: { id: party.id, type: 'person', firstName: 'Pat', lastName: 'Entryson' },
      attachments: [],
      participants: [],
    });
    expect(entry).not.toHaveProperty('kase');
    expect(entry).not.toHaveProperty('subject');

    const read = await sandbox.v2('GET', `/entries/${entry.id}`);
    expect(read.status).toBe(200);
    expect(read.body.entry).toEqual(entry);
  });

  it('files notes on projects and opportunities and lists them per record', async () => {
    const onKase = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', kase: { id: kase.id }, content: 'kickoff' },
    });
    const onOpp = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', opportunity: { id: opportunity.id }, content: 'quote sent' },
    });
    expect(onKase.status).toBe(201);
    expect(onKase.body.entry.kase).toEqual({ id: kase.id, name: 'Roll-out' });
    expect(onKase.body.entry).not.toHaveProperty('party');
    expect(onOpp.body.entry.opportunity).toEqual({ id: opportunity.id, name: 'Big deal' });

    const kaseList = await sandbox.v2('GET', `/kases/${kase.id}/entries`);
    expect(kaseList.body.entries.map((e: { id: number }) => e.id)).toEqual([onKase.body.entry.id]);
    const oppList = await sandbox.v2('GET', `/opportunities/${opportunity.id}/entries`);
    expect(oppList.body.entries.map((e: { id: number }) => e.id)).toEqual([onOpp.body.entry.id]);
  });

  it('embedding a link shows its key even when the entry is not filed there', async () => {
    const made = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: other.id }, content: 'x' },
    });
    const read = await sandbox.v2('GET', `/entries/${made.body.entry.id}?embed=kase,opportunity,creator,activityType`);
    expect(read.status).toBe(200);
    expect(read.body.entry.kase).toBeNull();
    expect(read.body.entry.opportunity).toBeNull();
    const bad = await sandbox.v2('GET', `/entries/${made.body.entry.id}?embed=tags`);
    expect(bad.status).toBe(400);
    expect(bad.body.message).toMatch(/unknown embed value "tags"/);
  });

  it('lists all entries newest entryAt first, with pages and a Link header', async () => {
    const old = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: other.id }, content: 'back-dated', entryAt: '2020-01-01T08:00:00+02:00' },
    });
    expect(old.body.entry.entryAt).toBe('2020-01-01T06:00:00Z');
    advance(60_000);
    const newest = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: other.id }, content: 'latest' },
    });

    const all = await sandbox.v2('GET', '/entries');
    const times = all.body.entries.map((e: { entryAt: string }) => Date.parse(e.entryAt));
    expect(times).toEqual([...times].sort((a, b) => b - a));
    expect(all.body.entries[0].id).toBe(newest.body.entry.id);
    expect(all.body.entries.at(-1).id).toBe(old.body.entry.id);

    const page = await sandbox.v2('GET', '/entries?perPage=2');
    expect(page.body.entries).toHaveLength(2);
    expect(page.headers.link).toMatch(/page=2.*rel="next"/);
  });

  it('lists the entries of one party only, including emails filed on several parties', async () => {
    const email = addStoredEntry(sandbox, {
      type: 'email',
      subject: 'Hello',
      activityTypeId: null,
      partyIds: [party.id, other.id],
    });
    const list = await sandbox.v2('GET', `/parties/${other.id}/entries`);
    expect(list.status).toBe(200);
    const ids = list.body.entries.map((e: { id: number }) => e.id);
    expect(ids).toContain(email.id);
    for (const entry of list.body.entries) {
      const filed = entry.party?.id === other.id || entry.parties?.some((p: { id: number }) => p.id === other.id);
      expect(filed).toBe(true);
    }
    const shown = list.body.entries.find((e: { id: number }) => e.id === email.id);
    expect(shown).toMatchObject({ type: 'email', subject: 'Hello', activityType: null });
    expect(shown).not.toHaveProperty('party');
    expect(shown.parties.map((p: { id: number }) => p.id)).toEqual([party.id, other.id]);
  });

  it('answers 404 for entries of unknown records and unknown entries', async () => {
    for (const path of [
      '/parties/999999/entries',
      '/kases/999999/entries',
      '/opportunities/999999/entries',
      '/entries/999999',
      '/entries/abc',
    ]) {
      const answer = await sandbox.v2('GET', path);
      expect(answer.status, path).toBe(404);
      expect(typeof answer.body.message).toBe('string');
    }
    // A party id is not a project id.
    expect((await sandbox.v2('GET', `/kases/${party.id}/entries`)).status).toBe(404);
  });

  it('refuses invalid create bodies with 422 naming each field', async () => {
    const cases: Array<[unknown, string[]]> = [
      [{ party: { id: party.id }, content: 'x' }, ['type']],
      [{ type: 'email', party: { id: party.id }, content: 'x' }, ['type']],
      [{ type: 'note', content: 'x' }, ['party']],
      [{ type: 'note', party: { id: party.id }, kase: { id: kase.id }, content: 'x' }, ['party']],
      [{ type: 'note', party: { id: 999999 }, content: 'x' }, ['party.id']],
      [{ type: 'note', party: 12, content: 'x' }, ['party']],
      [{ type: 'note', party: { id: party.id }, content: 5 }, ['content']],
      [{ type: 'note', party: { id: party.id }, content: 'x', activityType: 424242 }, ['activityType']],
      [{ type: 'note', party: { id: party.id }, content: 'x', activityType: 'Call' }, ['activityType']],
      [{ type: 'note', party: { id: party.id }, content: 'x', entryAt: 'yesterday' }, ['entryAt']],
      [{ type: 'note', party: { id: party.id }, content: 'x', entryAt: '2025-01-01 10:00:00' }, ['entryAt']],
      [{ type: 'note', party: { id: party.id }, content: 'x', colour: 'red' }, ['colour']],
      [{ type: 'note', party: { id: party.id }, content: 'x', subject: 'Hi' }, ['subject']],
      [{ type: 'note', party: { id: party.id }, content: '   ' }, ['content']],
      [
        { type: 'note', party: { id: party.id }, content: 'x', attachments: [{ token: 'no-such-token' }] },
        ['attachments[0].token'],
      ],
      [{ type: 'note', party: { id: party.id }, content: 'x', attachments: [{ id: 5 }] }, ['attachments[0].id']],
      [{ type: 'note', party: { id: party.id }, content: 'x', attachments: 'file' }, ['attachments']],
    ];
    for (const [entry, fields] of cases) {
      const answer = await sandbox.v2('POST', '/entries', { entry });
      expect(answer.status, JSON.stringify(entry)).toBe(422);
      expect(fieldsOf(answer.body), JSON.stringify(entry)).toEqual(fields);
      expect(answer.body.errors[0].resource).toBe('entry');
    }
  });

  it('answers 400 when the body is not wrapped in "entry" or is not JSON', async () => {
    const unwrapped = await sandbox.v2('POST', '/entries', { type: 'note', party: { id: party.id }, content: 'x' });
    expect(unwrapped.status).toBe(400);
    expect(unwrapped.body.message).toMatch(/"entry"/);
    const broken = await sandbox.call('POST', '/api/v2/entries', {
      rawBody: '{"entry": ',
      headers: { 'content-type': 'application/json' },
    });
    expect(broken.status).toBe(400);
    expect(typeof broken.body.message).toBe('string');
  });

  it('moves lastContactedAt forward for activity types that count as contact, never back', async () => {
    const fresh = addParty(sandbox, 'Contacted');
    await sandbox.v2('POST', '/entries', { entry: { type: 'note', party: { id: fresh.id }, content: 'plain note' } });
    expect(sandbox.store.parties.get(fresh.id)?.lastContactedAt).toBeNull();

    const meeting = await sandbox.v2('POST', '/entries', {
      entry: {
        type: 'note',
        party: { id: fresh.id },
        content: 'met',
        activityType: -2,
        entryAt: '2025-02-10T09:00:00Z',
      },
    });
    expect(meeting.body.entry.activityType).toEqual({ id: -2, name: 'Meeting' });
    expect(sandbox.store.parties.get(fresh.id)?.lastContactedAt).toBe('2025-02-10T09:00:00Z');

    await sandbox.v2('POST', '/entries', {
      entry: {
        type: 'note',
        party: { id: fresh.id },
        content: 'older call',
        activityType: -3,
        entryAt: '2024-12-01T09:00:00Z',
      },
    });
    expect(sandbox.store.parties.get(fresh.id)?.lastContactedAt).toBe('2025-02-10T09:00:00Z');

    const freshKase = addKase(sandbox, fresh.id, 'Contact project');
    const freshOpp = addOpportunity(sandbox, fresh.id, 'Contact deal');
    await sandbox.v2('POST', '/entries', {
      entry: {
        type: 'note',
        kase: { id: freshKase.id },
        content: 'call',
        activityType: { id: -3 },
        entryAt: '2025-02-20T09:00:00Z',
      },
    });
    await sandbox.v2('POST', '/entries', {
      entry: {
        type: 'note',
        opportunity: { id: freshOpp.id },
        content: 'call',
        activityType: -3,
        entryAt: '2025-02-21T09:00:00Z',
      },
    });
    expect(sandbox.store.kases.get(freshKase.id)?.lastContactedAt).toBe('2025-02-20T09:00:00Z');
    expect(sandbox.store.opportunities.get(freshOpp.id)?.lastContactedAt).toBe('2025-02-21T09:00:00Z');
    // Only the record the note is filed on is touched.
    expect(sandbox.store.parties.get(fresh.id)?.lastContactedAt).toBe('2025-02-10T09:00:00Z');
  });
});

describe('spec 4.4 attachments: upload, attach, download', () => {
  let sandbox: TestSandbox;
  let party: PartyRec;

  beforeAll(async () => {
    ({ sandbox } = await startClocked());
    party = addParty(sandbox, 'Filer');
  });
  afterAll(() => sandbox.close());

  it('round-trips binary bytes: upload, attach to a note, download the same bytes', async () => {
    const bytes = Buffer.from(Array.from({ length: 512 }, (_, i) => i % 256));
    const token = await upload(sandbox, 'data.bin', bytes);
    const made = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, attachments: [{ token }] },
    });
    expect(made.status).toBe(201);
    const [attachment] = made.body.entry.attachments;
    expect(attachment).toEqual({
      id: expect.any(Number),
      filename: 'data.bin',
      contentType: 'application/octet-stream',
      size: 512,
    });
    expect(made.body.entry.content).toBe('');

    const download = await fetch(`${sandbox.url}/api/v2/attachments/${attachment.id}`, {
      headers: { authorization: `Bearer ${sandbox.token}` },
    });
    expect(download.status).toBe(200);
    expect(download.headers.get('content-type')).toBe('application/octet-stream');
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="data.bin"');
    expect(Buffer.from(await download.arrayBuffer()).equals(bytes)).toBe(true);
  });

  it('keeps a non-ASCII file name through upload and download (RFC 6266 / 5987)', async () => {
    const name = 'Übersicht «Angebot» 2025 €.pdf';
    const token = await upload(sandbox, name, Buffer.from('%PDF-1.4 fake'), 'application/pdf');
    const made = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, content: 'offer', attachments: [{ token }] },
    });
    const [attachment] = made.body.entry.attachments;
    expect(attachment.filename).toBe(name);
    expect(attachment.contentType).toBe('application/pdf');

    const download = await sandbox.call('GET', `/api/v2/attachments/${attachment.id}`);
    const header = String(download.headers['content-disposition']);
    expect(header).toMatch(/^attachment; filename="[\x20-\x7e]+"; filename\*=UTF-8''/);
    const encoded = /filename\*=UTF-8''(.+)$/.exec(header)?.[1] ?? '';
    expect(encoded).toMatch(/^[A-Za-z0-9!#$&+\-.^_`|~%]+$/);
    expect(decodeURIComponent(encoded)).toBe(name);
    expect(download.text).toBe('%PDF-1.4 fake');
  });

  it('quotes and escapes ASCII names and replaces other characters in the fallback', () => {
    expect(contentDisposition('say "hi"\\.txt')).toBe('attachment; filename="say \\"hi\\"\\\\.txt"');
    expect(contentDisposition("it's (1).txt")).toBe('attachment; filename="it\'s (1).txt"');
    expect(contentDisposition('naïve.txt')).toBe('attachment; filename="na_ve.txt"; filename*=UTF-8\'\'na%C3%AFve.txt');
  });

  it('stores a JSON or text upload as bytes without parsing it', async () => {
    const raw = Buffer.from('{"not": "parsed",  "spacing": [1,2]}');
    const jsonToken = await upload(sandbox, 'data.json', raw, 'application/json');
    const textToken = await upload(sandbox, 'readme.txt', Buffer.from('plain\ntext'), 'text/plain; charset=utf-8');
    const made = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, attachments: [{ token: jsonToken }, { token: textToken }] },
    });
    const [json, text] = made.body.entry.attachments;
    expect(json.size).toBe(raw.length);
    expect(text.contentType).toBe('text/plain; charset=utf-8');
    const download = await sandbox.call('GET', `/api/v2/attachments/${json.id}`);
    expect(download.text).toBe(raw.toString());
  });

  it('uses an upload token once only', async () => {
    const token = await upload(sandbox, 'once.txt', Buffer.from('once'));
    const first = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, attachments: [{ token }] },
    });
    expect(first.status).toBe(201);
    const again = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, attachments: [{ token }] },
    });
    expect(again.status).toBe(422);
    expect(fieldsOf(again.body)).toEqual(['attachments[0].token']);
    const twice = await upload(sandbox, 'twice.txt', Buffer.from('twice'));
    const doubled = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, attachments: [{ token: twice }, { token: twice }] },
    });
    expect(doubled.status).toBe(422);
    expect(fieldsOf(doubled.body)).toEqual(['attachments[1].token']);
  });

  it('refuses uploads without a usable file name with 400', async () => {
    const missing = await sandbox.call('POST', '/api/v2/attachments/upload', {
      rawBody: Buffer.from('x'),
      headers: { 'content-type': 'text/plain' },
    });
    expect(missing.status).toBe(400);
    expect(missing.body.message).toMatch(/X-Attachment-Filename/);
    for (const bad of ['%E0%A4%A', 'a%0Ab.txt', '%20', 'caf\u00e9.txt']) {
      const answer = await sandbox.call('POST', '/api/v2/attachments/upload', {
        rawBody: Buffer.from('x'),
        headers: { 'content-type': 'text/plain', 'x-attachment-filename': bad },
      });
      expect(answer.status, bad).toBe(400);
      expect(answer.body.message, bad).toMatch(/X-Attachment-Filename/);
    }
  });

  it('asks for a bearer token on uploads like on every other endpoint', async () => {
    const before = sandbox.store.uploads.size;
    const answer = await sandbox.call('POST', '/api/v2/attachments/upload', {
      rawBody: Buffer.from('x'),
      token: null,
      headers: { 'content-type': 'text/plain', 'x-attachment-filename': 'x.txt' },
    });
    expect(answer.status).toBe(401);
    expect(sandbox.store.uploads.size).toBe(before);
  });

  it('defaults the content type of an upload sent without one', async () => {
    const answer = await sandbox.call('POST', '/api/v2/attachments/upload', {
      rawBody: Buffer.from('bytes'),
      headers: { 'x-attachment-filename': 'plain' },
    });
    expect(answer.status).toBe(200);
    expect(sandbox.store.uploads.get(answer.body.upload.token)?.contentType).toBe('application/octet-stream');
  });

  it('answers 404 for an unknown attachment', async () => {
    const answer = await sandbox.v2('GET', '/attachments/999999');
    expect(answer.status).toBe(404);
    expect(answer.body.message).toMatch(/no attachment/);
  });
});

describe('spec 4.4 attachments: body limit', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ bodyLimitBytes: 1024 });
  });
  afterAll(() => sandbox.close());

  it('answers 413 with a JSON body past the body limit and accepts an upload at the limit', async () => {
    const tooBig = await sandbox.call('POST', '/api/v2/attachments/upload', {
      rawBody: Buffer.alloc(1025, 1),
      headers: { 'content-type': 'application/octet-stream', 'x-attachment-filename': 'big.bin' },
    });
    expect(tooBig.status).toBe(413);
    expect(String(tooBig.headers['content-type'])).toMatch(/application\/json/);
    expect(typeof tooBig.body.message).toBe('string');
    expect(sandbox.store.uploads.size).toBe(0);

    const fits = await sandbox.call('POST', '/api/v2/attachments/upload', {
      rawBody: Buffer.alloc(1024, 1),
      headers: { 'content-type': 'application/octet-stream', 'x-attachment-filename': 'fits.bin' },
    });
    expect(fits.status).toBe(200);
  });
});

describe('spec 4.4 entries: update', () => {
  let sandbox: TestSandbox;
  let advance: (ms: number) => void;
  let party: PartyRec;

  beforeAll(async () => {
    ({ sandbox, advance } = await startClocked());
    party = addParty(sandbox, 'Updater');
  });
  afterAll(() => sandbox.close());

  it('changes only what the body names and stamps updatedAt', async () => {
    const made = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, content: 'draft', activityType: -3 },
    });
    advance(5_000);
    const updated = await sandbox.v2('PUT', `/entries/${made.body.entry.id}`, { entry: { content: 'final' } });
    expect(updated.status).toBe(200);
    expect(updated.body.entry).toMatchObject({
      content: 'final',
      activityType: { id: -3, name: 'Call' },
      entryAt: made.body.entry.entryAt,
      createdAt: made.body.entry.createdAt,
      updatedAt: '2025-03-01T10:00:05Z',
    });
    const moved = await sandbox.v2('PUT', `/entries/${made.body.entry.id}`, {
      entry: { entryAt: '2025-02-01T12:00:00Z', activityType: -2 },
    });
    expect(moved.body.entry).toMatchObject({
      content: 'final',
      entryAt: '2025-02-01T12:00:00Z',
      activityType: { id: -2 },
    });
  });

  it('adds attachments by token and removes them by id with _delete', async () => {
    const first = await upload(sandbox, 'a.txt', Buffer.from('A'));
    const made = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, content: 'files', attachments: [{ token: first }] },
    });
    const [a] = made.body.entry.attachments;
    const blobId = sandbox.store.entries.get(made.body.entry.id)?.attachments[0]?.blobId ?? '';
    expect(sandbox.store.blobs.has(blobId)).toBe(true);

    const second = await upload(sandbox, 'b.txt', Buffer.from('B'));
    const added = await sandbox.v2('PUT', `/entries/${made.body.entry.id}`, {
      entry: { attachments: [{ id: a.id }, { token: second }] },
    });
    expect(added.status).toBe(200);
    expect(added.body.entry.attachments.map((x: { filename: string }) => x.filename)).toEqual(['a.txt', 'b.txt']);

    const removed = await sandbox.v2('PUT', `/entries/${made.body.entry.id}`, {
      entry: { attachments: [{ id: a.id, _delete: true }] },
    });
    expect(removed.body.entry.attachments.map((x: { filename: string }) => x.filename)).toEqual(['b.txt']);
    expect(sandbox.store.blobs.has(blobId)).toBe(false);
    expect((await sandbox.v2('GET', `/attachments/${a.id}`)).status).toBe(404);

    const foreign = await sandbox.v2('PUT', `/entries/${made.body.entry.id}`, {
      entry: { attachments: [{ id: 424242, _delete: true }] },
    });
    expect(foreign.status).toBe(422);
    expect(fieldsOf(foreign.body)).toEqual(['attachments[0].id']);
  });

  it('refuses to leave an entry without content and attachments (422), and changes nothing', async () => {
    const token = await upload(sandbox, 'only.txt', Buffer.from('only'));
    const made = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, attachments: [{ token }] },
    });
    const [only] = made.body.entry.attachments;
    const answer = await sandbox.v2('PUT', `/entries/${made.body.entry.id}`, {
      entry: { attachments: [{ id: only.id, _delete: true }] },
    });
    expect(answer.status).toBe(422);
    expect(fieldsOf(answer.body)).toEqual(['attachments']);
    expect(answer.body.message).toMatch(/delete the entry instead/);
    expect(sandbox.store.entries.get(made.body.entry.id)?.attachments).toHaveLength(1);

    const textOnly = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, content: 'words' },
    });
    const emptied = await sandbox.v2('PUT', `/entries/${textOnly.body.entry.id}`, { entry: { content: '' } });
    expect(emptied.status).toBe(422);
    expect(fieldsOf(emptied.body)).toEqual(['content']);
  });

  it('refuses changes to the type, the linked record and unknown properties', async () => {
    const made = await sandbox.v2('POST', '/entries', {
      entry: { type: 'note', party: { id: party.id }, content: 'fixed' },
    });
    const cases: Array<[unknown, string[]]> = [
      [{ type: 'email' }, ['type']],
      [{ party: { id: party.id } }, ['party']],
      [{ subject: 'Hi' }, ['subject']],
      [{ creator: { id: 1 } }, ['creator']],
      [{ mood: 'happy' }, ['mood']],
      [{ entryAt: 12 }, ['entryAt']],
      [{ activityType: 999999 }, ['activityType']],
    ];
    for (const [entry, fields] of cases) {
      const answer = await sandbox.v2('PUT', `/entries/${made.body.entry.id}`, { entry });
      expect(answer.status, JSON.stringify(entry)).toBe(422);
      expect(fieldsOf(answer.body), JSON.stringify(entry)).toEqual(fields);
    }
    expect(sandbox.store.entries.get(made.body.entry.id)?.content).toBe('fixed');
    // The unchanged type may be sent back as read.
    expect(
      (await sandbox.v2('PUT', `/entries/${made.body.entry.id}`, { entry: { type: 'note', content: 'ok' } })).status,
    ).toBe(200);
  });

  it('updates emails (subject, content) but not their activity type', async () => {
    const email = addStoredEntry(sandbox, {
      type: 'email',
      subject: 'Re: offer',
      content: 'body',
      activityTypeId: null,
      partyIds: [party.id],
    });
    const answer = await sandbox.v2('PUT', `/entries/${email.id}`, {
      entry: { subject: 'Re: final offer', content: 'new body' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.entry).toMatchObject({ type: 'email', subject: 'Re: final offer', content: 'new body' });
    const typed = await sandbox.v2('PUT', `/entries/${email.id}`, { entry: { activityType: -2 } });
    expect(typed.status).toBe(422);
    expect(fieldsOf(typed.body)).toEqual(['activityType']);
  });

  it('refuses to update completed-task entries', async () => {
    const task = addStoredEntry(sandbox, {
      type: 'task',
      content: 'Call back',
      activityTypeId: null,
      partyId: party.id,
    });
    const answer = await sandbox.v2('PUT', `/entries/${task.id}`, { entry: { content: 'changed' } });
    expect(answer.status).toBe(422);
    expect(fieldsOf(answer.body)).toEqual(['type']);
    expect(sandbox.store.entries.get(task.id)?.content).toBe('Call back');
  });

  it('answers 404 when updating an unknown entry', async () => {
    expect((await sandbox.v2('PUT', '/entries/999999', { entry: { content: 'x' } })).status).toBe(404);
  });
});

describe('spec 4.4 entries: delete', () => {
  it('deletes an entry without attachments at once (204)', async () => {
    const { sandbox } = await startClocked();
    try {
      const party = addParty(sandbox, 'Deleter');
      const made = await sandbox.v2('POST', '/entries', {
        entry: { type: 'note', party: { id: party.id }, content: 'bye' },
      });
      const answer = await sandbox.v2('DELETE', `/entries/${made.body.entry.id}`);
      expect(answer.status).toBe(204);
      expect(answer.text).toBe('');
      expect((await sandbox.v2('GET', `/entries/${made.body.entry.id}`)).status).toBe(404);
      expect((await sandbox.v2('DELETE', `/entries/${made.body.entry.id}`)).status).toBe(404);
    } finally {
      await sandbox.close();
    }
  });

  it('schedules the delete of an entry with attachments: 202 + job, done when the job completes', async () => {
    const { sandbox, advance } = await startClocked({ jobDurationMs: 1_000 });
    try {
      const party = addParty(sandbox, 'Scheduled');
      const token = await upload(sandbox, 'keep.txt', Buffer.from('keep'));
      const made = await sandbox.v2('POST', '/entries', {
        entry: { type: 'note', party: { id: party.id }, attachments: [{ token }] },
      });
      const attachmentId = made.body.entry.attachments[0].id;

      const answer = await sandbox.v2('DELETE', `/entries/${made.body.entry.id}`);
      expect(answer.status).toBe(202);
      const location = String(answer.headers.location);
      expect(location).toMatch(new RegExp(`^${sandbox.url}/api/v2/jobs/[0-9a-f-]{36}$`));
      const jobPath = location.slice(sandbox.url.length);

      const running = await sandbox.call('GET', jobPath);
      expect(running.body.job).toMatchObject({ status: 'in_progress', action: 'Deleting Entry' });
      expect((await sandbox.v2('GET', `/entries/${made.body.entry.id}`)).status).toBe(200);

      advance(1_000);
      const done = await sandbox.call('GET', jobPath);
      expect(done.body.job).toMatchObject({ status: 'completed', progress: 100 });
      expect((await sandbox.v2('GET', `/entries/${made.body.entry.id}`)).status).toBe(404);
      expect((await sandbox.v2('GET', `/attachments/${attachmentId}`)).status).toBe(404);
      expect(sandbox.store.blobs.size).toBe(0);
    } finally {
      await sandbox.close();
    }
  });

  it('deletes an entry with attachments at once when scheduled deletes are off', async () => {
    const { sandbox } = await startClocked({ scheduledDeletes: false });
    try {
      const party = addParty(sandbox, 'Immediate');
      const token = await upload(sandbox, 'gone.txt', Buffer.from('gone'));
      const made = await sandbox.v2('POST', '/entries', {
        entry: { type: 'note', party: { id: party.id }, attachments: [{ token }] },
      });
      expect((await sandbox.v2('DELETE', `/entries/${made.body.entry.id}`)).status).toBe(204);
      expect(sandbox.store.entries.has(made.body.entry.id)).toBe(false);
      expect(sandbox.store.blobs.size).toBe(0);
    } finally {
      await sandbox.close();
    }
  });
});
