import type { DateTime, FixedOffsetZone } from 'luxon';
import { luxon } from './luxon-library.ts';
import { z } from 'zod';
import { TransformError } from './types.ts';
import type { TransformContext, TransformDefinition, TransformFn, Value } from './types.ts';
import { describeValue, escapeRegExp, parsingTransform, quote } from './values.ts';
import { ZoneOffsets } from './zone-offsets.ts';

/** The moment every format is tried on when the mapping is compiled, and shown in messages. */
const SAMPLE = { year: 2024, month: 12, day: 31, hour: 23, minute: 59, second: 58 };

const formatOption = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);
const localeOption = z
  .string()
  .default('en-US')
  .describe('Locale for month and day names in formats (MMM, MMMM, EEE).');

/** A format tried on a value: luxon's precompiled parser, and how the format looks filled in. */
interface CompiledFormat {
  format: string;
  parser: ReturnType<typeof DateTime.buildFormatParser>;
  /** luxon refuses a parser used with another locale than the one it was built for. */
  locale: string;
  example: string;
  /** A plain regular expression for all-numeric formats; undefined sends the format to luxon. */
  numeric: NumericFormat | undefined;
}

type FormatCheck = 'date' | 'time';

/**
 * Why a format cannot serve, or undefined when it can: the sample written in the format must read
 * back as the same date (or time). This catches typos such as `dd.mm.yyyy` (mm is minutes) at
 * compile time instead of on every row.
 */
function checkFormat(format: string, locale: string, kind: FormatCheck): string | undefined {
  const sample = luxon().DateTime.fromObject(SAMPLE, { zone: 'utc', locale });
  const text = sample.toFormat(format);
  const back = luxon().DateTime.fromFormat(text, format, { zone: 'utc', locale });
  if (!back.isValid)
    return `format ${quote(format)} cannot be read back (${back.invalidExplanation ?? back.invalidReason ?? 'unknown reason'})`;
  if (kind === 'date' && back.toISODate() !== sample.toISODate())
    return `format ${quote(format)} must contain a year, a month and a day (such as dd.MM.yyyy)`;
  if (kind === 'time' && (back.hour !== SAMPLE.hour || back.minute !== SAMPLE.minute))
    return `format ${quote(format)} must contain hours and minutes (such as HH:mm)`;
  return undefined;
}

function compileFormats(format: string | string[], locale: string): CompiledFormat[] {
  const sample = luxon().DateTime.fromObject(SAMPLE, { zone: 'utc', locale });
  return (typeof format === 'string' ? [format] : format).map((entry) => ({
    format: entry,
    parser: luxon().DateTime.buildFormatParser(entry, { locale }),
    locale,
    example: sample.toFormat(entry),
    numeric: compileNumeric(entry),
  }));
}

/** Units an all-numeric format can hold, by luxon's token letter. */
type NumericUnit = 'y' | 'M' | 'd' | 'H' | 'm' | 's';

interface NumericFormat {
  pattern: RegExp;
  /** Capture group of each unit the format holds. */
  groups: Partial<Record<NumericUnit, number>>;
}

/** luxon's numeric tokens, read as luxon reads them: single letters take one or two digits. */
const NUMERIC_TOKENS: Record<string, string> = {
  yyyy: '(\\d{4})',
  MM: '(\\d{2})',
  M: '(\\d{1,2})',
  dd: '(\\d{2})',
  d: '(\\d{1,2})',
  HH: '(\\d{2})',
  H: '(\\d{1,2})',
  mm: '(\\d{2})',
  m: '(\\d{1,2})',
  ss: '(\\d{2})',
  s: '(\\d{1,2})',
};

/**
 * A regular expression for all-numeric formats (dd.MM.yyyy HH:mm, M/d/yyyy, H:mm), which luxon
 * reads about ten times slower; undefined for anything with names, quotes or other tokens.
 */
function compileNumeric(format: string): NumericFormat | undefined {
  let source = '^';
  const groups: Partial<Record<NumericUnit, number>> = {};
  let group = 0;
  for (const run of format.match(/([A-Za-z])\1*|[^A-Za-z]/g) ?? []) {
    if (run === "'") return undefined;
    if (!/^[A-Za-z]/.test(run)) {
      source += escapeRegExp(run);
      continue;
    }
    const token = NUMERIC_TOKENS[run];
    const unit = run.charAt(0) as NumericUnit;
    if (token === undefined || groups[unit] !== undefined) return undefined;
    group += 1;
    groups[unit] = group;
    source += token;
  }
  return { pattern: new RegExp(`${source}$`), groups };
}

