/**
 * Pipelines (spec 4.10) and their milestones (spec 4.6).
 *
 * Choices where the interface leaves things open, kept consistent across this module:
 * - every refusal on business grounds (pipeline limit, archiving twice, milestone in use, duplicate
 *   milestone name) is a 422 with the validation body, so a client handles one shape;
 * - milestones are ordered open ones first, then complete ones, each by display order, because
 *   "Won"/"Lost" close a pipeline;
 * - the legacy `/milestones` list leaves out the `pipeline` summary; every other milestone answer has it.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import {
  badRequest,
  created,
  forbidden,
  isIdList,
  notFound,
  paginate,
  parseId,
  parseIdList,
  queryOf,
  timestamp,
  unwrap,
  validationError,
} from '../http.ts';
import type { MilestoneRec, PipelineRec } from '../model.ts';

/** Most active (non-archived) pipelines an account may hold. */
export const MAX_ACTIVE_PIPELINES = 30;

type Problem = { field: string; message: string };

/** Read-only properties a client may echo back from a read; they are ignored on write. */
const ECHOED = new Set(['id', 'createdAt', 'updatedAt']);

function unknownKeys(body: Record<string, unknown>, allowed: readonly string[]): Problem[] {
  return Object.keys(body)
    .filter((key) => !allowed.includes(key) && !ECHOED.has(key))
    .map((field) => ({ field, message: 'is not a property that can be written' }));
}

/** Reads an optional text property: undefined when absent, null when cleared. */
function readText(
  body: Record<string, unknown>,
  key: string,
  problems: Problem[],
  required = false,
): string | null | undefined {
  const value = body[key];
  if (value === undefined || (value === null && !required)) {
    if (required) problems.push({ field: key, message: 'is required' });
    return value as null | undefined;
  }
  if (typeof value !== 'string') {
    problems.push({ field: key, message: `must be a string, got ${JSON.stringify(value)}` });
    return undefined;
  }
  if (required && value.trim() === '') {
    problems.push({ field: key, message: 'must not be empty' });
    return undefined;
  }
  return value;
}

function readInteger(
  body: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
  problems: Problem[],
): number | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    problems.push({ field: key, message: `must be an integer from ${min} to ${max}, got ${JSON.stringify(value)}` });
    return undefined;
  }
  return value;
}

function requireAdministrator(request: FastifyRequest): void {
  const { user } = callerOf(request);
  if (user.role !== 'Administrator') {
    throw forbidden(`changing pipelines needs the Administrator role; user ${user.username} has the role ${user.role}`);
  }
}

function pipelineJson(pipeline: PipelineRec): Record<string, unknown> {
  const json: Record<string, unknown> = { id: pipeline.id, name: pipeline.name };
  if (pipeline.description !== null) json.description = pipeline.description;
  // Beyond the spec, as live answers carry them.
  json.createdAt = pipeline.createdAt;
  json.updatedAt = pipeline.updatedAt;
  return json;
}

function activePipelines(ctx: SandboxContext): PipelineRec[] {
  return ctx.store.pipelines.all().filter((p) => !p.archived);
}

/** The pipeline the compatibility list and milestone create fall back to. */
export function oldestActivePipeline(ctx: SandboxContext): PipelineRec | undefined {
  return activePipelines(ctx).sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id - b.id)[0];
}

function refuseOverLimit(ctx: SandboxContext): void {
  if (activePipelines(ctx).length >= MAX_ACTIVE_PIPELINES) {
    throw validationError('pipeline', [
      {
        field: 'pipeline',
        message: `the account already has ${MAX_ACTIVE_PIPELINES} active pipelines, the most it may hold; archive one first`,
      },
    ]);
  }
}

function milestonesOf(ctx: SandboxContext, pipelineId: number): MilestoneRec[] {
  return ctx.store.milestones
    .all()
    .filter((m) => m.pipelineId === pipelineId)
    .sort((a, b) => Number(a.complete) - Number(b.complete) || a.displayOrder - b.displayOrder || a.id - b.id);
}

function milestoneJson(ctx: SandboxContext, milestone: MilestoneRec, withPipeline = true): Record<string, unknown> {
  const json: Record<string, unknown> = { id: milestone.id, name: milestone.name };
  if (milestone.description !== null) json.description = milestone.description;
  json.complete = milestone.complete;
  json.probability = milestone.probability;
  // Complete milestones never go stale, so the property is left out rather than sent as null.
  if (!milestone.complete && milestone.daysUntilStale !== null) json.daysUntilStale = milestone.daysUntilStale;
  if (withPipeline) {
    const pipeline = ctx.store.pipelines.get(milestone.pipelineId);
    json.pipeline = pipeline ? { id: pipeline.id, name: pipeline.name } : null;
  }
  json.createdAt = milestone.createdAt;
  json.updatedAt = milestone.updatedAt;
  return json;
}

