import { randomUUID } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from './context.ts';
import { baseUrlOf, notFound, timestamp } from './http.ts';
import type { JobRec } from './model.ts';

/** What completing a scheduled job does, per target table; registered by the resource modules. */
export type JobHandler = (ctx: SandboxContext, id: number) => void;
const handlers = new Map<JobRec['target']['table'], JobHandler>();

export function registerJobHandler(table: JobRec['target']['table'], handler: JobHandler): void {
  handlers.set(table, handler);
}

/**
 * Schedules work instead of doing it now and answers `202 Accepted` with the job's `Location`,
 * as the service does for some party and entry deletes.
 */
export function answerScheduled(
  ctx: SandboxContext,
  request: FastifyRequest,
  reply: FastifyReply,
  action: string,
  target: JobRec['target'],
): FastifyReply {
  const now = ctx.now();
  const job: JobRec = {
    id: randomUUID(),
    action,
    status: 'in_progress',
    progress: 0,
    createdAt: timestamp(now),
    dueAt: new Date(now.getTime() + ctx.settings.jobDurationMs).toISOString(),
    target,
  };
  ctx.store.jobs.set(job.id, job);
  return reply
    .code(202)
    .header('Location', `${baseUrlOf(request)}/api/v2/jobs/${job.id}`)
    .send();
}

/** Completes every job whose time has come. Called at the start of each request. */
export function completeDueJobs(ctx: SandboxContext): void {
  const now = ctx.now().getTime();
  for (const job of ctx.store.jobs.values()) {
    if (job.status !== 'completed' && Date.parse(job.dueAt) <= now) {
      // The job's changes are saved with the request that found it due, read or write.
      ctx.store.writing(() => handlers.get(job.target.table)?.(ctx, job.target.id));
      job.status = 'completed';
      job.progress = 100;
      ctx.store.jobs.touch(job.id);
      ctx.store.completedJobs += 1;
    }
  }
}

function progressOf(ctx: SandboxContext, job: JobRec): number {
  if (job.status === 'completed') return 100;
  const total = Date.parse(job.dueAt) - Date.parse(job.createdAt);
  const done = ctx.now().getTime() - Date.parse(job.createdAt);
  return total <= 0 ? 99 : Math.max(0, Math.min(99, Math.floor((done / total) * 100)));
}

export function registerJobRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.addHook('onRequest', async () => completeDueJobs(ctx));
  app.get('/api/v2/jobs/:jobId', async (request) => {
    const { jobId } = request.params as { jobId: string };
    const job = ctx.store.jobs.get(jobId);
    if (!job) throw notFound(`no job with id ${JSON.stringify(jobId)}`);
    return { job: { id: job.id, status: job.status, progress: progressOf(ctx, job), action: job.action } };
  });
}
