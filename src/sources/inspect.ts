import type { ErrorCode } from '../errors/index.ts';
import type { CsvDetection } from './csv/csv.ts';
import { ColumnChecks, type ColumnFinding } from './inspect-checks.ts';
import { detectFormat, openSource } from './open.ts';
import type { SourceFormat } from './open.ts';
import type { CellValue, SourceWarning } from './types.ts';
import { listXlsxSheets } from './xlsx/xlsx.ts';

export interface InspectOptions {
  /** Skips format detection. */
  format?: SourceFormat;
  /** XLSX: sheet name or 1-based index; a string of digits is a name only if the workbook has that sheet. @default 1 */
  sheet?: string | number;
  /** CSV: see CsvReadOptions.encoding. */
  encoding?: string;
  /** CSV: see CsvReadOptions.delimiter. */
  delimiter?: string;
  /** 1-based header row, or 'none'. @default 1 */
  headerRow?: number | 'none';
  /** How many row errors and warnings to describe (all are counted). @default 5 */
  maxErrors?: number;
  /** Distinct sample values kept per column. @default 3 */
  maxSamples?: number;
  signal?: AbortSignal;
}

export interface ColumnReport {
  name: string;
  /** Rows with a value that is not empty or blank. */
  filled: number;
  /** `filled` as a percentage of the rows, one decimal; 0 when there are no rows. */
  fillRate: number;
  /** The first distinct non-empty values, shortened to 60 characters. */
  samples: string[];
}

export interface ReportedError {
  code: ErrorCode;
  message: string;
  row: number;
  line?: number;
  sheet?: string;
}

export interface ReportedWarning {
  code: SourceWarning['code'];
  message: string;
  row: number;
  line?: number;
}

/** Everything a person needs to know about a file before writing a mapping for it. */
export interface InspectReport {
  file: string;
  format: SourceFormat;
  formatReason: string;
  /** CSV only. */
  encoding?: string;
  encodingBasis?: CsvDetection['encodingBasis'];
  bom?: boolean;
  delimiter?: string;
  delimiterBasis?: CsvDetection['delimiterBasis'];
  headerRow?: number | 'none';
  /** XLSX only: every sheet of the workbook, and the one read (by name when it exists). */
  sheets?: string[];
  sheet?: string | number;
  columns: ColumnReport[];
  /** Rows read without error (empty rows are not counted). */
  rowCount: number;
  errorCount: number;
  /** The first few row errors. */
  errors: ReportedError[];
  warningCount: number;
  warnings: ReportedWarning[];
  /** What would ruin an import later: repeated keys or e-mail addresses, dates of unclear order. */
  findings: ColumnFinding[];
}

const SAMPLE_LENGTH = 60;

function display(value: CellValue): string {
  if (value === null) return '';
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return 'Invalid Date';
    const iso = value.toISOString();
    // Spreadsheet dates without a time are midnight UTC; the time part would only be noise.
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  return String(value);
}

function shorten(text: string): string {
  return text.length > SAMPLE_LENGTH ? `${text.slice(0, SAMPLE_LENGTH - 1)}…` : text;
}

interface ColumnTally {
  filled: number;
  samples: string[];
}

/**
 * A sheet typed as digits is a sheet number, unless the workbook has a sheet of that name (`2024`).
 */
async function resolveSheet(file: string, options: InspectOptions): Promise<string | number | undefined> {
  const { sheet } = options;
  if (typeof sheet !== 'string' || !/^\d+$/.test(sheet)) return sheet;
  const format = options.format ?? (await detectFormat(file)).format;
  if (format !== 'xlsx') return sheet;
  return (await listXlsxSheets(file)).includes(sheet) ? sheet : Number(sheet);
}

/**
 * Reads a whole source (streaming) and reports its format, encoding, delimiter, columns with fill
 * rates and sample values, row count, the first row errors, and what would ruin an import later
 * (inspect-checks.ts). Memory depends on the number of columns, and on the rows only through a
 * short digest of each value of the key-like and e-mail columns.
 */
