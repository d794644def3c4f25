export { backupOptionsSchema, runBackup, type BackupDeps, type BackupOptions, type BackupSummary } from './run-backup.ts';
export * from './format.ts';
