import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPersonalToken } from '../../../src/sandbox/auth.ts';
import { windowOf } from '../../../src/sandbox/rate-limit.ts';
import { startTestSandbox, type ApiAnswer, type TestSandbox } from '../../helpers/sandbox.ts';

function limits(answer: ApiAnswer): { limit: unknown; remaining: unknown; reset: unknown; retryAfter: unknown } {
  return {
    limit: answer.headers['x-ratelimit-limit'],
    remaining: answer.headers['x-ratelimit-remaining'],
    reset: answer.headers['x-ratelimit-reset'],
    retryAfter: answer.headers['retry-after'],
  };
}

describe('rate limiting (beyond the spec): a fixed window per user', () => {
  // 10:00:30 UTC: the minute window runs to 10:01:00.
  let clock = new Date('2026-03-01T10:00:30Z');
  const windowEnd = String(Date.parse('2026-03-01T10:01:00Z') / 1000);
  let sandbox: TestSandbox;
  const samToken = 'sam-personal-token-1';

  beforeAll(async () => {
    sandbox = await startTestSandbox({ rateLimit: { limit: 3, windowSeconds: 60 }, now: () => clock });
    const sam = sandbox.store.users.all().find((u) => u.username === 'sam');
    addPersonalToken(sandbox.context, samToken, sam!.id);
  });
  afterAll(() => sandbox.close());

  it('counts down, then answers 429 with the documented body until the window ends', async () => {
    const answers: ApiAnswer[] = [];
    for (let i = 0; i < 5; i += 1) answers.push(await sandbox.v2('GET', '/jobs/none'));
    // Error answers (404 here) carry the headers as well as successful ones.
    expect(answers.map((a) => a.status)).toEqual([404, 404, 404, 429, 429]);
    expect(answers.map((a) => a.headers['x-ratelimit-remaining'])).toEqual(['2', '1', '0', '0', '0']);
    for (const answer of answers) {
      expect(answer.headers['x-ratelimit-limit']).toBe('180');
      expect(answer.headers['x-ratelimit-reset']).toBe(windowEnd);
    }
    expect(answers[0]!.headers['retry-after']).toBeUndefined();
    // The documented body, with the `message` every v2 error carries.
    expect(answers[3]!.body).toEqual({ error: 'rate limit reached', message: 'rate limit reached' });
    expect(answers[3]!.headers['retry-after']).toBe('30');

    // Writes and unknown endpoints, v2 and v1 alike, are refused while the window lasts.
    const write = await sandbox.v2('POST', '/parties', { party: { type: 'person', lastName: 'Late' } });
    expect(write.status).toBe(429);
    const legacy = await sandbox.call('GET', '/api/party');
    expect(legacy.status).toBe(429);

    clock = new Date('2026-03-01T10:00:59.500Z');
    expect(limits(await sandbox.v2('GET', '/jobs/none')).retryAfter).toBe('1');

    clock = new Date('2026-03-01T10:01:00Z');
    const fresh = await sandbox.v2('GET', '/jobs/none');
    expect(fresh.status).toBe(404);
    expect(limits(fresh)).toMatchObject({
      limit: '180',
      remaining: '2',
      reset: String(Date.parse('2026-03-01T10:02:00Z') / 1000),
    });
  });

  it('keeps a separate window for each user', async () => {
    clock = new Date('2026-03-01T11:00:00Z');
    for (let i = 0; i < 3; i += 1) await sandbox.v2('GET', '/jobs/none');
    expect((await sandbox.v2('GET', '/jobs/none')).status).toBe(429);
    const sam = await sandbox.call('GET', '/api/v2/jobs/none', { token: samToken });
    expect(sam.status).toBe(404);
    expect(sam.headers['x-ratelimit-remaining']).toBe('2');
  });

  it('does not count or mark requests refused by authentication, nor OAuth endpoints', async () => {
    clock = new Date('2026-03-01T12:00:00Z');
    const refused = await sandbox.call('GET', '/api/v2/jobs/none', { token: 'not-a-real-token' });
    expect(refused.status).toBe(401);
    expect(refused.headers['x-ratelimit-limit']).toBeUndefined();
    const oauth = await sandbox.call('POST', '/oauth/token', { token: null, body: {} });
    expect(oauth.status).toBe(400);
    expect(oauth.headers['x-ratelimit-limit']).toBeUndefined();
    const first = await sandbox.v2('GET', '/no-such-endpoint');
    expect(first.status).toBe(404);
    expect(first.headers['x-ratelimit-remaining']).toBe('2');
  });
});

describe('rate limiting: configuration', () => {
  it('sends no rate limit headers when the limit is off', async () => {
    const sandbox = await startTestSandbox();
    try {
      const answer = await sandbox.v2('GET', '/jobs/none');
      expect(answer.status).toBe(404);
      expect(answer.headers['x-ratelimit-limit']).toBeUndefined();
    } finally {
      await sandbox.close();
    }
  });

  it("reports the service's hourly figure for an hourly window", async () => {
    const sandbox = await startTestSandbox({ rateLimit: { limit: 4000, windowSeconds: 3600 } });
    try {
      const answer = await sandbox.v2('GET', '/jobs/none');
      expect(answer.headers['x-ratelimit-limit']).toBe('4000');
      expect(answer.headers['x-ratelimit-remaining']).toBe('3999');
    } finally {
      await sandbox.close();
    }
  });

  it.each([
    [Date.parse('2026-03-01T10:59:59.999Z'), 3600, '2026-03-01T10:00:00.000Z', '2026-03-01T11:00:00.000Z'],
    [Date.parse('2026-03-01T11:00:00Z'), 3600, '2026-03-01T11:00:00.000Z', '2026-03-01T12:00:00.000Z'],
    [Date.parse('2026-03-01T11:00:07.2Z'), 5, '2026-03-01T11:00:05.000Z', '2026-03-01T11:00:10.000Z'],
  ])('puts %s in the window of %s seconds from %s to %s', (now, seconds, start, end) => {
    const window = windowOf(now, seconds);
    expect(new Date(window.start).toISOString()).toBe(start);
    expect(new Date(window.end).toISOString()).toBe(end);
  });
});
