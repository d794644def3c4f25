/**
 * Tasks (interface spec 4.5, shape 2.6) and the list of task categories, which the spec does not
 * describe but the service has at `/categories` and task bodies refer to.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import { describeValue } from '../describe-value.ts';
import {
  badRequest,
  created,
  type FieldProblem,
  notFound,
  paginate,
  parseEmbed,
  parseId,
  queryOf,
  timestamp,
  unwrap,
  validationError,
} from '../http.ts';
import type { TaskCategoryRec, TaskRec } from '../model.ts';
import { pageOf } from '../paging.ts';
import { kaseSummary, opportunitySummary, partySummary, userSummary } from '../serialize.ts';
import { LINK_KEYS, type LinkKey, linkedRecordExists, readIdRef, unknownKeyProblems } from './entries.ts';

export const TASK_EMBEDS = ['party', 'opportunity', 'kase', 'owner', 'nextTask'] as const;

/** Values of the `status` query and the stored status each selects. */
const STATUS_FILTERS: Record<string, TaskRec['status']> = { open: 'OPEN', completed: 'COMPLETED', pending: 'PENDING' };

/** Repeat frequencies the sandbox accepts; the spec shows MONTHLY only. */
export const REPEAT_FREQUENCIES = ['DAILY', 'WEEKLY', 'MONTHLY', 'YEARLY'] as const;

type Problem = Omit<FieldProblem, 'resource'>;

// ---------------------------------------------------------------------------------------------
// Wire shape

function categoryOf(ctx: SandboxContext, id: number | null): { id: number; name: string; colour: string } | null {
  const category = id === null ? undefined : ctx.store.taskCategories.get(id);
  return category ? { id: category.id, name: category.name, colour: category.colour } : null;
}

/** The task after this one in its track, for `embed=nextTask`; null outside tracks and at the end. */
function nextTaskOf(ctx: SandboxContext, task: TaskRec): Record<string, unknown> | null {
  if (task.trackId === null) return null;
  const track = ctx.store.tracks.get(task.trackId);
  if (!track) return null;
  const later = track.taskIds.slice(track.taskIds.indexOf(task.id) + 1);
  for (const id of later) {
    const next = ctx.store.tasks.get(id);
    if (next) return { id: next.id, description: next.description, dueOn: next.dueOn, status: next.status };
  }
  return null;
}

/**
 * The v2 wire shape of a task. The linked party, opportunity or project appears when the task is
 * on one; embedding a link makes its key appear (null) even when it is not. `dueTime` and
 * `repeat` appear only when set.
 */
export function serializeTask(ctx: SandboxContext, task: TaskRec, embed: ReadonlySet<string>): Record<string, unknown> {
  const out: Record<string, unknown> = {
    id: task.id,
    description: task.description,
    detail: task.detail,
    category: categoryOf(ctx, task.categoryId),
    status: task.status,
    owner: userSummary(ctx, task.ownerId),
    dueOn: task.dueOn,
  };
  if (task.dueTime !== null) out.dueTime = task.dueTime;
  out.createdAt = task.createdAt;
  out.updatedAt = task.updatedAt;
  out.completedAt = task.completedAt;
  out.hasTrack = task.trackId !== null;
  // Beyond the spec, as live answers carry them: whether the task is open (not completed, not
  // waiting in its track), and for a task of a track its definition's rule of counting days.
  out.active = task.status === 'OPEN';
  out.taskDayDelayRule = dayDelayRuleOf(ctx, task);
  if (task.repeat)
    out.repeat = { interval: task.repeat.interval, frequency: task.repeat.frequency, on: task.repeat.on };
  if (task.partyId !== null || embed.has('party')) out.party = partySummary(ctx, task.partyId);
  if (task.opportunityId !== null || embed.has('opportunity'))
    out.opportunity = opportunitySummary(ctx, task.opportunityId);
  if (task.kaseId !== null || embed.has('kase')) out.kase = kaseSummary(ctx, task.kaseId);
  if (embed.has('nextTask')) out.nextTask = nextTaskOf(ctx, task);
  return out;
}

