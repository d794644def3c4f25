import type { FerryError } from '../errors/index.ts';

/** A value as a reader gives it: text from CSV and XML; typed values from XLSX cells. */
export type CellValue = string | number | boolean | Date | null;

/** Where a row came from, as precisely as the format allows. */
export interface SourceLocation {
  file: string;
  /** XLSX: the sheet's name. */
  sheet?: string;
  /** The row as a person counts it: with a header row, the header is row 1 and the first record row 2. */
  row: number;
  /** CSV: the physical line the record starts on (differs from `row` when fields hold newlines). */
  line?: number;
  /** XML: the element path of the record, e.g. `/parties/person[3]`. */
  elementPath?: string;
}

/** One record of a source, flattened to named columns. */
export interface SourceRow {
  kind: 'row';
  /** Name of the source (the file's base name, or the sheet for XLSX: `book.xlsx#Contacts`). */
  source: string;
  /** 1-based count of records yielded so far (rows and row errors alike), stable across re-reads. */
  row: number;
  values: Record<string, CellValue>;
  location: SourceLocation;
}

/**
 * A record that could not be read (unclosed quote, wrong column count, oversized field). Readers
 * yield it in place of the row and go on, so the caller decides: report it, or stop.
 */
export interface SourceRowError {
  kind: 'error';
  source: string;
  row: number;
  error: FerryError;
  location: SourceLocation;
  /** The raw text of the record when available, for the rejects file. */
  raw?: string;
}

export type SourceItem = SourceRow | SourceRowError;

/** Something worth telling the user that does not stop reading (renamed duplicate headers). */
export interface SourceWarning {
  code: 'HEADER_RENAMED' | 'HEADER_BLANK' | 'ENCODING_GUESSED' | 'EMPTY_ROWS_SKIPPED' | 'OTHER';
  message: string;
  location: SourceLocation;
}

/** Options every reader takes. */
export interface CommonReadOptions {
  /** 1-based row of the header, or 'none' to name columns `column1`, `column2`, ... @default 1 */
  headerRow?: number | 'none';
  /** 'report' yields row errors and goes on; 'stop' throws the first one. @default 'report' */
  onMalformed?: 'report' | 'stop';
  /** Receives warnings; by default they are dropped. */
  onWarning?: (warning: SourceWarning) => void;
  /** Stops reading when aborted. */
  signal?: AbortSignal;
}