function pipelineOr404(ctx: SandboxContext, raw: string | undefined): PipelineRec {
  const id = parseId(raw, 'pipeline');
  const pipeline = ctx.store.pipelines.get(id);
  if (!pipeline) throw notFound(`no pipeline with id ${id}`);
  return pipeline;
}

function milestoneOr404(ctx: SandboxContext, raw: string | undefined): MilestoneRec {
  const id = parseId(raw, 'milestone');
  const milestone = ctx.store.milestones.get(id);
  if (!milestone) throw notFound(`no milestone with id ${id}`);
  return milestone;
}

function parseIncludeDeleted(request: FastifyRequest): boolean {
  const raw = queryOf(request).includeDeleted;
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (raw === 'true') return true;
  throw badRequest(`includeDeleted must be true or false, got ${JSON.stringify(raw)}`);
}

function nameTaken(ctx: SandboxContext, pipelineId: number, name: string, exceptId: number | null): boolean {
  const wanted = name.trim().toLowerCase();
  return milestonesOf(ctx, pipelineId).some((m) => m.id !== exceptId && m.name.trim().toLowerCase() === wanted);
}

/** Milestone properties both create and update accept. */
interface MilestoneChanges {
  name?: string;
  description?: string | null;
  probability?: number;
  complete?: boolean;
  daysUntilStale?: number | null;
}

function readMilestoneChanges(body: Record<string, unknown>, problems: Problem[], creating: boolean): MilestoneChanges {
  const changes: MilestoneChanges = {};
  const name = readText(body, 'name', problems, creating || body.name !== undefined);
  if (typeof name === 'string') changes.name = name.trim();
  const description = readText(body, 'description', problems);
  if (description !== undefined) changes.description = description;
  const probability = readInteger(body, 'probability', 0, 100, problems);
  if (probability !== undefined) changes.probability = probability;
  if (body.complete !== undefined) {
    if (typeof body.complete === 'boolean') changes.complete = body.complete;
    else problems.push({ field: 'complete', message: `must be true or false, got ${JSON.stringify(body.complete)}` });
  }
  if (body.daysUntilStale === null) changes.daysUntilStale = null;
  else {
    const days = readInteger(body, 'daysUntilStale', 0, 3650, problems);
    if (days !== undefined) changes.daysUntilStale = days;
  }
  return changes;
}

/** Where `pipeline` on a milestone create points: {id} or a bare id; absent means the oldest active one. */
function readMilestonePipeline(
  ctx: SandboxContext,
  body: Record<string, unknown>,
  problems: Problem[],
): PipelineRec | undefined {
  const raw = body.pipeline;
  if (raw === undefined || raw === null) {
    const fallback = oldestActivePipeline(ctx);
    if (!fallback)
      problems.push({ field: 'pipeline', message: 'is required: the account has no active pipeline to default to' });
    return fallback;
  }
  const id = typeof raw === 'object' && !Array.isArray(raw) ? (raw as Record<string, unknown>).id : raw;
  if (typeof id !== 'number' || !Number.isInteger(id)) {
    problems.push({ field: 'pipeline', message: `must be {"id": <pipeline id>}, got ${JSON.stringify(raw)}` });
    return undefined;
  }
  const pipeline = ctx.store.pipelines.get(id);
  if (!pipeline) problems.push({ field: 'pipeline', message: `no pipeline with id ${id}` });
  else if (pipeline.archived)
    problems.push({ field: 'pipeline', message: `pipeline ${id} is archived; restore it first` });
  return pipeline;
}

