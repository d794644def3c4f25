export { loadMapping, parseMapping, MappingErrors, type LoadOptions } from './load.ts';
export { compileMapping, type CompiledMapping, type CompileOptions } from './compile.ts';
export { mapRows } from './map-rows.ts';
export {
  ENTITY_PLURAL,
  LINK_KINDS,
  REPEATABLE_KINDS,
  TARGET_INFO,
  TYPED_KINDS,
  WEBSITE_SERVICES,
  type TargetInfo,
  type TargetKind,
} from './compile-targets.ts';
export { transformRegistry, type CustomTransform, type TransformRegistry } from './compile-transforms.ts';
export {
  TRANSFORMS,
  TransformError,
  type TransformContext,
  type TransformDefinition,
  type TransformEnvironment,
  type TransformFn,
  type Value,
} from './transforms/index.ts';
export { isTemplate, parseTemplate } from './compile-template.ts';
export { columnsOfSpec } from './compile-fields.ts';
export { conditionColumns } from './compile-condition.ts';
export {
  EXAMPLE_MAPPING,
  mappingJsonSchema,
  renderMappingReference,
  REFERENCE_END,
  REFERENCE_START,
  withReference,
} from './reference.ts';
export { draftMapping, type DraftOptions, type DraftResult } from './init.ts';
export * from './schema.ts';
export type {
  MappedItem,
  MappedRecord,
  NameKind,
  NameResolver,
  NameUse,
  RefUse,
  RejectedReason,
  RejectedRow,
  RowWarning,
  SkippedRow,
  WarningCode,
} from './types.ts';
export {
  countWarnings,
  emptyWarningCounts,
  totalWarnings,
  WARNING_CODES,
  warningsText,
  type WarningCounts,
} from './warnings.ts';
export { isEmpty } from './compile-template.ts';
export { findReadyMapping } from './init-ready.ts';
export { mapFieldBatches } from './map-rows.ts';
export {
  REJECT_COLUMNS,
  RejectsWriter,
  assertWritableTarget,
  readsAsRejectsFile,
  removeStaleRejects,
  type RejectsLine,
  type StaleRejects,
} from './rejects.ts';
export type { AccountCatalog, CatalogFieldDefinition, FieldEntity } from './resolve.ts';
export {
  CatalogResolver,
  catalogWanted,
  checkConstantNames,
  offlineResolver,
  resolveRecord,
  setAt,
  type RecordProblem,
} from './resolve.ts';
export {
  ENTITIES,
  sourceSchema,
  type Entity,
  type Mapping,
  type MatchSpec,
  type OnDuplicate,
  type SourceOptions,
} from './schema.ts';
export type { AttachmentUse } from './types.ts';
export { createResolver } from './resolve.ts';
export { plainMessage, reasonText, type Reason } from './reasons.ts';
export { authoredContent, authorLineOf, isWritingUser, type NoteAuthor, type WritingUser } from './note-author.ts';
