import { serialToDate } from '../../files/index.ts';
import type { CellValue } from '../types.ts';
import { unescapeOoxml } from './xlsx-xml.ts';

/** The result of reading one cell: a value, or the spreadsheet error it holds (`#N/A`, `#DIV/0!`). */
export interface ConvertedCell {
  value: CellValue;
  /** Set when the cell holds no usable value (a spreadsheet error, an uncalculated formula); the value is then null. */
  errorText?: string;
}

/** A cell as the sheet XML holds it, before it is given a type. */
export interface RawCell {
  /** The `t` attribute: `s`, `inlineStr`, `str`, `b`, `e`, `d`, or `n` (also when absent). */
  type: string;
  /** Text of `<v>`, undefined when the cell has none. */
  value: string | undefined;
  /** Text of `<is>` (rich-text runs joined), undefined when the cell has none. */
  inline: string | undefined;
  /** Text of `<f>`, undefined when the cell has no formula; '' for cells sharing another's formula. */
  formula: string | undefined;
  /** The cell's style shows numbers as dates. */
  dateStyle: boolean;
}

/**
 * Mirrors how Excel decides a number format shows a date: after removing literal text and
 * bracketed parts (colours, locales, elapsed-time markers) a date or time token remains.
 */
export function isDateFormat(format: string | undefined): boolean {
  if (!format) return false;
  const stripped = format
    .replace(/\[[^\]]*]/g, '')
    .replace(/"[^"]*"/g, '')
    .replace(/\\./g, '');
  return /[ymdhsb]/i.test(stripped);
}

/**
 * Gives a raw cell its value: shared and inline strings stay text, formulas give their saved
 * result, numbers keep the double the file stores (JavaScript prints it in its shortest
 * round-trip form), and a number in a date style becomes a Date. A cell that holds no usable
 * value (an error such as `#N/A`, a formula never calculated, text that is no number) gives null
 * and says why, so the caller can warn.
 */
export function convertRawCell(
  cell: RawCell,
  date1904: boolean,
  sharedString: (index: number) => string | undefined,
): ConvertedCell {
  const { type, value } = cell;
  if (type === 'inlineStr' && cell.inline !== undefined) return { value: unescapeOoxml(cell.inline) };
  if (value === undefined) {
    // Files written by tools that do not calculate carry formulas without a saved result.
    if (cell.formula !== undefined)
      return {
        value: null,
        errorText: `a formula with no saved result${cell.formula === '' ? '' : ` (=${cell.formula})`}`,
      };
    return { value: null };
  }
  switch (type) {
    case 's': {
      const text = sharedString(Number(value));
      return text === undefined
        ? { value: null, errorText: `shared string ${value}, which the workbook does not have` }
        : { value: text };
    }
    case 'str':
    case 'inlineStr':
      return { value: unescapeOoxml(value) };
    case 'b':
      if (value === '1' || value === 'true') return { value: true };
      if (value === '0' || value === 'false') return { value: false };
      return { value: null, errorText: `the boolean ${JSON.stringify(value)}, which is neither 0 nor 1` };
    case 'e':
      return { value: null, errorText: `the error ${value}` };
    case 'd': {
      // ISO 8601 dates (strict OOXML); like serial dates they carry no zone and read as UTC.
      const zoned = /(?:Z|[+-]\d\d:?\d\d)$/.test(value) || !value.includes('T') ? value : `${value}Z`;
      const date = new Date(zoned);
      return Number.isNaN(date.getTime())
        ? { value: null, errorText: `the date ${JSON.stringify(value)}, which is not an ISO 8601 date` }
        : { value: date };
    }
    default: {
      if (value.trim() === '') return { value: null };
      const number = Number(value);
      if (Number.isNaN(number))
        return { value: null, errorText: `the number ${JSON.stringify(value)}, which is not a number` };
      if (!cell.dateStyle) return { value: number };
      const date = serialToDate(number, date1904);
      return Number.isNaN(date.getTime()) ? { value: null, errorText: 'a date out of range' } : { value: date };
    }
  }
}

/** Header cells become column names: a Date header prints as its ISO date, anything else as text. */
export function headerText(value: CellValue): string {
  if (value === null) return '';
  if (value instanceof Date) return value.toISOString().slice(0, 10);
  return String(value).trim();
}
