export { findStep, loadPlan, parsePlan, type Plan, type PlanStep } from './load.ts';
export { mappingRefs, orderSteps, type StepDependencies, type StepRef } from './order.ts';
export {
  lookUpRef,
  ReferenceBook,
  type LinkBook,
  type LinkTarget,
  type RefLookup,
  type ReferenceProblem,
} from './references.ts';
export { joinProblems, recordToSend, rejectedRow, withType } from './record-to-send.ts';
export { planSchema, planStepSchema, setupSchema, type PlanFile, type PlanStepFile, type SetupSpec } from './schema.ts';
export { preparePlan } from './prepare-step.ts';
export {
  ReasonCounter,
  validateMapping,
  validatePlan,
  type RejectReason,
  type StepReport,
  type ValidateCommonOptions,
  type ValidateMappingOptions,
  type ValidatePlanOptions,
  type ValidateReport,
} from './validate.ts';
export {
  ColumnCensus,
  narrowNotCarried,
  notCarriedInPlan,
  notCarriedLines,
  type CensusStep,
  type NotCarried,
} from './columns-not-carried.ts';
export { foldDuplicates, indexDuplicates, matchValueOf, mergeRecord, type DuplicateIndex } from './duplicates.ts';
export { linkKeys, linkedSteps, unresolvedLink, unresolvedText } from './references.ts';
export { RowChecks, type RowOutcome } from './row-checks.ts';
export {
  assertConstantNames,
  compileSteps,
  countStepItems,
  openStepItems,
  prepareRun,
  prepareSingleStep,
  retryFromRejects,
  describeRunSource,
  runSourceSchema,
  type RowsSource,
  type PreparedRun,
  type PreparedStep,
  type PrepareRunOptions,
  type RunSource,
} from './prepare-step.ts';
export {
  createMatcher,
  judgeMatch,
  MATCH_BATCH,
  matchValues,
  type Matcher,
  type MatcherOptions,
  type MatchValue,
  type RecordFinder,
} from './matching.ts';
export { connectLiveSteps, readsLive } from './prepare-step.ts';
export { findAttachments, type FoundFile } from './find-attachments.ts';
