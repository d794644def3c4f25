export { backupOptionsSchema, runBackup, type BackupDeps, type BackupOptions, type BackupSummary } from './run-backup.ts';
export { catalogOfBackup, missingConfiguration, openBackup, type Backup, type MissingItem } from './read-backup.ts';
export { restoredIds, restoreOptionsSchema, runRestore, writeRestoreInputs, type RestoreDeps, type RestoreOptions, type RestoreSummary } from './restore.ts';
export * from './format.ts';
