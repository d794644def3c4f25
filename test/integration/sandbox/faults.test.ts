import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Fastify, { type FastifyInstance } from 'fastify';
import { Agent, request } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import type { SandboxContext } from '../../../src/sandbox/context.ts';
import { installFaults, type FaultOptions } from '../../../src/sandbox/faults.ts';
import { seededRandom } from '../../../src/sandbox/server.ts';
import { sandboxOptionsSchema, type SandboxOptions } from '../../../src/sandbox/settings.ts';
import { Store } from '../../../src/sandbox/store.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

type Faults = NonNullable<SandboxOptions['faults']>;

/**
 * A bare app with only the fault hooks and a counting write route, so the drop can be shown on a
 * write whose effect is known exactly, whatever the state of the record routes.
 */
async function startBareApp(faults: Faults, seed = 1, options: FaultOptions = {}) {
  const settings = sandboxOptionsSchema.parse({ faults, seed });
  const ctx: SandboxContext = { store: new Store(), settings, now: () => new Date(), random: seededRandom(seed) };
  const app = Fastify();
  installFaults(app, ctx, options);
  const applied: string[] = [];
  app.post('/api/v2/things', async (req, reply) => {
    const body = req.body as { name?: string; invalid?: boolean };
    if (body.invalid) return reply.code(422).send({ message: 'invalid thing' });
    applied.push(String(body.name));
    return reply.code(201).send({ thing: { name: body.name } });
  });
  app.get('/api/v2/things', async () => ({ things: applied }));
  app.get('/outside', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('no TCP address');
  return { app, applied, url: `http://127.0.0.1:${address.port}` };
}

/** A dispatcher per test, so a destroyed socket never leaks into another test's requests. */
let agent: Agent;
let apps: FastifyInstance[] = [];
beforeAll(() => {
  agent = new Agent({ connections: 4 });
});
afterEach(async () => {
  await Promise.all(apps.map((app) => app.close()));
  apps = [];
});
afterAll(() => agent.close());

async function post(url: string, body: unknown): Promise<{ status: number } | { socketError: string }> {
  try {
    const answer = await request(url, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(body),
    });
    await answer.body.dump();
    return { status: answer.statusCode };
  } catch (error) {
    return { socketError: (error as { code?: string }).code ?? String(error) };
  }
}

describe('fault injection: a write applied, then the connection dropped', () => {
  it('stores the change although the client sees a socket error', async () => {
    const bare = await startBareApp({ dropAfterWriteRate: 1 });
    apps.push(bare.app);
    const result = await post(`${bare.url}/api/v2/things`, { name: 'first' });
    expect(result).toEqual({ socketError: 'UND_ERR_SOCKET' });
    expect(bare.applied).toEqual(['first']);
    // Reads are never dropped, and the server keeps answering after the drop.
    const read = await request(`${bare.url}/api/v2/things`, { dispatcher: agent });
    expect(read.statusCode).toBe(200);
    expect(await read.body.json()).toEqual({ things: ['first'] });
  });

  it('answers refused writes, which change nothing, as usual', async () => {
    const bare = await startBareApp({ dropAfterWriteRate: 1 });
    apps.push(bare.app);
    expect(await post(`${bare.url}/api/v2/things`, { invalid: true })).toEqual({ status: 422 });
    expect(bare.applied).toEqual([]);
  });

  it('drops about the configured share of writes, and every write is applied', async () => {
    const bare = await startBareApp({ dropAfterWriteRate: 0.3 }, 11);
    apps.push(bare.app);
    const results = [];
    for (let i = 0; i < 120; i += 1) results.push(await post(`${bare.url}/api/v2/things`, { name: `t${i}` }));
    const dropped = results.filter((r) => 'socketError' in r).length;
    expect(dropped / results.length).toBeGreaterThan(0.18);
    expect(dropped / results.length).toBeLessThan(0.42);
    expect(results.filter((r) => 'status' in r && r.status === 201).length).toBe(120 - dropped);
    expect(bare.applied).toHaveLength(120);
  });
});

describe('fault injection: latency', () => {
  it('waits the latency plus a jitter drawn from the seed, on every path', async () => {
    const waits: number[] = [];
    const sleep = async (ms: number) => {
      waits.push(ms);
    };
    const bare = await startBareApp({ latencyMs: 20, latencyJitterMs: 10 }, 5, { sleep });
    apps.push(bare.app);
    for (let i = 0; i < 30; i += 1)
      await request(`${bare.url}/api/v2/things`, { dispatcher: agent }).then((a) => a.body.dump());
    await request(`${bare.url}/outside`, { dispatcher: agent }).then((a) => a.body.dump());
    expect(waits).toHaveLength(31);
    for (const ms of waits) {
      expect(ms).toBeGreaterThanOrEqual(20);
      expect(ms).toBeLessThanOrEqual(30);
    }
    expect(new Set(waits).size).toBeGreaterThan(3);

    const again: number[] = [];
    const repeat = await startBareApp({ latencyMs: 20, latencyJitterMs: 10 }, 5, {
      sleep: async (ms) => void again.push(ms),
    });
    apps.push(repeat.app);
    for (let i = 0; i < 31; i += 1)
      await request(`${repeat.url}/api/v2/things`, { dispatcher: agent }).then((a) => a.body.dump());
    expect(again).toEqual(waits);
  });

  it('waits nothing without latency settings', async () => {
    const waits: number[] = [];
    const bare = await startBareApp({ errorRate: 0 }, 1, { sleep: async (ms) => void waits.push(ms) });
    apps.push(bare.app);
    await request(`${bare.url}/api/v2/things`, { dispatcher: agent }).then((a) => a.body.dump());
    expect(waits).toEqual([]);
  });
});

