import { describe, expect, it } from 'vitest';
import type { ImportSummary } from '../../../src/load/index.ts';
import { fromRecord, planUpdate } from '../../../src/load/index.ts';
import { emptyWarningCounts } from '../../../src/mapping/warnings.ts';
import {
  DIFFERENCES_SHOWN,
  EXAMPLES_PER_REASON,
  escapeHtml,
  importReport,
  ReasonTally,
  renderReport,
  usageChart,
  UsageRecorder,
  type ReportInput,
  type UsageSample,
} from '../../../src/report/index.ts';

const step = {
  step: 'people',
  inputFile: '/data/contacts.csv',
  mappingFile: '/data/people.yaml',
  successFile: '/data/.crm-ferry/results/people.success.csv',
  rejectsFile: null,
  rowsRead: 10,
  created: 7,
  updated: 0,
  unchanged: 0,
  matched: 0,
  deleted: 0,
  skipped: 1,
  repeated: 0,
  rejected: 2,
  missing: 0,
  notReached: 0,
  warnings: emptyWarningCounts(),
  notCarried: [{ column: 'Fax', rows: 4 }],
  reasons: [],
};

function summary(extra: object = {}): ImportSummary {
  return {
    run: 'r1',
    stateDir: '/data/.crm-ferry',
    steps: [{ ...step, ...extra }],
    requests: 20,
    requestsForNames: 10,
    requestsForSetup: 0,
    elapsedMs: 1500,
    interrupted: false,
    stopped: null,
    reconciled: { applied: 0, notApplied: 0 },
    limited: false,
    retryRejects: false,
    dryRun: null,
    setup: null,
  };
}

const context = {
  command: 'run' as const,
  version: '9.9.9',
  plan: 'plan.yaml',
  account: 'https://acme.example',
  usage: [] as UsageSample[],
  outcome: '2 rows rejected',
  reasons: [],
  finishedAt: new Date('2026-01-02T03:04:05Z'),
};

describe('escapeHtml', () => {
  it.each([
    ['<script>alert(1)</script>', '&lt;script&gt;alert(1)&lt;/script&gt;'],
    [`"quoted" & 'single'`, '&quot;quoted&quot; &amp; &#39;single&#39;'],
    ['plain', 'plain'],
    [42, '42'],
  ])('%j', (value, expected) => {
    expect(escapeHtml(value)).toBe(expected);
  });
});

describe('UsageRecorder', () => {
  it('keeps a bounded number of samples on a long run: thins every other one, keeps the first and the newest, and doubles its interval', () => {
    let now = 1000;
    let sent = 50;
    const recorder = new UsageRecorder(
      { requests: () => sent, quota: () => ({ remaining: 100 - sent, limit: 4000 }) },
      { everyMs: 10, maxSamples: 8, now: () => now },
    ).start(false);
    for (let i = 1; i <= 40; i += 1) {
      now += 10;
      sent += 1;
      recorder.sample();
    }
    const samples = recorder.stop();
    expect(samples.length).toBeLessThanOrEqual(9);
    expect(samples[0]).toEqual({ atMs: 0, requests: 0, remaining: 50, limit: 4000 });
    expect(samples.at(-1)).toEqual({ atMs: 400, requests: 40, remaining: 10, limit: 4000 });
    expect(recorder.everyMs).toBeGreaterThanOrEqual(40);
    // Still in time order.
    for (let i = 1; i < samples.length; i += 1)
      expect((samples[i] as UsageSample).atMs).toBeGreaterThanOrEqual((samples[i - 1] as UsageSample).atMs);
  });
});

describe('ReasonTally', () => {
  it('counts every reject by step and code and keeps a few rows as examples', () => {
    const tally = new ReasonTally();
    for (let row = 2; row < 8; row += 1)
      tally.onImportEvent({
        type: 'row',
        step: 'people',
        row,
        key: `k${row}`,
        action: 'rejected',
        code: 'MAPPING_VALUE',
        message: 'lastName is required',
      });
    tally.onImportEvent({
      type: 'row',
      step: 'people',
      row: 9,
      key: 'k9',
      action: 'rejected',
      code: 'API_VALIDATION',
      message: 'refused',
    });
    tally.onImportEvent({ type: 'row', step: 'people', row: 10, key: 'k10', action: 'created', id: 5 });
    const groups = tally.groups();
    expect(groups.map((g) => [g.code, g.count, g.examples.length])).toEqual([
      ['MAPPING_VALUE', 6, EXAMPLES_PER_REASON],
      ['API_VALIDATION', 1, 1],
    ]);
    expect(groups[0]?.examples[0]).toEqual({ row: 2, key: 'k2', field: '', message: 'lastName is required' });
  });
});