/** The day rule of the track definition's task a task of a track was made from (by its place in the track); null for another task. */
function dayDelayRuleOf(ctx: SandboxContext, task: TaskRec): string | null {
  const track = task.trackId === null ? undefined : ctx.store.tracks.get(task.trackId);
  if (!track) return null;
  const definitions = [...(ctx.store.trackDefinitions.get(track.definitionId)?.taskDefinitions ?? [])].sort(
    (a, b) => a.displayOrder - b.displayOrder || a.id - b.id,
  );
  return definitions[track.taskIds.indexOf(task.id)]?.dayDelayRule ?? null;
}

/** Soonest due first; tasks without a time of day come before timed ones on the same day. */
function byDue(a: TaskRec, b: TaskRec): number {
  return (
    (a.dueOn ?? '9999').localeCompare(b.dueOn ?? '9999') ||
    (a.dueTime ?? '').localeCompare(b.dueTime ?? '') ||
    a.id - b.id
  );
}

// ---------------------------------------------------------------------------------------------
// Status changes shared with the v1 routes

/**
 * Sets a task's status. Completing stamps `completedAt` and, when the task is on a record, files
 * a `task` entry there as the service's history does; reopening clears `completedAt` (the entry
 * stays, as history is not rewritten). v1 `complete` and `reopen` can call this too.
 */
export function setTaskStatus(ctx: SandboxContext, task: TaskRec, status: 'OPEN' | 'COMPLETED', userId: number): void {
  if (task.status === status) return;
  const now = timestamp(ctx.now());
  task.status = status;
  task.updatedAt = now;
  if (status === 'OPEN') {
    task.completedAt = null;
    return;
  }
  task.completedAt = now;
  activateNextInTrack(ctx, task);
  if (task.partyId === null && task.kaseId === null && task.opportunityId === null) return;
  ctx.store.entries.insert({
    type: 'task',
    content: task.detail ? `${task.description}\n\n${task.detail}` : task.description,
    subject: null,
    creatorId: userId,
    activityTypeId: null,
    entryAt: now,
    partyId: task.partyId,
    kaseId: task.kaseId,
    opportunityId: task.opportunityId,
    partyIds: [],
    attachments: [],
    participants: [],
    createdAt: now,
    updatedAt: now,
  });
}

/** A pending track task waits for the one before it: completing that one makes it open. */
function activateNextInTrack(ctx: SandboxContext, task: TaskRec): void {
  const track = task.trackId === null ? undefined : ctx.store.tracks.get(task.trackId);
  if (!track) return;
  const nextId = track.taskIds[track.taskIds.indexOf(task.id) + 1];
  const next = nextId === undefined ? undefined : ctx.store.tasks.get(nextId);
  if (next?.status === 'PENDING') {
    next.status = 'OPEN';
    next.updatedAt = task.updatedAt;
  }
}

/** Removes a task and its place in its track. */
export function deleteTask(ctx: SandboxContext, id: number): boolean {
  const task = ctx.store.tasks.get(id);
  if (!task) return false;
  if (task.trackId !== null) {
    const track = ctx.store.tracks.get(task.trackId);
    if (track) track.taskIds = track.taskIds.filter((taskId) => taskId !== id);
  }
  ctx.store.tasks.delete(id);
  return true;
}

// ---------------------------------------------------------------------------------------------
// Reading request bodies

const DATE = /^(\d{4})-(\d{2})-(\d{2})$/;
const TIME = /^([01]\d|2[0-3]):[0-5]\d:[0-5]\d$/;

function isCalendarDate(value: string): boolean {
  const match = DATE.exec(value);
  if (!match) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(Date.UTC(year, month - 1, day));
  return date.getUTCFullYear() === year && date.getUTCMonth() === month - 1 && date.getUTCDate() === day;
}

