import { describe, expect, it } from 'vitest';
import { formatSetupPlan, formatSetupReport } from '../../../src/cli/import-report.ts';
import type { SetupPlan, SetupReport } from '../../../src/load/index.ts';

/** Everything `crm-ferry setup` prints about a set-up: the plan (stderr) and the report (stdout), in order. */
function printed(plan: SetupPlan, report: Omit<SetupReport, keyof SetupPlan>): string[] {
  const text = formatSetupPlan(plan) + formatSetupReport({ ...plan, ...report });
  return text.split('\n').filter((line) => line !== '');
}

describe('set-up lines (issue 26, item 14)', () => {
  it('says "nothing to create" once, in one line, whether or not the account had names to find', () => {
    const none: SetupPlan = { create: [], present: 0, checklist: [] };
    expect(printed(none, { created: [], dryRun: false })).toEqual([
      'Set-up: nothing to create: the plan and its rows name no pipeline, milestone, activity type or track definition.',
    ]);
    expect(printed(none, { created: [], dryRun: true })).toHaveLength(1);
    const found: SetupPlan = { create: [], present: 3, checklist: [] };
    expect(printed(found, { created: [], dryRun: false })).toEqual([
      'Set-up: nothing to create: the account has the 3 names the plan and its rows use.',
    ]);
  });

  it('still lists what it creates, and after it what it created', () => {
    const plan: SetupPlan = {
      create: [
        { kind: 'activityType', name: 'Email', pipeline: null, origin: 'rows', body: {}, key: 'activityType:email' },
      ],
      present: 1,
      checklist: [],
    };
    expect(printed(plan, { created: [{ kind: 'activityType', name: 'Email', id: 1042 }], dryRun: false })).toEqual([
      'Set-up: 1 thing to create (1 found already):',
      '  activity type `Email` (named by the rows)',
      'Set-up: created activity type `Email` (id 1042).',
    ]);
    expect(printed(plan, { created: [], dryRun: true }).at(-1)).toBe(
      'Set-up (dry run): 1 thing would be created; nothing was.',
    );
  });
});
