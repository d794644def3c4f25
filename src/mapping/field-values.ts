/**
 * What a cell's value becomes in a record, called by the code a mapping compiles to: dates, times,
 * numbers, ids, and the JSON item lists of contact details and custom fields. Each refuses a value
 * it cannot take with a RowRejection that names the field.
 */
import { RowRejection } from './compile-value.ts';
import { WEBSITE_SERVICES, type TargetInfo } from './compile-targets.ts';
import { dateText, valueText } from './compile-template.ts';
import type { Value } from './transforms/types.ts';

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;

const TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})$/;

const TIME = /^(\d{1,2}):(\d{2})(?::(\d{2}))?$/;

const DECIMAL = /^-?\d+(?:\.\d+)?$/;

export function shown(value: Value): string {
  return JSON.stringify(valueText(value));
}

/** A value the target cannot take: the technical message, the value, and what it should be in plain words. */
export function refused(field: string, message: string, value: Value, expected: string): RowRejection {
  return new RowRejection(field, message, 'MAPPING_VALUE', true, { value: valueText(value), expected });
}

/** Whether `text` is a date of the calendar written YYYY-MM-DD (no 31 February). */
export function isCalendarDate(text: string): boolean {
  const m = DATE.exec(text);
  if (!m) return false;
  const date = new Date(Date.UTC(Number(m[1]), Number(m[2]) - 1, Number(m[3])));
  return dateText(date) === text;
}

/** A date target's value as YYYY-MM-DD, or a reject that names the field and the fix. */
export function toDate(value: Value, field: string): string {
  if (value instanceof Date) return dateText(value);
  const text = valueText(value).trim();
  if (isCalendarDate(text)) return text;
  throw refused(
    field,
    `\`${field}\` must be a date written YYYY-MM-DD, found ${shown(value)}; add a \`date\` transform with the source's format`,
    value,
    'a date (YYYY-MM-DD)',
  );
}

export function toTimestamp(value: Value, field: string): string {
  if (value instanceof Date && !Number.isNaN(value.getTime())) return value.toISOString().replace(/\.\d{3}Z$/, 'Z');
  const text = valueText(value).trim();
  if (TIMESTAMP.test(text)) {
    const parsed = new Date(text);
    if (!Number.isNaN(parsed.getTime())) return parsed.toISOString().replace(/\.\d{3}Z$/, 'Z');
  }
  throw refused(
    field,
    `\`${field}\` must be a timestamp such as 2024-03-01T14:30:00Z, found ${shown(value)}; add a \`timestamp\` transform with the source's format`,
    value,
    'a date and time (YYYY-MM-DDThh:mm:ssZ)',
  );
}

export function toTime(value: Value, field: string): string {
  const m = TIME.exec(valueText(value).trim());
  if (m && Number(m[1]) < 24 && Number(m[2]) < 60 && Number(m[3] ?? 0) < 60)
    return `${(m[1] as string).padStart(2, '0')}:${m[2]}:${m[3] ?? '00'}`;
  throw refused(
    field,
    `\`${field}\` must be a time of day hh:mm or hh:mm:ss, found ${shown(value)}`,
    value,
    'a time of day (hh:mm)',
  );
}

export function toNumber(value: Value, field: string): number {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  const text = valueText(value).trim();
  if (DECIMAL.test(text)) return Number(text);
  throw refused(
    field,
    `\`${field}\` must be a number, found ${shown(value)}; add a \`number\` transform for numbers written with a locale (1.234,56)`,
    value,
    'a number',
  );
}

export function toInteger(value: Value, field: string, info: TargetInfo): number {
  const n = toNumber(value, field);
  const min = info.min ?? Number.MIN_SAFE_INTEGER;
  const max = info.max ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isInteger(n) || n < min || n > max)
    throw refused(
      field,
      `\`${field}\` must be a whole number from ${min} to ${max}, found ${shown(value)}`,
      value,
      `a whole number from ${min} to ${max}`,
    );
  return n;
}

/** An id given directly: a positive whole number, or text of digits only. */
export function toId(value: Value): number | undefined {
  if (typeof value === 'number') return Number.isInteger(value) && value > 0 ? value : undefined;
  const text = valueText(value).trim();
  return /^\d+$/.test(text) && Number(text) > 0 ? Number(text) : undefined;
}

