import { DateTime } from 'luxon';
import { afterEach, describe, expect, it } from 'vitest';
import { date, time, timestamp } from './dates.ts';
import { build, optionsError, transformErrorOf, UTC } from '../../../test/helpers/transforms.ts';
import type { TransformContext, Value } from './types.ts';

const ZONES = [
  'Europe/Berlin',
  'America/New_York',
  'Pacific/Auckland',
  'Pacific/Kiritimati',
  'America/Santiago',
  'UTC',
];
/** Days on which clocks change in at least one of the zones above (EU, US) plus a plain one. */
const DAYS = ['2024-03-31', '2024-10-27', '2024-03-10', '2024-11-03', '2024-09-08', '2024-04-07', '2024-02-29'];

const zoned = (timeZone: string): TransformContext => ({ timeZone });
const machineZone = process.env.TZ;

afterEach(() => {
  if (machineZone === undefined) delete process.env.TZ;
  else process.env.TZ = machineZone;
});

describe('date never shifts a day', () => {
  const table = ZONES.flatMap((zone) => DAYS.map((day) => [zone, day] as const));

  it('runs in the zones it claims to (the machine zone really changes)', () => {
    process.env.TZ = 'Pacific/Auckland';
    expect(new Date(2024, 2, 31).toISOString()).toBe('2024-03-30T11:00:00.000Z');
    process.env.TZ = 'America/New_York';
    expect(new Date(2024, 2, 31).toISOString()).toBe('2024-03-31T04:00:00.000Z');
  });

  it.each(table)('in %s, %s stays the same day', async (zone, day) => {
    process.env.TZ = zone;
    const [year, month, dayOfMonth] = day.split('-').map(Number) as [number, number, number];
    const iso = await build(date, {});
    const german = await build(date, { format: 'dd.MM.yyyy' });
    const american = await build(date, { format: ['M/d/yyyy', 'yyyy-MM-dd'] });
    const context = zoned(zone);
    expect(iso(day, context)).toBe(day);
    expect(iso(`${day}T23:30:00+14:00`, context)).toBe(day);
    expect(iso(`${day}T00:15:00-11:00`, context)).toBe(day);
    expect(iso(`${day} 23:59:59`, context)).toBe(day);
    expect(german(`${day.slice(8, 10)}.${day.slice(5, 7)}.${day.slice(0, 4)}`, context)).toBe(day);
    expect(american(`${month}/${dayOfMonth}/${year}`, context)).toBe(day);
    expect(american(day, context)).toBe(day);
    // How the XLSX reader gives a date cell: UTC midnight of the day in the cell.
    expect(iso(new Date(Date.UTC(year, month - 1, dayOfMonth)), context)).toBe(day);
    expect(german(new Date(Date.UTC(year, month - 1, dayOfMonth, 23, 59)), context)).toBe(day);
  });
});

