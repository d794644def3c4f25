import { describe, expect, it } from 'vitest';
import { parseCompactTimestamp, parseMoment, v1Timestamp } from './input.ts';

describe('v1 dates', () => {
  it.each([
    ['20090630T000000', '2009-06-30T00:00:00.000Z'],
    ['20090631T000000', '2009-07-01T00:00:00.000Z'],
    ['20240229T235959', '2024-02-29T23:59:59.000Z'],
    ['20230229T120000', '2023-03-01T12:00:00.000Z'],
    ['20091301T000000', null],
    ['20090600T000000', null],
    ['20090630T240000', null],
    ['2009-06-30', null],
  ])('reads the compact form %s', (raw, expected) => {
    expect(parseCompactTimestamp(raw)?.toISOString() ?? null).toBe(expected);
  });

  it.each([
    ['2011-09-14', { date: '2011-09-14', time: null }],
    ['2011-09-14T15:22:01Z', { date: '2011-09-14', time: '15:22:01' }],
    ['2011-09-14T15:22', { date: '2011-09-14', time: '15:22:00' }],
    ['2011-09-14T23:30:00-02:00', { date: '2011-09-15', time: '01:30:00' }],
    ['2011-09-14T10:00:00+0530', { date: '2011-09-14', time: '04:30:00' }],
    ['20110914T152201', { date: '2011-09-14', time: '15:22:01' }],
    ['2011-02-30', null],
    ['2011-09-14T25:00:00Z', null],
    ['14/09/2011', null],
  ])('reads the body value %s', (raw, expected) => {
    expect(parseMoment(raw)).toEqual(expected);
  });

  it('writes dates and timestamps in the v1 form', () => {
    expect(v1Timestamp('2011-09-14')).toBe('2011-09-14T00:00:00Z');
    expect(v1Timestamp('2011-09-14T15:22:01Z')).toBe('2011-09-14T15:22:01Z');
    expect(v1Timestamp('2011-09-14T15:22:01.123+01:00')).toBe('2011-09-14T14:22:01Z');
    expect(v1Timestamp(null)).toBeNull();
  });
});