/** A cell of JSON items as a list of objects, or a reject that says what the cell should hold. */
export function parseItemList(value: Value, to: string, column: string): Array<Record<string, unknown>> {
  const text = valueText(value).trim();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    throw new RowRejection(
      to,
      `column \`${column}\` must hold a JSON list of ${to} items (as \`export --mapping\` writes it), found ${shown(value)}`,
    );
  }
  if (
    !Array.isArray(parsed) ||
    parsed.some((item) => item === null || typeof item !== 'object' || Array.isArray(item))
  ) {
    throw new RowRejection(to, `column \`${column}\` must hold a JSON list of objects, found ${shown(value)}`);
  }
  return parsed as Array<Record<string, unknown>>;
}

/** A text property of an item: trimmed, undefined when missing or blank; a reject when not text. */
export function itemText(item: Record<string, unknown>, key: string, to: string, column: string): string | undefined {
  const value = item[key];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string')
    throw new RowRejection(
      to,
      `column \`${column}\`: an item's \`${key}\` must be text, found ${JSON.stringify(value)}`,
    );
  const text = value.trim();
  return text === '' ? undefined : text;
}

/** The keys an item of each list may carry, the service's own; the first of `needs` must be there. */
export const ITEM_SHAPES: Record<
  'email' | 'phone' | 'website' | 'address',
  { keys: readonly string[]; needs: readonly string[] }
> = {
  email: { keys: ['type', 'address'], needs: ['address'] },
  phone: { keys: ['type', 'number'], needs: ['number'] },
  website: { keys: ['type', 'service', 'address'], needs: ['address'] },
  address: {
    keys: ['type', 'street', 'city', 'state', 'zip', 'country'],
    needs: ['street', 'city', 'state', 'zip', 'country'],
  },
};

/** The contact items of a JSON cell in the service's shapes (unknown keys such as `id` left out). */
export function contactItems(
  kind: keyof typeof ITEM_SHAPES,
  value: Value,
  to: string,
  column: string,
): Array<Record<string, string>> {
  const shape = ITEM_SHAPES[kind];
  const out: Array<Record<string, string>> = [];
  for (const item of parseItemList(value, to, column)) {
    const entry: Record<string, string> = {};
    for (const key of shape.keys) {
      const text = itemText(item, key, to, column);
      if (text !== undefined) entry[key] = text;
    }
    if (!shape.needs.some((key) => entry[key] !== undefined)) {
      throw new RowRejection(
        to,
        `column \`${column}\`: an item needs ${shape.needs.length === 1 ? `\`${shape.needs[0]}\`` : `one of ${shape.needs.join(', ')}`}, found ${JSON.stringify(item)}`,
      );
    }
    if (kind === 'website') {
      const service = (entry.service ?? 'URL').toUpperCase();
      if (!(WEBSITE_SERVICES as readonly string[]).includes(service))
        throw new RowRejection(
          to,
          `column \`${column}\`: website service must be one of ${WEBSITE_SERVICES.join(', ')}, found ${JSON.stringify(entry.service)}`,
        );
      entry.service = service;
    }
    out.push(entry);
  }
  return out;
}

/** Custom field values of a JSON cell: `{definition, tag, value}` each. */
export function customItems(
  value: Value,
  to: string,
  column: string,
): Array<{ definition: string; tag: string | null; value: string | boolean | number }> {
  return parseItemList(value, to, column).map((item) => {
    const definition = itemText(item, 'definition', to, column);
    if (definition === undefined)
      throw new RowRejection(
        to,
        `column \`${column}\`: a custom field item needs \`definition\` (the field's name), found ${JSON.stringify(item)}`,
      );
    const tag = itemText(item, 'tag', to, column) ?? null;
    const v = item.value;
    if (typeof v !== 'string' && typeof v !== 'boolean' && typeof v !== 'number')
      throw new RowRejection(
        to,
        `column \`${column}\`: custom field \`${definition}\` needs a \`value\` (text, a number or true/false), found ${JSON.stringify(v)}`,
      );
    return { definition, tag, value: v };
  });
}
