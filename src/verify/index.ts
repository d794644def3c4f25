export {
  requestsToRead,
  runVerify,
  VERIFY_BATCH,
  verifyOptionsSchema,
  type DifferenceKind,
  type VerifyDeps,
  type VerifyDifference,
  type VerifyEvent,
  type VerifyOptions,
  type VerifyOptionsInput,
  type VerifyStepSummary,
  type VerifySummary,
} from './verify.ts';
