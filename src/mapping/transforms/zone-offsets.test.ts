import { IANAZone } from 'luxon';
import { describe, expect, it } from 'vitest';
import { ZoneOffsets } from './zone-offsets.ts';

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Pacific/Auckland',
  'Pacific/Kiritimati',
  'America/Santiago',
  'Australia/Lord_Howe',
  'Asia/Kolkata',
];
/** UTC days around the 2024 clock changes of the zones above. */
const DAYS = [
  '2024-03-31',
  '2024-10-27',
  '2024-03-10',
  '2024-11-03',
  '2024-04-07',
  '2024-09-29',
  '2024-09-08',
  '2024-04-06',
  '2024-10-06',
];
const QUARTER = 15 * 60_000;

function offsets(zone: string): ZoneOffsets {
  const found = ZoneOffsets.of(zone);
  if (found === undefined) throw new Error(`no zone ${zone}`);
  return found;
}

describe('ZoneOffsets', () => {
  it.each(ZONES)('gives the same offsets as Intl for every quarter hour around the clock changes in %s', (zone) => {
    const cached = offsets(zone);
    const exact = IANAZone.create(zone);
    const mismatches: string[] = [];
    for (const day of DAYS) {
      const start = Date.parse(`${day}T00:00:00Z`) - 86_400_000;
      for (let instant = start; instant < start + 3 * 86_400_000; instant += QUARTER) {
        // Also a minute before each quarter, to land right before a change.
        for (const probe of [instant, instant - 60_000]) {
          if (cached.offsetAt(probe) !== exact.offset(probe)) mismatches.push(new Date(probe).toISOString());
        }
      }
    }
    expect(mismatches).toEqual([]);
  });

  it.each([
    ['Europe/Berlin', '2024-03-31T02:30:00', '2024-03-31T01:30:00.000Z'],
    ['Europe/Berlin', '2024-03-31T03:00:00', '2024-03-31T01:00:00.000Z'],
    ['Europe/Berlin', '2024-03-31T01:59:00', '2024-03-31T00:59:00.000Z'],
    ['Europe/Berlin', '2024-10-27T02:00:00', '2024-10-27T00:00:00.000Z'],
    ['Europe/Berlin', '2024-10-27T02:59:00', '2024-10-27T00:59:00.000Z'],
    ['Europe/Berlin', '2024-10-27T03:00:00', '2024-10-27T02:00:00.000Z'],
    ['America/New_York', '2024-11-03T01:00:00', '2024-11-03T05:00:00.000Z'],
    ['America/New_York', '2024-11-03T00:59:00', '2024-11-03T04:59:00.000Z'],
    ['Australia/Lord_Howe', '2024-04-07T01:45:00', '2024-04-06T14:45:00.000Z'],
    ['Australia/Lord_Howe', '2024-10-06T02:15:00', '2024-10-05T15:45:00.000Z'],
    ['Asia/Kolkata', '2024-03-31T02:30:00', '2024-03-30T21:00:00.000Z'],
  ])('in %s, wall time %s is %s', (zone, wall, utc) => {
    expect(new Date(offsets(zone).wallToUtc(Date.parse(`${wall}Z`))).toISOString()).toBe(utc);
  });

  it('knows no zone by a wrong name, and shares one cache per zone', () => {
    expect(ZoneOffsets.of('Mars/Olympus')).toBeUndefined();
    expect(ZoneOffsets.of('Europe/Berlin')).toBe(ZoneOffsets.of('Europe/Berlin'));
  });
});
