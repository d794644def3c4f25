import { serialOf, UNIX_EPOCH_SERIAL } from '../files/index.ts';
import type { Cell } from './columns.ts';
import { looksLikeFormula } from './writer-types.ts';

// XLSX, written as sheet XML streamed into a zip: the OOXML parts and cells.

/**
 * What a cell's XML cannot carry as it is: characters XML 1.0 forbids (control characters, lone
 * surrogates, U+FFFE/U+FFFF), a carriage return (XML reads it as a line feed), and a literal
 * `_xHHHH_`, which Excel and our own reader take for an escaped character. Each is written as
 * Excel writes it: `_xHHHH_`, and `_x005F_` for the underscore of a literal one. Dropping them
 * lost the characters, and a text holding `_x0041_` came back as `A`.
 */
// eslint-disable-next-line no-control-regex
const OOXML_ESCAPE =
  /_(?=x[0-9A-Fa-f]{4}_)|[\u0000-\u0008\u000B-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Anything xml() changes; most texts have none of it. Two tests, the second only for a text
 * holding `_x`: one pattern with both took 25 ns a text more, half a microsecond a row.
 */
// eslint-disable-next-line no-control-regex
const XML_SPECIAL = /[&<>"\u0000-\u0008\u000B-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;
const OOXML_LITERAL = /_x[0-9A-Fa-f]{4}_/;

function ooxmlEscape(match: string): string {
  return `_x${(match === '_' ? 0x5f : match.charCodeAt(0)).toString(16).toUpperCase().padStart(4, '0')}_`;
}

export function xml(text: string): string {
  if (!XML_SPECIAL.test(text) && !(text.includes('_x') && OOXML_LITERAL.test(text))) return text;
  return escapeXml(text);
}

function escapeXml(text: string): string {
  return text
    .replace(OOXML_ESCAPE, ooxmlEscape)
    .replace(/&/g, '&amp;')
    .replace(/</g, '&lt;')
    .replace(/>/g, '&gt;')
    .replace(/"/g, '&quot;');
}

/** Whitespace a spreadsheet may drop at the ends of a text, or fold inside it, without xml:space. */
function isSpace(code: number): boolean {
  return code <= 0x20 || (code > 0x7f && /\s/.test(String.fromCharCode(code)));
}

/**
 * A text as the `<t>` of an inline string cell, escaped as xml() does. It says
 * `xml:space="preserve"` only when the text has whitespace a reader could drop or fold (at
 * either end, a tab or a line break, two spaces in a row): on every cell it was a third of a
 * party row's XML, and so of what zlib compresses. One pass over the characters finds both; a
 * regular expression's test cost more than the rest of the cell.
 */
export function textElement(text: string): string {
  const length = text.length;
  let special = false;
  let spacey = length > 0 && (isSpace(text.charCodeAt(0)) || isSpace(text.charCodeAt(length - 1)));
  for (let i = 0; i < length; i += 1) {
    const code = text.charCodeAt(i);
    if (code < 0x20) {
      spacey = true;
      if (code !== 0x09 && code !== 0x0a) special = true;
    } else if (code === 0x20) {
      if (text.charCodeAt(i + 1) === 0x20) spacey = true;
    } else if (
      code === 0x26 ||
      code === 0x3c ||
      code === 0x3e ||
      code === 0x22 ||
      (code >= 0xd800 && code <= 0xdfff) ||
      code >= 0xfffe
    ) {
      special = true;
    } else if (code === 0x5f && text.charCodeAt(i + 1) === 0x78) {
      // `_x`: a literal `_xHHHH_` is escaped so that it is not read as an escaped character.
      if (OOXML_LITERAL.test(text)) special = true;
    }
  }
  const body = special ? escapeXml(text) : text;
  return spacey ? `<t xml:space="preserve">${body}</t>` : `<t>${body}</t>`;
}

/** Style indexes in styles.xml below. */
export const STYLE = { header: 1, date: 2, timestamp: 3, text: 4 } as const;

/**
 * The styles part as Excel writes it for a new workbook (fonts, fills, borders, the one cell style
 * "Normal" with builtinId 0 over cellStyleXfs 0, empty dxfs and tableStyles), plus the formats
 * above. Without the "Normal" cell style openpyxl warns "Workbook contains no default style" and
 * other readers guess. No theme part is written, so fonts name their family instead of a scheme.
 */
export const STYLES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">
<numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/><numFmt numFmtId="165" formatCode="yyyy-mm-dd hh:mm:ss"/></numFmts>
<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font><font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>
<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>
<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>
<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>
<cellXfs count="5"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" quotePrefix="1"/></cellXfs>
<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>
<dxfs count="0"/>
<tableStyles count="0" defaultTableStyle="TableStyleMedium2" defaultPivotStyle="PivotStyleLight16"/>
</styleSheet>`;

/** The workbook: its sheets, and the range of the first sheet's auto-filter. */
export function workbookXml(sheets: string[], filterRange: string): string {
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${sheets
    .map((name, i) => `<sheet name="${xml(name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
    .join(
      '',
    )}</sheets><definedNames><definedName name="_xlnm._FilterDatabase" localSheetId="0" hidden="1">${xml(filterRange)}</definedName></definedNames></workbook>`;
}

export function workbookRels(count: number): string {
  const sheets = Array.from(
    { length: count },
    (_, i) =>
      `<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`,
  ).join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets}<Relationship Id="rId${count + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`;
}

export function contentTypes(count: number): string {
  const sheets = Array.from(
    { length: count },
    (_, i) =>
      `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`,
  ).join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>${sheets}</Types>`;
}

export const ROOT_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`;

export const SHEET_OPEN =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">';

/** A date cell's value: days since the spreadsheet epoch, as a number. */
function dateSerial(cell: { date: string } | { timestamp: string }): number {
  return serialOf('date' in cell ? Date.parse(`${cell.date}T00:00:00Z`) : Date.parse(cell.timestamp));
}

/** The digits of `text` from `at`, `count` of them, as a number; -1 when one is not a digit. */
function digitsAt(text: string, at: number, count: number): number {
  let value = 0;
  for (let i = at; i < at + count; i += 1) {
    const digit = text.charCodeAt(i) - 0x30;
    if (digit < 0 || digit > 9) return -1;
    value = value * 10 + digit;
  }
  return value;
}

/**
 * Days from 1970-01-01 to a day of the proleptic Gregorian calendar (H. Hinnant's days_from_civil).
 * A day past its month's end runs on into the next month, as Date.parse and Date.UTC count it.
 */
function civilDays(year: number, month: number, day: number): number {
  const y = month <= 2 ? year - 1 : year;
  const era = Math.floor(y / 400);
  const yearOfEra = y - era * 400;
  const dayOfYear = Math.floor((153 * (month > 2 ? month - 3 : month + 9) + 2) / 5) + day - 1;
  return (
    era * 146_097 + yearOfEra * 365 + Math.floor(yearOfEra / 4) - Math.floor(yearOfEra / 100) + dayOfYear - 719_468
  );
}

/** A second of the day as the fraction of a day it is, from its decimal point; filled as met. */
const DAY_FRACTIONS: string[] = [];

function dayFraction(second: number): string {
  let text = DAY_FRACTIONS[second];
  if (text === undefined) {
    // Twelve places: within 0.05 µs of the second; a reader that rounds to the millisecond, as
    // this project's and exceljs's do, reads the same instant back.
    text = second === 0 ? '' : (second / 86_400).toFixed(12).replace(/0+$/, '').slice(1);
    DAY_FRACTIONS[second] = text;
  }
  return text;
}

/**
 * The serial of a date (`YYYY-MM-DD`) or of a whole-second UTC instant (`YYYY-MM-DDTHH:MM:SSZ`,
 * as the service writes them) as text, worked out from its digits; null for any other shape, or a
 * day before the spreadsheet epoch, which go through Date.parse. Date.parse and printing the
 * resulting double took about a microsecond a party row, which has two timestamps.
 */
export function serialText(text: string, instant: boolean): string | null {
  if (text.length !== (instant ? 20 : 10) || text.charCodeAt(4) !== 0x2d || text.charCodeAt(7) !== 0x2d) return null;
  const year = digitsAt(text, 0, 4);
  const month = digitsAt(text, 5, 2);
  const day = digitsAt(text, 8, 2);
  if (year < 0 || month < 1 || month > 12 || day < 1 || day > 31) return null;
  let second = 0;
  if (instant) {
    if (
      text.charCodeAt(10) !== 0x54 ||
      text.charCodeAt(13) !== 0x3a ||
      text.charCodeAt(16) !== 0x3a ||
      text.charCodeAt(19) !== 0x5a
    )
      return null;
    const hours = digitsAt(text, 11, 2);
    const minutes = digitsAt(text, 14, 2);
    const seconds = digitsAt(text, 17, 2);
    if (hours < 0 || hours > 23 || minutes < 0 || minutes > 59 || seconds < 0 || seconds > 59) return null;
    second = hours * 3600 + minutes * 60 + seconds;
  }
  const days = civilDays(year, month, day) + UNIX_EPOCH_SERIAL;
  return days < 0 ? null : `${days}${dayFraction(second)}`;
}

/**
 * A cell's XML. `open` is its start up to its reference, `<c r="B7"`: a row puts it together from
 * each column's `<c r="B` and the row's `7"`, made once.
 */
export function cellXml(open: string, cell: Cell, raw: boolean): string {
  if (cell === null) return '';
  if (typeof cell === 'string') {
    // Inline strings are text; a text that looks like a formula also gets the quote-prefix style,
    // so that editing the cell in a spreadsheet does not turn it into one.
    return `${open}${!raw && looksLikeFormula(cell) ? TEXT_QUOTED : TEXT}${textElement(cell)}</is></c>`;
  }
  if (typeof cell === 'number') return Number.isFinite(cell) ? `${open}><v>${cell}</v></c>` : '';
  if (typeof cell === 'boolean') return `${open}${cell ? ' t="b"><v>1</v></c>' : ' t="b"><v>0</v></c>'}`;
  const isDate = 'date' in cell;
  const value = (isDate ? serialText(cell.date, false) : serialText(cell.timestamp, true)) ?? dateSerial(cell);
  if (typeof value === 'number' && Number.isNaN(value)) return cellXml(open, isDate ? cell.date : cell.timestamp, raw);
  return `${open}${isDate ? DATE : TIMESTAMP}${value}</v></c>`;
}

const TEXT = ' t="inlineStr"><is>';
const TEXT_QUOTED = ` t="inlineStr" s="${STYLE.text}"><is>`;
const DATE = ` s="${STYLE.date}"><v>`;
const TIMESTAMP = ` s="${STYLE.timestamp}"><v>`;

/**
 * The most characters a spreadsheet cell holds (Excel counts UTF-16 units). A longer text makes
 * Excel call the file damaged and offer to repair it; the writer cuts it there and counts it.
 */
export const XLSX_MAX_TEXT = 32_767;

/** A text cut to what a cell holds, never half of a surrogate pair. */
export function cutText(text: string): string {
  const code = text.charCodeAt(XLSX_MAX_TEXT - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? XLSX_MAX_TEXT - 1 : XLSX_MAX_TEXT);
}
