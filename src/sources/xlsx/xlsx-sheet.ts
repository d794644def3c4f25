import { FerryError } from '../../errors/index.ts';
import { columnLetters } from '../../files/index.ts';
import { MAX_COLUMNS } from '../../util/index.ts';
import type { CellValue } from '../types.ts';
import { convertRawCell, type RawCell } from './xlsx-cells.ts';
import type { SharedStringTable } from './xlsx-strings.ts';
import type { DateStyles } from './xlsx-styles.ts';
import { createXmlParser, localName, malformedPart, xmlText } from './xlsx-xml.ts';

/** One non-empty cell of a row. */
export interface SheetCell {
  /** 1-based column. */
  column: number;
  /** The cell's address as Excel shows it, e.g. `C12`. */
  ref: string;
  value: CellValue;
  /** Why the cell reads as null (an error value, a formula never calculated); see {@link convertRawCell}. */
  errorText: string | undefined;
}

/** A `<row>` of the sheet with its cells that hold something. */
export interface SheetRowData {
  /** The row number Excel shows. */
  number: number;
  cells: SheetCell[];
}

/** What cell values are read against. */
export interface SheetContext {
  file: string;
  part: string;
  sheet: string;
  strings: SharedStringTable;
  styles: DateStyles;
  date1904: boolean;
  signal: AbortSignal | undefined;
}

/** XFD, Excel's last column (the source column limit): a reference beyond it is damage, and would make rows absurdly wide. */
const MAX_COLUMN = MAX_COLUMNS;

const NONE = 0;
const VALUE = 1;
const FORMULA = 2;
const INLINE_TEXT = 3;

/** `C12` -> 3; 0 when the reference starts with no letter. */
export function columnOfRef(ref: string): number {
  let column = 0;
  for (let i = 0; i < ref.length; i++) {
    const code = ref.charCodeAt(i);
    if (code >= 65 && code <= 90) column = column * 26 + code - 64;
    else if (code >= 97 && code <= 122) column = column * 26 + code - 96;
    else break;
    if (column > MAX_COLUMN) return column;
  }
  return column;
}

/**
 * Streams the rows of a worksheet part as they are parsed: at any time only one inflated chunk of
 * the part (16 KiB) and the rows it completes are held. Rows come in file order with their own numbers
 * (a missing `r` counts on from the previous row, a missing cell reference from the previous
 * cell); rows absent from the file are simply not produced. Cells outside `<sheetData>` (merge
 * lists, hyperlinks) are not looked at: a hyperlink reads as its cell text, and a merged range
 * holds its value in its top-left cell only, as Excel stores it.
 * @throws FerryError SOURCE_XLSX_CORRUPT when the sheet is not well-formed XML or names a column past XFD.
 */