describe('date', () => {
  it.each<[options: unknown, input: Value, output: Value]>([
    [{}, ' 2024-12-31 ', '2024-12-31'],
    [{}, '', null],
    [{}, null, null],
    [{}, ['2024-01-02', ' ', '2024-03-04'], ['2024-01-02', '2024-03-04']],
    [{ format: 'd MMM yyyy' }, '5 Mar 2024', '2024-03-05'],
    [{ format: 'd MMMM yyyy', locale: 'de-DE' }, '31 März 2024', '2024-03-31'],
    [{ format: 'dd.MM.yy' }, '31.03.24', '2024-03-31'],
    [{ format: 'yyyyMMdd' }, '20240331', '2024-03-31'],
    [{ format: 'dd.MM.yyyy HH:mm' }, '31.03.2024 23:30', '2024-03-31'],
    [{ format: 'd.M.yyyy' }, '1.3.2024', '2024-03-01'],
    [{ format: 'd.M.yyyy' }, '01.03.2024', '2024-03-01'],
    [{ format: 'yyyy/MM/dd' }, '2024/02/29', '2024-02-29'],
    [{ format: 'yyyy/MM/dd' }, '2000/02/29', '2000-02-29'],
    [{ format: ["dd.MM.yyyy 'h'", 'dd.MM.yyyy'] }, '29.02.2024', '2024-02-29'],
    [{ format: ["dd.MM.yyyy 'h'", 'dd.MM.yyyy'] }, '29.02.2024 h', '2024-02-29'],
    [{}, '2024-03-31T14:00:00,5Z', '2024-03-31'],
    [{}, '2024-03-31T01:00:00.123456789-11:00', '2024-03-31'],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(date, options);
    expect(fn(input, UTC)).toEqual(output);
  });

  it.each<[options: unknown, input: Value, message: string]>([
    [{ format: 'dd.MM.yyyy' }, '2024/13/01', 'expected a date like 31.12.2024 (dd.MM.yyyy), got "2024/13/01"'],
    [{ format: 'dd.MM.yyyy' }, '31.02.2024', 'expected a date like 31.12.2024 (dd.MM.yyyy), got "31.02.2024"'],
    [{ format: 'dd.MM.yyyy' }, '1.3.2024', 'expected a date like 31.12.2024 (dd.MM.yyyy), got "1.3.2024"'],
    [
      { format: ['dd.MM.yyyy', 'M/d/yyyy'] },
      '13/31/2024',
      'expected a date like 31.12.2024 (dd.MM.yyyy) or 12/31/2024 (M/d/yyyy), got "13/31/2024"',
    ],
    [{}, '2024-02-30', 'expected a date like 2024-12-31 (ISO 8601), got "2024-02-30"'],
    [{}, '2024', 'expected a date like 2024-12-31 (ISO 8601), got "2024"'],
    [{}, '2024-03-31T25:00:00', 'expected a date like 2024-12-31 (ISO 8601), got "2024-03-31T25:00:00"'],
    [{ format: 'd.M.yyyy' }, '001.03.2024', 'expected a date like 31.12.2024 (d.M.yyyy), got "001.03.2024"'],
    [{ format: 'yyyy/MM/dd' }, '2023/02/29', 'expected a date like 2024/12/31 (yyyy/MM/dd), got "2023/02/29"'],
    [{ format: 'yyyy/MM/dd' }, '1900/02/29', 'expected a date like 2024/12/31 (yyyy/MM/dd), got "1900/02/29"'],
    [{}, '31.12.2024', 'expected a date like 2024-12-31 (ISO 8601), got "31.12.2024"'],
    [{}, 45382, 'expected a date like 2024-12-31 (ISO 8601), got 45382'],
    [{}, true, 'expected a date like 2024-12-31 (ISO 8601), got true'],
    [{}, new Date(Number.NaN), 'expected a date like 2024-12-31 (ISO 8601), got an invalid date'],
  ])('%j rejects %j', async (options, input, message) => {
    const fn = await build(date, options);
    const error = transformErrorOf(fn, input);
    expect(error.message).toBe(message);
    expect(error.transform).toBe('date');
  });

  it.each([
    [{ format: 'dd.mm.yyyy' }, 'format "dd.mm.yyyy" must contain a year, a month and a day (such as dd.MM.yyyy)'],
    [{ format: 'MM.yyyy' }, 'format "MM.yyyy" must contain a year, a month and a day (such as dd.MM.yyyy)'],
    [{ format: ['dd.MM.yyyy', 'HH:mm'] }, 'format "HH:mm" must contain a year, a month and a day (such as dd.MM.yyyy)'],
    [{ format: [] }, 'Too small: expected array to have >=1 items'],
  ])('rejects the options %j', (options, message) => {
    expect(optionsError(date, options)).toBe(message);
  });
});

describe('numeric formats, read without luxon, agree with luxon', () => {
  const formats = ['dd.MM.yyyy', 'd.M.yyyy', 'M/d/yyyy', 'yyyyMMdd', 'yyyy-MM-dd HH:mm:ss', 'd.M.yyyy H:m'];
  const inputs = [
    '1.3.2024',
    '01.03.2024',
    '31.02.2024',
    '29.02.2023',
    '29.02.2024',
    '1/2/2024',
    '12/31/2024',
    '13/1/2024',
    '20240331',
    '2024033',
    '2024-02-29 23:59:59',
    '2024-02-29 23:59',
    '2024-02-29 7:05:00',
    '1.3.2024 9:5',
    '1.3.2024 09:05',
    '1.3.2024 23:60',
    '111.3.2024',
  ];
  const table = formats.flatMap((format) => inputs.map((input) => [format, input] as const));

  it.each(table)('%s reads %j as luxon does', async (format, input) => {
    const parsed = DateTime.fromFormat(input, format, { zone: 'utc' });
    const fn = await build(date, { format });
    let result: string;
    try {
      result = String(fn(input, UTC));
    } catch {
      result = 'rejected';
    }
    expect(result).toBe(parsed.isValid ? parsed.toISODate() : 'rejected');
  });
});

