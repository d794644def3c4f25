import { createHash } from 'node:crypto';

/** JSON with object keys sorted, so that equal values give equal text whatever order they were built in. */
export function canonicalJson(value: unknown): string {
  if (value === null || typeof value !== 'object') return JSON.stringify(value) ?? 'null';
  // Plain loops: this runs for every row of every run (fingerprints, update plans).
  if (Array.isArray(value)) {
    let out = '[';
    for (let i = 0; i < value.length; i++) out += (i === 0 ? '' : ',') + canonicalJson(value[i]);
    return `${out}]`;
  }
  const record = value as Record<string, unknown>;
  // The default sort orders by UTF-16 code units, as < does.
  const keys = Object.keys(record).sort();
  let out = '{';
  for (const key of keys) {
    const item = record[key];
    if (item === undefined) continue;
    out += `${out.length === 1 ? '' : ','}${JSON.stringify(key)}:${canonicalJson(item)}`;
  }
  return `${out}}`;
}

/**
 * A short, stable digest of what a row writes. Two runs that map a row to the same body get the
 * same fingerprint, which is how a re-run knows a row is unchanged without asking the service.
 */
export function fingerprint(value: unknown): string {
  return createHash('sha256').update(canonicalJson(value)).digest('base64url').slice(0, 22);
}