function daysInMonth(year: number, month: number): number {
  return month === 2
    ? year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0)
      ? 29
      : 28
    : month === 4 || month === 6 || month === 9 || month === 11
      ? 30
      : 31;
}

function pad4(value: number): string {
  return String(value).padStart(4, '0');
}

/** A numeric reading, or undefined when the text does not fit or names a day or time that does not exist. */
function readNumeric(text: string, numeric: NumericFormat): Reading | undefined {
  const match = numeric.pattern.exec(text);
  if (match === null) return undefined;
  const { y, M, d, H, m, s } = numeric.groups;
  const unit = (index: number | undefined, fallback: number): number =>
    index === undefined ? fallback : Number(match[index]);
  const year = unit(y, 1970);
  const month = unit(M, 1);
  const day = unit(d, 1);
  const hour = unit(H, 0);
  const minute = unit(m, 0);
  const second = unit(s, 0);
  if (month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month) || hour > 23 || minute > 59 || second > 59)
    return undefined;
  // Date.UTC would move years below 100 into the 1900s; no record of a CRM is dated that early.
  if (year < 100) return undefined;
  return {
    wall: Date.UTC(year, month - 1, day, hour, minute, second),
    instant: undefined,
    date: `${pad4(year)}-${pad(month)}-${pad(day)}`,
  };
}

function addFormatIssues(
  format: string | string[] | undefined,
  locale: string,
  kind: FormatCheck,
  context: z.RefinementCtx,
): void {
  if (format === undefined) return;
  const formats = typeof format === 'string' ? [format] : format;
  formats.forEach((entry, index) => {
    const problem = checkFormat(entry, locale, kind);
    if (problem !== undefined)
      context.addIssue({
        code: 'custom',
        message: problem,
        path: typeof format === 'string' ? ['format'] : ['format', index],
      });
  });
}

/** In plain words: "a date (dd.MM.yyyy or M/d/yyyy)". */
function plainly(noun: string, formats: CompiledFormat[] | undefined, iso: string): string {
  return `${noun} (${formats === undefined ? iso : formats.map((entry) => entry.format).join(' or ')})`;
}

/** "a date like 31.12.2024 (dd.MM.yyyy) or 12/31/2024 (M/d/yyyy)" */
function expectation(noun: string, formats: CompiledFormat[]): string {
  return `${noun} like ${formats.map((entry) => `${entry.example} (${entry.format})`).join(' or ')}`;
}

/**
 * A zone no text names (UTC+13:07): values read in it without an offset of their own keep it,
 * which tells them apart from values that carry one, including "Z".
 */
let noOffsetZone: FixedOffsetZone | undefined;
function noOffset(): FixedOffsetZone {
  noOffsetZone ??= luxon().FixedOffsetZone.instance(13 * 60 + 7);
  return noOffsetZone;
}
const MINUTE = 60_000;

/** A value read from text: its wall-clock time (as if UTC), and the instant when it named its offset. */
interface Reading {
  wall: number;
  instant: number | undefined;
  /** The calendar date as written. */
  date: string;
}

function fromLuxon(parsed: DateTime): Reading {
  const date = parsed.toISODate() ?? '';
  const zone = noOffset();
  if (parsed.zone === zone) return { wall: parsed.toMillis() + zone.offset(0) * MINUTE, instant: undefined, date };
  return { wall: parsed.toMillis() + parsed.offset * MINUTE, instant: parsed.toMillis(), date };
}

/** Tries each format in order; the first valid reading wins. */
function readWithFormats(text: string, formats: CompiledFormat[]): Reading | undefined {
  for (const entry of formats) {
    if (entry.numeric !== undefined) {
      const reading = readNumeric(text, entry.numeric);
      if (reading !== undefined) return reading;
      continue;
    }
    const parsed = luxon().DateTime.fromFormatParser(text, entry.parser, {
      zone: noOffset(),
      setZone: true,
      locale: entry.locale,
    });
    if (parsed.isValid) return fromLuxon(parsed);
  }
  return undefined;
}

