import { getEventListeners } from 'node:events';
import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { MockAgent } from 'undici';
import { describe, expect, it } from 'vitest';
import { AmbiguousWriteError } from '../../../src/client/errors.ts';
import { Transport } from '../../../src/client/transport.ts';
import { seededRandom } from '../../../src/util/seeded-random.ts';

const ORIGIN = 'http://127.0.0.1:9';
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };

/** A service failing half its answers with a 503 (undici MockAgent), so that many requests wait out a backoff at once, all under one signal. */
function faultyService(): MockAgent {
  const agent = new MockAgent();
  agent.disableNetConnect();
  const random = seededRandom(4);
  const pool = agent.get(ORIGIN);
  const answer = (ok: object) => () =>
    random() < 0.5
      ? { statusCode: 503, data: { message: 'busy' }, responseOptions: JSON_HEADERS }
      : { statusCode: 200, data: ok, responseOptions: JSON_HEADERS };
  pool
    .intercept({ path: '/api/v2/users', method: 'GET' })
    .reply(answer({ users: [] }))
    .persist();
  pool
    .intercept({ path: '/api/v2/parties', method: 'POST' })
    .reply(answer({ party: { id: 1 } }))
    .persist();
  return agent;
}

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

function heapAfterGc(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

describe('a long run under faults', () => {
  it('keeps the abort listeners on the run signal and the heap flat over 20,000 requests at 16 under way', async () => {
    const agent = faultyService();
    const transport = new Transport({
      baseUrl: ORIGIN,
      auth: 'long-run-token-0123',
      dispatcher: agent,
      retry: { limit: 30, baseDelayMs: 1, maxDelayMs: 2 },
    });
    const stop = new AbortController();
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => {
      warnings.push(`${warning.name}: ${warning.message}`);
    };
    process.on('warning', onWarning);
    let sent = 0;
    let maxListeners = 0;
    let ambiguous = 0;
    const heaps: number[] = [];
    const worker = async (): Promise<void> => {
      while (sent < 20_000) {
        sent += 1;
        if (sent % 2000 === 0) heaps.push(heapAfterGc());
        // Reads and writes as the importer sends them: waits (pacing, backoff) end on the run's signal.
        const write = sent % 5 === 0;
        try {
          await transport.request(
            write
              ? {
                  method: 'POST',
                  path: '/parties',
                  json: { party: { type: 'person', lastName: `L${sent}` } },
                  waitSignal: stop.signal,
                }
              : { method: 'GET', path: '/users', waitSignal: stop.signal },
          );
        } catch (error) {
          if (!(error instanceof AmbiguousWriteError)) throw error;
          ambiguous += 1;
        }
        maxListeners = Math.max(maxListeners, getEventListeners(stop.signal, 'abort').length);
      }
    };
    try {
      await Promise.all(Array.from({ length: 16 }, worker));
    } finally {
      process.off('warning', onWarning);
      await agent.close();
    }
    expect(sent).toBeGreaterThanOrEqual(20_000);
    expect(ambiguous).toBeGreaterThan(0);
    // One listener for every sleeper of the signal, none left once they are done.
    expect(maxListeners).toBeLessThanOrEqual(1);
    expect(getEventListeners(stop.signal, 'abort')).toHaveLength(0);
    expect(warnings.filter((w) => w.includes('MaxListeners'))).toEqual([]);
    // From the second sample on (warm), the heap grows by less than 4 MB over 16,000 requests.
    const growth = (heaps.at(-1) as number) - (heaps[1] as number);
    expect(growth).toBeLessThan(4 * 1024 * 1024);
  }, 120_000);
});
