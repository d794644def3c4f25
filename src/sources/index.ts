export type {
  BatchedItems,
  CellValue,
  CommonReadOptions,
  FieldRow,
  SourceItem,
  SourceLocation,
  SourceRow,
  SourceRowError,
  SourceWarning,
} from './types.ts';
export { itemsOfBatches, SOURCE_BATCHES, SOURCE_FIELD_BATCHES, sourceBatches, sourceFieldBatches } from './types.ts';
export { readCsvText } from './csv/csv-text.ts';
export {
  DEFAULT_MAX_FIELD_SIZE,
  describeDelimiter,
  normalizeDelimiter,
  normalizeHeaderRow,
  readCsv,
  type CsvDetection,
  type CsvReadOptions,
} from './csv/csv.ts';
export { readGivenRows, type RowReader } from './given-rows.ts';
export {
  detectFormat,
  openSource,
  type FormatDecision,
  type OpenedSource,
  type OpenSourceOptions,
  type SourceFormat,
} from './open.ts';
export {
  inspectSource,
  type ColumnReport,
  type InspectOptions,
  type InspectReport,
  type ReportedError,
  type ReportedWarning,
} from './inspect.ts';
export type { ColumnFinding } from './inspect-checks.ts';
export { listXlsxSheets, readXlsx, type XlsxReadOptions } from './xlsx/xlsx.ts';
export { readV1Export, type V1ReadOptions } from './v1/v1-export.ts';
export { readV1Live, v1LiveName, type V1LiveReadOptions } from './v1/v1-live.ts';
export {
  readV1Spool,
  removeV1Spools,
  V1Spool,
  v1SpoolBase,
  v1SpoolFiles,
  type V1SpoolEntry,
  type V1SpoolKey,
  type V1SpoolSource,
} from './v1/v1-spool.ts';
export { isIdColumn } from './column-kinds.ts';
export { statSource } from './csv/csv.ts';
export { namedValues } from './types.ts';
export { findSourceFormat, registerSourceFormat, sourceFormatNames, sourceFormats } from './formats.ts';
export type { FormatSample, FormatSetting, SourceFormatDefinition, SourceReadOptions } from './format-types.ts';
