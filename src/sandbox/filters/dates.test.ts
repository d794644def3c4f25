import { describe, expect, it } from 'vitest';
import { addDays, isIsoDate, utcDate } from './dates.ts';

describe('dates', () => {
  it.each([
    ['2026-02-28', true],
    ['2024-02-29', true],
    ['2026-02-29', false],
    ['2026-13-01', false],
    ['2026-1-01', false],
    ['2026-01-01T00:00:00Z', false],
    ['', false],
  ])('isIsoDate(%j) is %s', (text, expected) => {
    expect(isIsoDate(text)).toBe(expected);
  });

  it.each([
    ['2026-03-01', -1, '2026-02-28'],
    ['2024-03-01', -1, '2024-02-29'],
    ['2026-12-31', 1, '2027-01-01'],
    ['2026-03-15', 0, '2026-03-15'],
    ['2026-03-15', 10_000_000, '9999-12-31'],
    ['2026-03-15', -10_000_000, '0000-01-01'],
  ])('addDays(%s, %d) is %s', (date, days, expected) => {
    expect(addDays(date, days)).toBe(expected);
  });

  it('takes the UTC date of the clock, not the local one', () => {
    expect(utcDate(new Date('2026-03-15T23:30:00-05:00'))).toBe('2026-03-16');
  });
});
