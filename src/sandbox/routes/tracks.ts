/**
 * Tracks (spec 4.7) and track definitions (spec 4.8).
 *
 * Choices where the interface leaves things open:
 * - a definition's `captureRule` (PARTY, OPPORTUNITY, KASE) names the kind of record it can be
 *   applied to; applying it to another kind is a 422, as is an unknown definition or target;
 * - a task definition category given as {name} must name an existing task category (no silent
 *   creation, so a typo does not add a category);
 * - moving a track's `trackDateOn` moves the due dates of its open tasks by the same number of days.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import {
  badRequest,
  created,
  notFound,
  paginate,
  parseEmbed,
  parseId,
  queryOf,
  timestamp,
  unwrap,
  validationError,
} from '../http.ts';
import type { EntityKind, TaskDefinitionRec, TaskRec, TrackDefinitionRec, TrackRec } from '../model.ts';

export interface ApplyTrackInput {
  definitionId: number;
  /** The record the track is applied to: exactly one of these. */
  target: { partyId?: number; opportunityId?: number; kaseId?: number };
  /** Start date of the track, `YYYY-MM-DD`; defaults to today. */
  trackDateOn?: string;
  description?: string;
  /**
   * Owner of the tasks when the target record has no owner (the caller, usually).
   * @default null
   */
  fallbackOwnerId?: number | null;
}

type Problem = { field: string; message: string };

/** Which kind of record each capture rule applies to. */
const CAPTURE_RULES: Record<string, EntityKind> = { PARTY: 'parties', OPPORTUNITY: 'opportunities', KASE: 'kases' };
const DAYS_AFTER_RULES = ['TRACK_START', 'LAST_TASK'] as const;
const DAY_DELAY_RULES = ['TRACK_DAYS', 'TRACK_WORKDAYS', 'TRACK_WEEKS'] as const;
// Only forward scheduling from the start date and the record's owner as assignee can be modelled.
const DIRECTIONS = ['START_DATE'];
const ASSIGNEE_TYPES = ['ENTITY_OWNER'];
const ECHOED = new Set(['id', 'createdAt', 'updatedAt']);
const DATE = /^\d{4}-\d{2}-\d{2}$/;

