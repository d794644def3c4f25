import { describe, expect, it } from 'vitest';
import { DEFAULT_GIVE_UP_AFTER_MS, parseDuration } from '../../../src/cli/flags.ts';
import { toImportCommandOptions } from '../../../src/cli/import.ts';

describe('import and run flags', () => {
  it.each([
    ['30m', 1_800_000],
    ['90s', 90_000],
    ['2h', 7_200_000],
    ['1h30m', 5_400_000],
    ['1500ms', 1500],
    ['45min', 2_700_000],
    [' 10 s ', 10_000],
  ])('--give-up-after %j is %i ms', (text, ms) => {
    expect(parseDuration(text, 'give-up-after')).toBe(ms);
  });

  it.each([['30'], ['30x'], ['m'], ['1h 30'], ['-5m'], ['500ms'], ['']])(
    '--give-up-after %j is refused with a usage error',
    (text) => {
      expect(() => parseDuration(text, 'give-up-after')).toThrow(
        expect.objectContaining({ code: 'USAGE', message: expect.stringContaining('--give-up-after') }),
      );
    },
  );

  it('sizes the pool to --concurrency and waits 65 minutes at a time for the service unless told (an hourly reset is waited for)', () => {
    const plain = toImportCommandOptions({ values: {}, positionals: ['plan.yaml'] }, '/tmp', 'plan');
    expect(plain.transport).toEqual({ connections: 8, giveUpAfterMs: DEFAULT_GIVE_UP_AFTER_MS });
    expect(DEFAULT_GIVE_UP_AFTER_MS).toBe(65 * 60_000);
    const given = toImportCommandOptions(
      { values: { concurrency: '16', 'give-up-after': '90s' }, positionals: ['plan.yaml'] },
      '/tmp',
      'plan',
    );
    expect(given.transport).toEqual({ connections: 16, giveUpAfterMs: 90_000 });
    expect(given.run.concurrency).toBe(16);
  });
});
