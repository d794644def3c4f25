import { getEventListeners } from 'node:events';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AmbiguousWriteError, ApiError } from '../../../src/client/errors.ts';
import { Transport, type TokenSource } from '../../../src/client/transport.ts';
import { FakeClock } from './fake-clock.ts';

const ORIGIN = 'https://acme.crm.example';
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };
const TOKEN = 'personal-token-0123456789';

function socketError(code: string): Error {
  return Object.assign(new Error(`simulated ${code}`), { code });
}

describe('Transport', () => {
  let agent: MockAgent;
  let clock: FakeClock;
  let lines: string[];

  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    clock = new FakeClock();
    lines = [];
  });
  afterEach(() => agent.close());

  function transport(overrides: Partial<ConstructorParameters<typeof Transport>[0]> = {}): Transport {
    return new Transport({
      baseUrl: ORIGIN,
      auth: TOKEN,
      dispatcher: agent,
      clock,
      random: () => 0.5,
      log: (line) => lines.push(line),
      retry: { limit: 3, baseDelayMs: 100, maxDelayMs: 1000 },
      ...overrides,
    });
  }

  it('sends the bearer token and reads the JSON answer', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties/7', method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } })
      .reply(200, { party: { id: 7 } }, JSON_HEADERS);
    const answer = await transport().request({ method: 'GET', path: '/parties/7' });
    expect(answer.body).toEqual({ party: { id: 7 } });
  });

  it('retries a GET on 503 with capped exponential backoff and jitter', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v2/parties', method: 'GET' }).reply(503, { message: 'busy' }, JSON_HEADERS).times(3);
    pool.intercept({ path: '/api/v2/parties', method: 'GET' }).reply(200, { parties: [] }, JSON_HEADERS);
    const answer = await transport().request({ method: 'GET', path: '/parties' });
    expect(answer.status).toBe(200);
    // base 100 ms doubling; half the ceiling plus random (0.5) times the other half
    expect(clock.sleeps).toEqual([75, 150, 300]);
  });

  it('gives up after the retry limit with API_SERVER and the service message', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties', method: 'GET' })
      .reply(500, { message: 'broken' }, JSON_HEADERS)
      .times(4);
    const error = await transport()
      .request({ method: 'GET', path: '/parties' })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({
      code: 'API_SERVER',
      status: 500,
      serviceMessage: 'broken',
      method: 'GET',
      path: '/api/v2/parties',
    });
    expect(clock.sleeps).toHaveLength(3);
  });

  it('waits for a service that is down past the retry limit, within giveUpAfterMs, and goes on', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v2/parties', method: 'GET' }).replyWithError(socketError('ECONNREFUSED')).times(8);
    pool
      .intercept({ path: '/api/v2/parties', method: 'GET' })
      .reply(503, { message: 'starting' }, JSON_HEADERS)
      .times(4);
    pool.intercept({ path: '/api/v2/parties', method: 'GET' }).reply(200, { parties: [] }, JSON_HEADERS);
    const answer = await transport({ giveUpAfterMs: 60_000 }).request({ method: 'GET', path: '/parties' });
    expect(answer.status).toBe(200);
    // Twelve failures, far past the limit of 3, each wait capped at the maximum delay.
    expect(clock.sleeps).toHaveLength(12);
    expect(Math.max(...clock.sleeps)).toBe(750);
  });

  it('gives up once the service has given no useful answer for giveUpAfterMs, and says how long', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v2/parties', method: 'GET' }).reply(200, { parties: [] }, JSON_HEADERS);
    pool.intercept({ path: '/api/v2/parties', method: 'GET' }).replyWithError(socketError('ECONNREFUSED')).persist();
    const client = transport({ giveUpAfterMs: 10_000 });
    await client.request({ method: 'GET', path: '/parties' });
    const started = clock.now();
    const error = await client.request({ method: 'GET', path: '/parties' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'API_NETWORK' });
    expect((error as Error).message).toContain('the budget is 10 s');
    expect(clock.now() - started).toBeGreaterThanOrEqual(10_000);
    expect(clock.now() - started).toBeLessThan(10_000 + 1000);
  });

  it('waits out a token refresh that cannot reach the service, then sends with the new token', async () => {
    let refreshes = 0;
    const auth: TokenSource = {
      token: async () => {
        refreshes += 1;
        if (refreshes <= 2)
          throw new ApiError('API_NETWORK', 'cannot reach the service', { method: 'POST', path: '/oauth/token' });
        return 'fresh-access-token-3';
      },
      secrets: () => ['fresh-access-token-3'],
    };
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties', method: 'GET', headers: { authorization: 'Bearer fresh-access-token-3' } })
      .reply(200, { parties: [] }, JSON_HEADERS);
    const answer = await transport({ auth }).request({ method: 'GET', path: '/parties' });
    expect(answer.status).toBe(200);
    expect(clock.sleeps).toEqual([75, 150]);
  });

  it('lets Retry-After win over the computed backoff, without jitter', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v2/kases', method: 'GET' }).reply(503, '', { headers: { 'retry-after': '7' } });
    pool.intercept({ path: '/api/v2/kases', method: 'GET' }).reply(200, { kases: [] }, JSON_HEADERS);
    await transport().request({ method: 'GET', path: '/kases' });
    expect(clock.sleeps).toEqual([7000]);
  });

  it('retries a GET after a dropped connection', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v2/tasks', method: 'GET' }).replyWithError(socketError('UND_ERR_SOCKET'));
    pool.intercept({ path: '/api/v2/tasks', method: 'GET' }).reply(200, { tasks: [] }, JSON_HEADERS);
    const answer = await transport().request({ method: 'GET', path: '/tasks' });
    expect(answer.body).toEqual({ tasks: [] });
    expect(clock.sleeps).toEqual([75]);
  });

  it.each([
    [
      'a dropped connection',
      (p: ReturnType<MockAgent['get']>) =>
        p.intercept({ path: '/api/v2/parties', method: 'POST' }).replyWithError(socketError('UND_ERR_SOCKET')),
    ],
    [
      'a reset',
      (p: ReturnType<MockAgent['get']>) =>
        p.intercept({ path: '/api/v2/parties', method: 'POST' }).replyWithError(socketError('ECONNRESET')),
    ],
    [
      'a headers timeout',
      (p: ReturnType<MockAgent['get']>) =>
        p.intercept({ path: '/api/v2/parties', method: 'POST' }).replyWithError(socketError('UND_ERR_HEADERS_TIMEOUT')),
    ],
    [
      'a 502',
      (p: ReturnType<MockAgent['get']>) =>
        p.intercept({ path: '/api/v2/parties', method: 'POST' }).reply(502, { message: 'bad gateway' }, JSON_HEADERS),
    ],
    [
      'a 500',
      (p: ReturnType<MockAgent['get']>) =>
        p.intercept({ path: '/api/v2/parties', method: 'POST' }).reply(500, { message: 'oops' }, JSON_HEADERS),
    ],
  ])('reports a POST that failed with %s as ambiguous and does not re-send it', async (_name, setup) => {
    setup(agent.get(ORIGIN));
    const error = await transport()
      .request({ method: 'POST', path: '/parties', json: { party: {} } })
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(AmbiguousWriteError);
    expect(error).toMatchObject({ code: 'API_AMBIGUOUS_WRITE', method: 'POST', path: '/api/v2/parties' });
    expect(clock.sleeps).toEqual([]);
    expect(agent.pendingInterceptors()).toHaveLength(0);
  });

  it('retries a POST refused before it was sent (connection refused)', async () => {
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v2/parties', method: 'POST' }).replyWithError(socketError('ECONNREFUSED'));
    pool.intercept({ path: '/api/v2/parties', method: 'POST' }).reply(201, { party: { id: 1 } }, JSON_HEADERS);
    const answer = await transport().request({ method: 'POST', path: '/parties', json: { party: {} } });
    expect(answer.status).toBe(201);
  });

  it('waits for the reset after a 429 and sends the same write again', async () => {
    const reset = Math.floor(clock.now() / 1000) + 120;
    const pool = agent.get(ORIGIN);
    pool.intercept({ path: '/api/v2/parties', method: 'POST' }).reply(
      429,
      { error: 'rate limit reached' },
      {
        headers: {
          'content-type': 'application/json',
          'x-ratelimit-limit': '4000',
          'x-ratelimit-remaining': '0',
          'x-ratelimit-reset': String(reset),
        },
      },
    );
    pool.intercept({ path: '/api/v2/parties', method: 'POST' }).reply(201, { party: { id: 2 } }, JSON_HEADERS);
    const answer = await transport().request({ method: 'POST', path: '/parties', json: { party: {} } });
    expect(answer.status).toBe(201);
    // Waited until the reset plus the safety margin (a hundredth of a window of about a second, at least 10 ms).
    expect(clock.sleeps).toEqual([120_010]);
  });

  it('refreshes the token once after a 401 and tries again', async () => {
    let current = 'old-access-token-1';
    const auth: TokenSource = {
      token: async () => current,
      refreshAfterUnauthorized: async () => {
        current = 'new-access-token-2';
        return true;
      },
      secrets: () => [current],
    };
    const pool = agent.get(ORIGIN);
    pool
      .intercept({ path: '/api/v2/users', method: 'GET', headers: { authorization: 'Bearer old-access-token-1' } })
      .reply(401, { error: 'invalid_token' }, JSON_HEADERS);
    pool
      .intercept({ path: '/api/v2/users', method: 'GET', headers: { authorization: 'Bearer new-access-token-2' } })
      .reply(200, { users: [] }, JSON_HEADERS);
    const answer = await transport({ auth }).request({ method: 'GET', path: '/users' });
    expect(answer.body).toEqual({ users: [] });
  });

  it('maps statuses to error codes with field errors and hints', async () => {
    const pool = agent.get(ORIGIN);
    pool
      .intercept({ path: '/api/v2/parties', method: 'POST' })
      .reply(
        422,
        { message: 'validation failed', errors: [{ message: 'is required', resource: 'party', field: 'lastName' }] },
        JSON_HEADERS,
      );
    pool.intercept({ path: '/api/v2/parties/9', method: 'GET' }).reply(404, { message: 'not found' }, JSON_HEADERS);
    pool
      .intercept({ path: '/api/v2/pipelines', method: 'POST' })
      .reply(403, { message: 'Administrator role needed' }, JSON_HEADERS);
    const t = transport();
    await expect(t.request({ method: 'POST', path: '/parties', json: {} })).rejects.toMatchObject({
      code: 'API_VALIDATION',
      status: 422,
      fieldErrors: [{ field: 'lastName', message: 'is required', resource: 'party' }],
      message: 'POST /api/v2/parties: the service answered 422 (lastName: is required)',
    });
    await expect(t.request({ method: 'GET', path: '/parties/9' })).rejects.toMatchObject({ code: 'API_NOT_FOUND' });
    await expect(t.request({ method: 'POST', path: '/pipelines', json: {} })).rejects.toMatchObject({
      code: 'API_FORBIDDEN',
      hint: expect.stringMatching(/Administrator role/),
    });
  });

  it('returns accepted error statuses as answers', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties/1,2', method: 'GET' })
      .reply(404, { message: 'nope' }, JSON_HEADERS);
    const answer = await transport().request({ method: 'GET', path: '/parties/1,2', accept: [404] });
    expect(answer.status).toBe(404);
  });

  it('refuses to send a token over plain http to a non-loopback host', () => {
    expect(() => transport({ baseUrl: 'http://crm.example.com' })).toThrow(
      /refusing to send credentials over http:\/\/ to crm.example.com/,
    );
    expect(() => transport({ baseUrl: 'http://crm.example.com' })).toThrow(
      expect.objectContaining({ code: 'CONFIG_INSECURE_TRANSPORT' }),
    );
    expect(() => transport({ baseUrl: 'http://[::1]:8787' })).not.toThrow();
    expect(() => transport({ baseUrl: 'http://127.0.0.1:8787' })).not.toThrow();
    expect(() => transport({ baseUrl: 'http://localhost:8787' })).not.toThrow();
  });

  it('never writes the token into log lines or errors', async () => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/api/v2/parties', method: 'POST' })
      .replyWithError(socketError('UND_ERR_SOCKET'));
    const error = (await transport()
      .request({ method: 'POST', path: '/parties', json: {} })
      .catch((e: unknown) => e)) as Error;
    expect(lines.length).toBeGreaterThan(0);
    for (const text of [...lines, error.message, String(error.stack)]) expect(text).not.toContain(TOKEN);
  });

  describe('every wait is bounded by giveUpAfterMs', () => {
    const NOW_S = Date.parse('2026-01-01T00:00:00Z') / 1000;

    it('gives up at once on a 429 whose Retry-After (3000 s) is past the budget, saying how long and when to come back', async () => {
      agent
        .get(ORIGIN)
        .intercept({ path: '/api/party', method: 'GET' })
        .reply(
          429,
          { error: 'rate limit reached' },
          { headers: { 'content-type': 'application/json', 'retry-after': '3000' } },
        );
      const error = (await transport({ giveUpAfterMs: 20_000 })
        .request({ method: 'GET', path: '/api/party' })
        .catch((e: unknown) => e)) as ApiError;
      expect(error).toMatchObject({ code: 'API_RATE_LIMITED', retryAfterMs: 3_000_000 });
      expect(error.message).toBe(
        'GET /api/party: the service answered 429 (rate limit reached); its Retry-After asks for a wait of 50 min, longer than the 20 s a wait may take (--give-up-after): run again after 2026-01-01T00:50:00Z',
      );
      expect(error.hint).toMatch(/run the same command again/);
      expect(clock.sleeps).toEqual([]);
    });

    it('gives up on a 429 without Retry-After whose window resets past the budget', async () => {
      const headers = {
        'content-type': 'application/json',
        'x-ratelimit-limit': '4000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(NOW_S + 50 * 60),
      };
      agent
        .get(ORIGIN)
        .intercept({ path: '/api/v2/parties', method: 'GET' })
        .reply(429, { error: 'rate limit reached' }, { headers });
      const error = (await transport({ giveUpAfterMs: 20_000 })
        .request({ method: 'GET', path: '/parties' })
        .catch((e: unknown) => e)) as ApiError;
      expect(error.code).toBe('API_RATE_LIMITED');
      expect(error.message).toMatch(
        /the rate limit resets in 50 min, longer than the 20 s a wait may take \(--give-up-after\)/,
      );
      expect(clock.sleeps).toEqual([]);
    });

    it('gives up on a 503 whose Retry-After is past the budget, and on pacing that would wait past it', async () => {
      const pool = agent.get(ORIGIN);
      pool
        .intercept({ path: '/api/v2/kases', method: 'GET' })
        .reply(
          503,
          { message: 'maintenance' },
          { headers: { 'content-type': 'application/json', 'retry-after': '3600' } },
        );
      const t = transport({ giveUpAfterMs: 60_000 });
      await expect(t.request({ method: 'GET', path: '/kases' })).rejects.toMatchObject({
        code: 'API_SERVER',
        message: expect.stringMatching(/its Retry-After asks for a wait of 60 min, longer than the 60 s/),
      });
      // Another client of the same token used the window up: the next slot is 40 minutes away.
      t.governor.observe({
        'x-ratelimit-limit': '4000',
        'x-ratelimit-remaining': '0',
        'x-ratelimit-reset': String(NOW_S + 40 * 60),
      });
      await expect(t.request({ method: 'GET', path: '/kases' })).rejects.toMatchObject({
        code: 'API_RATE_LIMITED',
        message: expect.stringMatching(/the rate limit lets the next request go in 40 min/),
      });
      expect(clock.sleeps).toEqual([]);
    });

    it('waits out a Retry-After within the budget, and says meanwhile what it waits for', async () => {
      const pool = agent.get(ORIGIN);
      pool
        .intercept({ path: '/api/v2/parties', method: 'GET' })
        .reply(
          429,
          { error: 'rate limit reached' },
          { headers: { 'content-type': 'application/json', 'retry-after': '30' } },
        );
      pool.intercept({ path: '/api/v2/parties', method: 'GET' }).reply(503, { message: 'busy' }, JSON_HEADERS);
      pool.intercept({ path: '/api/v2/parties', method: 'GET' }).reply(200, { parties: [] }, JSON_HEADERS);
      const seen: unknown[] = [];
      const t = transport({ giveUpAfterMs: 60_000 });
      const sleep = clock.sleep.bind(clock);
      clock.sleep = async (ms: number) => {
        seen.push(t.waits().map((wait) => ({ ...wait, until: wait.until - clock.now() })));
        await sleep(ms);
      };
      expect((await t.request({ method: 'GET', path: '/parties' })).status).toBe(200);
      expect(seen).toEqual([
        [{ reason: 'rate-limit', detail: 'Retry-After', until: 30_000 }],
        [{ reason: 'outage', detail: 'failing for 30 s', until: 75 }],
      ]);
      expect(t.waits()).toEqual([]);
    });
  });

  it('follows the caller signal with one listener for every deadline at once, and none after', async () => {
    agent.get(ORIGIN).intercept({ path: '/api/party', method: 'GET' }).reply(200, '<parties/>').times(20);
    const stop = new AbortController();
    const t = transport();
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        t.send({ method: 'GET', path: '/api/party', deadlineMs: 60_000, signal: stop.signal }),
      ),
    );
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(1);
    for (const answer of answers) await answer.body.text();
    await new Promise<void>((done) => setImmediate(done));
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
  });

  describe('authentication as the legacy service takes it', () => {
    const BASIC = `Basic ${Buffer.from(`${TOKEN}:x`).toString('base64')}`;

    it('sends HTTP Basic with the token as the user name and x as the password', async () => {
      agent
        .get(ORIGIN)
        .intercept({ path: '/api/party', method: 'GET', headers: { authorization: BASIC } })
        .reply(200, '<parties/>', { headers: { 'content-type': 'application/xml' } });
      const t = transport({ authScheme: 'basic' });
      expect((await t.request({ method: 'GET', path: '/api/party' })).body).toBe('<parties/>');
      for (const line of lines) expect(line).not.toMatch(new RegExp(`${TOKEN}|${BASIC.slice(6)}`));
    });

    it('sends the bearer token from then on after a 401 that offers Bearer only', async () => {
      const pool = agent.get(ORIGIN);
      pool
        .intercept({ path: '/api/party', method: 'GET', headers: { authorization: BASIC } })
        .reply(
          401,
          { message: 'missing bearer token' },
          { headers: { 'content-type': 'application/json', 'www-authenticate': 'Bearer realm="crm"' } },
        );
      pool
        .intercept({ path: '/api/party', method: 'GET', headers: { authorization: `Bearer ${TOKEN}` } })
        .reply(200, '<parties/>')
        .times(2);
      const t = transport({ authScheme: 'basic' });
      expect((await t.request({ method: 'GET', path: '/api/party' })).status).toBe(200);
      expect(t.authScheme).toBe('bearer');
      expect((await t.request({ method: 'GET', path: '/api/party' })).status).toBe(200);
    });

    it('stops at a 401 that offers Basic: the token is wrong, and it is not in the error', async () => {
      agent
        .get(ORIGIN)
        .intercept({ path: '/api/party', method: 'GET' })
        .reply(
          401,
          { message: `bad credentials ${BASIC}` },
          { headers: { 'content-type': 'application/json', 'www-authenticate': 'Basic realm="legacy"' } },
        );
      const error = (await transport({ authScheme: 'basic' })
        .request({ method: 'GET', path: '/api/party' })
        .catch((e: unknown) => e)) as Error;
      expect(error).toMatchObject({
        code: 'API_UNAUTHORIZED',
        message: 'GET /api/party: the service answered 401 (bad credentials Basic [REDACTED])',
      });
    });
  });
});

