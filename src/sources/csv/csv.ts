import { createReadStream } from 'node:fs';
import { stat } from 'node:fs/promises';
import { basename } from 'node:path';
import { type ErrorCode, FerryError } from '../../errors/index.ts';
import { ChunkDecoder, detectEncoding, type EncodingDecision } from './csv-encoding.ts';
import { sniffDelimiter } from './csv-delimiter.ts';
import { checkInputPath, MAX_COLUMNS, formatCount } from '../../util/index.ts';
import { nameColumns, numberedColumns } from './csv-header.ts';
import { CsvTokenizer, type TokenizedRecord } from './csv-tokenizer.ts';
import {
  type BatchedItems,
  type CommonReadOptions,
  type FieldRow,
  itemsOfBatches,
  namedValues,
  type SourceItem,
  type SourceLocation,
  type SourceRowError,
  type SourceWarning,
} from '../types.ts';

/** A row wider than any spreadsheet: refused before its columns are named or read. */
function tooManyColumns(count: number, location: SourceLocation): FerryError {
  return new FerryError(
    'SOURCE_HEADER',
    `the file has ${formatCount(count)} columns; crm-ferry reads at most ${formatCount(MAX_COLUMNS)} (as many as a spreadsheet holds)`,
    {
      location,
      hint: 'Check the delimiter (--delimiter), or cut the columns nobody needs before reading the file.',
    },
  );
}

/** 1 MiB, in characters. */
export const DEFAULT_MAX_FIELD_SIZE = 1024 * 1024;
/** A record may hold several large fields, but not without bound: a file with no line breaks must not fill memory. */
const RECORD_SIZE_FACTOR = 4;
/**
 * Bytes read at a time; also the prefix the encoding and the delimiter are decided from. Larger
 * chunks were no faster and raised peak memory (bench/csv-read.ts).
 */
export const CSV_CHUNK_SIZE = 64 * 1024;

/** What the reader found out about a file, for `inspect` and for messages. */
export interface CsvDetection {
  /** The encoding in use (after a fall-back, the one fallen back to). */
  encoding: string;
  encodingBasis: EncodingDecision['basis'];
  /** True when a byte-order mark was found and skipped. */
  bom: boolean;
  delimiter: string;
  delimiterBasis: 'option' | 'sniffed' | 'default';
  headerRow: number | 'none';
  /** Column names as rows carry them (after renaming blanks and duplicates). */
  columns: string[];
}

export interface CsvReadOptions extends CommonReadOptions {
  /**
   * One character, or `tab`, `comma`, `semicolon`, `pipe`. By default it is guessed from the first
   * records among `,` `;` tab and `|`.
   */
  delimiter?: string;
  /**
   * Any encoding iconv-lite knows (`utf-8`, `utf-16le`, `windows-1252`, `latin1` ...). By default: a
   * byte-order mark decides; else UTF-8 if the first 64 KiB are valid UTF-8 (with a fall-back described in csv-encoding.ts), else Windows-1252.
   */
  encoding?: string;
  /** Longest field, in characters; a longer one is a row error (SOURCE_FIELD_TOO_LARGE). @default 1048576 */
  maxFieldSize?: number;
  /** Told what was detected once the header is read, and again if the encoding falls back later. */
  onDetected?: (detection: CsvDetection) => void;
}

interface NormalizedCsvOptions {
  headerRow: number | 'none';
  onMalformed: 'report' | 'stop';
  onWarning: (warning: SourceWarning) => void;
  signal: AbortSignal | undefined;
  delimiter: string | undefined;
  encoding: string | undefined;
  maxFieldSize: number;
  onDetected: (detection: CsvDetection) => void;
}

const DELIMITER_NAMES: Record<string, string> = { tab: '\t', '\\t': '\t', comma: ',', semicolon: ';', pipe: '|' };

