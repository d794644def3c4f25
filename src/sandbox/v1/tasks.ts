/** Tasks in the v1 interface: read, list open ones, create on a record or alone, change, complete. */
import type { FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import { notFound, parseId, queryOf, timestamp } from '../http.ts';
import type { TaskRec } from '../model.ts';
import { findRecord, sliceByQuery, userByUsername, v1Location, type V1Kind, type V1Route } from './common.ts';
import { FieldReader, parseMoment } from './input.ts';
import { readBody, sendEmpty, sendNode } from './negotiate.ts';
import { deleteTask, setTaskStatus } from '../routes/tasks.ts';
import { taskNode } from './shapes.ts';
import { listNode, textNode } from './xml.ts';

const WRITABLE = ['description', 'detail', 'category', 'dueDate', 'dueDateTime', 'owner'] as const;
const READ_ONLY = ['id', 'partyId', 'partyName', 'opportunityId', 'opportunityName', 'caseId', 'caseName'] as const;

interface TaskChanges {
  description?: string;
  detail?: string | null;
  categoryId?: number | null;
  due?: { dueOn: string; dueTime: string | null };
  ownerId?: number;
}

function readTask(ctx: SandboxContext, request: FastifyRequest, creating: boolean): TaskChanges {
  const reader = new FieldReader('task', readBody(request, 'task'), WRITABLE, READ_ONLY);
  const changes: TaskChanges = {};
  const description = creating ? reader.requiredText('description') : reader.text('description');
  if (description === null) reader.fail('description', 'cannot be empty');
  else if (description !== undefined) changes.description = description;
  const detail = reader.text('detail');
  if (detail !== undefined) changes.detail = detail;
  const category = reader.text('category');
  if (category === null) changes.categoryId = null;
  else if (category !== undefined) {
    const found = ctx.store.taskCategories.all().find((c) => c.name.toLowerCase() === category.toLowerCase());
    if (found) changes.categoryId = found.id;
    else {
      const known = ctx.store.taskCategories
        .all()
        .map((c) => c.name)
        .join(', ');
      reader.fail('category', `no task category named ${JSON.stringify(category)}; the account has: ${known}`);
    }
  }
  const dueDate = reader.text('dueDate');
  const dueDateTime = reader.text('dueDateTime');
  if (dueDate && dueDateTime) {
    reader.fail('dueDateTime', 'give dueDate (a whole day) or dueDateTime (with a time of day), not both');
  } else if (dueDate) {
    const moment = parseMoment(dueDate);
    if (moment) changes.due = { dueOn: moment.date, dueTime: null };
    else
      reader.fail('dueDate', `must be a date like 2011-09-14 or 2011-09-14T00:00:00Z, got ${JSON.stringify(dueDate)}`);
  } else if (dueDateTime) {
    const moment = parseMoment(dueDateTime);
    if (moment) changes.due = { dueOn: moment.date, dueTime: moment.time ?? '00:00:00' };
    else
      reader.fail('dueDateTime', `must be a timestamp like 2011-09-14T15:22:01Z, got ${JSON.stringify(dueDateTime)}`);
  } else if (creating || dueDate === null || dueDateTime === null) {
    reader.fail('dueDate', 'a task needs dueDate or dueDateTime');
  }
  const owner = reader.text('owner');
  if (owner === null) reader.fail('owner', 'a task needs an owner; give a username');
  else if (owner !== undefined) {
    const user = userByUsername(ctx, owner);
    if (user) changes.ownerId = user.id;
    else reader.fail('owner', `no user with username ${JSON.stringify(owner)}`);
  }
  reader.check();
  return changes;
}

function applyTaskChanges(task: TaskRec, changes: TaskChanges): void {
  if (changes.description !== undefined) task.description = changes.description;
  if (changes.detail !== undefined) task.detail = changes.detail;
  if (changes.categoryId !== undefined) task.categoryId = changes.categoryId;
  if (changes.due) {
    task.dueOn = changes.due.dueOn;
    task.dueTime = changes.due.dueTime;
  }
  if (changes.ownerId !== undefined) task.ownerId = changes.ownerId;
}

/** Earliest due first; tasks without a due date last; then in order of creation. */
function byDue(a: TaskRec, b: TaskRec): number {
  const key = (t: TaskRec): string => (t.dueOn === null ? '9999-12-31T99' : `${t.dueOn}T${t.dueTime ?? '00:00:00'}`);
  return key(a).localeCompare(key(b)) || a.id - b.id;
}

/** Task routes: `/api/task...`, `/api/tasks` and task creation on a party, opportunity or case. */
export function registerTaskRoutes(route: V1Route, ctx: SandboxContext): void {
  const { store } = ctx;
  const findTask = (request: FastifyRequest): TaskRec => {
    const id = parseId((request.params as { id?: string }).id, 'task');
    const task = store.tasks.get(id);
    if (!task) throw notFound(`no task with id ${id}`);
    return task;
  };

  route('GET', '/api/task/categories', (request, reply) => {
    const names = store.taskCategories.all().map((c) => textNode('taskCategory', c.name));
    return sendNode(request, reply, listNode('taskCategories', ['taskCategory'], names));
  });

  route('GET', '/api/task/:id', (request, reply) => sendNode(request, reply, taskNode(ctx, findTask(request))));

  route('GET', '/api/tasks', (request, reply) => {
    const query = queryOf(request);
    let tasks = store.tasks.all().filter((t) => t.status === 'OPEN');
    if (query.category) {
      const wanted = query.category.toLowerCase();
      tasks = tasks.filter(
        (t) => t.categoryId !== null && store.taskCategories.get(t.categoryId)?.name.toLowerCase() === wanted,
      );
    }
    if (query.user) {
      const owner = userByUsername(ctx, query.user);
      tasks = owner ? tasks.filter((t) => t.ownerId === owner.id) : [];
    }
    const items = sliceByQuery(request, tasks.sort(byDue)).map((t) => taskNode(ctx, t));
    return sendNode(request, reply, listNode('tasks', ['task'], items));
  });

  const create = (request: FastifyRequest, link: { kind: V1Kind; id: number } | null): TaskRec => {
    const changes = readTask(ctx, request, true);
    const caller = callerOf(request).user;
    const at = timestamp(ctx.now());
    const task = store.tasks.insert({
      description: '',
      detail: null,
      categoryId: null,
      status: 'OPEN',
      partyId: link?.kind === 'party' ? link.id : null,
      opportunityId: link?.kind === 'opportunity' ? link.id : null,
      kaseId: link?.kind === 'kase' ? link.id : null,
      ownerId: caller.id,
      dueOn: null,
      dueTime: null,
      completedAt: null,
      trackId: null,
      repeat: null,
      createdAt: at,
      updatedAt: at,
    });
    applyTaskChanges(task, changes);
    return task;
  };

  route('POST', '/api/task', (request, reply) => {
    const task = create(request, null);
    return sendEmpty(reply, 201, v1Location(request, `/task/${task.id}`));
  });
  for (const kind of ['party', 'opportunity', 'kase'] as const) {
    route('POST', `/api/${kind}/:id/task`, (request, reply) => {
      const record = findRecord(ctx, request, kind, (request.params as { id?: string }).id);
      const task = create(request, { kind, id: record.id });
      return sendEmpty(reply, 201, v1Location(request, `/task/${task.id}`));
    });
  }

  route('PUT', '/api/task/:id', (request, reply) => {
    const task = findTask(request);
    applyTaskChanges(task, readTask(ctx, request, false));
    task.updatedAt = timestamp(ctx.now());
    return sendNode(request, reply, taskNode(ctx, task));
  });

  // Deleting, completing and reopening go through the v2 task logic, so that both views agree:
  // a track forgets its deleted task, and completing opens the next task of a track and files
  // the completed-task entry.
  route('DELETE', '/api/task/:id', (request, reply) => {
    deleteTask(ctx, findTask(request).id);
    return sendEmpty(reply);
  });

  route('POST', '/api/task/:id/complete', (request, reply) => {
    setTaskStatus(ctx, findTask(request), 'COMPLETED', callerOf(request).user.id);
    return sendEmpty(reply);
  });

  route('POST', '/api/task/:id/reopen', (request, reply) => {
    setTaskStatus(ctx, findTask(request), 'OPEN', callerOf(request).user.id);
    return sendEmpty(reply);
  });
}
