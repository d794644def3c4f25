export { blankRow, journalLine, JournalWriter, loadJournal, readJournal, type JournalEntry, type JournalWriterOptions, type LoadedJournal, type RowState } from './journal.ts';
export { StateDir, type AccountIdentity, type OpenStateOptions } from './state-dir.ts';
export { releaseLock } from './lock.ts';
export { takeLock } from './lock.ts';
