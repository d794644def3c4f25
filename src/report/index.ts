export {
  EXAMPLES_PER_REASON,
  IMPORT_COUNTS,
  importReport,
  notListedText,
  ReasonTally,
  rollbackReport,
  VERIFY_COUNTS,
  verifyOutcome,
  verifyReport,
  type ReportContext,
} from './build.ts';
export {
  DIFFERENCES_SHOWN,
  escapeHtml,
  renderReport,
  usageChart,
  writeReport,
  type ReportNotCarried,
  type ReasonExample,
  type ReasonGroup,
  type ReportCommand,
  type ReportCount,
  type ReportInput,
  type ReportStep,
} from './html.ts';
export { UsageRecorder, type UsageRecorderOptions, type UsageSample, type UsageSource } from './quota-usage.ts';