export async function inspectSource(file: string, options: InspectOptions = {}): Promise<InspectReport> {
  const maxErrors = options.maxErrors ?? 5;
  const maxSamples = options.maxSamples ?? 3;
  const warnings: ReportedWarning[] = [];
  let warningCount = 0;
  let detection: CsvDetection | undefined;
  const requestedSheet = await resolveSheet(file, options);
  const opened = await openSource(file, {
    ...(options.format === undefined ? {} : { format: options.format }),
    ...(requestedSheet === undefined ? {} : { sheet: requestedSheet }),
    ...(options.encoding === undefined ? {} : { encoding: options.encoding }),
    ...(options.delimiter === undefined ? {} : { delimiter: options.delimiter }),
    ...(options.headerRow === undefined ? {} : { headerRow: options.headerRow }),
    ...(options.signal === undefined ? {} : { signal: options.signal }),
    onMalformed: 'report',
    onWarning: (warning) => {
      warningCount++;
      if (warnings.length < maxErrors) {
        const reported: ReportedWarning = { code: warning.code, message: warning.message, row: warning.location.row };
        if (warning.location.line !== undefined) reported.line = warning.location.line;
        warnings.push(reported);
      }
    },
    onDetected: (d) => {
      detection = d;
    },
  });
  let sheets: string[] | undefined;
  if (opened.format === 'xlsx') sheets = await listXlsxSheets(file);
  let rowCount = 0;
  let errorCount = 0;
  const errors: ReportedError[] = [];
  // Insertion order of the map is the column order: header order for CSV, first-seen order otherwise.
  const tallies = new Map<string, ColumnTally>();
  const checks = new ColumnChecks();
  const tally = (name: string): ColumnTally => {
    let t = tallies.get(name);
    if (!t) {
      t = { filled: 0, samples: [] };
      tallies.set(name, t);
      checks.addColumn(name);
    }
    return t;
  };
  let columnsSeeded = false;
  for await (const item of opened.items) {
    if (!columnsSeeded && detection) {
      for (const name of detection.columns) tally(name);
      columnsSeeded = true;
    }
    if (item.kind === 'error') {
      errorCount++;
      if (errors.length < maxErrors) {
        const reported: ReportedError = { code: item.error.code, message: item.error.message, row: item.location.row };
        if (item.location.line !== undefined) reported.line = item.location.line;
        if (item.location.sheet !== undefined) reported.sheet = item.location.sheet;
        errors.push(reported);
      }
      continue;
    }
    rowCount++;
    for (const name in item.values) {
      const t = tally(name);
      const value = item.values[name] ?? null;
      const text = display(value).trim();
      if (text === '') continue;
      t.filled++;
      checks.add(name, text, item.location.row, typeof value === 'string');
      if (t.samples.length < maxSamples) {
        const sample = shorten(text);
        if (!t.samples.includes(sample)) t.samples.push(sample);
      }
    }
  }
  // A file with a header and no rows still has columns worth showing.
  if (!columnsSeeded && detection) for (const name of detection.columns) tally(name);
  const columns = [...tallies].map(([name, t]) => ({
    name,
    filled: t.filled,
    fillRate: rowCount === 0 ? 0 : Math.round((t.filled / rowCount) * 1000) / 10,
    samples: t.samples,
  }));
  // Built in the order a person reads it, which is also the order of the JSON output.
  const d = detection;
  const sheet = requestedSheet ?? 1;
  const report: InspectReport = {
    file,
    format: opened.format,
    formatReason: opened.reason,
    ...(d
      ? {
          encoding: d.encoding,
          encodingBasis: d.encodingBasis,
          bom: d.bom,
          delimiter: d.delimiter,
          delimiterBasis: d.delimiterBasis,
          headerRow: d.headerRow,
        }
      : {}),
    ...(sheets ? { sheets, sheet: typeof sheet === 'number' ? (sheets[sheet - 1] ?? sheet) : sheet } : {}),
    ...(opened.format === 'xlsx' ? { headerRow: options.headerRow ?? 1 } : {}),
    rowCount,
    errorCount,
    columns,
    errors,
    warningCount,
    warnings,
    findings: checks.findings(),
  };
  return report;
}
