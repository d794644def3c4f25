import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { readSavedState } from '../../src/sandbox/storage/journal.ts';
import { type SandboxProcess, startSandboxProcess } from '../helpers/sandbox-process.ts';

const TOKEN = 'durability-cli-token';

/** `crm-ferry sandbox --data FILE` in a process of its own, as a person runs it. */
function startCli(file: string, extra: string[] = []): Promise<SandboxProcess> {
  return startSandboxProcess(file, TOKEN, { extra });
}

async function create(url: string, name: string): Promise<{ status: number; id?: number }> {
  const answer = await request(`${url}/api/v2/parties`, {
    method: 'POST',
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json' },
    body: JSON.stringify({ party: { type: 'organisation', name } }),
  });
  const body = (await answer.body.json()) as { party?: { id: number } };
  return { status: answer.statusCode, ...(body.party ? { id: body.party.id } : {}) };
}

/** A request whose body never ends: a slow client holding the sandbox's shutdown. */
function holdRequestOpen(url: string, agent: Agent): Promise<unknown> {
  return request(`${url}/api/v2/parties?held=1`, {
    method: 'POST',
    dispatcher: agent,
    headers: { authorization: `Bearer ${TOKEN}`, 'content-type': 'application/json', 'content-length': '1000' },
    body: Readable.from(
      (async function* () {
        yield '{"party":';
        await new Promise(() => undefined);
      })(),
    ),
  }).catch((error: unknown) => error);
}

/** Resolves once the sandbox's stderr holds `text` (its request log, its stopping line): an event, not a delay. */
function said(sandbox: SandboxProcess, text: string): Promise<void> {
  return new Promise((resolve, reject) => {
    const check = (): void => {
      if (!sandbox.stderr().includes(text)) return;
      sandbox.child.stderr?.off('data', check);
      resolve();
    };
    sandbox.child.stderr?.on('data', check);
    void sandbox.exited.then(() =>
      reject(new Error(`the sandbox ended before saying ${JSON.stringify(text)}: ${sandbox.stderr()}`)),
    );
    check();
  });
}

/** The log line of the held request reaching the sandbox (`--log`). */
const HELD_ARRIVED = '"url":"/api/v2/parties?held=1"';

let dir: string;
beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-cli-durable-'));
});
afterAll(() => rm(dir, { recursive: true, force: true }));

describe('crm-ferry sandbox --data: failed saves, shutdown and signals', () => {
  it.each([
    ['without --log', []],
    ['with --log', ['--log']],
  ])(
    'a save that fails answers 503 and says why on stderr, %s',
    async (_what, extra) => {
      const file = join(dir, `fails-${extra.length}`, 'sb.json');
      const sandbox = await startCli(file, extra);
      expect((await create(sandbox.url, 'Kept Ltd')).status).toBe(201);
      // The blob folder vanishing makes the next upload's save fail.
      await rm(`${file}.blobs`, { recursive: true });
      const upload = await request(`${sandbox.url}/api/v2/attachments/upload`, {
        method: 'POST',
        headers: {
          authorization: `Bearer ${TOKEN}`,
          'content-type': 'application/octet-stream',
          'x-attachment-filename': 'lost.bin',
        },
        body: Buffer.from('lost'),
      });
      expect(upload.statusCode).toBe(503);
      expect(((await upload.body.json()) as { message: string }).message).toMatch(
        /cannot save its state .* refuses writes until it is restarted/,
      );
      expect((await create(sandbox.url, 'Refused Ltd')).status).toBe(503);
      expect(sandbox.stderr()).toMatch(
        /crm-ferry sandbox: cannot save the state to .*sb\.json: .*ENOENT.*Writes are refused \(503\)/,
      );
      sandbox.child.kill('SIGINT');
      expect(await sandbox.exited).toBe(2);
      expect(sandbox.stderr()).toMatch(/SANDBOX_STATE/);
      const names = (await readSavedState(file)).parties.all().map((p) => p.name);
      expect(names).toContain('Kept Ltd');
      expect(names).not.toContain('Refused Ltd');
    },
    60_000,
  );

  it('Ctrl-C waits a few seconds at most for a slow client, then saves and exits 0', async () => {
    const file = join(dir, 'slow', 'sb.json');
    const sandbox = await startCli(file, ['--log']);
    const kept = await create(sandbox.url, 'Before Ctrl-C Ltd');
    const agent = new Agent();
    const arrived = said(sandbox, HELD_ARRIVED);
    const held = holdRequestOpen(sandbox.url, agent);
    await arrived;
    sandbox.child.kill('SIGINT');
    expect(await sandbox.exited).toBe(0);
    expect(sandbox.stdout()).toContain('sandbox stopped');
    expect(await held).toBeInstanceOf(Error);
    await agent.destroy();
    const saved = await readSavedState(file);
    expect(saved.parties.get(kept.id as number)?.name).toBe('Before Ctrl-C Ltd');
    expect((await readdir(join(dir, 'slow'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 60_000);

  it('a second Ctrl-C exits at once, and the state still loads with every acknowledged write', async () => {
    const file = join(dir, 'twice', 'sb.json');
    let sandbox = await startCli(file, ['--log']);
    const acknowledged: number[] = [];
    for (let i = 0; i < 20; i += 1) {
      const answer = await create(sandbox.url, `Twice ${i}`);
      expect(answer.status).toBe(201);
      acknowledged.push(answer.id as number);
    }
    const agent = new Agent();
    const arrived = said(sandbox, HELD_ARRIVED);
    const held = holdRequestOpen(sandbox.url, agent);
    await arrived;
    // The second Ctrl-C only once the first was taken: two sent at once may reach it as one.
    const stopping = said(sandbox, 'stopping: finishing the requests under way');
    sandbox.child.kill('SIGINT');
    await stopping;
    sandbox.child.kill('SIGINT');
    expect(await sandbox.exited).toBe(130);
    await held;
    await agent.destroy();
    sandbox = await startCli(file);
    try {
      for (const id of acknowledged) {
        const answer = await request(`${sandbox.url}/api/v2/parties/${id}`, {
          headers: { authorization: `Bearer ${TOKEN}` },
        });
        expect(answer.statusCode).toBe(200);
        await answer.body.dump();
      }
      // Ids handed out before the second signal are never given again.
      const next = await create(sandbox.url, 'After restart Ltd');
      expect(acknowledged).not.toContain(next.id);
      expect(next.id).toBeGreaterThan(Math.max(...acknowledged));
    } finally {
      sandbox.child.kill('SIGINT');
      await sandbox.exited;
    }
    expect((await readdir(join(dir, 'twice'))).filter((name) => name.endsWith('.tmp'))).toEqual([]);
  }, 60_000);
});
