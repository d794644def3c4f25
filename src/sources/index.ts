export type { CellValue, CommonReadOptions, SourceItem, SourceLocation, SourceRow, SourceRowError, SourceWarning } from './types.ts';
export { DEFAULT_MAX_FIELD_SIZE, normalizeDelimiter, normalizeHeaderRow, readCsv, type CsvDetection, type CsvReadOptions } from './csv.ts';
export { detectEncoding, normalizeEncodingName, type EncodingDecision } from './csv-encoding.ts';
export { sniffDelimiter, SNIFFED_DELIMITERS, type DelimiterGuess } from './csv-delimiter.ts';
export { nameColumns, numberedColumns, type HeaderRename, type NamedColumns } from './csv-header.ts';
export { detectFormat, openSource, SOURCE_FORMATS, type FormatDecision, type OpenedSource, type OpenSourceOptions, type SourceFormat } from './open.ts';
export { inspectSource, type ColumnReport, type InspectOptions, type InspectReport, type ReportedError, type ReportedWarning } from './inspect.ts';
export { listXlsxSheets, readXlsx, type XlsxReadOptions } from './xlsx.ts';
export { readV1Export, type V1ReadOptions } from './v1-export.ts';
