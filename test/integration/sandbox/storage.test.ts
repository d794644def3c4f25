import { execFileSync } from 'node:child_process';
import { mkdir, mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSavedState } from '../../../src/sandbox/storage/journal.ts';
import { fillWithAttachments } from '../../helpers/attachment-fill.ts';
import { startTestSandbox } from '../../helpers/sandbox.ts';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-storage-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

const mode = async (path: string): Promise<string> => ((await stat(path)).mode & 0o777).toString(8);

async function upload(sandbox: Awaited<ReturnType<typeof startTestSandbox>>, bytes: Buffer) {
  return sandbox.call('POST', '/api/v2/attachments/upload', {
    rawBody: bytes,
    headers: { 'content-type': 'application/octet-stream', 'x-attachment-filename': 'f.bin' },
  });
}

describe('sandbox storage: files and modes', () => {
  it('creates missing folders 0700 and every state file 0600, with attachments as files beside the state', async () => {
    const file = join(dir, 'new', 'deeper', 'state.json');
    const sandbox = await startTestSandbox({ dataFile: file });
    const bytes = Buffer.from('attachment bytes');
    expect((await upload(sandbox, bytes)).status).toBe(200);
    expect(await mode(join(dir, 'new'))).toBe('700');
    expect(await mode(join(dir, 'new', 'deeper'))).toBe('700');
    expect(await mode(file)).toBe('600');
    expect(await mode(`${file}.log`)).toBe('600');
    expect(await mode(`${file}.blobs`)).toBe('700');
    const blobs = await readdir(`${file}.blobs`);
    expect(blobs).toHaveLength(1);
    expect(await mode(join(`${file}.blobs`, blobs[0]!))).toBe('600');
    expect(await readFile(join(`${file}.blobs`, blobs[0]!))).toEqual(bytes);
    await sandbox.close();
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.blobs).toEqual(blobs);
    expect(JSON.stringify(saved)).not.toContain(bytes.toString('base64'));
    expect((await readdir(join(dir, 'new', 'deeper'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  });

  it('keeps a write in the change log before answering, and replays the log after a crash', async () => {
    const file = join(dir, 'replay.json');
    const sandbox = await startTestSandbox({ dataFile: file });
    const created = await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Logged Ltd' } });
    expect(created.status).toBe(201);
    // No close(): what is on disk now is what a kill -9 would leave.
    const saved = await readSavedState(file);
    expect(saved.parties.get(created.body.party.id)?.name).toBe('Logged Ltd');
    await sandbox.close();
  });
});

describe('sandbox storage: attachments beyond any one document', () => {
  // The same run at 2 GiB is `npm run bench -- sandbox-attachments` (figures in docs/benchmarks.md).
  it('saves and reloads a state holding 48 MiB of attachments, each file beside the state', async () => {
    const file = join(dir, 'many-files', 'state.json');
    const figures = await fillWithAttachments({ file, totalBytes: 48 * 2 ** 20, eachBytes: 8 * 2 ** 20 });
    expect(figures.problems).toEqual([]);
    expect(figures.attachments).toBe(6);
    expect(figures.blobFiles).toBe(6);
    // Records only: the bytes never enter the snapshot.
    expect(figures.snapshotBytes).toBeLessThan(2 ** 20);
    expect((await readdir(join(dir, 'many-files'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 60_000);
});

describe('sandbox storage: a failed save', () => {
  it('answers 503 with the reason, refuses later writes, reports on its own and rejects close()', async () => {
    const file = join(dir, 'failing.json');
    const reports: string[] = [];
    const sandbox = await startTestSandbox({ dataFile: file, report: (message) => reports.push(message) });
    // The blob folder vanishing makes the next upload's save fail.
    await rm(`${file}.blobs`, { recursive: true });
    const failed = await upload(sandbox, Buffer.from('lost'));
    expect(failed.status).toBe(503);
    expect(failed.body.message).toMatch(
      /cannot save its state \(.*ENOENT.*\), so it refuses writes until it is restarted/,
    );
    expect(reports).toHaveLength(1);
    expect(reports[0]).toMatch(/cannot save the state to .*failing\.json/);
    const later = await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Refused Ltd' } });
    expect(later.status).toBe(503);
    expect(sandbox.store.parties.all().some((p) => p.name === 'Refused Ltd')).toBe(false);
    // Reads still work.
    expect((await sandbox.v2('GET', '/parties')).status).toBe(200);
    await expect(sandbox.close()).rejects.toMatchObject({ code: 'SANDBOX_STATE' });
  });
});

describe('sandbox storage: damaged state', () => {
  const good = async (name: string): Promise<string> => {
    const file = join(dir, name);
    const sandbox = await startTestSandbox({ dataFile: file });
    await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'One' } });
    await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Two' } });
    // Left without close(): the two creates are in the change log.
    await sandbox.app.close();
    return file;
  };

  it.each([
    ['a table that is a string', (s: any) => (s.tables.parties = 'x'), /tables\.parties is a string, not a list/],
    ['a table that is null', (s: any) => (s.tables.users = null), /tables\.users is null, not a list/],
    [
      'a record without an id',
      (s: any) => (s.tables.users[0] = { name: 'x' }),
      /tables\.users\[0\]\.id is a undefined/,
    ],
    ['tables that are a list', (s: any) => (s.tables = []), /tables is a list, not an object/],
    ['blobs that are not ids', (s: any) => (s.blobs = ['../../etc/passwd']), /blobs\[0\] is not a blob id/],
    [
      'a deleted list that is a number',
      (s: any) => (s.deleted.parties = 3),
      /deleted\.parties is a number, not a list/,
    ],
    [
      'a record id given twice',
      (s: any) => s.tables.users.push({ ...s.tables.users[0] }),
      /tables\.users\[\d+\]\.id repeats the id \d+ of tables\.users\[0\]/,
    ],
    [
      'a record past the id sequence',
      (s: any) => (s.seq = 5),
      /tables\.\w+\[\d+\]\.id is \d+, past the id sequence \(seq 5\)/,
    ],
  ])('refuses %s with SANDBOX_STATE saying where', async (_what, damage, message) => {
    const file = join(dir, `damaged-${Math.random().toString(36).slice(2)}.json`);
    const sandbox = await startTestSandbox({ dataFile: file });
    await sandbox.close();
    const state = JSON.parse(await readFile(file, 'utf8'));
    damage(state);
    await writeFile(file, JSON.stringify(state));
    await expect(startTestSandbox({ dataFile: file })).rejects.toMatchObject({
      code: 'SANDBOX_STATE',
      message: expect.stringMatching(message),
    });
  });

  it('gives a state saved before boards, stages and lost reasons were stored the seeded ones, and keeps its projects on their stage', async () => {
    const file = join(dir, 'before-boards.json');
    const sandbox = await startTestSandbox({ dataFile: file });
    const party = (await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Old' } })).body.party;
    const kase = (
      await sandbox.v2('POST', '/kases', { kase: { name: 'Old project', party: { id: party.id }, stage: 103 } })
    ).body.kase;
    await sandbox.close();
    const state = JSON.parse(await readFile(file, 'utf8'));
    for (const table of ['boards', 'stages', 'lostReasons']) delete state.tables[table];
    await writeFile(file, JSON.stringify(state));
    const again = await startTestSandbox({ dataFile: file });
    try {
      expect((await again.v2('GET', '/stages')).body.stages.map((s: any) => s.name)).toEqual([
        'Planned',
        'In progress',
        'Review',
        'Done',
      ]);
      expect((await again.v2('GET', '/lostreasons')).body.lostReasons).toHaveLength(5);
      expect((await again.v2('GET', `/kases/${kase.id}`)).body.kase.stage).toEqual({ id: 103, name: 'Review' });
    } finally {
      await again.close();
    }
  });

  it('refuses old-format blobs that are not base64', async () => {
    const file = join(dir, 'old-format.json');
    const sandbox = await startTestSandbox({ dataFile: file });
    await sandbox.close();
    const state = JSON.parse(await readFile(file, 'utf8'));
    await writeFile(file, JSON.stringify({ ...state, format: 'crm-ferry-sandbox/1', blobs: { a: '%%%' } }));
    await expect(startTestSandbox({ dataFile: file })).rejects.toMatchObject({
      code: 'SANDBOX_STATE',
      message: expect.stringMatching(/blobs\.a is not base64/),
    });
  });

  it('drops a torn last log record and keeps the ones before it', async () => {
    const file = await good('torn.json');
    const log = await readFile(`${file}.log`, 'utf8');
    const lines = log.split('\n').filter(Boolean);
    expect(lines.length).toBeGreaterThanOrEqual(2);
    await writeFile(`${file}.log`, `${lines.slice(0, -1).join('\n')}\n${lines.at(-1)!.slice(0, 20)}`);
    const sandbox = await startTestSandbox({ dataFile: file });
    const names = sandbox.store.parties.all().map((p) => p.name);
    expect(names).toContain('One');
    expect(names).not.toContain('Two');
    await sandbox.close();
  });

  it('refuses a log damaged before its last record, naming the line', async () => {
    const file = await good('damaged-log.json');
    const lines = (await readFile(`${file}.log`, 'utf8')).split('\n').filter(Boolean);
    lines[0] = lines[0]!.replace('One', 'Uno');
    await writeFile(`${file}.log`, `${lines.join('\n')}\n`);
    await expect(startTestSandbox({ dataFile: file })).rejects.toMatchObject({
      code: 'SANDBOX_STATE',
      location: { line: 1 },
      message: expect.stringMatching(/change log is damaged at line 1/),
    });
  });
});

describe('sandbox storage: data paths', () => {
  it.each([
    ['under /proc', () => '/proc/self/nothing/sb.json', /cannot live under \/proc/],
    ['a folder', async () => dir, /is a folder, not a regular file/],
    [
      'a FIFO',
      async () => {
        const fifo = join(dir, 'fifo');
        execFileSync('mkfifo', [fifo]);
        return fifo;
      },
      /is a FIFO, not a regular file/,
    ],
    [
      'below a regular file',
      async () => {
        await writeFile(join(dir, 'plain'), 'x');
        return join(dir, 'plain', 'sub', 'sb.json');
      },
      /plain is not a folder/,
    ],
  ])('refuses a data file %s up front', async (_what, path, message) => {
    await expect(startTestSandbox({ dataFile: await path() })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringMatching(message),
    });
  });
});

describe('sandbox storage: close()', () => {
  it('cuts off a request still in flight after the grace period, then saves', async () => {
    const file = join(dir, 'grace.json');
    await mkdir(dir, { recursive: true });
    const sandbox = await startTestSandbox({ dataFile: file, closeGraceMs: 100 });
    const agent = new Agent();
    // Closed once the request is in the server (an event, not a delay), so close() has it to cut.
    const arrived = new Promise((resolve) => sandbox.app.server.once('request', resolve));
    // A body that never finishes keeps the request open.
    const stuck = request(`${sandbox.url}/api/v2/parties`, {
      method: 'POST',
      dispatcher: agent,
      headers: {
        authorization: `Bearer ${sandbox.token}`,
        'content-type': 'application/json',
        'content-length': '1000',
      },
      body: Readable.from(
        (async function* () {
          yield '{"party":';
          await new Promise(() => undefined);
        })(),
      ),
    }).catch((error: unknown) => error);
    await arrived;
    await sandbox.close();
    expect(await stuck).toBeInstanceOf(Error);
    expect(JSON.parse(await readFile(file, 'utf8')).format).toBe('crm-ferry-sandbox/2');
    await agent.destroy();
  });
});
