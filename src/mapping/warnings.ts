import { reasonText } from './reasons.ts';
import type { RowWarning, WarningCode } from './types.ts';

/** Every warning code, in the order summaries list them. */
export const WARNING_CODES = [
  'VALUE_DROPPED',
  'VALUE_KEPT',
  'LINK_UNRESOLVED',
  'LINK_BY_NAME',
  'USER_UNKNOWN',
  'DUPLICATE_MERGED',
  'DUPLICATE_DROPPED',
  'NOT_CARRIED',
] as const satisfies readonly WarningCode[];

// A code added to WarningCode but not to the list above fails to compile here.
type Missing = Exclude<WarningCode, (typeof WARNING_CODES)[number]>;
const _everyCode: Missing extends never ? true : Missing = true;
void _everyCode;

/** Counts of warnings by code, every code present (0 when none): what summaries hold per step. */
export type WarningCounts = Record<WarningCode, number>;

export function emptyWarningCounts(): WarningCounts {
  return Object.fromEntries(WARNING_CODES.map((code) => [code, 0])) as WarningCounts;
}

/** Adds a record's warnings to the counts. */
export function countWarnings(counts: WarningCounts, warnings: readonly RowWarning[] | undefined): void {
  if (warnings === undefined) return;
  for (const warning of warnings) counts[warning.code] += 1;
}

/** The sum of all counts. */
export function totalWarnings(counts: WarningCounts): number {
  let total = 0;
  for (const code of WARNING_CODES) total += counts[code];
  return total;
}

/** A record's warnings as one cell of a results file: `CODE field: reason` (reasonText), joined by ` | `. */
export function warningsText(warnings: readonly RowWarning[] | undefined): string {
  if (warnings === undefined || warnings.length === 0) return '';
  return warnings.map((w) => `${w.code} ${w.field}: ${reasonText(w)}`).join(' | ');
}