/** The common ISO 8601 shapes, read without luxon because this runs for every row. */
const ISO_PARTS =
  /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:[.,](\d{1,9}))?)?(?:\s?(Z|[+-]\d{2}(?::?\d{2})?))?)?$/;

function readIsoFast(text: string): Reading | undefined {
  const match = ISO_PARTS.exec(text);
  if (match === null) return undefined;
  const [, y, mo, d, h, mi, sec, fraction, zone] = match;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const hour = h === undefined ? 0 : Number(h);
  const minute = mi === undefined ? 0 : Number(mi);
  const second = sec === undefined ? 0 : Number(sec);
  // Years before 100 would be moved to 19xx by Date.UTC; rare enough to leave to luxon.
  if (year < 100 || month < 1 || month > 12 || day < 1 || day > daysInMonth(year, month)) return undefined;
  if (hour > 23 || minute > 59 || second > 59) return undefined;
  const millis = fraction === undefined ? 0 : Number(fraction.slice(0, 3).padEnd(3, '0'));
  const wall = Date.UTC(year, month - 1, day, hour, minute, second, millis);
  const date = text.slice(0, 10);
  if (zone === undefined) return { wall, instant: undefined, date };
  if (zone === 'Z') return { wall, instant: wall, date };
  const sign = zone.charAt(0) === '-' ? -1 : 1;
  const digits = zone.slice(1).replace(':', '');
  const offset = sign * (Number(digits.slice(0, 2)) * 60 + Number(digits.slice(2) || '0'));
  if (Math.abs(offset) > 18 * 60) return undefined;
  return { wall, instant: wall - offset * MINUTE, date };
}

/**
 * A bare YYYY-MM-DD that is a real day, read without a regular expression: most date cells are
 * just that. Anything else (times, zones, years before 100) is left to readIso.
 */
function plainCalendarDay(text: string): string | undefined {
  if (text.length !== 10 || text.charCodeAt(4) !== 45 || text.charCodeAt(7) !== 45) return undefined;
  // Straight-line digit reads: the loop with its position tests cost about as much as the rest.
  const y1 = digitAt(text, 0);
  const y2 = digitAt(text, 1);
  const y3 = digitAt(text, 2);
  const y4 = digitAt(text, 3);
  const m1 = digitAt(text, 5);
  const m2 = digitAt(text, 6);
  const d1 = digitAt(text, 8);
  const d2 = digitAt(text, 9);
  // Any non-digit gave -1, which the OR keeps negative.
  if ((y1 | y2 | y3 | y4 | m1 | m2 | d1 | d2) < 0) return undefined;
  const year = y1 * 1000 + y2 * 100 + y3 * 10 + y4;
  const month = m1 * 10 + m2;
  const day = d1 * 10 + d2;
  if (year < 100 || month < 1 || month > 12 || day < 1 || (day > 28 && day > daysInMonth(year, month)))
    return undefined;
  return text;
}

/** The digit at a position, or -1 when the character there is not 0-9. */
function digitAt(text: string, index: number): number {
  const digit = text.charCodeAt(index) - 48;
  return digit >= 0 && digit <= 9 ? digit : -1;
}

/** A full calendar date first: luxon alone would read "2024" as the first of January. */
const ISO_START = /^\d{4}-\d{2}-\d{2}(?:[T ]|$)/;

/** ISO 8601, or the same with a space instead of the `T`, as databases and spreadsheets write it. */
function readIso(text: string): Reading | undefined {
  const fast = readIsoFast(text);
  if (fast !== undefined) return fast;
  if (!ISO_START.test(text)) return undefined;
  const iso = luxon().DateTime.fromISO(text, { zone: noOffset(), setZone: true });
  if (iso.isValid) return fromLuxon(iso);
  const sql = luxon().DateTime.fromSQL(text, { zone: noOffset(), setZone: true });
  return sql.isValid ? fromLuxon(sql) : undefined;
}

const dateOptions = z
  .object({
    format: formatOption
      .optional()
      .describe(
        'A luxon format (dd.MM.yyyy, M/d/yyyy, d MMM yyyy) or a list tried in order. Default: ISO 8601 (2024-12-31, also a full timestamp)',
      ),
    locale: localeOption,
  })
  .strict()
  .superRefine((options, context) => addFormatIssues(options.format, options.locale, 'date', context));

