import type { CellValue } from './types.ts';

/** The result of reading one cell: a value, or the spreadsheet error it holds (`#N/A`, `#DIV/0!`). */
export interface ConvertedCell {
  value: CellValue;
  /** Set when the cell holds no usable value (a spreadsheet error, an uncalculated formula); the value is then null. */
  errorText?: string;
}

/** The parts of an exceljs cell we look at. */
export interface CellLike {
  value: unknown;
  numFmt?: string | undefined;
}

const MS_PER_DAY = 86_400_000;
/** Serial 25569 is 1970-01-01 in the 1900 date system; the 1904 system is 1462 days behind. */
const UNIX_EPOCH_SERIAL = 25_569;
const DATE1904_OFFSET = 1_462;

/**
 * Mirrors how Excel decides a number format shows a date: after removing literal text and
 * bracketed parts (colours, locales, elapsed-time markers) a date or time token remains.
 */
export function isDateFormat(format: string | undefined): boolean {
  if (!format) return false;
  const stripped = format.replace(/\[[^\]]*]/g, '').replace(/"[^"]*"/g, '').replace(/\\./g, '');
  return /[ymdhsb]/i.test(stripped);
}

/** Converts a serial day number to a Date; Excel dates carry no zone, so they are read as UTC. */
export function serialToDate(serial: number, date1904: boolean): Date {
  const days = serial - UNIX_EPOCH_SERIAL + (date1904 ? DATE1904_OFFSET : 0);
  return new Date(Math.round(days * MS_PER_DAY));
}

/**
 * Turns an exceljs cell into a plain value: formulas give their cached result, rich text and
 * hyperlinks their text, date-formatted numbers (also from formulas) a Date. Numbers keep the
 * double the file stores; JavaScript prints it in its shortest round-trip form.
 */
export function convertCell(cell: CellLike, date1904: boolean): ConvertedCell {
  return convertValue(cell.value, cell.numFmt, date1904);
}

function convertValue(value: unknown, numFmt: string | undefined, date1904: boolean): ConvertedCell {
  if (value === null || value === undefined) return { value: null };
  if (typeof value === 'string' || typeof value === 'boolean') return { value };
  if (typeof value === 'number') {
    // The streaming reader parses an error result of a formula as a float, which gives NaN.
    if (Number.isNaN(value)) return { value: null, errorText: 'a formula whose result is an error' };
    if (isDateFormat(numFmt)) return { value: serialToDate(value, date1904) };
    return { value };
  }
  if (value instanceof Date) {
    return Number.isNaN(value.getTime()) ? { value: null, errorText: 'a date out of range' } : { value };
  }
  if (typeof value === 'object') {
    const record = value as Record<string, unknown>;
    if (Array.isArray(record['richText'])) {
      const text = (record['richText'] as Array<{ text?: unknown }>).map((run) => (typeof run.text === 'string' ? run.text : '')).join('');
      return { value: text };
    }
    if ('error' in record) return { value: null, errorText: `the error ${String(record['error'])}` };
    if ('formula' in record || 'sharedFormula' in record) {
      // Files written by tools that do not calculate carry formulas without a saved result.
      if (record['result'] === undefined) return { value: null, errorText: `a formula with no saved result (=${String(record['formula'] ?? record['sharedFormula'])})` };
      return convertValue(record['result'], numFmt, date1904);
    }
    if ('text' in record) return convertValue(record['text'], numFmt, date1904);
  }
  return { value: null, errorText: 'content crm-ferry cannot read' };
}

/** Header cells become column names: a Date header prints as its ISO date, anything else as text. */
export function headerText(value: CellValue): string {
  if (value === null) return '';
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value).trim();
}
