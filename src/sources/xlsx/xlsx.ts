import { basename } from 'node:path';
import { FerryError } from '../../errors/index.ts';
import type { CellValue, CommonReadOptions, SourceItem, SourceLocation, SourceWarning } from '../types.ts';
import { checkPartSize, openXlsxContainer, openXlsxParts } from './xlsx-container.ts';
import type { XlsxContainer } from './xlsx-container.ts';
import { parseWorkbookIndex } from './xlsx-workbook.ts';
import type { XlsxSheetInfo, XlsxWorkbookIndex } from './xlsx-workbook.ts';
import { headerText } from './xlsx-cells.ts';
import { nameColumns } from '../csv/csv-header.ts';
import { readSheetRows } from './xlsx-sheet.ts';
import type { SheetRowData } from './xlsx-sheet.ts';
import { SharedStringTable, readSharedStrings } from './xlsx-strings.ts';
import { DateStyles, readDateStyles } from './xlsx-styles.ts';

export interface XlsxReadOptions extends CommonReadOptions {
  /** Sheet name or 1-based index. @default 1 */
  sheet?: string | number;
  /**
   * Largest uncompressed size of each part read (the sheet, shared strings, styles, workbook
   * index), checked in the zip's central directory before anything is inflated, and held to it
   * while inflating.
   * @default 1073741824 (1 GiB)
   */
  maxUncompressedBytes?: number;
  /**
   * Largest declared compression ratio of each part read, once it exceeds 1 MiB uncompressed. Real
   * sheets compress 5:1 to 50:1; crafted bombs several hundred to one.
   * @default 200
   */
  maxCompressionRatio?: number;
}

interface NormalizedXlsxOptions {
  sheet: string | number;
  headerRow: number | 'none';
  onWarning: (warning: SourceWarning) => void;
  signal: AbortSignal | undefined;
  maxUncompressedBytes: number;
  maxCompressionRatio: number;
}

const DEFAULT_MAX_UNCOMPRESSED = 1024 * 1024 * 1024;
const DEFAULT_MAX_RATIO = 200;

function normalizeOptions(options: XlsxReadOptions): NormalizedXlsxOptions {
  const sheet = options.sheet ?? 1;
  if (typeof sheet === 'number' && (!Number.isInteger(sheet) || sheet < 1)) {
    throw new FerryError('CONFIG_INVALID', `sheet must be a sheet name or a 1-based index; got ${sheet}`);
  }
  const headerRow = options.headerRow ?? 1;
  if (headerRow !== 'none' && (!Number.isInteger(headerRow) || headerRow < 1)) {
    throw new FerryError(
      'CONFIG_INVALID',
      `headerRow must be a 1-based row number or 'none'; got ${String(headerRow)}`,
    );
  }
  const positive = (value: number | undefined, fallback: number, name: string): number => {
    if (value === undefined) return fallback;
    if (!(value > 0)) throw new FerryError('CONFIG_INVALID', `${name} must be a positive number; got ${value}`);
    return value;
  };
  return {
    sheet,
    headerRow,
    onWarning: options.onWarning ?? (() => {}),
    signal: options.signal,
    maxUncompressedBytes: positive(options.maxUncompressedBytes, DEFAULT_MAX_UNCOMPRESSED, 'maxUncompressedBytes'),
    maxCompressionRatio: positive(options.maxCompressionRatio, DEFAULT_MAX_RATIO, 'maxCompressionRatio'),
  };
}

/**
 * Lists the sheets of a workbook in tab order (hidden sheets included), reading only the
 * workbook index: cheap even for a huge file.
 * @throws FerryError SOURCE_NOT_FOUND, SOURCE_XLSX_CORRUPT, SOURCE_XLSX_ENCRYPTED, SOURCE_FORMAT_UNKNOWN
 */
export async function listXlsxSheets(file: string): Promise<string[]> {
  const container = await openXlsxContainer(file);
  return parseWorkbookIndex(file, container.workbookXml, container.workbookRelsXml).sheets.map((sheet) => sheet.name);
}

function pickSheet(file: string, sheets: XlsxSheetInfo[], wanted: string | number): XlsxSheetInfo {
  const found = typeof wanted === 'number' ? sheets[wanted - 1] : sheets.find((sheet) => sheet.name === wanted);
  if (found) return found;
  const names = sheets.map((sheet) => JSON.stringify(sheet.name)).join(', ');
  throw new FerryError(
    'SOURCE_SHEET_NOT_FOUND',
    `${file} has no sheet ${typeof wanted === 'number' ? `number ${wanted}` : JSON.stringify(wanted)}; it has ${sheets.length}: ${names}`,
    {
      location: { file },
      hint: 'Pick a sheet by its exact name (case matters) or by its 1-based position.',
    },
  );
}