describe('timestamp', () => {
  it.each<[options: unknown, zone: string, input: Value, output: string | null]>([
    [{}, 'UTC', '2024-03-31T14:00:00Z', '2024-03-31T14:00:00Z'],
    [{}, 'UTC', '2024-03-31T14:00:00.999Z', '2024-03-31T14:00:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31T14:00:00', '2024-03-31T12:00:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31 14:00:00', '2024-03-31T12:00:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31 14:00', '2024-03-31T12:00:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31', '2024-03-30T23:00:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31T14:00:00+05:30', '2024-03-31T08:30:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31T14:00:00+0530', '2024-03-31T08:30:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31T14:00:00-05', '2024-03-31T19:00:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31 14:00:00 +02:00', '2024-03-31T12:00:00Z'],
    [{}, 'Europe/Berlin', '2024-03-31T14:00Z', '2024-03-31T14:00:00Z'],
    [{}, 'Pacific/Kiritimati', '2024-03-31T10:00:00', '2024-03-30T20:00:00Z'],
    [{}, 'Pacific/Auckland', '2024-03-31T10:00:00', '2024-03-30T21:00:00Z'],
    // Spring forward: the missing half hour is read as the time after the gap.
    [{}, 'Europe/Berlin', '2024-03-31T02:30:00', '2024-03-31T01:30:00Z'],
    [{}, 'America/New_York', '2024-03-10T02:30:00', '2024-03-10T07:30:00Z'],
    [{}, 'Pacific/Auckland', '2024-09-29T02:30:00', '2024-09-28T14:30:00Z'],
    [{}, 'America/Santiago', '2024-09-08', '2024-09-08T04:00:00Z'],
    // Fall back: the repeated hour is read as its first occurrence (still summer time).
    [{}, 'Europe/Berlin', '2024-10-27T02:30:00', '2024-10-27T00:30:00Z'],
    [{}, 'America/New_York', '2024-11-03T01:30:00', '2024-11-03T05:30:00Z'],
    [{}, 'Pacific/Auckland', '2024-04-07T02:30:00', '2024-04-06T13:30:00Z'],
    // Either side of the repeated hour is unambiguous and stays as it is.
    [{}, 'Europe/Berlin', '2024-10-27T01:59:00', '2024-10-26T23:59:00Z'],
    [{}, 'Europe/Berlin', '2024-10-27T03:00:00', '2024-10-27T02:00:00Z'],
    [{}, 'America/New_York', '2024-11-03T02:30:00', '2024-11-03T07:30:00Z'],
    // An explicit offset is kept, even for the second occurrence of a repeated hour.
    [{}, 'Europe/Berlin', '2024-10-27T02:30:00+01:00', '2024-10-27T01:30:00Z'],
    [{ timeZone: 'America/New_York' }, 'Europe/Berlin', '2024-03-31T14:00:00', '2024-03-31T18:00:00Z'],
    [{ format: 'dd.MM.yyyy HH:mm' }, 'Europe/Berlin', '27.10.2024 02:30', '2024-10-27T00:30:00Z'],
    [{ format: 'dd.MM.yyyy HH:mm ZZ' }, 'Europe/Berlin', '27.10.2024 02:30 +01:00', '2024-10-27T01:30:00Z'],
    [{ format: ['M/d/yyyy h:mm a', 'M/d/yyyy'] }, 'America/New_York', '3/10/2024 3:15 AM', '2024-03-10T07:15:00Z'],
    [{ format: ['M/d/yyyy h:mm a', 'M/d/yyyy'] }, 'America/New_York', '3/10/2024', '2024-03-10T05:00:00Z'],
    [{ format: 'd.M.yyyy H:mm:ss' }, 'Europe/Berlin', '1.7.2024 9:05:30', '2024-07-01T07:05:30Z'],
    // The XLSX reader gives wall-clock time as if it were UTC; it is local time in the zone.
    [{}, 'Europe/Berlin', new Date(Date.UTC(2024, 2, 31, 14, 0)), '2024-03-31T12:00:00Z'],
    [{}, 'Europe/Berlin', new Date(Date.UTC(2024, 9, 27, 2, 30)), '2024-10-27T00:30:00Z'],
    [{}, 'UTC', new Date(Date.UTC(2024, 2, 31, 14, 29, 59, 999.6)), '2024-03-31T14:30:00Z'],
    [{}, 'UTC', '', null],
    [{}, 'UTC', null, null],
  ])('%j in %s: %j -> %j', async (options, zone, input, output) => {
    const fn = await build(timestamp, options);
    expect(fn(input, zoned(zone))).toBe(output);
  });

  it('does not depend on the machine time zone', async () => {
    const fn = await build(timestamp, {});
    const results = ['Pacific/Kiritimati', 'America/New_York'].map((zone) => {
      process.env.TZ = zone;
      return fn('2024-10-27T02:30:00', zoned('Europe/Berlin'));
    });
    expect(results).toEqual(['2024-10-27T00:30:00Z', '2024-10-27T00:30:00Z']);
  });

  it('handles lists element by element', async () => {
    const fn = await build(timestamp, {});
    expect(fn(['2024-01-01T00:00:00Z', '2024-01-02T00:00:00+01:00'], UTC)).toEqual([
      '2024-01-01T00:00:00Z',
      '2024-01-01T23:00:00Z',
    ]);
  });

  it.each<[options: unknown, input: Value, message: string]>([
    [{}, '2024-13-01T00:00:00', 'expected a timestamp like 2024-12-31T23:59:58 (ISO 8601), got "2024-13-01T00:00:00"'],
    [{}, 'yesterday', 'expected a timestamp like 2024-12-31T23:59:58 (ISO 8601), got "yesterday"'],
    [{}, 1711893600, 'expected a timestamp like 2024-12-31T23:59:58 (ISO 8601), got 1711893600'],
    [
      { format: 'dd.MM.yyyy HH:mm' },
      '31.03.2024',
      'expected a timestamp like 31.12.2024 23:59 (dd.MM.yyyy HH:mm), got "31.03.2024"',
    ],
    [
      { format: 'dd.MM.yyyy HH:mm' },
      '31.04.2024 10:00',
      'expected a timestamp like 31.12.2024 23:59 (dd.MM.yyyy HH:mm), got "31.04.2024 10:00"',
    ],
    [
      { format: 'dd.MM.yyyy HH:mm' },
      '0031.03.2024 10:00',
      'expected a timestamp like 31.12.2024 23:59 (dd.MM.yyyy HH:mm), got "0031.03.2024 10:00"',
    ],
  ])('%j rejects %j', async (options, input, message) => {
    const fn = await build(timestamp, options);
    const error = transformErrorOf(fn, input);
    expect(error.message).toBe(message);
    expect(error.transform).toBe('timestamp');
  });

  it.each([
    [{ timeZone: 'Mars/Olympus' }, '"Mars/Olympus" is not an IANA time zone (such as Europe/Berlin)'],
    [{ format: 'HH:mm' }, 'format "HH:mm" must contain a year, a month and a day (such as dd.MM.yyyy)'],
  ])('rejects the options %j', (options, message) => {
    expect(optionsError(timestamp, options)).toBe(message);
  });
});

