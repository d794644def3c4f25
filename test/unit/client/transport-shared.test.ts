import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { SharedBudget, SlotClaim, SlotGrant } from '../../../src/client/shared-budget.ts';
import { Transport } from '../../../src/client/transport.ts';
import { FakeClock } from './fake-clock.ts';

/**
 * The transport with a shared rate budget (issue 42): the budget closed with the transport, the
 * slot's window handed back with the answer, and a first request that gets no answer does not
 * hold the others back.
 */
const ORIGIN = 'https://acme.crm.example';
const JSON_HEADERS = { 'content-type': 'application/json' };

class RecordingBudget implements SharedBudget {
  readonly claims: SlotClaim[] = [];
  closed = 0;
  private used = 0;
  async claim(claim: SlotClaim): Promise<SlotGrant> {
    this.claims.push(claim);
    const first = Math.max(this.used, claim.floor);
    this.used = first + claim.count;
    return { first, count: Math.max(0, Math.min(this.used, claim.quota) - first), quota: claim.quota };
  }
  async current(): Promise<null> {
    return null;
  }
  async close(): Promise<void> {
    this.closed += 1;
  }
}

describe('Transport with a shared budget', () => {
  let agent: MockAgent;
  let clock: FakeClock;
  beforeEach(() => {
    agent = new MockAgent();
    agent.disableNetConnect();
    clock = new FakeClock(Date.parse('2026-01-01T00:00:00.100Z'));
  });
  afterEach(() => agent.close());

  const limited = (remaining: number) => ({
    headers: {
      ...JSON_HEADERS,
      'x-ratelimit-limit': '144000',
      'x-ratelimit-remaining': String(remaining),
      'x-ratelimit-reset': String(Date.parse('2026-01-01T00:00:01Z') / 1000),
    },
  });

  it('learns the window with one request, claims the others (the first one too), and closes the budget with itself', async () => {
    const pool = agent.get(ORIGIN);
    for (let i = 0; i < 3; i += 1)
      pool.intercept({ path: '/api/v2/parties', method: 'GET' }).reply(200, { parties: [] }, limited(39 - i));
    const budget = new RecordingBudget();
    const transport = new Transport({
      baseUrl: ORIGIN,
      auth: 'token-0123456789',
      dispatcher: agent,
      clock,
      sharedBudget: budget,
    });
    for (let i = 0; i < 3; i += 1) await transport.request({ method: 'GET', path: '/parties' });
    // The first request went unclaimed; the first claim took its slot and the second request's.
    expect(budget.claims[0]).toMatchObject({
      windowEnd: Date.parse('2026-01-01T00:00:01Z'),
      count: 2,
      floor: 0,
      quota: 40,
    });
    expect(budget.claims).toHaveLength(2);
    await transport.close();
    expect(budget.closed).toBe(1);
  });

  it('lets the next request learn the window when the first got no answer', async () => {
    const pool = agent.get(ORIGIN);
    pool
      .intercept({ path: '/api/v2/parties/1', method: 'GET' })
      .replyWithError(Object.assign(new Error('simulated'), { code: 'ECONNRESET' }))
      .times(2);
    pool.intercept({ path: '/api/v2/parties/2', method: 'GET' }).reply(200, { party: { id: 2 } }, limited(39));
    const transport = new Transport({
      baseUrl: ORIGIN,
      auth: 'token-0123456789',
      dispatcher: agent,
      clock,
      sharedBudget: new RecordingBudget(),
      retry: { limit: 1, baseDelayMs: 1, maxDelayMs: 1 },
    });
    const failed = transport.request({ method: 'GET', path: '/parties/1' }).catch((error: unknown) => error);
    const second = transport.request({ method: 'GET', path: '/parties/2' });
    expect(await second).toMatchObject({ status: 200 });
    expect(await failed).toMatchObject({ code: 'API_NETWORK' });
    await transport.close();
  });
});