describe('renderReport', () => {
  it('shows the warnings by code a step summary carries, and counts them among what was not carried', () => {
    const html = renderReport(importReport(summary({ warnings: { VALUE_DROPPED: 3, USER_UNKNOWN: 1 } }), context));
    expect(html).toMatch(
      /<tr data-kind="warning" data-step="people" data-code="VALUE_DROPPED">.*<td class="n">3<\/td>/,
    );
    expect(html).toContain('data-code="USER_UNKNOWN"');
    expect(html).toContain('people</strong>: 4 warnings on rows written with something left out or changed');
    expect(html).toContain('people</strong>: 4 column &quot;Fax&quot;: no field reads it');
  });

  it('says no warning when the summary has none, and escapes what comes from the input', () => {
    const tally = new ReasonTally();
    tally.onImportEvent({
      type: 'row',
      step: 'people',
      row: 3,
      key: '<b>k</b>',
      action: 'rejected',
      code: 'MAPPING_VALUE',
      message: 'bad "value" <i>',
    });
    const html = renderReport(importReport(summary(), { ...context, plan: 'a<b>.yaml', reasons: tally.groups() }));
    expect(html).toContain('row 3, key <code>&lt;b&gt;k&lt;/b&gt;</code>: bad &quot;value&quot; &lt;i&gt;');
    expect(html).toContain('<title>Migration run: a&lt;b&gt;.yaml</title>');
    expect(html).not.toContain('data-kind="warning"');
    expect(html).not.toMatch(/<script|<link /);
    expect(html).toContain(`content="default-src 'none'; style-src 'unsafe-inline'"`);
  });

  it('lists at most DIFFERENCES_SHOWN differences and says how many more the file has', () => {
    const differences = Array.from({ length: DIFFERENCES_SHOWN + 7 }, (_, i) => ({
      step: 's',
      kind: 'missing' as const,
      changedIn: 'account' as const,
      row: i + 2,
      key: `k${i}`,
      field: '',
      inFile: 'a record',
      inAccount: 'gone',
      id: null,
    }));
    const input: ReportInput = {
      ...importReport(summary(), context),
      command: 'verify',
      differences,
      differencesFile: 'diff.csv',
    };
    const html = renderReport(input);
    expect(html.match(/<tr data-kind="missing"/g)).toHaveLength(DIFFERENCES_SHOWN);
    expect(html).toContain('7 more differences are in the differences file.');
  });
});

describe('usageChart', () => {
  it('draws a line even from one sample, and the quota line only when the service said it', () => {
    const one = usageChart([{ atMs: 0, requests: 3, remaining: null, limit: null }]);
    expect(one).toMatch(/<polyline class="requests"[^>]* points="[\d.]+,[\d.]+ [\d.]+,[\d.]+"/);
    expect(one).not.toContain('class="quota"');
    expect(one).toContain('the service did not say its rate limit');
    const two = usageChart([
      { atMs: 0, requests: 0, remaining: 4000, limit: 4000 },
      { atMs: 60_000, requests: 100, remaining: 3900, limit: 4000 },
    ]);
    expect(two).toContain('class="quota"');
    expect(two).toContain('the fewest requests left in a rate-limit window: 3,900 (the account allows 4,000 an hour)');
  });
});

describe('the comparison verify shares with --full', () => {
  it('takes a link the account gives back for a bare id as that id, and a changed plain field as a change', () => {
    const record = { id: 1, activityType: { id: 3, name: 'Call' }, content: 'Hi', party: { id: 9, name: 'Ada' } };
    expect(
      planUpdate(
        fromRecord(record, { activityType: 3, content: 'Hi', party: { id: 9 } }),
        { activityType: 3, content: 'Hi', party: { id: 9 } },
        record,
      ).changes,
    ).toEqual({});
    expect(
      planUpdate(fromRecord(record, { activityType: 4, content: 'Hi' }), { activityType: 4, content: 'Hi' }, record)
        .changes,
    ).toEqual({ activityType: 4 });
  });
});
