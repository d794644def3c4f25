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

import { openBackup as openBackupFolder } from './backup/index.ts';
import { connect as connectClient } from './client/index.ts';
import { guard, guarded, parseOptions } from './errors/index.ts';
import {
  type ImportDeps,
  type ImportOptionsInput,
  importOptionsSchema,
  type ImportSummary,
  runImport as importRows,
  runRollback as rollBack,
  runSetup as setUp,
} from './load/index.ts';
import { compileMapping as compile, loadMapping as loadMappingFile } from './mapping/index.ts';
import { loadPlan as loadPlanFile, validateMapping as checkMapping, validatePlan as checkPlan } from './plan/index.ts';
import { inspectSource as inspect, openSource as open } from './sources/index.ts';
import {
  type VerifyDeps,
  type VerifyOptionsInput,
  runVerify as verifyRows,
  verifyOptionsSchema,
  type VerifySummary,
} from './verify/index.ts';

// Errors: one class with a closed set of codes, each of a kind (input, service, internal), and
// the exit code each maps to.
export {
  ERROR_CODES,
  EXIT,
  exitCodeFor,
  FerryError,
  isFerryError,
  type ErrorCode,
  type ErrorKind,
  type ErrorLocation,
  type FerryErrorOptions,
} from './errors/index.ts';

// The account a state folder, a backup folder or an export's state belongs to.
export type { AccountIdentity, StateStoreOptions } from './journal/index.ts';

// The client of the service.
export {
  accountOf,
  ApiError,
  CrmClient,
  type CredentialStore,
  type Transport,
  type AccountCatalog,
  type ApiErrorDetails,
  type ApiRequest,
  type ApiResponse,
  type CatalogFieldDefinition,
  type CatalogMilestone,
  type CatalogStage,
  type CatalogUser,
  type Clock,
  type ConnectOptions,
  type Embed,
  type FieldEntity,
  type FieldError,
  type Filter,
  type GovernorOptions,
  type GovernorState,
  type HeaderValue,
  type HttpMethod,
  type NamedItem,
  type OAuthSession,
  type PageOptions,
  type RateGovernor,
  type Redactor,
  type RetryOptions,
  type SharedBudget,
  type SharedWindow,
  type SlotClaim,
  type SlotGrant,
  type TokenSource,
  type TransportOptions,
  type TransportWait,
  type V1Body,
  type V1LiveConnection,
  type V1Page,
  type V1ReadLimits,
  type V1Reader,
  type V1ReaderOptions,
  type V1WireFormat,
  type WritingUser,
} from './client/index.ts';

// Sources: any file (or live legacy account) as rows, and the registry of formats.
export {
  detectFormat,
  registerSourceFormat,
  sourceFormats,
  type CellValue,
  type ColumnFinding,
  type ColumnReport,
  type CsvDetection,
  type FieldRow,
  type FormatDecision,
  type FormatSample,
  type InspectOptions,
  type InspectReport,
  type OpenedSource,
  type OpenSourceOptions,
  type ReportedError,
  type ReportedWarning,
  type RowReader,
  type SourceFormat,
  type SourceFormatDefinition,
  type SourceItem,
  type SourceLocation,
  type SourceReadOptions,
  type SourceRow,
  type SourceRowError,
  type SourceWarning,
} from './sources/index.ts';

// Mappings: load and check one, compile it, map rows; transforms of one's own.
export {
  mapRows,
  MappingErrors,
  parseMapping,
  transformRegistry,
  TRANSFORMS,
  TransformError,
  type AttachmentUse,
  type CompiledMapping,
  type CompileOptions,
  type CustomTransform,
  type LoadOptions,
  type MappedItem,
  type MappedRecord,
  type Mapping,
  type NameKind,
  type NameResolver,
  type NameUse,
  type RefUse,
  type RejectedReason,
  type RejectedRow,
  type RowWarning,
  type WarningCode,
  type WarningCounts,
  type SkippedRow,
  type StaleRejects,
  type TransformContext,
  type TransformDefinition,
  type TransformEnvironment,
  type TransformFn,
  type TransformRegistry,
  type Value,
} from './mapping/index.ts';

// Plans: load one, and validate a plan or a mapping without writing.
export type {
  NotCarried,
  Plan,
  PlanStep,
  RecordFinder,
  RejectReason,
  RowsSource,
  RunSource,
  StepReport,
  ValidateMappingOptions,
  ValidatePlanOptions,
  ValidateReport,
} from './plan/index.ts';

// Import: a plan or one file into the account, exactly once; its set-up; its rollback.
export type {
  ChecklistItem,
  DryRunReport,
  ImportDeps,
  ImportEvent,
  ImportOptionsInput,
  ImportSummary,
  ProgressWait,
  RollbackOptions,
  RollbackSummary,
  SetupCommandOptions,
  SetupItem,
  SetupPlan,
  SetupReport,
  StepCounts,
  StepSummary,
} from './load/index.ts';

