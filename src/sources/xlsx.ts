import type { EventEmitter } from 'node:events';
import { basename } from 'node:path';
import ExcelJS from 'exceljs';
import { FerryError } from '../errors/index.ts';
import type { CellValue, CommonReadOptions, SourceItem, SourceLocation, SourceWarning } from './types.ts';
import { checkPartSize, openXlsxContainer, streamXlsxParts, verifyXlsxParts } from './xlsx-container.ts';
import type { XlsxContainer } from './xlsx-container.ts';
import { parseWorkbookIndex } from './xlsx-workbook.ts';
import type { XlsxSheetInfo } from './xlsx-workbook.ts';
import { convertCell, headerText } from './xlsx-cells.ts';
import { uniqueHeaderNames } from './xlsx-headers.ts';
import { untilFailure } from './xlsx-race.ts';

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
const SHEET_PART = /^xl\/worksheets\/sheet(\d+)\.xml$/;

function normalizeOptions(options: XlsxReadOptions): NormalizedXlsxOptions {
  const sheet = options.sheet ?? 1;
  if (typeof sheet === 'number' && (!Number.isInteger(sheet) || sheet < 1)) {
    throw new FerryError('CONFIG_INVALID', `sheet must be a sheet name or a 1-based index; got ${sheet}`);
  }
  const headerRow = options.headerRow ?? 1;
  if (headerRow !== 'none' && (!Number.isInteger(headerRow) || headerRow < 1)) {
    throw new FerryError('CONFIG_INVALID', `headerRow must be a 1-based row number or 'none'; got ${String(headerRow)}`);
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
  throw new FerryError('SOURCE_SHEET_NOT_FOUND', `${file} has no sheet ${typeof wanted === 'number' ? `number ${wanted}` : JSON.stringify(wanted)}; it has ${sheets.length}: ${names}`, {
    location: { file },
    hint: 'Pick a sheet by its exact name (case matters) or by its 1-based position.',
  });
}

/** The parts exceljs is given, in the order it needs them: the index, styles, strings, then the sheet. */
function partsToRead(sheet: XlsxSheetInfo): string[] {
  return ['xl/_rels/workbook.xml.rels', 'xl/workbook.xml', 'xl/styles.xml', 'xl/sharedStrings.xml', sheet.part];
}

function guardParts(file: string, container: XlsxContainer, sheet: XlsxSheetInfo, options: NormalizedXlsxOptions): void {
  const limits = { maxUncompressedBytes: options.maxUncompressedBytes, maxCompressionRatio: options.maxCompressionRatio };
  if (!container.parts.has(sheet.part)) {
    throw new FerryError('SOURCE_XLSX_CORRUPT', `${file} lists sheet ${JSON.stringify(sheet.name)} but its part ${sheet.part || '(unresolved)'} is missing`, {
      location: { file, sheet: sheet.name },
      hint: 'Re-save the workbook from Excel or LibreOffice.',
    });
  }
  for (const name of partsToRead(sheet)) {
    const part = container.parts.get(name);
    if (part) checkPartSize(file, part, limits);
  }
}

/**
 * Reads one sheet of an XLSX workbook as rows, streaming: memory grows with the shared-strings
 * table (which Excel keeps for the whole workbook) but not with the number of rows.
 *
 * Values: text cells stay text (a phone number `0612...` keeps its zero); numbers keep the double
 * the file stores; date-formatted numbers (also formula results) become Date, read as UTC;
 * formulas give their cached result; rich text and hyperlinks give their text; booleans stay
 * booleans; an error cell (`#N/A`) or a formula without a saved result gives null with a warning. Merged cells: only the top-left
 * cell holds the value, the others read as null (the merge list comes after the cells in the
 * file, so repeating the value would mean buffering the sheet). Rows whose cells are all empty are
 * skipped and counted in one `EMPTY_ROWS_SKIPPED` warning. Cells right of the header's last named
 * column are kept under `column<N>` with a warning.
 *
 * Only the workbook index, styles, shared strings and the chosen sheet are inflated: each is held
 * to the size limits before anything is inflated, then inflated once to check it is intact (a
 * damaged part would otherwise leave exceljs waiting forever), then read. Nothing goes to disk.
 *
 * `row` of each item counts records; `location.row` is the sheet's own row number, as Excel shows it.
 * @throws FerryError SOURCE_NOT_FOUND, SOURCE_UNREADABLE, SOURCE_XLSX_CORRUPT, SOURCE_XLSX_ENCRYPTED,
 *   SOURCE_XLSX_TOO_LARGE, SOURCE_FORMAT_UNKNOWN, SOURCE_SHEET_NOT_FOUND, SOURCE_HEADER
 */
export async function* readXlsx(file: string, options: XlsxReadOptions = {}): AsyncGenerator<SourceItem> {
  const opts = normalizeOptions(options);
  const container = await openXlsxContainer(file);
  const index = parseWorkbookIndex(file, container.workbookXml, container.workbookRelsXml);
  const sheet = pickSheet(file, index.sheets, opts.sheet);
  guardParts(file, container, sheet, opts);
  const partMatch = SHEET_PART.exec(sheet.part);
  if (!partMatch) {
    throw new FerryError('SOURCE_XLSX_CORRUPT', `sheet ${JSON.stringify(sheet.name)} of ${file} is stored as ${sheet.part}, a part name the streaming reader cannot follow`, {
      location: { file, sheet: sheet.name },
      hint: 'Re-save the workbook from Excel or LibreOffice, which names sheet parts xl/worksheets/sheetN.xml.',
    });
  }
  await verifyXlsxParts(file, partsToRead(sheet));
  const wantedNumber = partMatch[1];
  const source = `${basename(file)}#${sheet.name}`;
  const input = streamXlsxParts(file, partsToRead(sheet));
  const reader = new ExcelJS.stream.xlsx.WorkbookReader(input, {
    sharedStrings: 'cache',
    styles: 'cache',
    hyperlinks: 'ignore',
    worksheets: 'emit',
    entries: 'emit',
  });
  // The reader renames worksheets after their sheetId, so the part number is only known from this event.
  let currentNumber: string | undefined;
  (reader as unknown as EventEmitter).on('entry', (entry: { type: string; id?: string }) => {
    if (entry.type === 'worksheet') currentNumber = entry.id;
  });

  // exceljs pipes the input into its unzipper, and a pipe does not pass errors on: without this
  // race a failing input would leave the read waiting forever.
  const inputFailed = new AbortController();
  input.once('error', (error) => inputFailed.abort(error));

  const rowReader = new SheetRowReader(file, sheet.name, source, index.date1904, opts);
  let sawSheet = false;
  try {
    for await (const worksheet of untilFailure(reader, inputFailed.signal)) {
      if (currentNumber !== wantedNumber) continue;
      sawSheet = true;
      for await (const row of untilFailure(worksheet, inputFailed.signal)) {
        opts.signal?.throwIfAborted();
        const item = rowReader.accept(row);
        if (item) yield item;
      }
    }
  } catch (error) {
    if (error instanceof FerryError || opts.signal?.aborted) throw error;
    throw new FerryError('SOURCE_XLSX_CORRUPT', `${file} could not be read as a workbook: ${(error as Error).message}`, {
      location: { file, sheet: sheet.name },
      cause: error,
      hint: 'The file may be damaged or truncated; re-save it from Excel or LibreOffice, or export the sheet as CSV.',
    });
  } finally {
    input.destroy();
  }
  if (!sawSheet) {
    throw new FerryError('SOURCE_XLSX_CORRUPT', `${file} lists sheet ${JSON.stringify(sheet.name)} but its cells could not be found`, {
      location: { file, sheet: sheet.name },
      hint: 'Re-save the workbook from Excel or LibreOffice.',
    });
  }
  rowReader.finish();
}

/** Turns exceljs rows into items; keeps the header and counters between rows. */
class SheetRowReader {
  private names: string[] | undefined;
  private width = 0;
  private itemCount = 0;
  private emptyRows = 0;
  private warnedWide = false;

  constructor(
    private readonly file: string,
    private readonly sheet: string,
    private readonly source: string,
    private readonly date1904: boolean,
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

  accept(row: ExcelJS.Row): SourceItem | undefined {
    const rowNumber = row.number;
    const { headerRow } = this.options;
    if (headerRow !== 'none' && this.names === undefined) {
      if (rowNumber < headerRow) return undefined;
      if (rowNumber > headerRow) this.failMissingHeader(headerRow);
      this.readHeader(row);
      return undefined;
    }
    const cells: Array<{ column: number; value: CellValue }> = [];
    let maxColumn = 0;
    row.eachCell({ includeEmpty: false }, (cell, column) => {
      const converted = convertCell(cell, this.date1904);
      if (converted.errorText !== undefined) {
        this.warn('OTHER', `cell ${cell.address} holds ${converted.errorText}; read as empty`, rowNumber);
      }
      if (converted.value === null || converted.value === '') return;
      cells.push({ column, value: converted.value });
      maxColumn = Math.max(maxColumn, column);
    });
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
    throw new FerryError('SOURCE_HEADER', `sheet ${JSON.stringify(this.sheet)} of ${this.file} has no header in row ${headerRow}: the row is empty or missing`, {
      location: { file: this.file, sheet: this.sheet, row: headerRow },
      hint: 'Give the row that holds the column names (headerRow), or headerRow none to name columns column1, column2, ...',
    });
  }

  private readHeader(row: ExcelJS.Row): void {
    const texts: string[] = [];
    let width = 0;
    row.eachCell({ includeEmpty: false }, (cell, column) => {
      const text = headerText(convertCell(cell, this.date1904).value);
      if (text === '') return;
      texts[column] = text;
      width = Math.max(width, column);
    });
    if (width === 0) this.failMissingHeader(row.number);
    const { names, fixes } = uniqueHeaderNames(texts, width);
    for (const fix of fixes) {
      if (fix.kind === 'blank') this.warn('HEADER_BLANK', `header of column ${fix.column} is blank; named ${fix.name}`, row.number);
      else this.warn('HEADER_RENAMED', `header ${JSON.stringify(fix.original)} of column ${fix.column} repeats an earlier one; renamed ${fix.name}`, row.number);
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
      this.warn('OTHER', `row ${rowNumber} has values right of the last header column; kept as column${this.width + 1}...column${maxColumn}`, rowNumber);
    }
    this.names = names;
    this.width = maxColumn;
  }
}
