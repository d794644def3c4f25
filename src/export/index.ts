export { availableColumns, chooseColumns, embedFor, type Cell, type Column } from './columns.ts';
export {
  buildFilter,
  checkFilterFile,
  EXPORT_ENTITIES,
  isFilterEntity,
  LOCAL_WHERE_HELP,
  parseOrderBy,
  parseWhere,
  passesLocal,
  splitWhere,
  type Condition,
  type LocalCondition,
  type ParsedWhere,
  type ExportEntity,
  type FilterEntity,
} from './filter.ts';
export {
  exportOptionsSchema,
  normaliseExportOptions,
  runExport,
  type ExportDeps,
  type ExportEvent,
  type ExportFlags,
  type ExportOptions,
  type ExportOptionsInput,
  type ExportSummary,
} from './run-export.ts';
export {
  deletedFileOf,
  looksLikeFormula,
  openWriter,
  type DeletedRecord,
  type ExportFormat,
  type ExportWriter,
} from './writers.ts';
export { columnsFromMappings } from './mapping-columns.ts';