// Verify: the account against the source of a migration.
export type {
  ChangedIn,
  DifferenceKind,
  VerifyDeps,
  VerifyDifference,
  VerifyEvent,
  VerifyNotCarried,
  VerifyStepSummary,
  VerifyOptionsInput,
  VerifySummary,
} from './verify/index.ts';

// The importer's and verify's jobs through the door: whatever they end with is a FerryError, and
// a wrong option is refused (CONFIG_INVALID, of kind input, naming it) before they start.

/**
 * Imports a plan, one file or rows handed in into the account, exactly once and resumably
 * (docs/importer.md). A run the service stopped part-way (unreachable, refusing) throws its
 * FerryError, the summary so far as its `partial`: the one channel every job fails by. An
 * interrupted run (the signal) resolves, `interrupted` set.
 */
export const runImport: typeof importRows = (options, deps) =>
  guarded('runImport', async () => {
    parseOptions(importOptionsSchema, options, 'runImport');
    const summary = await importRows(options, deps);
    if (summary.stopped) {
      summary.stopped.partial = summary;
      throw summary.stopped;
    }
    return summary;
  });
/** Verifies the account against the source of a migration (docs/verify.md). */
export const runVerify: typeof verifyRows = (options, deps) =>
  guarded('runVerify', () => {
    parseOptions(verifyOptionsSchema, options, 'runVerify');
    return verifyRows(options, deps);
  });
/** Runs a plan's `setup:` alone. */
export const runSetup = guard('runSetup', setUp);

/** What a program binds once for all its jobs (createFerry): the client, its account, and its own transforms. */
export interface FerryDeps {
  client: ImportDeps['client'];
  /** @default accountOf(client) */
  account?: ImportDeps['account'];
  /** The transforms its mappings may name: the built-in ones and its own (transformRegistry). @default TRANSFORMS */
  transforms?: ImportDeps['transforms'];
}

/** The jobs of one account with the program's client, account and transforms bound: each takes its options and what differs per call. */
export interface Ferry {
  runImport(options: ImportOptionsInput, deps?: Partial<ImportDeps>): Promise<ImportSummary>;
  runVerify(options: VerifyOptionsInput, deps?: Partial<VerifyDeps>): Promise<VerifySummary>;
}

/**
 * Binds the client, the account and the program's transforms once, so that a mapping naming a
 * transform of its own is imported and verified alike without handing the registry to each call.
 */
export function createFerry(bound: FerryDeps): Ferry {
  return {
    runImport: (options, deps = {}) => runImport(options, { ...bound, ...deps }),
    runVerify: (options, deps = {}) => runVerify(options, { ...bound, ...deps }),
  };
}
/** Undoes the last run of a state folder. */
export const runRollback = guard('runRollback', rollBack);

// The other calls that read files or the service, through the same door: whatever they end with is a FerryError.
/** A client of the service from a token and an address (or `env`, or a stored login). */
export const connect = guard('connect', connectClient);
/** Opens a file (or a live legacy account) as rows; the format is found from its first bytes. */
export const openSource = guard('openSource', open);
/** What `crm-ferry inspect` prints about a file, as data. */
export const inspectSource = guard('inspectSource', inspect);
/** Loads and checks a mapping file: every problem at once (MappingErrors), each with its line. */
export const loadMapping = guard('loadMapping', loadMappingFile);
/** Compiles a mapping for mapRows. */
export const compileMapping = guard('compileMapping', compile);
/** Loads and checks a plan file. */
export const loadPlan = guard('loadPlan', loadPlanFile);
/** Validates a plan without writing (as `crm-ferry validate`). */
export const validatePlan = guard('validatePlan', checkPlan);
/** Validates one mapping over one input without writing. */
export const validateMapping = guard('validateMapping', checkMapping);
/** Opens a complete backup folder, every file checked against its manifest. */
export const openBackup = guard('openBackup', openBackupFolder);

// Export: records of the account to CSV, XLSX or JSON Lines.
export {
  runExport,
  type ExportDeps,
  type ExportEntity,
  type ExportEvent,
  type ExportFormat,
  type ExportOptionsInput,
  type ExportSummary,
} from './export/index.ts';

// Backup and restore of a whole account.
export {
  runBackup,
  runRestore,
  type ActivityInputs,
  type Backup,
  type BackupAttachment,
  type BackupDeps,
  type BackupEvent,
  type BackupOptionsInput,
  type BackupSummary,
  type MissingItem,
  type RestoreDeps,
  type RestoreOptionsInput,
  type RestoreSummary,
} from './backup/index.ts';