/** Reads `tab`, `\t`, `;` and the like into the one character the parser uses. */
export function normalizeDelimiter(text: string): string {
  const named = DELIMITER_NAMES[text.toLowerCase()];
  const delimiter = named ?? text;
  if (delimiter.length !== 1 || delimiter === '"' || delimiter === '\n' || delimiter === '\r') {
    throw new FerryError(
      'CONFIG_INVALID',
      `the delimiter must be one character other than a quote or line break, got ${JSON.stringify(text)}`,
      {
        hint: 'Use , ; | or tab.',
      },
    );
  }
  return delimiter;
}

/** Parses a header-row setting as people type it: a row number, or `none`. */
export function normalizeHeaderRow(value: number | string | undefined): number | 'none' {
  if (value === undefined) return 1;
  if (value === 'none') return 'none';
  const n = typeof value === 'number' ? value : /^\d+$/.test(value.trim()) ? Number(value) : NaN;
  if (!Number.isInteger(n) || n < 1) {
    throw new FerryError(
      'CONFIG_INVALID',
      `the header row must be a row number from 1, or none; got ${JSON.stringify(value)}`,
    );
  }
  return n;
}

function normalizeCsvOptions(options: CsvReadOptions): NormalizedCsvOptions {
  const maxFieldSize = options.maxFieldSize ?? DEFAULT_MAX_FIELD_SIZE;
  if (!Number.isInteger(maxFieldSize) || maxFieldSize < 1) {
    throw new FerryError(
      'CONFIG_INVALID',
      `maxFieldSize must be a whole number of characters from 1, got ${maxFieldSize}`,
    );
  }
  return {
    headerRow: normalizeHeaderRow(options.headerRow),
    onMalformed: options.onMalformed ?? 'report',
    onWarning: options.onWarning ?? (() => {}),
    signal: options.signal,
    delimiter: options.delimiter === undefined ? undefined : normalizeDelimiter(options.delimiter),
    encoding: options.encoding,
    maxFieldSize,
    onDetected: options.onDetected ?? (() => {}),
  };
}

/** Checks the file is there and readable, with errors a person can act on. Returns its size. */
export async function statSource(file: string): Promise<number> {
  await checkInputPath(
    file,
    'the input file',
    (message) => new FerryError('SOURCE_UNREADABLE', message, { location: { file }, hint: 'Give a file on a disk.' }),
  );
  try {
    const info = await stat(file);
    if (info.isDirectory()) {
      throw new FerryError('SOURCE_UNREADABLE', 'this is a folder, not a file', {
        location: { file },
        hint: 'Name the file to read inside it.',
      });
    }
    if (!info.isFile()) {
      // A FIFO or a device would block or never end; an input is a file on a disk.
      throw new FerryError('SOURCE_UNREADABLE', 'this is not a regular file (a pipe, a socket or a device)', {
        location: { file },
        hint: 'Save the data to a file and read that.',
      });
    }
    return info.size;
  } catch (error) {
    if (error instanceof FerryError) throw error;
    throw fileError(file, error);
  }
}

/** Turns a file-system error into SOURCE_NOT_FOUND or SOURCE_UNREADABLE with the file in the location. */
export function fileError(file: string, error: unknown): FerryError {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') {
    return new FerryError('SOURCE_NOT_FOUND', 'no such file', {
      location: { file },
      cause: error,
      hint: 'Check the path and the current folder.',
    });
  }
  return new FerryError('SOURCE_UNREADABLE', `the file cannot be read (${code ?? (error as Error).message})`, {
    location: { file },
    cause: error,
    hint: 'Check the file permissions, or copy the file somewhere readable.',
  });
}

/** A delimiter as messages and `inspect` name it: `tab`, or the character in quotes. */
export function describeDelimiter(delimiter: string): string {
  return delimiter === '\t' ? 'tab' : JSON.stringify(delimiter);
}