export const date: TransformDefinition<z.output<typeof dateOptions>> = {
  name: 'date',
  summary:
    'Reads a calendar date and writes it as YYYY-MM-DD. The date is taken as written, never moved by a time zone; a spreadsheet date gives its own day.',
  options: dateOptions,
  shorthand: 'format',
  examples: [
    { yaml: "{date: 'dd.MM.yyyy'}", input: '31.03.2024', output: '2024-03-31' },
    { yaml: "{date: {format: ['M/d/yyyy', 'yyyy-MM-dd']}}", input: '3/10/2024', output: '2024-03-10' },
    { yaml: 'date', input: '2024-10-27T23:30:00+13:00', output: '2024-10-27' },
  ],
  create(options) {
    const formats = options.format === undefined ? undefined : compileFormats(options.format, options.locale);
    const expected = formats === undefined ? 'a date like 2024-12-31 (ISO 8601)' : expectation('a date', formats);
    const plain = plainly('a date', formats, 'YYYY-MM-DD');
    // The day is taken as written, before any zone is applied, so no zone can move it; a value
    // with its own offset keeps its own calendar day too.
    const fromText = parsingTransform((text) => {
      const day =
        formats === undefined ? (plainCalendarDay(text) ?? readIso(text)?.date) : readWithFormats(text, formats)?.date;
      if (day === undefined) throw new TransformError(`expected ${expected}, got ${quote(text)}`, 'date', plain);
      return day;
    });
    const isoOnly = formats === undefined;
    const fn: TransformFn = (value, context) => {
      // A bare YYYY-MM-DD is what most date cells hold: it has no white space to trim and is its own answer.
      if (isoOnly && typeof value === 'string') {
        const day = plainCalendarDay(value);
        if (day !== undefined) return day;
      }
      if (value instanceof Date) {
        // Spreadsheet dates are read as UTC midnight, so the UTC day is the day in the cell.
        if (Number.isNaN(value.getTime()))
          throw new TransformError(`expected ${expected}, got an invalid date`, 'date', plain);
        return value.toISOString().slice(0, 10);
      }
      if (typeof value === 'boolean' || typeof value === 'number')
        throw new TransformError(`expected ${expected}, got ${describeValue(value)}`, 'date', plain);
      return fromText(value, context);
    };
    return fn;
  },
};

/** `YYYY-MM-DDThh:mm:ssZ`, milliseconds dropped, as the service writes timestamps. */
function toUtcText(millis: number): string {
  return `${new Date(Math.floor(millis / 1000) * 1000).toISOString().slice(0, 19)}Z`;
}

const timestampOptions = z
  .object({
    format: formatOption
      .optional()
      .describe(
        'A luxon format (dd.MM.yyyy HH:mm, M/d/yyyy h:mm a) or a list tried in order. Default: ISO 8601, also with a space instead of T',
      ),
    timeZone: z
      .string()
      .optional()
      .describe("IANA time zone of values without an offset. Default: the mapping's timeZone"),
    locale: localeOption,
  })
  .strict()
  .superRefine((options, context) => {
    if (options.timeZone !== undefined && ZoneOffsets.of(options.timeZone) === undefined) {
      context.addIssue({
        code: 'custom',
        message: `${quote(options.timeZone)} is not an IANA time zone (such as Europe/Berlin)`,
        path: ['timeZone'],
      });
    }
    addFormatIssues(options.format, options.locale, 'date', context);
  });