/** The category named by an id, `{id}` or `{name}` (names match without regard to case). */
function readCategory(ctx: SandboxContext, value: unknown): number | { problem: string } {
  const byId = (id: unknown): number | { problem: string } => {
    if (typeof id !== 'number' || !Number.isSafeInteger(id))
      return { problem: `id must be an integer, got ${describeValue(id)}` };
    return ctx.store.taskCategories.has(id) ? id : { problem: `no task category has id ${id}` };
  };
  if (typeof value === 'number') return byId(value);
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { problem: `must be {"id": ...} or {"name": ...}, got ${describeValue(value)}` };
  }
  const ref = value as { id?: unknown; name?: unknown };
  if (ref.id !== undefined) return byId(ref.id);
  if (typeof ref.name !== 'string' || ref.name.trim() === '') {
    return { problem: `must be {"id": ...} or {"name": ...}, got ${describeValue(value)}` };
  }
  const wanted = ref.name.trim().toLowerCase();
  const found = ctx.store.taskCategories.all().find((c: TaskCategoryRec) => c.name.toLowerCase() === wanted);
  if (found) return found.id;
  const known = ctx.store.taskCategories.all().map((c) => c.name);
  return { problem: `no task category is named ${JSON.stringify(ref.name)}; known: ${known.join(', ')}` };
}

/** The user named by `{id}` or `{username}`. */
function readOwner(ctx: SandboxContext, value: unknown): number | { problem: string } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { problem: `must be {"id": ...} or {"username": ...}, got ${describeValue(value)}` };
  }
  const ref = value as { id?: unknown; username?: unknown };
  if (ref.id !== undefined) {
    if (typeof ref.id !== 'number' || !Number.isSafeInteger(ref.id))
      return { problem: `id must be an integer, got ${describeValue(ref.id)}` };
    return ctx.store.users.has(ref.id) ? ref.id : { problem: `no user has id ${ref.id}` };
  }
  if (typeof ref.username === 'string') {
    const user = ctx.store.users.all().find((u) => u.username === ref.username);
    return user ? user.id : { problem: `no user has username ${JSON.stringify(ref.username)}` };
  }
  return { problem: `must be {"id": ...} or {"username": ...}, got ${describeValue(value)}` };
}

function readRepeat(value: unknown): TaskRec['repeat'] | { problem: string } {
  if (value === null) return null;
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { problem: `must be {"interval", "frequency", "on"} or null, got ${describeValue(value)}` };
  }
  const repeat = value as Record<string, unknown>;
  const extra = Object.keys(repeat).filter((key) => !['interval', 'frequency', 'on'].includes(key));
  if (extra.length > 0) return { problem: `unknown properties ${extra.join(', ')}; expected interval, frequency, on` };
  if (typeof repeat.interval !== 'number' || !Number.isSafeInteger(repeat.interval) || repeat.interval < 1) {
    return { problem: `interval must be a positive integer, got ${describeValue(repeat.interval)}` };
  }
  const frequency = typeof repeat.frequency === 'string' ? repeat.frequency.toUpperCase() : undefined;
  if (!frequency || !(REPEAT_FREQUENCIES as readonly string[]).includes(frequency)) {
    return {
      problem: `frequency must be one of ${REPEAT_FREQUENCIES.join(', ')}, got ${describeValue(repeat.frequency)}`,
    };
  }
  if (repeat.on !== undefined && repeat.on !== null && typeof repeat.on !== 'string') {
    return { problem: `on must be a string or null, got ${describeValue(repeat.on)}` };
  }
  return { interval: repeat.interval, frequency, on: typeof repeat.on === 'string' ? repeat.on : null };
}

const WRITABLE_KEYS = [
  'description',
  'detail',
  'dueOn',
  'dueTime',
  'party',
  'opportunity',
  'kase',
  'owner',
  'category',
  'status',
  'repeat',
];
const READ_ONLY = 'is read-only and cannot be written';
const KEY_NOTES: Record<string, string> = {
  id: READ_ONLY,
  createdAt: READ_ONLY,
  updatedAt: READ_ONLY,
  completedAt: 'is set by the service when the status changes to COMPLETED',
  hasTrack: 'is read-only: tasks join tracks when a track is applied',
  nextTask: READ_ONLY,
};

type TaskChanges = Partial<
  Pick<
    TaskRec,
    | 'description'
    | 'detail'
    | 'dueOn'
    | 'dueTime'
    | 'ownerId'
    | 'categoryId'
    | 'repeat'
    | 'partyId'
    | 'opportunityId'
    | 'kaseId'
  >