function isDate(value: unknown): value is string {
  if (typeof value !== 'string' || !DATE.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().startsWith(value);
}

function addDays(date: string, days: number): string {
  const d = new Date(`${date}T00:00:00Z`);
  d.setUTCDate(d.getUTCDate() + days);
  return d.toISOString().slice(0, 10);
}

/** Counts `count` working days (Monday to Friday) forward from `date`. */
function addWorkdays(date: string, count: number): string {
  let current = date;
  let left = count;
  while (left > 0) {
    current = addDays(current, 1);
    const weekday = new Date(`${current}T00:00:00Z`).getUTCDay();
    if (weekday !== 0 && weekday !== 6) left -= 1;
  }
  return current;
}

/** The due dates of a definition's tasks for a track starting on `start`, in display order. */
export function scheduleTasks(
  definitions: readonly TaskDefinitionRec[],
  start: string,
): Array<{ definition: TaskDefinitionRec; dueOn: string }> {
  const ordered = [...definitions].sort((a, b) => a.displayOrder - b.displayOrder || a.id - b.id);
  const result: Array<{ definition: TaskDefinitionRec; dueOn: string }> = [];
  let previous = start;
  for (const definition of ordered) {
    const base = definition.daysAfterRule === 'LAST_TASK' ? previous : start;
    let dueOn: string;
    if (definition.dayDelayRule === 'TRACK_WORKDAYS') dueOn = addWorkdays(base, definition.daysAfter);
    else if (definition.dayDelayRule === 'TRACK_WEEKS') dueOn = addDays(base, definition.daysAfter * 7);
    else dueOn = addDays(base, definition.daysAfter);
    result.push({ definition, dueOn });
    previous = dueOn;
  }
  return result;
}

function targetOf(
  ctx: SandboxContext,
  target: ApplyTrackInput['target'],
): { kind: EntityKind; id: number; ownerId: number | null } | Problem {
  const given = (['partyId', 'opportunityId', 'kaseId'] as const).filter((key) => target[key] !== undefined);
  if (given.length !== 1) {
    return {
      field: 'kase',
      message: 'exactly one of kase, opportunity or party must name the record the track is applied to',
    };
  }
  const key = given[0] as 'partyId' | 'opportunityId' | 'kaseId';
  const id = target[key] as number;
  const kind: EntityKind = key === 'partyId' ? 'parties' : key === 'opportunityId' ? 'opportunities' : 'kases';
  const field = key === 'partyId' ? 'party' : key === 'opportunityId' ? 'opportunity' : 'kase';
  const record = ctx.store[kind].get(id);
  if (!record) return { field, message: `no ${field} with id ${id}` };
  return { kind, id, ownerId: record.ownerId };
}

/**
 * Applies a track definition to a record: stores the track and creates its tasks. Used by
 * POST /tracks and by the `tracks[]` shortcut on project and opportunity create. Throws an
 * HttpError (422) when the definition or the target does not exist, when the definition is for
 * another kind of record, or when `trackDateOn` is not a date. Nothing is stored when it throws.
 */
export function applyTrack(ctx: SandboxContext, input: ApplyTrackInput): TrackRec {
  const store = ctx.store;
  const definition = store.trackDefinitions.get(input.definitionId);
  if (!definition)
    throw validationError('track', [
      { field: 'definition', message: `no track definition with id ${input.definitionId}` },
    ]);
  const target = targetOf(ctx, input.target);
  if ('field' in target) throw validationError('track', [target]);
  const expected = CAPTURE_RULES[definition.captureRule];
  if (expected !== target.kind) {
    throw validationError('track', [
      {
        field: 'definition',
        message: `track definition ${definition.id} applies to ${expected ?? definition.captureRule}, not to ${target.kind}`,
      },
    ]);
  }
  const trackDateOn = input.trackDateOn ?? timestamp(ctx.now()).slice(0, 10);
  if (!isDate(trackDateOn))
    throw validationError('track', [
      { field: 'trackDateOn', message: `must be a date YYYY-MM-DD, got ${JSON.stringify(trackDateOn)}` },
    ]);

  const at = timestamp(ctx.now());
  const link = {
    partyId: target.kind === 'parties' ? target.id : null,
    opportunityId: target.kind === 'opportunities' ? target.id : null,
    kaseId: target.kind === 'kases' ? target.id : null,
  };
  const track = store.tracks.insert({
    description: input.description ?? definition.description,
    direction: definition.direction,
    trackDateOn,
    definitionId: definition.id,
    ...link,
    taskIds: [],
    createdAt: at,
    updatedAt: at,
  });
  let first = true;
  for (const { definition: taskDefinition, dueOn } of scheduleTasks(definition.taskDefinitions, trackDateOn)) {
    // A task counted from the previous one waits (PENDING) until that one is completed.
    const status = !first && taskDefinition.daysAfterRule === 'LAST_TASK' ? 'PENDING' : 'OPEN';
    first = false;
    const task = store.tasks.insert({
      description: taskDefinition.description,
      detail: null,
      categoryId:
        taskDefinition.categoryId !== null && store.taskCategories.has(taskDefinition.categoryId)
          ? taskDefinition.categoryId
          : null,
      status,
      ...link,
      ownerId: target.ownerId ?? input.fallbackOwnerId ?? null,
      dueOn,
      dueTime: null,
      completedAt: null,
      trackId: track.id,
      repeat: null,
      createdAt: at,
      updatedAt: at,
    });
    track.taskIds.push(task.id);
  }
  return track;
}

function trackJson(ctx: SandboxContext, track: TrackRec, embed: Set<string>): Record<string, unknown> {
  const json: Record<string, unknown> = {
    id: track.id,
    description: track.description,
    direction: track.direction,
    trackDateOn: track.trackDateOn,
  };
  if (embed.has('task')) {
    json.tasks = tasksOfTrack(ctx, track).map((task) => ({ id: task.id, description: task.description }));
  }
  return json;
}

function tasksOfTrack(ctx: SandboxContext, track: TrackRec): TaskRec[] {
  return ctx.store.tasks.all().filter((task) => task.trackId === track.id);
}

function categoryJson(ctx: SandboxContext, id: number | null): Record<string, unknown> | null {
  if (id === null) return null;
  const category = ctx.store.taskCategories.get(id);
  return category ? { id: category.id, name: category.name, colour: category.colour } : null;
}

function definitionJson(ctx: SandboxContext, definition: TrackDefinitionRec): Record<string, unknown> {
  return {
    id: definition.id,
    description: definition.description,
    tag: definition.tag,
    captureRule: definition.captureRule,
    direction: definition.direction,
    createdAt: definition.createdAt,
    updatedAt: definition.updatedAt,
    taskDefinitions: [...definition.taskDefinitions]
      .sort((a, b) => a.displayOrder - b.displayOrder || a.id - b.id)
      .map((t) => ({
        id: t.id,
        description: t.description,
        daysAfterRule: t.daysAfterRule,
        daysAfter: t.daysAfter,
        displayOrder: t.displayOrder,
        dayDelayRule: t.dayDelayRule,
        trackTaskAssignee: { assigneeType: t.assigneeType },
        category: categoryJson(ctx, t.categoryId),
      })),
  };
}

/** A reference given as an integer id or as {id}; undefined when it is neither. */
function refId(value: unknown): number | undefined {
  const id =
    value !== null && typeof value === 'object' && !Array.isArray(value)
      ? (value as Record<string, unknown>).id
      : value;
  return typeof id === 'number' && Number.isInteger(id) && id > 0 ? id : undefined;
}

function unknownKeys(body: Record<string, unknown>, allowed: readonly string[], prefix = ''): Problem[] {
  return Object.keys(body)
    .filter((key) => !allowed.includes(key) && !ECHOED.has(key))
    .map((key) => ({ field: `${prefix}${key}`, message: 'is not a property that can be written' }));
}

function readString(
  body: Record<string, unknown>,
  key: string,
  problems: Problem[],
  field = key,
  required = false,
): string | undefined {
  const value = body[key];
  if (value === undefined) {
    if (required) problems.push({ field, message: 'is required' });
    return undefined;
  }
  if (typeof value !== 'string' || (required && value.trim() === '')) {
    problems.push({ field, message: `must be a non-empty string, got ${JSON.stringify(value)}` });
    return undefined;
  }
  return value;
}

function readChoice<T extends string>(
  body: Record<string, unknown>,
  key: string,
  choices: readonly T[],
  problems: Problem[],
  field = key,
): T | undefined {
  const value = body[key];
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || !choices.includes(value as T)) {
    problems.push({ field, message: `must be one of ${choices.join(', ')}, got ${JSON.stringify(value)}` });
    return undefined;
  }
  return value as T;
}