/** The parts a read inflates: the sheet and what its cells refer to. */
function partsToRead(index: XlsxWorkbookIndex, sheet: XlsxSheetInfo): string[] {
  return ['xl/_rels/workbook.xml.rels', 'xl/workbook.xml', index.stylesPart, index.sharedStringsPart, sheet.part];
}

function guardParts(
  file: string,
  container: XlsxContainer,
  index: XlsxWorkbookIndex,
  sheet: XlsxSheetInfo,
  options: NormalizedXlsxOptions,
): void {
  const limits = {
    maxUncompressedBytes: options.maxUncompressedBytes,
    maxCompressionRatio: options.maxCompressionRatio,
  };
  if (!container.parts.has(sheet.part)) {
    throw new FerryError(
      'SOURCE_XLSX_CORRUPT',
      `${file} lists sheet ${JSON.stringify(sheet.name)} but its part ${sheet.part || '(unresolved)'} is missing`,
      {
        location: { file, sheet: sheet.name },
        hint: 'Re-save the workbook from Excel or LibreOffice.',
      },
    );
  }
  for (const name of partsToRead(index, sheet)) {
    const part = container.parts.get(name);
    if (part) checkPartSize(file, part, limits);
  }
}

/**
 * Reads one sheet of an XLSX workbook as rows, streaming: memory grows with the shared-strings
 * table (which Excel keeps for the whole workbook, packed here into one buffer) but not with the
 * number of rows.
 *
 * Values: text cells stay text (a phone number `0612...` keeps its zero); numbers keep the double
 * the file stores; date-formatted numbers (also formula results) become Date, read as UTC;
 * formulas give their cached result; rich text and hyperlinks give their text; booleans stay
 * booleans; an error cell (`#N/A`) or a formula without a saved result gives null with a warning.
 * Merged cells: only the top-left cell holds the value, the others read as null (the merge list
 * comes after the cells in the file, so repeating the value would mean buffering the sheet). Rows
 * whose cells are all empty, and rows missing between the header and the last row, are skipped and
 * counted in one `EMPTY_ROWS_SKIPPED` warning. Cells right of the header's last named column are
 * kept under `column<N>` with a warning.
 *
 * Only the workbook index, styles, shared strings and the chosen sheet are inflated, each held to
 * the size limits before anything is inflated; the sheet is inflated once up front to check it is
 * intact, so a damaged file fails before the first row. Nothing goes to disk.
 *
 * `row` of each item counts records; `location.row` is the sheet's own row number, as Excel shows it.
 * @throws FerryError SOURCE_NOT_FOUND, SOURCE_UNREADABLE, SOURCE_XLSX_CORRUPT, SOURCE_XLSX_ENCRYPTED,
 *   SOURCE_XLSX_TOO_LARGE, SOURCE_FORMAT_UNKNOWN, SOURCE_SHEET_NOT_FOUND, SOURCE_HEADER
 */
export async function* readXlsx(file: string, options: XlsxReadOptions = {}): AsyncGenerator<SourceItem> {
  const opts = normalizeOptions(options);
  opts.signal?.throwIfAborted();
  const container = await openXlsxContainer(file);
  const index = parseWorkbookIndex(file, container.workbookXml, container.workbookRelsXml);
  const sheet = pickSheet(file, index.sheets, opts.sheet);
  guardParts(file, container, index, sheet, opts);
  const zip = await openXlsxParts(file);
  try {
    await zip.verify(sheet.part);
    const styles = zip.has(index.stylesPart)
      ? await readDateStyles(zip.read(index.stylesPart), file, index.stylesPart, opts.signal)
      : DateStyles.none();
    const strings = zip.has(index.sharedStringsPart)
      ? await readSharedStrings(zip.read(index.sharedStringsPart), {
          file,
          part: index.sharedStringsPart,
          declaredBytes: container.parts.get(index.sharedStringsPart)?.uncompressedSize ?? 0,
          signal: opts.signal,
        })
      : new SharedStringTable(16, 16);
    const rows = readSheetRows(zip.read(sheet.part), {
      file,
      part: sheet.part,
      sheet: sheet.name,
      strings,
      styles,
      date1904: index.date1904,
      signal: opts.signal,
    });
    const rowReader = new SheetRowReader(file, sheet.name, `${basename(file)}#${sheet.name}`, opts);
    for await (const row of rows) {
      opts.signal?.throwIfAborted();
      const item = rowReader.accept(row);
      if (item) yield item;
    }
    rowReader.finish();
  } finally {
    zip.close();
  }
}

/** Turns sheet rows into items; keeps the header and counters between rows. */
class SheetRowReader {
  private names: string[] | undefined;
  private width = 0;
  private itemCount = 0;
  private emptyRows = 0;
  private warnedWide = false;
  /** The last row number seen; a jump past it means rows missing from the file, which are empty. */
  private lastRow = 0;