describe('time', () => {
  it.each<[options: unknown, input: Value, output: Value]>([
    [{}, '9:05', '09:05:00'],
    [{}, '09:05', '09:05:00'],
    [{}, '23:59:59', '23:59:59'],
    [{}, '0:00', '00:00:00'],
    [{ format: 'h:mm a' }, '2:30 PM', '14:30:00'],
    [{ format: 'h:mm a' }, '12:05 AM', '00:05:00'],
    [{ format: 'HHmm' }, '0930', '09:30:00'],
    [{}, ['9:00', '', '17:30'], ['09:00:00', '17:30:00']],
    [{}, '', null],
    [{}, null, null],
    // An XLSX time cell is a fraction of a day after the 1899-12-30 epoch, read as UTC.
    [{}, new Date(Date.UTC(1899, 11, 30, 14, 30)), '14:30:00'],
    [{}, new Date(Date.UTC(1899, 11, 30, 14, 29, 59, 999.7)), '14:30:00'],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(time, options);
    expect(fn(input, zoned('Pacific/Auckland'))).toEqual(output);
  });

  it.each<[options: unknown, input: Value, message: string]>([
    [{}, '25:00', 'expected a time like 23:59 (H:mm) or 23:59:58 (H:mm:ss), got "25:00"'],
    [{}, '9.05', 'expected a time like 23:59 (H:mm) or 23:59:58 (H:mm:ss), got "9.05"'],
    [{}, '9:5', 'expected a time like 23:59 (H:mm) or 23:59:58 (H:mm:ss), got "9:5"'],
    [{}, '24:00', 'expected a time like 23:59 (H:mm) or 23:59:58 (H:mm:ss), got "24:00"'],
    [{}, '12:60', 'expected a time like 23:59 (H:mm) or 23:59:58 (H:mm:ss), got "12:60"'],
    [{}, 0.5, 'expected a time like 23:59 (H:mm) or 23:59:58 (H:mm:ss), got 0.5'],
    [{ format: 'h:mm a' }, '14:30', 'expected a time like 11:59 PM (h:mm a), got "14:30"'],
  ])('%j rejects %j', async (options, input, message) => {
    const fn = await build(time, options);
    const error = transformErrorOf(fn, input);
    expect(error.message).toBe(message);
    expect(error.transform).toBe('time');
  });

  it('rejects a format without minutes', () => {
    expect(optionsError(time, { format: 'HH' })).toBe('format "HH" must contain hours and minutes (such as HH:mm)');
  });
});

