import { describe, expect, it } from 'vitest';
import { formatImportSummary, warningAndColumnLines } from '../../../src/cli/import-report.ts';
import type { ImportSummary } from '../../../src/load/index.ts';
import { emptyWarningCounts } from '../../../src/mapping/warnings.ts';

/** A run's summary of one step, counts given. */
function summaryOf(step: Partial<ImportSummary['steps'][number]>, extra: Partial<ImportSummary> = {}): ImportSummary {
  const whole = {
    step: 'people',
    inputFile: '/w/in.csv',
    mappingFile: '/w/m.yaml',
    successFile: null,
    rejectsFile: null,
    rowsRead: 0,
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
    warnings: emptyWarningCounts(),
    notCarried: [],
    reasons: [],
    ...step,
  };
  return {
    run: 'r1',
    stateDir: '/w/.crm-ferry',
    steps: [whole],
    requests: 0,
    requestsForNames: 0,
    requestsForSetup: 0,
    elapsedMs: 1000,
    interrupted: false,
    stopped: null,
    reconciled: { applied: 0, notApplied: 0 },
    limited: false,
    retryRejects: false,
    dryRun: null,
    setup: null,
    ...extra,
  };
}

describe('the summary names warnings and columns not carried', () => {
  it('lists only the codes that occurred, and every unread column with its rows', () => {
    const warnings = { ...emptyWarningCounts(), VALUE_DROPPED: 3, LINK_UNRESOLVED: 1 };
    expect(
      warningAndColumnLines(
        warnings,
        [
          { column: 'Create Date', rows: 42 },
          { column: 'Fax', rows: 1 },
        ],
        '  ',
        'out/people.warnings.csv',
      ),
    ).toEqual([
      '  warnings:  -> out/people.warnings.csv',
      '          3  VALUE_DROPPED',
      '          1  LINK_UNRESOLVED',
      '  not carried: column "Create Date", 42 rows with a value',
      '  not carried: column "Fax", 1 row with a value',
    ]);
    expect(warningAndColumnLines(emptyWarningCounts(), [])).toEqual([]);
  });

  it("shows them per step in the run's summary", () => {
    const summary = summaryOf(
      {
        successFile: '/w/s.csv',
        rowsRead: 2,
        created: 2,
        warnings: { ...emptyWarningCounts(), VALUE_KEPT: 2 },
        notCarried: [{ column: 'Notes', rows: 2 }],
      },
      { requests: 3, requestsForNames: 1 },
    );
    const text = formatImportSummary(summary, '/w');
    expect(text).toMatch(
      /results\s+-> s\.csv\n  warnings:\n\s+2  VALUE_KEPT\n  not carried: column "Notes", 2 rows with a value\n/,
    );
  });

  it('shows a live v1 input as its address, and what reading the old account cost', () => {
    const summary = summaryOf(
      { step: 'organisations', inputFile: 'v1+https://old.example.com/api/party', rowsRead: 1, created: 1 },
      { requests: 11, requestsForNames: 10 },
    );
    const text = formatImportSummary(summary, '/w', 3);
    // Not a path: relative() would make it v1+https:/old.example.com/...
    expect(text).toContain('Step organisations: v1+https://old.example.com/api/party with m.yaml\n');
    expect(text).toMatch(/\nReading the old account \(v1\): 3 requests\.\n/);
    expect(formatImportSummary(summary, '/w')).not.toContain('old account');
    const dry = formatImportSummary(
      {
        ...summary,
        dryRun: {
          requests: 11,
          requestsForNames: 10,
          requestsForSetup: 0,
          lookUps: 0,
          lookUpValues: 0,
          limitPerHour: null,
          estimatedSeconds: null,
          samples: [],
        },
      },
      '/w',
      1,
    );
    expect(dry).toMatch(
      /Requests needed: 11 \(10 to read the account's names once, 1 for the rows\)\.\nThe service did not say its rate limit; the time depends on it\.\nReading the old account \(v1\) took 1 request besides, at the old account's own rate limit; the run reads it again\.\n/,
    );
  });

  it('says what the set-up sends, apart from the names and the rows, in a run and in a dry run', () => {
    const summary = summaryOf({ rowsRead: 4, created: 4 }, { requests: 19, requestsForNames: 10, requestsForSetup: 3 });
    expect(formatImportSummary(summary, '/w')).toContain(
      "Requests: 19 (10 to read the account's names once, 3 for the set-up, 6 for the rows, 1.50 per record written); elapsed 1.0 s.\n",
    );
    const dry = formatImportSummary(
      {
        ...summary,
        dryRun: {
          requests: 19,
          requestsForNames: 10,
          requestsForSetup: 3,
          lookUps: 0,
          lookUpValues: 0,
          limitPerHour: 4000,
          estimatedSeconds: 18,
          samples: [],
        },
      },
      '/w',
    );
    expect(dry).toContain(
      "Requests needed: 19 (10 to read the account's names once, 3 for the set-up, 6 for the rows).\nAt the account's limit of 4,000 requests per hour that takes about 18.0 s.\n",
    );
    expect(dry).not.toContain('match:');
    // Look-ups share requests in the run as in the dry run; linked steps may need a few more.
    const matched = formatImportSummary(
      {
        ...summary,
        dryRun: {
          requests: 19,
          requestsForNames: 10,
          requestsForSetup: 3,
          lookUps: 2,
          lookUpValues: 60,
          limitPerHour: 4000,
          estimatedSeconds: 18,
          samples: [],
        },
      },
      '/w',
    );
    expect(matched).toContain(
      "Of those, 2 requests look up 60 values of match: in the account, up to 50 a request, as the run will; a step whose rows wait for another step's records may need a few more.\n",
    );
  });

  it('says the names are read once a run for a summary that joins runs (a restore)', () => {
    const summary = summaryOf({ rowsRead: 4, created: 4 }, { requests: 28, requestsForNames: 20, requestsForSetup: 2 });
    expect(formatImportSummary(summary, '/w', 0, 'once a run')).toContain(
      "Requests: 28 (20 to read the account's names once a run, 2 for the set-up, 6 for the rows, 1.50 per record written)",
    );
  });
});