/** Reads a task definition category: an id, {id} or {name} of an existing task category, or null. */
function readCategory(
  ctx: SandboxContext,
  value: unknown,
  field: string,
  problems: Problem[],
): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  const id = refId(value);
  if (id !== undefined) {
    if (ctx.store.taskCategories.has(id)) return id;
    problems.push({ field, message: `no task category with id ${id}` });
    return undefined;
  }
  const name = typeof value === 'object' && !Array.isArray(value) ? (value as Record<string, unknown>).name : undefined;
  if (typeof name === 'string' && name.trim() !== '') {
    const wanted = name.trim().toLowerCase();
    const found = ctx.store.taskCategories.all().find((c) => c.name.toLowerCase() === wanted);
    if (found) return found.id;
    problems.push({ field, message: `no task category named ${JSON.stringify(name)}` });
    return undefined;
  }
  problems.push({
    field,
    message: `must be a category id, {"id": ...} or {"name": ...}, got ${JSON.stringify(value)}`,
  });
  return undefined;
}

const TASK_DEFINITION_KEYS = [
  'description',
  'daysAfterRule',
  'daysAfter',
  'displayOrder',
  'dayDelayRule',
  'trackTaskAssignee',
  'category',
  '_delete',
];

/** The writable attributes of one task definition element; `creating` demands a description. */
function readTaskDefinition(
  ctx: SandboxContext,
  body: Record<string, unknown>,
  index: number,
  creating: boolean,
  problems: Problem[],
): Partial<Omit<TaskDefinitionRec, 'id'>> {
  const at = `taskDefinitions[${index}].`;
  problems.push(...unknownKeys(body, TASK_DEFINITION_KEYS, at));
  const result: Partial<Omit<TaskDefinitionRec, 'id'>> = {};
  const description = readString(
    body,
    'description',
    problems,
    `${at}description`,
    creating || body.description !== undefined,
  );
  if (description !== undefined) result.description = description;
  const daysAfterRule = readChoice(body, 'daysAfterRule', DAYS_AFTER_RULES, problems, `${at}daysAfterRule`);
  if (daysAfterRule) result.daysAfterRule = daysAfterRule;
  const dayDelayRule = readChoice(body, 'dayDelayRule', DAY_DELAY_RULES, problems, `${at}dayDelayRule`);
  if (dayDelayRule) result.dayDelayRule = dayDelayRule;
  for (const key of ['daysAfter', 'displayOrder'] as const) {
    const value = body[key];
    if (value === undefined) continue;
    if (typeof value === 'number' && Number.isInteger(value) && value >= 0 && value <= 3650) result[key] = value;
    else
      problems.push({
        field: `${at}${key}`,
        message: `must be an integer from 0 to 3650, got ${JSON.stringify(value)}`,
      });
  }
  const assignee = body.trackTaskAssignee;
  if (assignee !== undefined) {
    const type =
      assignee !== null && typeof assignee === 'object'
        ? (assignee as Record<string, unknown>).assigneeType
        : undefined;
    if (typeof type === 'string' && ASSIGNEE_TYPES.includes(type)) result.assigneeType = type;
    else
      problems.push({
        field: `${at}trackTaskAssignee`,
        message: `must be {"assigneeType": "ENTITY_OWNER"}, got ${JSON.stringify(assignee)}`,
      });
  }
  const category = readCategory(ctx, body.category, `${at}category`, problems);
  if (category !== undefined) result.categoryId = category;
  return result;
}