export const timestamp: TransformDefinition<z.output<typeof timestampOptions>> = {
  name: 'timestamp',
  summary:
    'Reads a date and time and writes it in UTC as YYYY-MM-DDThh:mm:ssZ. Values without an offset are local time in `timeZone`; a time skipped when clocks go forward moves forward by the gap, a time repeated when they go back is the earlier one.',
  options: timestampOptions,
  shorthand: 'format',
  examples: [
    {
      yaml: "{timestamp: {format: 'dd.MM.yyyy HH:mm', timeZone: Europe/Berlin}}",
      input: '31.03.2024 14:00',
      output: '2024-03-31T12:00:00Z',
    },
    { yaml: 'timestamp', input: '2024-03-31T14:00:00+05:30', output: '2024-03-31T08:30:00Z' },
    { yaml: '{timestamp: {timeZone: America/New_York}}', input: '2024-11-03 01:30', output: '2024-11-03T05:30:00Z' },
  ],
  create(options) {
    const formats = options.format === undefined ? undefined : compileFormats(options.format, options.locale);
    const expected =
      formats === undefined ? 'a timestamp like 2024-12-31T23:59:58 (ISO 8601)' : expectation('a timestamp', formats);
    const plain = plainly('a date and time', formats, 'YYYY-MM-DDThh:mm:ss');
    const fixedZone = options.timeZone;
    let lastZone = '';
    let lastOffsets: ZoneOffsets | undefined;
    const offsetsOf = (context: TransformContext): ZoneOffsets => {
      const zone = fixedZone ?? context.timeZone;
      if (zone !== lastZone || lastOffsets === undefined) {
        lastOffsets = ZoneOffsets.of(zone);
        lastZone = zone;
        if (lastOffsets === undefined)
          throw new TransformError(
            `expected an IANA time zone for timestamps (such as Europe/Berlin), got ${quote(zone)}`,
            'timestamp',
          );
      }
      return lastOffsets;
    };
    const fromText = parsingTransform((text, context) => {
      const reading = formats === undefined ? readIso(text) : readWithFormats(text, formats);
      if (reading === undefined)
        throw new TransformError(`expected ${expected}, got ${quote(text)}`, 'timestamp', plain);
      return toUtcText(reading.instant ?? offsetsOf(context).wallToUtc(reading.wall));
    });
    const fn: TransformFn = (value: Value, context) => {
      if (value instanceof Date) {
        if (Number.isNaN(value.getTime()))
          throw new TransformError(`expected ${expected}, got an invalid date`, 'timestamp', plain);
        // Spreadsheet cells hold wall-clock time without a zone, read as if UTC: those clock
        // figures are local time in the zone.
        return toUtcText(offsetsOf(context).wallToUtc(Math.round(value.getTime() / 1000) * 1000));
      }
      if (typeof value === 'boolean' || typeof value === 'number')
        throw new TransformError(`expected ${expected}, got ${describeValue(value)}`, 'timestamp', plain);
      return fromText(value, context);
    };
    return fn;
  },
};

const timeOptions = z
  .object({
    format: formatOption
      .default(['H:mm', 'H:mm:ss'])
      .describe('A luxon format (HH:mm, h:mm a) or a list tried in order.'),
    locale: localeOption,
  })
  .strict()
  .superRefine((options, context) => addFormatIssues(options.format, options.locale, 'time', context));

function pad(value: number): string {
  return value < 10 ? `0${value}` : String(value);
}

export const time: TransformDefinition<z.output<typeof timeOptions>> = {
  name: 'time',
  summary: 'Reads a time of day and writes it as hh:mm:ss (24 hours); a spreadsheet time gives its clock figures.',
  options: timeOptions,
  shorthand: 'format',
  examples: [
    { yaml: 'time', input: '9:05', output: '09:05:00' },
    { yaml: "{time: 'h:mm a'}", input: '2:30 PM', output: '14:30:00' },
  ],
  create(options) {
    const formats = compileFormats(options.format, options.locale);
    const expected = expectation('a time', formats);
    const plain = plainly('a time of day', formats, 'hh:mm');
    const fromText = parsingTransform((text) => {
      const reading = readWithFormats(text, formats);
      if (reading === undefined) throw new TransformError(`expected ${expected}, got ${quote(text)}`, 'time', plain);
      const clock = new Date(reading.wall);
      return `${pad(clock.getUTCHours())}:${pad(clock.getUTCMinutes())}:${pad(clock.getUTCSeconds())}`;
    });
    const fn: TransformFn = (value, context) => {
      if (value instanceof Date) {
        if (Number.isNaN(value.getTime()))
          throw new TransformError(`expected ${expected}, got an invalid date`, 'time', plain);
        const rounded = new Date(Math.round(value.getTime() / 1000) * 1000);
        return `${pad(rounded.getUTCHours())}:${pad(rounded.getUTCMinutes())}:${pad(rounded.getUTCSeconds())}`;
      }
      if (typeof value === 'boolean' || typeof value === 'number')
        throw new TransformError(`expected ${expected}, got ${describeValue(value)}`, 'time', plain);
      return fromText(value, context);
    };
    return fn;
  },
};