/** Turns tokenized records into rows and row errors: header handling, column counts, empty rows. */
class RecordConverter {
  readonly items: Array<SourceItem | FieldRow> = [];
  /** Rows as fields under the header (FieldRow) rather than named values. */
  positional = false;
  private recordIndex = 0;
  private itemCount = 0;
  private names: string[] | undefined;
  private emptyPending = 0;
  private emptySkipped = 0;
  private firstEmpty: SourceLocation | undefined;
  private firstEmptyPending: SourceLocation | undefined;
  detection: CsvDetection;
  private detected = false;

  constructor(
    private readonly file: string,
    private readonly source: string,
    private readonly options: NormalizedCsvOptions,
    detection: Omit<CsvDetection, 'columns'>,
  ) {
    this.detection = { ...detection, columns: [] };
  }

  get rowsSeen(): number {
    return this.recordIndex;
  }

  accept = (record: TokenizedRecord): void => {
    const row = ++this.recordIndex;
    const { headerRow } = this.options;
    if (typeof headerRow === 'number' && this.names === undefined) {
      if (row < headerRow) return;
      this.readHeader(record, row);
      return;
    }
    const location: SourceLocation = { file: this.file, row, line: record.startLine };
    if (record.problem) {
      this.flushEmpty();
      const { problem } = record;
      const where =
        record.endLine > record.startLine
          ? ` (the record spans lines ${record.startLine}-${record.endLine})`
          : problem.line === record.startLine
            ? ''
            : ` (the record starts on line ${record.startLine})`;
      this.fail(problem.code, `${problem.message}${where}`, location, record.raw, problem.field);
      return;
    }
    if (record.blank || record.fields.every((f) => f === '')) {
      if (this.emptyPending === 0) this.firstEmptyPending = location;
      this.emptyPending++;
      return;
    }
    this.flushEmpty();
    let names = this.names;
    if (names === undefined) {
      if (record.fields.length > MAX_COLUMNS) throw tooManyColumns(record.fields.length, location);
      names = numberedColumns(record.fields.length);
      this.names = names;
      this.announce();
    }
    let fields = record.fields;
    if (fields.length !== names.length) {
      // A trailing delimiter adds empty fields; nothing is lost by dropping those.
      if (fields.length > names.length && fields.slice(names.length).every((f) => f === '')) {
        fields = fields.slice(0, names.length);
      } else {
        const span = record.endLine > record.startLine ? ` (lines ${record.startLine}-${record.endLine})` : '';
        this.fail(
          'SOURCE_COLUMN_COUNT',
          `expected ${names.length} fields, found ${fields.length}${span}`,
          location,
          record.raw,
          undefined,
          `Check the quoting on that line and the delimiter (${describeDelimiter(this.detection.delimiter)}).`,
        );
        return;
      }
    }
    if (this.positional) {
      this.items.push({ kind: 'fields', source: this.source, row: ++this.itemCount, fields, header: names, location });
      return;
    }
    this.items.push({
      kind: 'row',
      source: this.source,
      row: ++this.itemCount,
      values: namedValues(names, fields),
      location,
    });
  };

  private readHeader(record: TokenizedRecord, row: number): void {
    const location = { file: this.file, row, line: record.startLine };
    if (record.problem) {
      throw new FerryError('SOURCE_HEADER', `the header row cannot be read: ${record.problem.message}`, {
        location,
        hint: 'Fix the header line, or pass --header-row with the right row.',
      });
    }
    if (record.blank || record.fields.every((f) => f.trim() === '')) {
      throw new FerryError('SOURCE_HEADER', `row ${row}, given as the header row, is empty`, {
        location,
        hint: `Pass --header-row with the row that holds the column names (e.g. --header-row ${row + 1}), or --header-row none.`,
      });
    }
    if (record.fields.length > MAX_COLUMNS) throw tooManyColumns(record.fields.length, location);
    const { names, renames } = nameColumns(record.fields);
    this.names = names;
    for (const rename of renames) {
      const why =
        rename.reason === 'blank'
          ? 'has no name'
          : rename.reason === 'duplicate'
            ? 'repeats an earlier name'
            : 'is a reserved name';
      this.options.onWarning({
        code: rename.reason === 'blank' ? 'HEADER_BLANK' : 'HEADER_RENAMED',
        message: `column ${rename.column} ${why} (${JSON.stringify(rename.original)}); it is called ${JSON.stringify(rename.name)}`,
        location,
      });
    }
    this.announce();
  }

