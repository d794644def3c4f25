export { backupOptionsSchema, runBackup, type BackupDeps, type BackupOptions, type BackupSummary } from './run-backup.ts';
export { catalogOfBackup, missingConfiguration, openBackup, type Backup, type MissingItem } from './read-backup.ts';
export { restoredIds, restoreOptionsSchema, runRestore, type RestoreDeps, type RestoreOptions, type RestoreSummary } from './restore.ts';
export { carriedContent, RESTORE_STEPS } from './restore-inputs.ts';
export * from './format.ts';