describe('date reads a bare YYYY-MM-DD as the general ISO reading does', () => {
  // The bare-date fast path must accept and refuse exactly what the ISO reader does with the same
  // day at midnight: every day number 0..32 of months 0..13 in common, leap and century years.
  const years = ['0099', '0100', '1900', '2000', '2023', '2024'];
  const cases = years.flatMap((year) =>
    Array.from({ length: 14 }, (_, month) =>
      Array.from(
        { length: 33 },
        (_, day) => `${year}-${String(month).padStart(2, '0')}-${String(day).padStart(2, '0')}`,
      ),
    ).flat(),
  );

  it('gives the same day or the same refusal for every case', async () => {
    const fn = await build(date);
    const outcome = (text: string): string => {
      try {
        return String(fn(text, UTC));
      } catch (error) {
        return `error ${(error as Error).name}`;
      }
    };
    let accepted = 0;
    for (const text of cases) {
      const plain = outcome(text);
      expect([text, plain]).toEqual([text, outcome(`${text}T00:00`)]);
      if (plain === text) accepted++;
    }
    // Every real day of the five years from 0100 on passes; a fast path that refused all would not.
    expect(accepted).toBeGreaterThan(5 * 365);
    expect(outcome('2023-02-29')).toBe('error TransformError');
    expect(outcome('2024-02-29')).toBe('2024-02-29');
  });
});

describe('the bare-date shortcut steps aside', () => {
  it.each<[options: unknown, input: Value, output: Value]>([
    [{}, ' 2024-03-01 ', '2024-03-01'],
    [{}, '2024-03-01T10:00', '2024-03-01'],
    [{}, '2024-02-28', '2024-02-28'],
    [{}, '2000-02-29', '2000-02-29'],
    [{}, ['2024-03-01', ' 2024-03-02'], ['2024-03-01', '2024-03-02']],
    [{ format: 'yyyy-MM-dd' }, '2024-03-01', '2024-03-01'],
  ])('%j: %j -> %j', async (options, input, output) => {
    const fn = await build(date, options);
    expect(fn(input, UTC)).toEqual(output);
  });

  it.each<[options: unknown, input: string]>([
    [{}, '1900-02-29'],
    [{}, '2024-04-31'],
    [{}, '2024-00-10'],
    [{}, '2024-1a-10'],
    [{}, '2024/03/01'],
    [{}, '２０２４-03-01'],
    [{}, '2024-03-0١'],
    [{ format: 'dd.MM.yyyy' }, '2024-03-01'],
  ])('%j rejects %j with the usual message', async (options, input) => {
    const fn = await build(date, options);
    expect(transformErrorOf(fn, input).message).toMatch(new RegExp(`^expected a date like .*, got "${input}"$`));
  });
});
