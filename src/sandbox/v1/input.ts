/**
 * Reading fields out of v1 request bodies, which arrive as XML (all leaves strings) or JSON (leaves
 * of any type), and the v1 date formats.
 */
import { badRequest, validationError } from '../http.ts';

/** Collects field problems so one 422 names all of them. */
export class FieldReader {
  private readonly problems: Array<{ field: string; message: string }> = [];

  /**
   * @param resource - named in the 422 body
   * @param body - the fields of the resource
   * @param allowed - fields the operation reads
   * @param ignored - read-only fields that may come back from an earlier answer and are skipped
   */
  constructor(
    private readonly resource: string,
    private readonly body: Record<string, unknown>,
    allowed: readonly string[],
    ignored: readonly string[] = [],
  ) {
    for (const key of Object.keys(body)) {
      if (!allowed.includes(key) && !ignored.includes(key)) {
        this.fail(key, `is not a field of ${resource}; known fields: ${allowed.join(', ')}`);
      }
    }
  }

  has(key: string): boolean {
    return Object.hasOwn(this.body, key);
  }

  fail(field: string, message: string): void {
    this.problems.push({ field, message });
  }

  /**
   * The field as text: undefined when absent, null when present but empty (which clears it).
   * Numbers and booleans from JSON are taken as their text; objects and lists are a problem.
   */
  text(key: string): string | null | undefined {
    if (!this.has(key)) return undefined;
    const value = this.body[key];
    if (value === null || value === '') return null;
    if (typeof value === 'string') return value;
    if (typeof value === 'number' || typeof value === 'boolean') return String(value);
    this.fail(key, `must be text, found ${Array.isArray(value) ? 'a list' : 'nested elements'}`);
    return undefined;
  }

  /** A field that must be present and not empty. */
  requiredText(key: string): string | undefined {
    const value = this.text(key);
    if (value === null || (value === undefined && !this.problems.some((p) => p.field === key))) {
      this.fail(key, 'is required');
      return undefined;
    }
    return value ?? undefined;
  }

  /** Throws the 422 when any problem was found. */
  check(): void {
    if (this.problems.length > 0) throw validationError(this.resource, this.problems);
  }
}

const pad = (n: number, width = 2): string => String(n).padStart(width, '0');

/** A v1 timestamp (`2011-09-14T15:22:01Z`) from a stored timestamp or date. */
export function v1Timestamp(value: string | null): string | null {
  if (value === null) return null;
  if (/^\d{4}-\d{2}-\d{2}$/.test(value)) return `${value}T00:00:00Z`;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}Z$/.test(value)) return value;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? value : `${date.toISOString().slice(0, 19)}Z`;
}

/**
 * Parses the compact list-filter form `yyyyMMddTHHmmss` (UTC). A day past the end of its month
 * rolls over into the next (`20090631T000000` is 1 July 2009), as lenient date parsing in the real
 * service does; other out-of-range parts are refused. Returns null when the text is not of this form.
 */
export function parseCompactTimestamp(raw: string): Date | null {
  const match = /^(\d{4})(\d{2})(\d{2})T(\d{2})(\d{2})(\d{2})$/.exec(raw);
  if (!match) return null;
  const [year, month, day, hour, minute, second] = match.slice(1).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  if (month < 1 || month > 12 || day < 1 || day > 31 || hour > 23 || minute > 59 || second > 59) return null;
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second));
}

/** A query parameter in the compact form (or an ISO date/timestamp); a malformed value is a 400. */
export function parseFilterTime(name: string, raw: string): Date {
  const compact = parseCompactTimestamp(raw);
  if (compact) return compact;
  const moment = parseMoment(raw);
  if (moment) return new Date(`${moment.date}T${moment.time ?? '00:00:00'}Z`);
  throw badRequest(`${name} must look like 20090630T000000 (yyyyMMddTHHmmss, UTC), got ${JSON.stringify(raw)}`);
}

/**
 * A date or timestamp from a v1 body: `2011-09-14`, `2011-09-14T15:22:01Z` (an offset or no zone
 * is accepted; no zone means UTC) or the compact form. Returns the UTC date and, when the text
 * carries a time of day, the time; null when the text is none of these or not a real date.
 */
export function parseMoment(raw: string): { date: string; time: string | null } | null {
  const compact = parseCompactTimestamp(raw);
  if (compact) return { date: compact.toISOString().slice(0, 10), time: compact.toISOString().slice(11, 19) };
  const dateOnly = /^(\d{4})-(\d{2})-(\d{2})$/.exec(raw);
  if (dateOnly) {
    const [year, month, day] = dateOnly.slice(1).map(Number) as [number, number, number];
    const date = new Date(Date.UTC(year, month - 1, day));
    if (date.getUTCMonth() !== month - 1 || date.getUTCDate() !== day) return null;
    return { date: raw, time: null };
  }
  const full = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(Z|[+-]\d{2}:?\d{2})?$/.exec(raw);
  if (!full) return null;
  const [, y, mo, d, h, mi, s = '00', zone = 'Z'] = full;
  const [year, month, day] = [Number(y), Number(mo), Number(d)];
  const check = new Date(Date.UTC(year, month - 1, day));
  if (check.getUTCMonth() !== month - 1 || check.getUTCDate() !== day) return null;
  if (Number(h) > 23 || Number(mi) > 59 || Number(s) > 59) return null;
  const zoneText = zone === 'Z' ? 'Z' : zone.includes(':') ? zone : `${zone.slice(0, 3)}:${zone.slice(3)}`;
  const instant = new Date(`${y}-${mo}-${d}T${h}:${mi}:${s}${zoneText}`);
  if (Number.isNaN(instant.getTime())) return null;
  const iso = instant.toISOString();
  return { date: iso.slice(0, 10), time: iso.slice(11, 19) };
}

/** `YYYY-MM-DD` of a Date in UTC. */
export function isoDate(date: Date): string {
  return `${date.getUTCFullYear()}-${pad(date.getUTCMonth() + 1)}-${pad(date.getUTCDate())}`;
}
