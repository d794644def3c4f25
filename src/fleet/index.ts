export {
  checkJobSpec,
  describeJob,
  JOB_COMMANDS,
  jobArguments,
  jobEnvironment,
  jobOutcome,
  withoutSecrets,
  type JobCommand,
  type JobOutcome,
  type JobSpec,
} from './job.ts';
export {
  DEFAULT_QUEUE,
  JobQueue,
  QUEUE_SCHEMA,
  type JobListing,
  type QueueOptions,
  type RetryOptions,
} from './queue.ts';
export { runWorker, type JobIo, type WorkerDeps, type WorkerOptions, type WorkerSummary } from './worker.ts';
