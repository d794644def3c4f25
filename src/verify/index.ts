export { notCarriedFileOf } from './differences-file.ts';
export { requestsToRead } from './read-account.ts';
export {
  VERIFY_BATCH,
  verifyOptionsSchema,
  type ChangedIn,
  type DifferenceKind,
  type VerifyDeps,
  type VerifyDifference,
  type VerifyEvent,
  type VerifyNotCarried,
  type VerifyOptions,
  type VerifyOptionsInput,
  type VerifyStepSummary,
  type VerifySummary,
} from './types.ts';
export { runVerify } from './verify.ts';