  private announce(): void {
    this.detection = { ...this.detection, columns: [...(this.names ?? [])] };
    this.detected = true;
    this.options.onDetected(this.detection);
  }

  updateEncoding(encoding: string): void {
    this.detection = { ...this.detection, encoding };
    if (this.detected) this.options.onDetected(this.detection);
  }

  private flushEmpty(): void {
    if (this.emptyPending === 0) return;
    this.emptySkipped += this.emptyPending;
    this.firstEmpty ??= this.firstEmptyPending;
    this.emptyPending = 0;
  }

  private fail(
    code: ErrorCode,
    message: string,
    location: SourceLocation,
    raw: string,
    column: number | undefined,
    hint?: string,
  ): void {
    const errorLocation = column === undefined ? { ...location } : { ...location, column };
    const error = new FerryError(
      code,
      message,
      hint === undefined ? { location: errorLocation } : { location: errorLocation, hint },
    );
    if (this.options.onMalformed === 'stop') throw error;
    this.items.push({ kind: 'error', source: this.source, row: ++this.itemCount, error, location, raw });
  }

  /** Called at the end of the file. */
  finish(): void {
    const { headerRow } = this.options;
    if (typeof headerRow === 'number' && this.names === undefined) {
      const what = this.recordIndex === 0 ? 'the file is empty' : `the file has only ${this.recordIndex} row(s)`;
      throw new FerryError('SOURCE_HEADER', `${what}; no header found at row ${headerRow}`, {
        location: { file: this.file },
        hint:
          this.recordIndex === 0
            ? 'Check that the export worked.'
            : 'Pass --header-row with the row that holds the column names, or --header-row none.',
      });
    }
    if (!this.detected) this.announce();
    // Empty lines at the very end are left by many exporters; only the ones between rows are worth a word.
    if (this.emptySkipped > 0 && this.firstEmpty) {
      const first = this.firstEmpty;
      this.options.onWarning({
        code: 'EMPTY_ROWS_SKIPPED',
        message: `${this.emptySkipped} empty row(s) skipped, the first at row ${first.row} (line ${first.line})`,
        location: first,
      });
    }
  }
}

/**
 * Reads a CSV file as rows named by its header. Streaming: memory stays flat whatever the file
 * size. Bad records (unclosed quote, wrong number of fields, oversized field) come out as row
 * errors with their row and line, in file order, and reading goes on; with `onMalformed: 'stop'`
 * the first one is thrown. Values are strings as written (an empty field is `''`); rows whose fields
 * are all empty are skipped, with one EMPTY_ROWS_SKIPPED warning.
 *
 * Throws FerryError for problems with the whole file: SOURCE_NOT_FOUND, SOURCE_UNREADABLE,
 * SOURCE_FORMAT_UNKNOWN (binary data), SOURCE_ENCODING, SOURCE_HEADER, CONFIG_INVALID (options).
 */
export function readCsv(file: string, options: CsvReadOptions = {}): AsyncGenerator<SourceItem> & BatchedItems {
  return itemsOfBatches(
    () => readCsvBatches(file, options, false) as AsyncGenerator<SourceItem[]>,
    () => readCsvBatches(file, options, true) as AsyncGenerator<Array<FieldRow | SourceRowError>>,
  );
}

/**
 * readCsv's items as they are read: one array per chunk of the file (see SOURCE_BATCHES), with
 * rows as FieldRow when `positional`.
 */
