import { hash } from 'node:crypto';

/** Object keys as JSON texts: the same few names come back in every row. */
const quotedKeys = new Map<string, string>();

function quotedKey(key: string): string {
  let quoted = quotedKeys.get(key);
  if (quoted === undefined) {
    quoted = JSON.stringify(key);
    // Bounded: a record type with ever new keys (custom field names) cannot grow it without end.
    if (quotedKeys.size < 4096) quotedKeys.set(key, quoted);
  }
  return quoted;
}

/**
 * A text as JSON.stringify writes it: in quotes as it is, unless it holds a character JSON
 * escapes (a control character, a quote, a backslash, half of a surrogate pair), which go to
 * JSON.stringify. Most texts of a row have none, and calling it cost more than the scan.
 */
function stringJson(text: string): string {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x22 || code === 0x5c || (code >= 0xd800 && code <= 0xdfff))
      return JSON.stringify(text);
  }
  return `"${text}"`;
}

/** A value that is not an object, as JSON.stringify writes it (undefined as null, as in a list). */
function scalarJson(value: unknown): string {
  switch (typeof value) {
    case 'string':
      return stringJson(value);
    case 'number':
      return Number.isFinite(value) ? String(value) : 'null';
    case 'boolean':
      return value ? 'true' : 'false';
    default:
      return JSON.stringify(value) ?? 'null';
  }
}

/**
 * JSON with object keys sorted, so that equal values give equal text whatever order they were
 * built in. The text is what journals hold the fingerprints of: it must not change.
 */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return scalarJson(value);
  // Plain loops: this runs for every row of every run (fingerprints, update plans).
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  const keys = Object.keys(record);
  sortKeys(keys);
  let out = '{';
  let first = true;
  for (let i = 0; i < keys.length; i++) {
    const key = keys[i] as string;
    const item = record[key];
    if (item === undefined) continue;
    out += `${first ? '' : ','}${quotedKey(key)}:${canonicalJson(item)}`;
    first = false;
  }
  return `${out}}`;
}

/**
 * Sorts keys by UTF-16 code units (as the default sort and `<` do), in place. A record's objects
 * have a handful of keys: sorting them by insertion allocates nothing, where Array.prototype.sort
 * took a working copy of each (3.4 kB of garbage for every row imported).
 */
function sortKeys(keys: string[]): void {
  if (keys.length > 16) {
    keys.sort();
    return;
  }
  for (let i = 1; i < keys.length; i++) {
    const key = keys[i] as string;
    let j = i - 1;
    while (j >= 0 && (keys[j] as string) > key) {
      keys[j + 1] = keys[j] as string;
      j--;
    }
    keys[j + 1] = key;
  }
}

/**
 * A short, stable digest of what a row writes. Two runs that map a row to the same body get the
 * same fingerprint, which is how a re-run knows a row is unchanged without asking the service.
 * crypto.hash is the one-shot form of createHash: the same digest, without a Hash object a row.
 */
export function fingerprint(value: unknown): string {
  return hash('sha256', canonicalJson(value), 'base64url').slice(0, 22);
}