/** Registers the pipeline and milestone routes. */
export function registerPipelineRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const store = ctx.store;
  const now = (): string => timestamp(ctx.now());

  app.get('/api/v2/pipelines', async (request, reply) => {
    const includeDeleted = parseIncludeDeleted(request);
    const rows = store.pipelines.all().filter((p) => includeDeleted || !p.archived);
    return { pipelines: paginate(request, reply, rows).map(pipelineJson) };
  });

  app.get('/api/v2/pipelines/:pipelineIds', async (request) => {
    const { pipelineIds } = request.params as { pipelineIds: string };
    if (!isIdList(pipelineIds)) return { pipeline: pipelineJson(pipelineOr404(ctx, pipelineIds)) };
    const ids = parseIdList(pipelineIds, 'pipeline');
    const missing = ids.filter((id) => !store.pipelines.has(id));
    if (missing.length > 0) throw notFound(`no pipeline with id ${missing.join(', ')}`);
    return { pipelines: ids.map((id) => pipelineJson(store.pipelines.get(id) as PipelineRec)) };
  });

  app.post('/api/v2/pipelines', async (request, reply) => {
    requireAdministrator(request);
    const body = unwrap(request, 'pipeline');
    const problems = unknownKeys(body, ['name', 'description']);
    const name = readText(body, 'name', problems, true);
    const description = readText(body, 'description', problems);
    if (problems.length > 0 || typeof name !== 'string') throw validationError('pipeline', problems);
    refuseOverLimit(ctx);
    const at = now();
    const pipeline = store.pipelines.insert({
      name: name.trim(),
      description: description ?? null,
      archived: false,
      createdAt: at,
      updatedAt: at,
    });
    return created(request, reply, `/pipelines/${pipeline.id}`, { pipeline: pipelineJson(pipeline) });
  });

  app.post('/api/v2/pipelines/:pipelineId/duplicate', async (request, reply) => {
    requireAdministrator(request);
    const source = pipelineOr404(ctx, (request.params as { pipelineId: string }).pipelineId);
    refuseOverLimit(ctx);
    const at = now();
    const copy = store.pipelines.insert({
      name: `${source.name} (copy)`,
      description: source.description,
      archived: false,
      createdAt: at,
      updatedAt: at,
    });
    for (const milestone of milestonesOf(ctx, source.id)) {
      const { id: _id, ...rest } = milestone;
      store.milestones.insert({ ...rest, pipelineId: copy.id, createdAt: at, updatedAt: at });
    }
    return created(request, reply, `/pipelines/${copy.id}`, { pipeline: pipelineJson(copy) });
  });

  app.put('/api/v2/pipelines/:pipelineId', async (request) => {
    requireAdministrator(request);
    const pipeline = pipelineOr404(ctx, (request.params as { pipelineId: string }).pipelineId);
    const body = unwrap(request, 'pipeline');
    const problems = unknownKeys(body, ['name', 'description']);
    const name = readText(body, 'name', problems, body.name !== undefined);
    const description = readText(body, 'description', problems);
    if (problems.length > 0) throw validationError('pipeline', problems);
    if (typeof name === 'string') pipeline.name = name.trim();
    if (description !== undefined) pipeline.description = description;
    pipeline.updatedAt = now();
    return { pipeline: pipelineJson(pipeline) };
  });

  app.delete('/api/v2/pipelines/:pipelineId', async (request, reply) => {
    requireAdministrator(request);
    const pipeline = pipelineOr404(ctx, (request.params as { pipelineId: string }).pipelineId);
    if (pipeline.archived) {
      throw validationError('pipeline', [
        { field: 'pipeline', message: `pipeline ${pipeline.id} is already archived` },
      ]);
    }
    // Opportunities need a pipeline to live in, so the account always keeps one active.
    if (activePipelines(ctx).length === 1) {
      throw validationError('pipeline', [
        { field: 'pipeline', message: 'the last active pipeline cannot be archived' },
      ]);
    }
    pipeline.archived = true;
    pipeline.updatedAt = now();
    return reply.code(204).send();
  });

  app.post('/api/v2/pipelines/:pipelineId/restore', async (request) => {
    requireAdministrator(request);
    const pipeline = pipelineOr404(ctx, (request.params as { pipelineId: string }).pipelineId);
    if (!pipeline.archived) {
      throw validationError('pipeline', [{ field: 'pipeline', message: `pipeline ${pipeline.id} is not archived` }]);
    }
    refuseOverLimit(ctx);
    pipeline.archived = false;
    pipeline.updatedAt = now();
    return { pipeline: pipelineJson(pipeline) };
  });

  app.get('/api/v2/pipelines/:pipelineId/milestones', async (request, reply) => {
    const pipeline = pipelineOr404(ctx, (request.params as { pipelineId: string }).pipelineId);
    return { milestones: paginate(request, reply, milestonesOf(ctx, pipeline.id)).map((m) => milestoneJson(ctx, m)) };
  });

  app.get('/api/v2/milestones', async (request, reply) => {
    const oldest = oldestActivePipeline(ctx);
    const rows = oldest ? milestonesOf(ctx, oldest.id) : [];
    // With its pipeline, as the service answers (beyond the spec).
    return { milestones: paginate(request, reply, rows).map((m) => milestoneJson(ctx, m)) };
  });

  app.get('/api/v2/milestones/:milestoneId', async (request) => {
    const milestone = milestoneOr404(ctx, (request.params as { milestoneId: string }).milestoneId);
    return { milestone: milestoneJson(ctx, milestone) };
  });

  app.post('/api/v2/milestones', async (request, reply) => {
    const body = unwrap(request, 'milestone');
    const problems = unknownKeys(body, [
      'name',
      'description',
      'probability',
      'complete',
      'daysUntilStale',
      'pipeline',
    ]);
    const changes = readMilestoneChanges(body, problems, true);
    const pipeline = readMilestonePipeline(ctx, body, problems);
    if (pipeline && changes.name !== undefined && nameTaken(ctx, pipeline.id, changes.name, null)) {
      problems.push({
        field: 'name',
        message: `pipeline ${pipeline.name} already has a milestone named ${JSON.stringify(changes.name)}`,
      });
    }
    if (problems.length > 0 || !pipeline || changes.name === undefined) throw validationError('milestone', problems);
    const at = now();
    const complete = changes.complete ?? false;
    const siblings = milestonesOf(ctx, pipeline.id);
    const milestone = store.milestones.insert({
      pipelineId: pipeline.id,
      name: changes.name,
      description: changes.description ?? null,
      probability: changes.probability ?? 0,
      complete,
      daysUntilStale: complete ? null : (changes.daysUntilStale ?? null),
      displayOrder: siblings.reduce((max, m) => Math.max(max, m.displayOrder + 1), 0),
      createdAt: at,
      updatedAt: at,
    });
    return created(request, reply, `/milestones/${milestone.id}`, { milestone: milestoneJson(ctx, milestone) });
  });

  app.put('/api/v2/milestones/:milestoneId', async (request) => {
    const milestone = milestoneOr404(ctx, (request.params as { milestoneId: string }).milestoneId);
    const body = unwrap(request, 'milestone');
    const problems = unknownKeys(body, [
      'name',
      'description',
      'probability',
      'complete',
      'daysUntilStale',
      'pipeline',
    ]);
    const pipelineRaw = body.pipeline as { id?: unknown } | number | undefined;
    const pipelineId = typeof pipelineRaw === 'object' && pipelineRaw !== null ? pipelineRaw.id : pipelineRaw;
    if (pipelineRaw !== undefined && pipelineId !== milestone.pipelineId) {
      problems.push({ field: 'pipeline', message: 'a milestone cannot move to another pipeline' });
    }
    const changes = readMilestoneChanges(body, problems, false);
    if (changes.name !== undefined && nameTaken(ctx, milestone.pipelineId, changes.name, milestone.id)) {
      problems.push({
        field: 'name',
        message: `the pipeline already has a milestone named ${JSON.stringify(changes.name)}`,
      });
    }
    if (problems.length > 0) throw validationError('milestone', problems);
    if (changes.name !== undefined) milestone.name = changes.name;
    if (changes.description !== undefined) milestone.description = changes.description;
    if (changes.probability !== undefined) milestone.probability = changes.probability;
    if (changes.complete !== undefined) milestone.complete = changes.complete;
    if (changes.daysUntilStale !== undefined) milestone.daysUntilStale = changes.daysUntilStale;
    if (milestone.complete) milestone.daysUntilStale = null;
    milestone.updatedAt = now();
    return { milestone: milestoneJson(ctx, milestone) };
  });

  app.delete('/api/v2/milestones/:milestoneId', async (request, reply) => {
    const milestone = milestoneOr404(ctx, (request.params as { milestoneId: string }).milestoneId);
    const users = store.opportunities.all().filter((o) => o.milestoneId === milestone.id);
    if (users.length > 0) {
      const sample = users
        .slice(0, 5)
        .map((o) => o.id)
        .join(', ');
      throw validationError('milestone', [
        {
          field: 'milestone',
          message: `milestone ${milestone.id} is used by ${users.length} opportunit${users.length === 1 ? 'y' : 'ies'} (${sample}${users.length > 5 ? ', ...' : ''}); move them to another milestone first`,
        },
      ]);
    }
    store.milestones.delete(milestone.id);
    return reply.code(204).send();
  });
}