describe('Transport with a stop signal (a run stopped by Ctrl-C or SIGTERM)', () => {
  /** A service that takes each request and answers only when the test says. */
  async function holdingService(): Promise<{
    url: string;
    received: () => Promise<void>;
    answer: (status: number, body: unknown) => void;
    close: () => Promise<void>;
  }> {
    const { createServer } = await import('node:http');
    let waiting: { done: () => void } | null = null;
    let pending: ((status: number, body: unknown) => void) | null = null;
    let got = false;
    const server = createServer((request, response) => {
      request.resume();
      pending = (status, body) => {
        response.writeHead(status, { 'content-type': 'application/json' });
        response.end(JSON.stringify(body));
      };
      got = true;
      waiting?.done();
    });
    await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
    return {
      url: `http://127.0.0.1:${(server.address() as { port: number }).port}`,
      received: () => (got ? Promise.resolve() : new Promise<void>((done) => (waiting = { done }))),
      answer: (status, body) => pending?.(status, body),
      close: () =>
        new Promise<void>((done) => {
          server.closeAllConnections();
          server.close(() => done());
        }),
    };
  }

  it('cuts off an upload under way (safe to send again), whatever signal the request had', async () => {
    const service = await holdingService();
    const stop = new AbortController();
    const sender = new Transport({ baseUrl: service.url, auth: TOKEN, stopSignal: stop.signal });
    try {
      const upload = sender.request({
        method: 'POST',
        path: '/attachments/upload',
        idempotent: true,
        body: Buffer.from('file'),
        headers: { 'content-type': 'text/plain' },
      });
      await service.received();
      stop.abort();
      await expect(upload).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      await sender.close();
      await service.close();
    }
  });

  it('ends the back-off before a lost write is looked up', async () => {
    const stop = new AbortController();
    const sender = new Transport({
      baseUrl: 'http://127.0.0.1:9',
      auth: TOKEN,
      stopSignal: stop.signal,
      retry: { baseDelayMs: 60_000, maxDelayMs: 60_000 },
    });
    try {
      const waiting = sender.backoff(1);
      stop.abort();
      await expect(waiting).rejects.toMatchObject({ name: 'AbortError' });
    } finally {
      await sender.close();
    }
  });

  it('lets a write under way finish, its outcome known', async () => {
    const service = await holdingService();
    const stop = new AbortController();
    const sender = new Transport({ baseUrl: service.url, auth: TOKEN, stopSignal: stop.signal });
    try {
      const create = sender.request({ method: 'POST', path: '/parties', json: { party: { lastName: 'Lovelace' } } });
      await service.received();
      stop.abort();
      service.answer(201, { party: { id: 1 } });
      expect((await create).body).toEqual({ party: { id: 1 } });
    } finally {
      await sender.close();
      await service.close();
    }
  });
});
