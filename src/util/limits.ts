/**
 * The limits on what crm-ferry takes in, checked before any work starts, so that a file far
 * outside them gets one clear message instead of minutes of work, gigabytes or a stack overflow.
 * docs/errors.md lists them.
 */

/** Columns of a source: as many as a spreadsheet holds (XFD, the last column of Excel). */
export const MAX_COLUMNS = 16_384;

/** Size of a mapping file: a hand-written mapping of every column of the widest source is far smaller. */
export const MAX_MAPPING_BYTES = 1024 * 1024;

/** Field entries of one mapping. */
export const MAX_MAPPING_FIELDS = 5_000;

/**
 * Levels of nesting of a legacy v1 export or a page of the v1 interface (elements in XML, objects
 * and arrays in JSON), wrappers included. Real records nest six or seven levels deep (a party, its
 * contacts, an address and its parts); a document nested deeper is refused with SOURCE_TOO_DEEP,
 * before its depth can cost a stack overflow in the code that walks what was read.
 */
export const MAX_NESTING_DEPTH = 100;

/** Problems of a mapping listed in full; the rest are counted. Fixing the first ones usually fixes many more. */
export const MAX_PROBLEMS_SHOWN = 50;

/** Names listed in one message (the input's columns, the columns a mapping misses); the rest are counted. */
export const MAX_NAMES_SHOWN = 50;

/** `a, b, c and 120 more`: the first `max` of a list, and how many were left out. */
export function listSome(items: readonly string[], max: number = MAX_NAMES_SHOWN): string {
  if (items.length <= max) return items.join(', ');
  return `${items.slice(0, max).join(', ')} and ${formatCount(items.length - max)} more`;
}

/**
 * A count as the messages write it, with thousands grouped by commas (12,345): what
 * `toLocaleString('en-GB')` gives, without the locale data a process loads at its first use
 * (some 20 ms of CPU, a tenth of a short run's summary).
 */
export function formatCount(n: number): string {
  if (!Number.isSafeInteger(n)) return n.toLocaleString('en-GB');
  const digits = String(Math.abs(n));
  let grouped = digits.length > 3 ? '' : digits;
  if (digits.length > 3) {
    const head = digits.length % 3 || 3;
    grouped = digits.slice(0, head);
    for (let i = head; i < digits.length; i += 3) grouped += `,${digits.slice(i, i + 3)}`;
  }
  return n < 0 ? `-${grouped}` : grouped;
}
