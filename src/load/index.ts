export { attachmentFilesOf, attachmentsLacking, readAttachments, type AttachmentFile } from './attachments.ts';
export { canonicalJson, fingerprint } from './fingerprint.ts';
export { isMadeKey, linkedByName, madeKey, nameKey } from './made-by-name.ts';
export { beforeImage, fromRecord, planUpdate, signatureOf, type UpdatePlan } from './records.ts';
export { SuccessWriter, type RowAction, type SuccessRow } from './results.ts';
export {
  importOptionsSchema,
  runImport,
  type DryRunReport,
  type ImportDeps,
  type ImportEvent,
  type ImportOptions,
  type ImportOptionsInput,
  type ImportSummary,
  type ProgressWait,
  type StepCounts,
  type StepSummary,
} from './run-import.ts';
export { runRollback, type RollbackOptions, type RollbackSummary } from './rollback.ts';
export {
  applySetup,
  assertNothingMissing,
  collectNames,
  KIND_WORDS,
  planSetup,
  plannedSetup,
  runSetup,
  setupForRun,
  undoSetup,
  type ChecklistItem,
  type ChecklistKind,
  type SetupKind,
  type SetupCommandOptions,
  type SetupItem,
  type SetupPlan,
  type SetupReport,
} from './setup.ts';
export { assertSameKey } from './run-import.ts';
export { openRun, readNames, type AccountNames, type OpenedRun, type OpenRunOptions } from './open-run.ts';
export { WriteSlots } from './write-slots.ts';