function elementsOf(value: unknown, problems: Problem[]): Array<Record<string, unknown>> {
  if (value === undefined) return [];
  if (!Array.isArray(value)) {
    problems.push({ field: 'taskDefinitions', message: 'must be an array' });
    return [];
  }
  return value.flatMap((element, index) => {
    if (element !== null && typeof element === 'object' && !Array.isArray(element))
      return [element as Record<string, unknown>];
    problems.push({ field: `taskDefinitions[${index}]`, message: 'must be an object' });
    return [];
  });
}

function trackOr404(ctx: SandboxContext, raw: string | undefined): TrackRec {
  const id = parseId(raw, 'track');
  const track = ctx.store.tracks.get(id);
  if (!track) throw notFound(`no track with id ${id}`);
  return track;
}

function definitionOr404(ctx: SandboxContext, raw: string | undefined): TrackDefinitionRec {
  const id = parseId(raw, 'track definition');
  const definition = ctx.store.trackDefinitions.get(id);
  if (!definition) throw notFound(`no track definition with id ${id}`);
  return definition;
}

function deleteTrack(ctx: SandboxContext, track: TrackRec): void {
  for (const task of tasksOfTrack(ctx, track)) ctx.store.tasks.delete(task.id);
  ctx.store.tracks.delete(track.id);
}

