/**
 * What the XLSX reader (sources/) and writer (export/) both know of a sheet's grid: column letters
 * and the serial day numbers dates are stored as. One place, so that what one writes the other reads.
 */

const MS_PER_DAY = 86_400_000;
/** Serial 25569 is 1970-01-01 in the 1900 date system; the 1904 system is 1462 days behind. */
export const UNIX_EPOCH_SERIAL = 25_569;
const DATE1904_OFFSET = 1_462;

/** 1 -> `A`, 27 -> `AA` (columns count from 1, as cell references do). */
export function columnLetters(column: number): string {
  let letters = '';
  for (let rest = column; rest > 0; rest = Math.floor((rest - 1) / 26))
    letters = String.fromCharCode(65 + ((rest - 1) % 26)) + letters;
  return letters;
}

/** Converts a serial day number to a Date; Excel dates carry no zone, so they are read as UTC. */
export function serialToDate(serial: number, date1904: boolean): Date {
  const days = serial - UNIX_EPOCH_SERIAL + (date1904 ? DATE1904_OFFSET : 0);
  return new Date(Math.round(days * MS_PER_DAY));
}

/** The serial day number (1900 date system) of an instant given in milliseconds since 1970, UTC. */
export function serialOf(ms: number): number {
  return ms / MS_PER_DAY + UNIX_EPOCH_SERIAL;
}
