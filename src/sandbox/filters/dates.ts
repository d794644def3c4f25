const DAY_MS = 86_400_000;
// Bounds keep computed dates in four-digit years, so that they still compare as strings.
const FIRST = '0000-01-01';
const LAST = '9999-12-31';
const FIRST_MS = Date.parse(`${FIRST}T00:00:00Z`);
const LAST_MS = Date.parse(`${LAST}T00:00:00Z`);

/** Today's date in UTC as `YYYY-MM-DD`, from the sandbox clock. */
export function utcDate(now: Date): string {
  return now.toISOString().slice(0, 10);
}

/** Whether `text` is a real calendar date written `YYYY-MM-DD`. */
export function isIsoDate(text: string): boolean {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(text)) return false;
  const date = new Date(`${text}T00:00:00Z`);
  return !Number.isNaN(date.getTime()) && date.toISOString().slice(0, 10) === text;
}

/** `date` moved by `days` (may be negative); clamped to years 0000 to 9999. */
export function addDays(date: string, days: number): string {
  const ms = Date.parse(`${date}T00:00:00Z`) + days * DAY_MS;
  if (!(ms >= FIRST_MS)) return FIRST;
  if (ms > LAST_MS) return LAST;
  return new Date(ms).toISOString().slice(0, 10);
}
