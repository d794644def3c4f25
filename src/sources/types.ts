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
  /** Legacy v1 exports: the element the row was read from (person, organisation, opportunity, kase, task, historyItem). */
  recordKind?: string;
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

/**
 * A row as its fields in the order of the file's header, which every row of one file shares (the
 * same array). For consumers that look columns up once per file rather than once per row: see
 * SOURCE_FIELD_BATCHES. `SourceRow.values` is the same row by name.
 */
export interface FieldRow {
  kind: 'fields';
  source: string;
  row: number;
  fields: CellValue[];
  header: readonly string[];
  location: SourceLocation;
}

/** A row's values by name, from its fields in header order. */
export function namedValues(header: readonly string[], fields: readonly CellValue[]): Record<string, CellValue> {
  const values: Record<string, CellValue> = {};
  for (let k = 0; k < header.length; k++) values[header[k] as string] = fields[k] as CellValue;
  return values;
}

/**
 * Where a reader that reads a chunk of its file at a time offers its items a chunk at a time too:
 * `items[SOURCE_BATCHES]()` reads the file afresh as arrays of items, in the same order. A consumer
 * that works through a whole batch at once (mapRows) does so while the rows are still in the
 * processor's cache, and waits once per batch instead of once per row. Use either the batches or
 * the items of one source object, not both: each reads the file.
 */
export const SOURCE_BATCHES: unique symbol = Symbol('crm-ferry.source-batches');

/**
 * Like SOURCE_BATCHES, with each row as a FieldRow: no object of named values is made per row.
 * Offered by readers whose rows are fields under a header (CSV).
 */
export const SOURCE_FIELD_BATCHES: unique symbol = Symbol('crm-ferry.source-field-batches');

/** Items that can also be read in batches (see SOURCE_BATCHES and SOURCE_FIELD_BATCHES). */
export interface BatchedItems {
  [SOURCE_BATCHES](): AsyncGenerator<SourceItem[]>;
  [SOURCE_FIELD_BATCHES]?(): AsyncGenerator<Array<FieldRow | SourceRowError>>;
}

/** The batches of a source, when its reader offers them. */
export function sourceBatches(items: AsyncIterable<SourceItem>): (() => AsyncGenerator<SourceItem[]>) | undefined {
  const batches = (items as Partial<BatchedItems>)[SOURCE_BATCHES];
  return typeof batches === 'function' ? batches.bind(items) : undefined;
}

/** The field batches of a source, when its reader offers them. */
export function sourceFieldBatches(
  items: AsyncIterable<SourceItem>,
): (() => AsyncGenerator<Array<FieldRow | SourceRowError>>) | undefined {
  const batches = (items as Partial<BatchedItems>)[SOURCE_FIELD_BATCHES];
  return typeof batches === 'function' ? batches.bind(items) : undefined;
}

/** Items read from batches, one by one, offering the batches too (see SOURCE_BATCHES). */
export function itemsOfBatches(
  batches: () => AsyncGenerator<SourceItem[]>,
  fieldBatches?: () => AsyncGenerator<Array<FieldRow | SourceRowError>>,
): AsyncGenerator<SourceItem> & BatchedItems {
  async function* items(): AsyncGenerator<SourceItem> {
    for await (const batch of batches()) yield* batch;
  }
  // The generator's body, and so its read of the file, starts only at the first next().
  const offered: BatchedItems = { [SOURCE_BATCHES]: batches };
  if (fieldBatches) offered[SOURCE_FIELD_BATCHES] = fieldBatches;
  return Object.assign(items(), offered);
}

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