> & { status?: 'OPEN' | 'COMPLETED' };

/**
 * Reads a task body into changes, gathering every problem into one 422. `creating` makes
 * `description` and `dueOn` required.
 */
function readTaskBody(ctx: SandboxContext, body: Record<string, unknown>, creating: boolean): TaskChanges {
  const problems: Problem[] = unknownKeyProblems(body, WRITABLE_KEYS, KEY_NOTES);
  const changes: TaskChanges = {};

  if (body.description !== undefined || creating) {
    if (typeof body.description !== 'string' || body.description.trim() === '') {
      problems.push({
        field: 'description',
        message: `is required and must be a non-empty string, got ${describeValue(body.description)}`,
      });
    } else changes.description = body.description;
  }
  if (body.detail !== undefined) {
    if (body.detail !== null && typeof body.detail !== 'string') {
      problems.push({ field: 'detail', message: `must be a string or null, got ${describeValue(body.detail)}` });
    } else changes.detail = body.detail === '' ? null : body.detail;
  }
  if (body.dueOn !== undefined || creating) {
    if (typeof body.dueOn !== 'string' || !isCalendarDate(body.dueOn)) {
      problems.push({
        field: 'dueOn',
        message: `is required and must be a date YYYY-MM-DD, got ${describeValue(body.dueOn)}`,
      });
    } else changes.dueOn = body.dueOn;
  }
  if (body.dueTime !== undefined) {
    if (body.dueTime !== null && (typeof body.dueTime !== 'string' || !TIME.test(body.dueTime))) {
      problems.push({
        field: 'dueTime',
        message: `must be a time of day hh:mm:ss or null, got ${describeValue(body.dueTime)}`,
      });
    } else changes.dueTime = body.dueTime;
  }

  const linkKeys = LINK_KEYS.filter((key) => body[key] !== undefined);
  if (linkKeys.length > 0) {
    // Naming any link replaces the task's link: a task is on at most one record.
    const ids: Record<LinkKey, number | null> = { party: null, opportunity: null, kase: null };
    for (const key of linkKeys) {
      if (body[key] === null) continue;
      const id = readIdRef(body[key]);
      if (typeof id !== 'number') problems.push({ field: key, message: id.problem });
      else if (!linkedRecordExists(ctx, key, id))
        problems.push({ field: `${key}.id`, message: `no ${key} has id ${id}` });
      else ids[key] = id;
    }
    const named = linkKeys.filter((key) => body[key] !== null);
    if (named.length > 1) {
      problems.push({
        field: named[1] as string,
        message: `a task is on at most one record, got ${named.join(' and ')}`,
      });
    }
    changes.partyId = ids.party;
    changes.opportunityId = ids.opportunity;
    changes.kaseId = ids.kase;
  }

  if (body.owner !== undefined) {
    if (body.owner === null)
      problems.push({ field: 'owner', message: 'a task must have an owner; leave owner out to own it yourself' });
    else {
      const id = readOwner(ctx, body.owner);
      if (typeof id === 'number') changes.ownerId = id;
      else problems.push({ field: 'owner', message: id.problem });
    }
  }
  if (body.category !== undefined) {
    if (body.category === null) changes.categoryId = null;
    else {
      const id = readCategory(ctx, body.category);
      if (typeof id === 'number') changes.categoryId = id;
      else problems.push({ field: 'category', message: id.problem });
    }
  }
  if (body.status !== undefined) {
    const status = typeof body.status === 'string' ? body.status.toUpperCase() : undefined;
    if (status === 'OPEN' || status === 'COMPLETED') changes.status = status;
    else if (status === 'PENDING') {
      problems.push({ field: 'status', message: 'PENDING is set by tracks only; write OPEN or COMPLETED' });
    } else problems.push({ field: 'status', message: `must be OPEN or COMPLETED, got ${describeValue(body.status)}` });
  }
  if (body.repeat !== undefined) {
    const repeat = readRepeat(body.repeat);
    if (repeat === null || !('problem' in repeat)) changes.repeat = repeat;
    else problems.push({ field: 'repeat', message: repeat.problem });
  }

  if (problems.length > 0) throw validationError('task', problems);
  return changes;
}