  constructor(
    private readonly file: string,
    private readonly sheet: string,
    private readonly source: string,
    private readonly options: NormalizedXlsxOptions,
  ) {
    if (options.headerRow === 'none') this.names = [];
  }

  private location(row: number): SourceLocation {
    return { file: this.file, sheet: this.sheet, row };
  }

  private warn(code: SourceWarning['code'], message: string, row: number): void {
    this.options.onWarning({ code, message, location: this.location(row) });
  }

  accept(row: SheetRowData): SourceItem | undefined {
    const rowNumber = row.number;
    const { headerRow } = this.options;
    const previous = this.lastRow;
    this.lastRow = Math.max(previous, rowNumber);
    if (headerRow !== 'none' && this.names === undefined) {
      if (rowNumber < headerRow) return undefined;
      if (rowNumber > headerRow) this.failMissingHeader(headerRow);
      this.readHeader(row);
      return undefined;
    }
    if (rowNumber > previous + 1) this.emptyRows += rowNumber - previous - 1;
    const cells: Array<{ column: number; value: CellValue }> = [];
    let maxColumn = 0;
    for (const cell of row.cells) {
      if (cell.errorText !== undefined) {
        this.warn('OTHER', `cell ${cell.ref} holds ${cell.errorText}; read as empty`, rowNumber);
      }
      if (cell.value === null || cell.value === '') continue;
      cells.push({ column: cell.column, value: cell.value });
      maxColumn = Math.max(maxColumn, cell.column);
    }
    if (cells.length === 0) {
      this.emptyRows++;
      return undefined;
    }
    const names = this.names ?? [];
    if (maxColumn > this.width) this.widen(maxColumn, rowNumber);
    const values: Record<string, CellValue> = {};
    for (let column = 1; column <= this.width; column++) values[names[column] ?? `column${column}`] = null;
    for (const { column, value } of cells) values[names[column] ?? `column${column}`] = value;
    this.itemCount++;
    return { kind: 'row', source: this.source, row: this.itemCount, values, location: this.location(rowNumber) };
  }

  finish(): void {
    if (this.options.headerRow !== 'none' && this.names === undefined) this.failMissingHeader(this.options.headerRow);
    if (this.emptyRows > 0) {
      this.options.onWarning({
        code: 'EMPTY_ROWS_SKIPPED',
        message: `${this.emptyRows} empty row(s) skipped in sheet ${JSON.stringify(this.sheet)}`,
        location: { file: this.file, sheet: this.sheet, row: 0 },
      });
    }
  }

  private failMissingHeader(headerRow: number): never {
    throw new FerryError(
      'SOURCE_HEADER',
      `sheet ${JSON.stringify(this.sheet)} of ${this.file} has no header in row ${headerRow}: the row is empty or missing`,
      {
        location: { file: this.file, sheet: this.sheet, row: headerRow },
        hint: 'Give the row that holds the column names (headerRow), or headerRow none to name columns column1, column2, ...',
      },
    );
  }

  private readHeader(row: SheetRowData): void {
    const texts: string[] = [];
    let width = 0;
    for (const { column, value } of row.cells) {
      const text = headerText(value);
      if (text === '') continue;
      texts[column] = text;
      width = Math.max(width, column);
    }
    if (width === 0) this.failMissingHeader(row.number);
    // The CSV reader's naming, so that a sheet saved as CSV keeps its column names.
    const named = nameColumns(Array.from({ length: width }, (_, i) => texts[i + 1] ?? ''));
    const names: string[] = [];
    named.names.forEach((name, i) => (names[i + 1] = name));
    for (const fix of named.renames) {
      if (fix.reason === 'blank')
        this.warn('HEADER_BLANK', `header of column ${fix.column} is blank; named ${fix.name}`, row.number);
      else if (fix.reason === 'reserved')
        this.warn(
          'HEADER_RENAMED',
          `header ${JSON.stringify(fix.original)} of column ${fix.column} is a reserved name; renamed ${fix.name}`,
          row.number,
        );
      else
        this.warn(
          'HEADER_RENAMED',
          `header ${JSON.stringify(fix.original)} of column ${fix.column} repeats an earlier one; renamed ${fix.name}`,
          row.number,
        );
    }
    this.names = names;
    this.width = width;
  }

  private widen(maxColumn: number, rowNumber: number): void {
    const names = this.names ?? [];
    const taken = new Set(names);
    for (let column = this.width + 1; column <= maxColumn; column++) {
      let name = `column${column}`;
      for (let suffix = 2; taken.has(name); suffix++) name = `column${column}_${suffix}`;
      names[column] = name;
      taken.add(name);
    }
    if (this.options.headerRow !== 'none' && !this.warnedWide) {
      this.warnedWide = true;
      this.warn(
        'OTHER',
        `row ${rowNumber} has values right of the last header column; kept as column${this.width + 1}...column${maxColumn}`,
        rowNumber,
      );
    }
    this.names = names;
    this.width = maxColumn;
  }
}
