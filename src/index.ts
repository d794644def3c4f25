/**
 * crm-ferry as a module: the migration library other programs import (`import { runImport } from
 * 'crm-ferry'`). What the command line does, each as one function with an options object and its
 * dependencies (the client, the account, a signal, events): run a plan or import one file,
 * validate, verify, roll back, export, back up and restore, open a source, load and compile a
 * mapping, and the client of the service. Custom transforms come in through transformRegistry,
 * source formats of one's own through registerSourceFormat. docs/library.md shows each in use.
 *
 * The local sandbox of the service has its own door, `crm-ferry/sandbox` (src/sandbox-door.ts):
 * nothing here loads it or the workbench, so that importing this costs a program little
 * (docs/benchmarks.md, "Importing the library").
 *
 * The rooms below keep their own doors (src/<room>/index.ts); this file only chooses what the
 * package promises, so that a room can change inside without breaking a program that imports it.
 */

// Errors: one class with a closed set of codes, each of a kind (input, service, internal), and
// the exit code each maps to.
export { ERROR_CODES, EXIT, exitCodeFor, FerryError, isFerryError, type ErrorCode, type ErrorKind, type ErrorLocation } from './errors/index.ts';

// The client of the service.
export {
  accountOf,
  ApiError,
  connect,
  CrmClient,
  type ConnectOptions,
  type RetryOptions,
  type TransportOptions,
} from './client/index.ts';

// Sources: any file (or live legacy account) as rows, and the registry of formats.
export {
  detectFormat,
  inspectSource,
  openSource,
  registerSourceFormat,
  sourceFormats,
  type CellValue,
  type InspectReport,
  type OpenedSource,
  type OpenSourceOptions,
  type SourceFormat,
  type SourceFormatDefinition,
  type SourceItem,
  type SourceRow,
} from './sources/index.ts';

// Mappings: load and check one, compile it, map rows; transforms of one's own.
export {
  compileMapping,
  loadMapping,
  mapRows,
  MappingErrors,
  parseMapping,
  transformRegistry,
  TRANSFORMS,
  TransformError,
  type CompiledMapping,
  type CompileOptions,
  type CustomTransform,
  type LoadOptions,
  type MappedItem,
  type MappedRecord,
  type Mapping,
  type TransformContext,
  type TransformDefinition,
  type TransformEnvironment,
  type TransformFn,
  type TransformRegistry,
  type Value,
} from './mapping/index.ts';

// Plans: load one, and validate a plan or a mapping without writing.
export { loadPlan, validateMapping, validatePlan, type Plan, type PlanStep, type ValidateMappingOptions, type ValidatePlanOptions, type ValidateReport } from './plan/index.ts';

// Import: a plan or one file into the account, exactly once; its set-up; its rollback.
export {
  runImport,
  runRollback,
  runSetup,
  type ImportDeps,
  type ImportEvent,
  type ImportOptionsInput,
  type ImportSummary,
  type RollbackOptions,
  type RollbackSummary,
  type SetupCommandOptions,
  type SetupReport,
} from './load/index.ts';

// Verify: the account against the source of a migration.
export { runVerify, type VerifyDeps, type VerifyEvent, type VerifyOptionsInput, type VerifySummary } from './verify/index.ts';

// Export: records of the account to CSV, XLSX or JSON Lines.
export { runExport, type ExportDeps, type ExportEntity, type ExportEvent, type ExportFormat, type ExportOptionsInput, type ExportSummary } from './export/index.ts';

// Backup and restore of a whole account.
export {
  openBackup,
  runBackup,
  runRestore,
  type Backup,
  type BackupDeps,
  type BackupEvent,
  type BackupOptionsInput,
  type BackupSummary,
  type MissingItem,
  type RestoreDeps,
  type RestoreOptionsInput,
  type RestoreSummary,
} from './backup/index.ts';