describe('fault injection in the sandbox: injected server errors', () => {
  let sandboxes: TestSandbox[] = [];
  afterEach(async () => {
    await Promise.all(sandboxes.map((s) => s.close()));
    sandboxes = [];
  });

  async function statuses(seed: number, errorRate: number, count: number): Promise<number[]> {
    const sandbox = await startTestSandbox({ faults: { errorRate }, seed });
    sandboxes.push(sandbox);
    const result: number[] = [];
    for (let i = 0; i < count; i += 1) result.push((await sandbox.v2('GET', '/jobs/none')).status);
    return result;
  }

  it('answers about the configured share with 500, 502 and 503 and a JSON body', async () => {
    const sandbox = await startTestSandbox({ faults: { errorRate: 0.25 }, seed: 3 });
    sandboxes.push(sandbox);
    const answers = [];
    for (let i = 0; i < 300; i += 1) answers.push(await sandbox.v2('GET', '/jobs/none'));
    const failed = answers.filter((a) => a.status >= 500);
    expect(failed.length / answers.length).toBeGreaterThan(0.18);
    expect(failed.length / answers.length).toBeLessThan(0.32);
    expect(new Set(failed.map((a) => a.status))).toEqual(new Set([500, 502, 503]));
    expect(failed[0]!.body.message).toMatch(/^injected fault/);
    // The rest reach the route: the job does not exist.
    expect(answers.filter((a) => a.status < 500).every((a) => a.status === 404)).toBe(true);
  });

  it('repeats the same faults with the same seed and differs with another', async () => {
    const first = await statuses(42, 0.3, 40);
    const second = await statuses(42, 0.3, 40);
    const other = await statuses(43, 0.3, 40);
    expect(first.some((s) => s >= 500)).toBe(true);
    expect(second).toEqual(first);
    expect(other).not.toEqual(first);
  });

  it('fails before authentication and leaves other paths alone', async () => {
    const sandbox = await startTestSandbox({ faults: { errorRate: 1 } });
    sandboxes.push(sandbox);
    const anonymous = await sandbox.call('GET', '/api/v2/jobs/none', { token: null });
    expect(anonymous.status).toBeGreaterThanOrEqual(500);
    const oauth = await sandbox.call('POST', '/oauth/token', { token: null, body: {} });
    expect(oauth.status).toBe(400);
  });

  it('injects nothing when faults are off', async () => {
    const answers = await statuses(1, 0, 50);
    expect(answers.every((s) => s === 404)).toBe(true);
  });

  it('fails writes before they change anything', async () => {
    const bare = await startBareApp({ errorRate: 1 });
    apps.push(bare.app);
    const result = await post(`${bare.url}/api/v2/things`, { name: 'never' });
    expect('status' in result && result.status >= 500).toBe(true);
    expect(bare.applied).toEqual([]);
  });
});

describe('fault injection in the sandbox: dropped party writes', () => {
  let dir: string;
  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-faults-'));
  });
  afterAll(() => rm(dir, { recursive: true, force: true }));

  it('creates the party, drops the answer, and still saves the change to the data file', async () => {
    const file = join(dir, 'state.json');
    const sandbox = await startTestSandbox({
      faults: { dropAfterWriteRate: 1 },
      dataFile: file,
      tokens: ['fault-token-123'],
    });
    let closed = false;
    try {
      const before = sandbox.store.parties.size;
      let failure: unknown;
      try {
        await request(`${sandbox.url}/api/v2/parties`, {
          method: 'POST',
          dispatcher: agent,
          headers: { authorization: 'Bearer fault-token-123', 'content-type': 'application/json' },
          body: JSON.stringify({ party: { type: 'person', firstName: 'Dropped', lastName: 'Answer' } }),
        });
      } catch (error) {
        failure = error;
      }
      expect((failure as { code?: string } | undefined)?.code).toBe('UND_ERR_SOCKET');
      const stored = sandbox.store.parties.all().filter((p) => p.lastName === 'Answer');
      expect(sandbox.store.parties.size).toBe(before + 1);
      expect(stored).toHaveLength(1);
      // The read that finds it is answered normally.
      const read = await sandbox.call('GET', `/api/v2/parties/${stored[0]!.id}`, { token: 'fault-token-123' });
      expect(read.status).toBe(200);
      expect(read.body.party.lastName).toBe('Answer');
      await sandbox.close();
      closed = true;
      const saved = JSON.parse(await readFile(file, 'utf8'));
      expect(saved.tables.parties.some((p: { lastName?: string }) => p.lastName === 'Answer')).toBe(true);
    } finally {
      if (!closed) await sandbox.close();
    }
  });
});