// ---------------------------------------------------------------------------------------------
// Routes

function taskOr404(ctx: SandboxContext, request: FastifyRequest): TaskRec {
  const id = parseId((request.params as { taskId?: string }).taskId, 'task');
  const task = ctx.store.tasks.get(id);
  if (!task) throw notFound(`no task with id ${id}`);
  return task;
}

/** Parses `status` (comma-separated, any case); absent or empty means open tasks only. */
function parseStatusFilter(request: FastifyRequest): Set<TaskRec['status']> {
  const raw = queryOf(request).status;
  const values = (raw ?? '')
    .split(',')
    .map((v) => v.trim().toLowerCase())
    .filter(Boolean);
  if (values.length === 0) return new Set(['OPEN']);
  const statuses = new Set<TaskRec['status']>();
  for (const value of values) {
    const status = STATUS_FILTERS[value];
    if (!status)
      throw badRequest(
        `unknown status ${JSON.stringify(value)}; use a comma-separated list of open, completed, pending`,
      );
    statuses.add(status);
  }
  return statuses;
}

export function registerTaskRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  app.get('/api/v2/tasks', async (request, reply) => {
    const embed = parseEmbed(request, TASK_EMBEDS);
    const statuses = parseStatusFilter(request);
    const tasks = pageOf(ctx.store, request, reply, {
      records: () => ctx.store.tasks.values(),
      matches: (task) => statuses.has(task.status),
      sort: (rows) => rows.sort(byDue),
      key: '',
    });
    return { tasks: tasks.map((task) => serializeTask(ctx, task, embed)) };
  });

  app.get('/api/v2/tasks/:taskId', async (request) => {
    const embed = parseEmbed(request, TASK_EMBEDS);
    return { task: serializeTask(ctx, taskOr404(ctx, request), embed) };
  });

  app.post('/api/v2/tasks', async (request, reply) => {
    const embed = parseEmbed(request, TASK_EMBEDS);
    const changes = readTaskBody(ctx, unwrap(request, 'task'), true);
    const caller = callerOf(request).user;
    const now = timestamp(ctx.now());
    const task = ctx.store.tasks.insert({
      description: changes.description ?? '',
      detail: changes.detail ?? null,
      categoryId: changes.categoryId ?? null,
      status: 'OPEN',
      partyId: changes.partyId ?? null,
      opportunityId: changes.opportunityId ?? null,
      kaseId: changes.kaseId ?? null,
      ownerId: changes.ownerId ?? caller.id,
      dueOn: changes.dueOn ?? null,
      dueTime: changes.dueTime ?? null,
      completedAt: null,
      trackId: null,
      repeat: changes.repeat ?? null,
      createdAt: now,
      updatedAt: now,
    });
    if (changes.status === 'COMPLETED') setTaskStatus(ctx, task, 'COMPLETED', caller.id);
    return created(request, reply, `/tasks/${task.id}`, { task: serializeTask(ctx, task, embed) });
  });

  app.put('/api/v2/tasks/:taskId', async (request) => {
    const embed = parseEmbed(request, TASK_EMBEDS);
    const task = taskOr404(ctx, request);
    const { status, ...changes } = readTaskBody(ctx, unwrap(request, 'task'), false);
    Object.assign(task, changes);
    task.updatedAt = timestamp(ctx.now());
    if (status !== undefined) setTaskStatus(ctx, task, status, callerOf(request).user.id);
    return { task: serializeTask(ctx, task, embed) };
  });

  app.delete('/api/v2/tasks/:taskId', async (request, reply) => {
    deleteTask(ctx, taskOr404(ctx, request).id);
    return reply.code(204).send();
  });

  // Not in the interface spec: the categories task bodies refer to by id or name.
  app.get('/api/v2/categories', async (request, reply) => ({
    categories: paginate(request, reply, ctx.store.taskCategories.all()).map((c) => ({
      id: c.id,
      name: c.name,
      colour: c.colour,
    })),
  }));
}