export async function* readSheetRows(
  chunks: AsyncIterable<Buffer>,
  context: SheetContext,
): AsyncGenerator<SheetRowData> {
  const { strings, styles, date1904 } = context;
  const sharedString = (index: number): string | undefined => strings.get(index);
  const parser = createXmlParser();
  let failure: FerryError | undefined;
  let ready: SheetRowData[] = [];

  let inSheetData = false;
  let row: SheetRowData | undefined;
  let lastRow = 0;
  let lastColumn = 0;
  let inCell = false;
  let cellRef: string | undefined;
  let cellColumn = 0;
  let cellStyle = 0;
  let inInline = false;
  let phoneticDepth = 0;
  let capture = NONE;
  // One object reused for every cell: the sheet has millions of them.
  const raw: RawCell = { type: 'n', value: undefined, inline: undefined, formula: undefined, dateStyle: false };

  const fail = (error: FerryError): void => {
    failure ??= error;
  };
  parser.on('error', (error) =>
    fail(malformedPart(context.file, context.part, error, { sheet: context.sheet, row: row?.number ?? lastRow })),
  );

  parser.on('opentag', (tag) => {
    if (failure) return;
    switch (localName(tag.name)) {
      case 'sheetData':
        inSheetData = true;
        break;
      case 'row': {
        if (!inSheetData) break;
        const declared = Number(tag.attributes['r']);
        lastRow = Number.isInteger(declared) && declared > 0 ? declared : lastRow + 1;
        lastColumn = 0;
        row = { number: lastRow, cells: [] };
        break;
      }
      case 'c': {
        if (!row) break;
        inCell = true;
        cellRef = tag.attributes['r'];
        const column = cellRef === undefined ? 0 : columnOfRef(cellRef);
        cellColumn = column === 0 ? lastColumn + 1 : column;
        if (cellColumn > MAX_COLUMN) {
          fail(
            new FerryError(
              'SOURCE_XLSX_CORRUPT',
              `cell ${cellRef ?? '?'} of sheet ${JSON.stringify(context.sheet)} in ${context.file} lies beyond column XFD, the last one Excel has`,
              {
                location: { file: context.file, sheet: context.sheet, row: row.number },
                hint: 'The workbook is damaged or was not written by a spreadsheet program; re-save it from Excel or LibreOffice.',
              },
            ),
          );
          break;
        }
        lastColumn = cellColumn;
        raw.type = tag.attributes['t'] ?? 'n';
        const style = tag.attributes['s'];
        cellStyle = style === undefined ? 0 : Number(style);
        raw.value = undefined;
        raw.inline = undefined;
        raw.formula = undefined;
        inInline = false;
        phoneticDepth = 0;
        break;
      }
      case 'v':
        if (!inCell) break;
        raw.value = '';
        capture = VALUE;
        break;
      case 'f':
        if (!inCell) break;
        raw.formula = '';
        capture = FORMULA;
        break;
      case 'is':
        if (!inCell) break;
        inInline = true;
        raw.inline = '';
        break;
      case 'rPh':
        if (inInline) phoneticDepth++;
        break;
      case 't':
        if (inInline && phoneticDepth === 0) capture = INLINE_TEXT;
        break;
    }
  });

  const onText = (text: string): void => {
    switch (capture) {
      case VALUE:
        raw.value = (raw.value ?? '') + text;
        break;
      case FORMULA:
        raw.formula = (raw.formula ?? '') + text;
        break;
      case INLINE_TEXT:
        raw.inline = (raw.inline ?? '') + text;
        break;
    }
  };
  parser.on('text', onText);
  parser.on('cdata', onText);

  parser.on('closetag', (tag) => {
    if (failure) return;
    switch (localName(tag.name)) {
      case 'v':
      case 'f':
      case 't':
        capture = NONE;
        break;
      case 'rPh':
        if (phoneticDepth > 0) phoneticDepth--;
        break;
      case 'is':
        inInline = false;
        break;
      case 'c': {
        if (!inCell || !row) break;
        inCell = false;
        capture = NONE;
        raw.dateStyle = styles.isDate(cellStyle);
        const converted = convertRawCell(raw, date1904, sharedString);
        if (converted.errorText === undefined && (converted.value === null || converted.value === '')) break;
        row.cells.push({
          column: cellColumn,
          ref: cellRef ?? `${columnLetters(cellColumn)}${row.number}`,
          value: converted.value,
          errorText: converted.errorText,
        });
        break;
      }
      case 'row':
        if (!row) break;
        ready.push(row);
        row = undefined;
        inCell = false;
        break;
      case 'sheetData':
        inSheetData = false;
        break;
    }
  });

  function* drain(): Generator<SheetRowData> {
    const rows = ready;
    ready = [];
    yield* rows;
  }

  for await (const text of xmlText(chunks)) {
    context.signal?.throwIfAborted();
    parser.write(text);
    // Rows completed before a fault in the same chunk are still handed out, then the fault.
    yield* drain();
    if (failure) throw failure;
  }
  parser.close();
  yield* drain();
  if (failure) throw failure;
}