async function* readCsvBatches(
  file: string,
  options: CsvReadOptions,
  positional: boolean,
): AsyncGenerator<Array<SourceItem | FieldRow>> {
  const o = normalizeCsvOptions(options);
  const size = await statSource(file);
  const source = basename(file);
  const stream = createReadStream(file, { highWaterMark: CSV_CHUNK_SIZE });
  let converter: RecordConverter | undefined;
  let tokenizer: CsvTokenizer | undefined;
  let decoder: ChunkDecoder | undefined;
  const where = (): string => `after row ${converter?.rowsSeen ?? 0}, line ${tokenizer?.currentLine ?? 1}`;
  try {
    let first = true;
    for await (const chunk of stream as AsyncIterable<Buffer>) {
      o.signal?.throwIfAborted();
      let text: string;
      if (first) {
        first = false;
        const decision = detectEncoding(chunk, chunk.length >= size, o.encoding, file);
        if (decision.basis === 'invalid-utf8' || decision.basis === 'utf16-pattern') {
          o.onWarning({
            code: 'ENCODING_GUESSED',
            message:
              decision.basis === 'invalid-utf8'
                ? 'the file is not valid UTF-8; reading it as Windows-1252'
                : `the file has no byte-order mark but looks like ${decision.encoding.toUpperCase()}; reading it as such`,
            location: { file, row: 1, line: 1 },
          });
        }
        decoder = new ChunkDecoder(decision, file, ({ byteOffset }) => {
          o.onWarning({
            code: 'ENCODING_GUESSED',
            message: `byte ${byteOffset} is not valid UTF-8; everything before it was plain ASCII, so the file is read as Windows-1252 from there on`,
            location: { file, row: (converter?.rowsSeen ?? 0) + 1, line: tokenizer?.currentLine ?? 1 },
          });
          converter?.updateEncoding('windows-1252');
        });
        text = decoder.write(chunk.subarray(decision.bomLength), where);
        const sniffed = o.delimiter === undefined ? sniffDelimiter(text, chunk.length >= size) : undefined;
        const delimiter = o.delimiter ?? (sniffed as NonNullable<typeof sniffed>).delimiter;
        tokenizer = new CsvTokenizer({
          delimiter,
          maxFieldSize: o.maxFieldSize,
          maxRecordSize: o.maxFieldSize * RECORD_SIZE_FACTOR,
        });
        converter = new RecordConverter(file, source, o, {
          encoding: decoder.current,
          encodingBasis: decision.basis,
          bom: decision.bomLength > 0,
          delimiter,
          delimiterBasis: o.delimiter !== undefined ? 'option' : sniffed?.found ? 'sniffed' : 'default',
          headerRow: o.headerRow,
        });
        converter.positional = positional;
      } else {
        text = (decoder as ChunkDecoder).write(chunk, where);
      }
      const conv = converter as RecordConverter;
      (tokenizer as CsvTokenizer).push(text, conv.accept);
      if (conv.items.length > 0) yield conv.items.splice(0);
    }
    if (!decoder || !tokenizer || !converter) {
      // An empty file: nothing was ever decided, and there is no header to find.
      converter = new RecordConverter(file, source, o, {
        encoding: o.encoding ?? 'utf-8',
        encodingBasis: o.encoding ? 'option' : 'valid-utf8',
        bom: false,
        delimiter: o.delimiter ?? ',',
        delimiterBasis: o.delimiter ? 'option' : 'default',
        headerRow: o.headerRow,
      });
      converter.finish();
      return;
    }
    tokenizer.push(decoder.end(where), converter.accept);
    tokenizer.finish(converter.accept);
    converter.finish();
    if (converter.items.length > 0) yield converter.items.splice(0);
  } catch (error) {
    if (error instanceof FerryError || o.signal?.aborted) throw error;
    if ((error as NodeJS.ErrnoException).code !== undefined) throw fileError(file, error);
    throw error;
  } finally {
    stream.destroy();
  }
}
