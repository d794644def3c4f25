import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { ImportProgress } from '../../../src/cli/import-report.ts';
import type { ImportEvent } from '../../../src/load/index.ts';

const counts = {
  created: 0,
  updated: 0,
  unchanged: 0,
  matched: 0,
  deleted: 0,
  skipped: 0,
  repeated: 0,
  rejected: 0,
  missing: 0,
  notReached: 0,
};

function progressEvent(
  total: number | null,
  limitPerHour: number | null,
  waits: Extract<ImportEvent, { type: 'progress' }>['waits'] = [],
): ImportEvent {
  return {
    type: 'progress',
    steps: [
      { step: 'organisations', total: 100, ...counts, rowsRead: 100, created: 100 },
      { step: 'people', total, ...counts, rowsRead: 1000, created: 980, rejected: 20 },
    ],
    requests: 1080,
    elapsedMs: 60_000,
    governor: { limitPerHour, remaining: 250, resetAt: null, pausedUntil: null, ratePerHour: 3600 },
    waits,
  };
}

function shown(mode: 'tty' | 'lines', event: ImportEvent): string {
  const out = new PassThrough();
  let text = '';
  out.on('data', (chunk) => (text += chunk));
  new ImportProgress(out, mode).onEvent(event);
  return text;
}

describe('ImportProgress', () => {
  it.each([
    // 4,000 rows left; 1 request a row; the pace so far (1,080 rows a minute) beats 4,000 requests an hour.
    [
      'counted, under a rate limit',
      progressEvent(5000, 4000),
      'organisations 100/100 | people 1,000/5,000 | 1080 done',
      ', 250 requests left in the window, about 1 h 0 min left',
    ],
    // Without a limit the pace so far decides: 4,000 rows at 18 a second.
    [
      'counted, no limit known',
      progressEvent(5000, null),
      'people 1,000/5,000',
      ', 250 requests left in the window, about 3 min 42 s left',
    ],
    ['not counted yet', progressEvent(null, 4000), 'people 1,000 |', ', 250 requests left in the window\n'],
  ])('a plain line when not on a terminal: %s', (_name, event, has, ends) => {
    const line = shown('lines', event);
    expect(line).toMatch(/^\d{4}-\d\d-\d\dT[\d:.]+Z /);
    expect(line).toContain(has);
    expect(line).toContain('20 rejected');
    expect(line.endsWith(ends) || line.endsWith(`${ends}\n`)).toBe(true);
  });

  it('one line rewritten in place on a terminal', () => {
    const line = shown('tty', progressEvent(5000, 4000));
    expect(line.startsWith('\r')).toBe(true);
    expect(line).not.toContain('\n');
  });

  it.each([
    [
      [{ reason: 'rate-limit', detail: 'Retry-After', until: 3_000_000, of: 'account' }],
      ', waiting 50 min for the rate limit (Retry-After)',
    ],
    [
      [{ reason: 'rate-limit', detail: 'the reset', until: 90_400, of: 'old account' }],
      ", waiting 90 s for the old account's rate limit to reset",
    ],
    [
      [
        { reason: 'outage', detail: 'failing for 3 min', until: 20_000, of: 'account' },
        { reason: 'outage', detail: 'failing for 5 min', until: 30_400, of: 'old account' },
      ],
      ', waiting 30 s for the old account to answer again (failing for 5 min)',
    ],
  ] as const)('says what the run waits for: %j', (waits, says) => {
    const now = Date.now();
    const line = shown(
      'lines',
      progressEvent(
        null,
        4000,
        waits.map((wait) => ({ ...wait, until: now + wait.until })),
      ),
    );
    expect(line.trimEnd().endsWith(says)).toBe(true);
  });
});