const ENTITY_FIELDS: Record<EntityKind, keyof Pick<TrackRec, 'partyId' | 'opportunityId' | 'kaseId'>> = {
  parties: 'partyId',
  opportunities: 'opportunityId',
  kases: 'kaseId',
};

/** Registers the track and track definition routes. */
export function registerTrackRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const store = ctx.store;
  const embedOf = (request: FastifyRequest): Set<string> => parseEmbed(request, ['task']);

  for (const kind of ['parties', 'opportunities', 'kases'] as const) {
    app.get(`/api/v2/${kind}/:entityId/tracks`, async (request, reply) => {
      const id = parseId((request.params as { entityId: string }).entityId);
      if (!store[kind].has(id))
        throw notFound(`no ${kind === 'parties' ? 'party' : kind === 'kases' ? 'kase' : 'opportunity'} with id ${id}`);
      const embed = embedOf(request);
      const rows = store.tracks.all().filter((t) => t[ENTITY_FIELDS[kind]] === id);
      return { tracks: paginate(request, reply, rows).map((t) => trackJson(ctx, t, embed)) };
    });
  }

  app.get('/api/v2/tracks/:trackId', async (request) => {
    const embed = embedOf(request);
    return { track: trackJson(ctx, trackOr404(ctx, (request.params as { trackId: string }).trackId), embed) };
  });

  app.post('/api/v2/tracks', async (request, reply) => {
    const embed = embedOf(request);
    const body = unwrap(request, 'track');
    const problems = unknownKeys(body, ['description', 'trackDateOn', 'definition', 'kase', 'opportunity', 'party']);
    const description = readString(body, 'description', problems, 'description', body.description !== undefined);
    if (body.trackDateOn !== undefined && !isDate(body.trackDateOn)) {
      problems.push({
        field: 'trackDateOn',
        message: `must be a date YYYY-MM-DD, got ${JSON.stringify(body.trackDateOn)}`,
      });
    }
    const definitionId = refId(body.definition);
    if (definitionId === undefined)
      problems.push({
        field: 'definition',
        message: `must be a track definition id or {"id": ...}, got ${JSON.stringify(body.definition ?? null)}`,
      });
    const target: ApplyTrackInput['target'] = {};
    for (const [key, into] of [
      ['party', 'partyId'],
      ['opportunity', 'opportunityId'],
      ['kase', 'kaseId'],
    ] as const) {
      if (body[key] === undefined) continue;
      const id = refId(body[key]);
      if (id === undefined)
        problems.push({ field: key, message: `must be an id or {"id": ...}, got ${JSON.stringify(body[key])}` });
      else target[into] = id;
    }
    if (problems.length > 0 || definitionId === undefined) throw validationError('track', problems);
    const track = applyTrack(ctx, {
      definitionId,
      target,
      ...(typeof body.trackDateOn === 'string' ? { trackDateOn: body.trackDateOn } : {}),
      ...(description !== undefined ? { description } : {}),
      fallbackOwnerId: callerOf(request).user.id,
    });
    return created(request, reply, `/tracks/${track.id}`, { track: trackJson(ctx, track, embed) });
  });

  app.put('/api/v2/tracks/:trackId', async (request) => {
    const embed = embedOf(request);
    const track = trackOr404(ctx, (request.params as { trackId: string }).trackId);
    const body = unwrap(request, 'track');
    const problems = Object.keys(body)
      .filter(
        (key) =>
          key !== 'description' && key !== 'trackDateOn' && !ECHOED.has(key) && key !== 'direction' && key !== 'tasks',
      )
      .map((field) => ({ field, message: 'cannot be changed; only description and trackDateOn can' }));
    const description = readString(body, 'description', problems, 'description', body.description !== undefined);
    if (body.trackDateOn !== undefined && !isDate(body.trackDateOn)) {
      problems.push({
        field: 'trackDateOn',
        message: `must be a date YYYY-MM-DD, got ${JSON.stringify(body.trackDateOn)}`,
      });
    }
    if (problems.length > 0) throw validationError('track', problems);
    const at = timestamp(ctx.now());
    if (description !== undefined) track.description = description;
    if (typeof body.trackDateOn === 'string' && body.trackDateOn !== track.trackDateOn) {
      const shift = Math.round(
        (Date.parse(`${body.trackDateOn}T00:00:00Z`) - Date.parse(`${track.trackDateOn}T00:00:00Z`)) / 86_400_000,
      );
      for (const task of tasksOfTrack(ctx, track)) {
        if (task.status === 'OPEN' && task.dueOn !== null) {
          task.dueOn = addDays(task.dueOn, shift);
          task.updatedAt = at;
        }
      }
      track.trackDateOn = body.trackDateOn;
    }
    track.updatedAt = at;
    return { track: trackJson(ctx, track, embed) };
  });

  app.delete('/api/v2/tracks/:trackId', async (request, reply) => {
    deleteTrack(ctx, trackOr404(ctx, (request.params as { trackId: string }).trackId));
    return reply.code(204).send();
  });

  app.get('/api/v2/trackdefinitions', async (request, reply) => {
    const type = queryOf(request).type ?? 'all';
    if (!['all', 'parties', 'opportunities', 'kases'].includes(type)) {
      throw badRequest(`type must be one of all, parties, opportunities, kases, got ${JSON.stringify(type)}`);
    }
    const rows = store.trackDefinitions.all().filter((d) => type === 'all' || CAPTURE_RULES[d.captureRule] === type);
    return { trackDefinitions: paginate(request, reply, rows).map((d) => definitionJson(ctx, d)) };
  });

  app.get('/api/v2/trackdefinitions/:definitionId', async (request) => {
    return {
      trackDefinition: definitionJson(
        ctx,
        definitionOr404(ctx, (request.params as { definitionId: string }).definitionId),
      ),
    };
  });

  const DEFINITION_KEYS = ['description', 'captureRule', 'direction', 'tag', 'taskDefinitions'];

  /** Reads the top-level attributes of a definition body; `creating` demands description and captureRule. */
  const readDefinition = (
    body: Record<string, unknown>,
    creating: boolean,
    problems: Problem[],
  ): Partial<Omit<TrackDefinitionRec, 'id' | 'taskDefinitions'>> => {
    problems.push(...unknownKeys(body, DEFINITION_KEYS));
    const result: Partial<Omit<TrackDefinitionRec, 'id' | 'taskDefinitions'>> = {};
    const description = readString(
      body,
      'description',
      problems,
      'description',
      creating || body.description !== undefined,
    );
    if (description !== undefined) result.description = description.trim();
    if (creating && body.captureRule === undefined)
      problems.push({ field: 'captureRule', message: `is required: one of ${Object.keys(CAPTURE_RULES).join(', ')}` });
    const captureRule = readChoice(body, 'captureRule', Object.keys(CAPTURE_RULES), problems);
    if (captureRule) result.captureRule = captureRule;
    const direction = readChoice(body, 'direction', DIRECTIONS, problems);
    if (direction) result.direction = direction;
    if (body.tag !== undefined) {
      if (typeof body.tag === 'string') result.tag = body.tag;
      else problems.push({ field: 'tag', message: `must be a string, got ${JSON.stringify(body.tag)}` });
    }
    return result;
  };

  const newTaskDefinition = (
    attributes: Partial<Omit<TaskDefinitionRec, 'id'>>,
    displayOrder: number,
  ): TaskDefinitionRec => ({
    id: store.next(),
    description: attributes.description ?? '',
    daysAfterRule: attributes.daysAfterRule ?? 'TRACK_START',
    daysAfter: attributes.daysAfter ?? 0,
    displayOrder: attributes.displayOrder ?? displayOrder,
    dayDelayRule: attributes.dayDelayRule ?? 'TRACK_DAYS',
    assigneeType: attributes.assigneeType ?? 'ENTITY_OWNER',
    categoryId: attributes.categoryId ?? null,
  });

  app.post('/api/v2/trackdefinitions', async (request, reply) => {
    const body = unwrap(request, 'trackDefinition');
    const problems: Problem[] = [];
    const attributes = readDefinition(body, true, problems);
    const elements = elementsOf(body.taskDefinitions, problems);
    const tasks = elements.map((element, index) => {
      if (element.id !== undefined || element._delete !== undefined) {
        problems.push({
          field: `taskDefinitions[${index}]`,
          message: 'a new track definition takes task definitions without id or _delete',
        });
      }
      return readTaskDefinition(ctx, element, index, true, problems);
    });
    if (problems.length > 0) throw validationError('trackDefinition', problems);
    const at = timestamp(ctx.now());
    const definition = store.trackDefinitions.insert({
      description: attributes.description ?? '',
      tag: attributes.tag ?? '',
      captureRule: attributes.captureRule ?? 'OPPORTUNITY',
      direction: attributes.direction ?? 'START_DATE',
      taskDefinitions: tasks.map((t, index) => newTaskDefinition(t, index)),
      createdAt: at,
      updatedAt: at,
    });
    return created(request, reply, `/trackdefinitions/${definition.id}`, {
      trackDefinition: definitionJson(ctx, definition),
    });
  });

  app.put('/api/v2/trackdefinitions/:definitionId', async (request) => {
    const definition = definitionOr404(ctx, (request.params as { definitionId: string }).definitionId);
    const body = unwrap(request, 'trackDefinition');
    const problems: Problem[] = [];
    const attributes = readDefinition(body, false, problems);
    // Work on a copy so that a 422 leaves the stored definition as it was.
    let next = definition.taskDefinitions.map((t) => ({ ...t }));
    const added: Array<Partial<Omit<TaskDefinitionRec, 'id'>>> = [];
    elementsOf(body.taskDefinitions, problems).forEach((element, index) => {
      if (element.id === undefined) {
        if (element._delete !== undefined)
          problems.push({
            field: `taskDefinitions[${index}]._delete`,
            message: 'needs the id of the task definition to delete',
          });
        added.push(readTaskDefinition(ctx, element, index, true, problems));
        return;
      }
      const existing = next.find((t) => t.id === element.id);
      if (!existing) {
        problems.push({
          field: `taskDefinitions[${index}].id`,
          message: `track definition ${definition.id} has no task definition with id ${JSON.stringify(element.id)}`,
        });
        return;
      }
      if (element._delete !== undefined && element._delete !== false) {
        if (element._delete !== true)
          problems.push({ field: `taskDefinitions[${index}]._delete`, message: 'must be true or false' });
        else next = next.filter((t) => t.id !== existing.id);
        return;
      }
      Object.assign(existing, readTaskDefinition(ctx, element, index, false, problems));
    });
    if (problems.length > 0) throw validationError('trackDefinition', problems);
    const order = next.reduce((max, t) => Math.max(max, t.displayOrder + 1), 0);
    next.push(...added.map((t, index) => newTaskDefinition(t, order + index)));
    Object.assign(definition, attributes);
    definition.taskDefinitions = next;
    definition.updatedAt = timestamp(ctx.now());
    return { trackDefinition: definitionJson(ctx, definition) };
  });

  app.delete('/api/v2/trackdefinitions/:definitionId', async (request, reply) => {
    const definition = definitionOr404(ctx, (request.params as { definitionId: string }).definitionId);
    // Tracks already applied keep their tasks; they only lose the link to where they came from.
    store.trackDefinitions.delete(definition.id);
    return reply.code(204).send();
  });
}
