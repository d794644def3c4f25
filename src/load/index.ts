export { attachmentFilesOf, attachmentsLacking, readAttachments, type AttachmentFile } from './attachments.ts';
export { canonicalJson, fingerprint } from './fingerprint.ts';
export { isMadeKey, linkedByName, madeKey, nameKey } from './made-by-name.ts';
export { beforeImage, fromRecord, planUpdate, signatureOf, type UpdatePlan } from './update-plan.ts';
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
export { KIND_WORDS, type ChecklistKind, type SetupKind } from './setup-kinds.ts';
export { applySetup } from './setup-apply.ts';
export {
  assertNothingMissing,
  collectNames,
  planSetup,
  type ChecklistItem,
  type SetupItem,
  type SetupPlan,
  type SetupReport,
} from './setup-plan.ts';
export { undoSetup } from './setup-undo.ts';
export { plannedSetup, runSetup, setupForRun, type SetupCommandOptions } from './setup.ts';
export { assertSameKey } from './run-import.ts';
export {
  openRun,
  readNames,
  type AccountNames,
  type OpenedRun,
  type OpenRunOptions,
  type ReadNamesOptions,
} from './open-run.ts';
export { WriteSlots } from './write-slots.ts';
