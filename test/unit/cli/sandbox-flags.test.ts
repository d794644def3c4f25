import { describe, expect, it } from 'vitest';
import { parseClient, parseFaults, parseRateLimit } from '../../../src/cli/sandbox.ts';

describe('crm-ferry sandbox flags', () => {
  it.each([
    ['4000/h', { limit: 4000, windowSeconds: 3600 }],
    ['60/min', { limit: 60, windowSeconds: 60 }],
    ['10 / s', { limit: 10, windowSeconds: 1 }],
    ['5/hour', { limit: 5, windowSeconds: 3600 }],
  ])('--rate-limit %s', (text, expected) => {
    expect(parseRateLimit(text)).toEqual(expected);
  });

  it.each(['4000', '4000/day', 'many/h', '-1/h'])('--rate-limit %s is refused', (text) => {
    expect(() => parseRateLimit(text)).toThrow(/--rate-limit takes N\/h, N\/min or N\/s/);
  });

  it.each([
    ['5xx=0.05', { errorRate: 0.05 }],
    ['latency=20,jitter=5', { latencyMs: 20, latencyJitterMs: 5 }],
    ['drop=0.01, 5xx=0.1', { dropAfterWriteRate: 0.01, errorRate: 0.1 }],
  ])('--faults %s', (text, expected) => {
    expect(parseFaults(text)).toEqual(expected);
  });

  it.each([
    ['boom=1', /unknown fault "boom"/],
    ['5xx', /is not KEY=NUMBER/],
    ['latency=fast', /is not KEY=NUMBER/],
  ])('--faults %s is refused', (text, message) => {
    expect(() => parseFaults(text)).toThrow(message);
  });

  it.each([
    [
      'app:s3cret:http://127.0.0.1:9000/callback',
      { clientId: 'app', clientSecret: 's3cret', redirectUri: 'http://127.0.0.1:9000/callback' },
    ],
    ['cli::http://localhost/cb', { clientId: 'cli', clientSecret: '', redirectUri: 'http://localhost/cb' }],
  ])('--client %s', (text, expected) => {
    expect(parseClient(text)).toEqual(expected);
  });

  it.each(['app', ':secret:http://x', 'app:secret'])('--client %s is refused', (text) => {
    expect(() => parseClient(text)).toThrow(/--client takes ID:SECRET:REDIRECT_URI/);
  });
});
