import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSavedState } from '../../../src/sandbox/storage/journal.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

describe('sandbox core: authentication (spec 5) and error bodies', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ tokens: ['test-token-abcdef'] });
  });
  afterAll(() => sandbox.close());

  it('accepts the configured personal token', async () => {
    const jobs = await sandbox.call('GET', '/api/v2/jobs/unknown');
    expect(jobs.status).toBe(404);
    expect(jobs.body.message).toMatch(/no job/);
  });

  it('answers 401 with WWW-Authenticate for a missing token', async () => {
    const answer = await sandbox.call('GET', '/api/v2/parties', { token: null });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/^Bearer realm="crm", error="invalid_request"/);
  });

  it('answers 401 for an unknown token', async () => {
    const answer = await sandbox.call('GET', '/api/v2/parties', { token: 'nope-nope-nope' });
    expect(answer.status).toBe(401);
    expect(answer.headers['www-authenticate']).toMatch(/error="invalid_token"/);
  });

  it('merges repeated slashes in the path, as the web servers in front of the service do', async () => {
    const created = await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Slash//Ltd' } });
    const list = await sandbox.call('GET', '/api/v2//parties?q=Slash//Ltd');
    expect(list.status).toBe(200);
    expect(list.body.parties.map((p: any) => p.id)).toEqual([created.body.party.id]);
    expect((await sandbox.call('GET', `//api///v2/parties/${created.body.party.id}`)).body.party.name).toBe(
      'Slash//Ltd',
    );
    // The merged path is the one authentication sees.
    expect((await sandbox.call('GET', '//api/v2/parties', { token: null })).status).toBe(401);
  });

  it('answers 404 with a JSON body for an unknown endpoint', async () => {
    const answer = await sandbox.v2('GET', '/no-such-thing');
    expect(answer.status).toBe(404);
    expect(answer.body.message).toBe('no such endpoint: GET /api/v2/no-such-thing');
  });
});

describe('sandbox core: state in a data file', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-sandbox-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('writes the seeded account to the data file and reads it back on restart', async () => {
    const file = join(dir, 'state.json');
    const first = await startTestSandbox({ dataFile: file, tokens: ['persist-token-1'] });
    const users = first.store.users.all().map((u) => u.username);
    first.store.taskCategories.insert({ name: 'Remembered', colour: '#000000' });
    await first.close();
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.format).toBe('crm-ferry-sandbox/2');

    const second = await startTestSandbox({ dataFile: file, tokens: ['persist-token-1'] });
    expect(second.store.users.all().map((u) => u.username)).toEqual(users);
    // close() writes the whole state, changes made without a request included.
    expect(second.store.taskCategories.all().some((c) => c.name === 'Remembered')).toBe(true);
    await second.close();

    const reset = await startTestSandbox({ dataFile: file, reset: true });
    expect(reset.store.users.size).toBe(3);
    await reset.close();
  });

  it('refuses a data file it did not write', async () => {
    const file = join(dir, 'foreign.json');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, '{"hello": 1}'));
    await expect(startTestSandbox({ dataFile: file })).rejects.toMatchObject({ code: 'SANDBOX_STATE' });
  });
});

describe('sandbox core: request bodies', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it('refuses a property beside the resource wrapper instead of dropping it', async () => {
    const answer = await sandbox.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Beside Ltd' },
      tags: [{ name: 'x' }],
    });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toBe('unexpected "tags" beside "party": put it inside "party"');
    expect(sandbox.store.parties.all().some((p) => p.name === 'Beside Ltd')).toBe(false);
  });

  it.each([
    ['not JSON', '{"party": ', 400],
    ['an array', '[1, 2]', 400],
    ['no wrapper', '{"name": "x"}', 400],
  ])('answers a body that is %s with a JSON 4xx', async (_what, raw, status) => {
    const answer = await sandbox.call('POST', '/api/v2/parties', {
      rawBody: raw,
      headers: { 'content-type': 'application/json' },
    });
    expect(answer.status).toBe(status);
    expect(typeof answer.body.message).toBe('string');
  });

  // Many clients send Content-Type: application/json on every request; the service ignores it
  // when there is no body, and so does the sandbox.
  it.each([
    ['GET', 200, undefined],
    ['DELETE', 204, undefined],
    // A write that needs a body says which one it needs.
    ['POST', 400, 'the request body must be a JSON object like {"party": {...}}'],
    ['PUT', 400, 'the request body must be a JSON object like {"party": {...}}'],
  ])('takes %s with Content-Type: application/json and an empty body as no body', async (method, status, message) => {
    const party = await sandbox.v2('POST', '/parties', {
      party: { type: 'organisation', name: `Empty ${method} Ltd` },
    });
    const path = method === 'POST' ? '/api/v2/parties' : `/api/v2/parties/${party.body.party.id}`;
    const answer = await sandbox.call(method, path, {
      rawBody: '',
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(answer.status).toBe(status);
    if (message !== undefined) expect(answer.body.message).toBe(message);
  });
});

describe('sandbox core: scheduled jobs and the data file', () => {
  it('saves the effect of a job that completed during a read', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'ferry-jobs-'));
    const file = join(dir, 'state.json');
    let now = new Date('2026-02-01T10:00:00Z');
    const sandbox = await startTestSandbox({ dataFile: file, now: () => now, jobDurationMs: 1000 });
    try {
      const party = await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Scheduled Ltd' } });
      const id = party.body.party.id as number;
      await sandbox.v2('POST', '/entries', { entry: { type: 'note', party: { id }, content: 'history' } });
      const deleted = await sandbox.v2('DELETE', `/parties/${id}`);
      expect(deleted.status).toBe(202);
      // The answer to the DELETE left after its change was on disk: the party and the job in progress.
      const before = await readSavedState(file);
      expect(before.parties.has(id)).toBe(true);
      expect([...before.jobs.values()].map((j) => j.status)).toEqual(['in_progress']);
      now = new Date(now.getTime() + 5000);
      const job = await sandbox.call('GET', new URL(String(deleted.headers.location)).pathname);
      expect(job.body.job.status).toBe('completed');
      const after = await readSavedState(file);
      expect(after.parties.has(id)).toBe(false);
      expect([...after.jobs.values()].map((j) => j.status)).toEqual(['completed']);
    } finally {
      await sandbox.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});
