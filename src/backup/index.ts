/** The backup room: `crm-ferry backup` (run-backup.ts) and `crm-ferry restore` (restore.ts), and the folder's format. */
export {
  backupOptionsSchema,
  runBackup,
  type BackupDeps,
  type BackupEvent,
  type BackupOptions,
  type BackupOptionsInput,
  type BackupSummary,
} from './run-backup.ts';
export {
  catalogOfBackup,
  missingConfiguration,
  openBackup,
  type Backup,
  type BackupAttachment,
  type MissingItem,
} from './read-backup.ts';
export {
  restoredIds,
  restoreOptionsSchema,
  runRestore,
  type RestoreDeps,
  type RestoreOptions,
  type RestoreOptionsInput,
  type RestoreSummary,
} from './restore.ts';
export { carriedContent, type ActivityInputs } from './restore-inputs.ts';
export { RESTORE_STEPS } from './restore-plan.ts';
export * from './format.ts';
