export {
  blankRow,
  EMPTY_SEAL,
  journalLine,
  JournalWriter,
  loadJournal,
  readJournal,
  type JournalEntry,
  type JournalSeal,
  type JournalWriterOptions,
  type LoadedJournal,
  type ReadJournalOptions,
  type RowState,
} from './journal.ts';
export {
  bindStateSteps,
  readRollbacks,
  readStateSteps,
  refusePendingRollback,
  StateDir,
  writeRollbacks,
  writeStateSteps,
  type AccountIdentity,
  type OpenStateOptions,
  type PendingRollback,
  type Rollbacks,
  type StateStep,
  type StateSteps,
} from './state-dir.ts';
export { releaseLock } from './lock.ts';
export { defaultStateKey, type StateStoreOptions, stateStoreSchema, StoreState } from './store-state.ts';
export { takeLock } from './lock.ts';
export {
  describeStoreUrl,
  PostgresStore,
  type PostgresStoreOptions,
  STORE_SCHEMA_VERSION,
  type StoreRunLock,
} from './postgres-store.ts';
export {
  PostgresQuota,
  type PostgresQuotaOptions,
  type QuotaClaim,
  type QuotaGrant,
  type QuotaWindow,
} from './postgres-quota.ts';
