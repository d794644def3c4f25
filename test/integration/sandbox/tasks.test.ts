import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { KaseRec, PartyRec, TaskRec } from '../../../src/sandbox/index.ts';
import { addKase as addStoredKase, addParty as addStoredParty, addTask } from '../../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

const START = Date.parse('2025-03-01T10:00:00Z');

// Parties and projects have their own route modules; these tests put records into the store
// directly so they depend on nothing but the task routes.
// Records put straight into the store: no owner, dated 2025-01-01, which these tests rely on.
const STORED = { ownerId: null, createdAt: '2025-01-01T00:00:00Z', updatedAt: '2025-01-01T00:00:00Z' };

function addParty(sandbox: TestSandbox, lastName: string): PartyRec {
  return addStoredParty(sandbox.store, { ...STORED, firstName: 'Tess', lastName });
}

function addKase(sandbox: TestSandbox, partyId: number, name: string): KaseRec {
  return addStoredKase(sandbox.store, partyId, { ...STORED, name });
}

function addStoredTask(sandbox: TestSandbox, fields: Partial<TaskRec>): TaskRec {
  return addTask(sandbox.store, { ...STORED, description: 'stored', dueOn: '2025-04-01', ...fields });
}

function fieldsOf(body: { errors?: Array<{ field: string }> }): string[] {
  return (body.errors ?? []).map((e) => e.field);
}

function ids(body: { tasks: Array<{ id: number }> }): number[] {
  return body.tasks.map((t) => t.id);
}

describe('spec 4.5 tasks: create and read', () => {
  let sandbox: TestSandbox;
  let party: PartyRec;
  let kase: KaseRec;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ now: () => new Date(START) });
    party = addParty(sandbox, 'Tasker');
    kase = addKase(sandbox, party.id, 'Migration');
  });
  afterAll(() => sandbox.close());

  it('creates a minimal task owned by the caller: 201, Location, upper-case status', async () => {
    const answer = await sandbox.v2('POST', '/tasks', { task: { description: 'Call back', dueOn: '2025-03-05' } });
    expect(answer.status).toBe(201);
    const task = answer.body.task;
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/tasks/${task.id}`);
    expect(task).toEqual({
      id: expect.any(Number),
      description: 'Call back',
      detail: null,
      category: null,
      status: 'OPEN',
      owner: {
        id: expect.any(Number),
        username: 'admin',
        name: 'Alex Admin',
        pictureURL: expect.stringMatching(/^https:\/\//),
        deleted: false,
      },
      dueOn: '2025-03-05',
      createdAt: '2025-03-01T10:00:00Z',
      updatedAt: '2025-03-01T10:00:00Z',
      completedAt: null,
      hasTrack: false,
      active: true,
      taskDayDelayRule: null,
    });
    const read = await sandbox.v2('GET', `/tasks/${task.id}`);
    expect(read.status).toBe(200);
    expect(read.body.task).toEqual(task);
  });

  it('creates a task with time, link, owner by username, category by name and repeat', async () => {
    const answer = await sandbox.v2('POST', '/tasks', {
      task: {
        description: 'Monthly review',
        detail: 'Bring the figures',
        dueOn: '2025-03-31',
        dueTime: '14:30:00',
        party: { id: party.id },
        owner: { username: 'sam' },
        category: { name: 'follow-up' },
        repeat: { interval: 1, frequency: 'MONTHLY', on: 'last day' },
      },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.task).toMatchObject({
      detail: 'Bring the figures',
      dueTime: '14:30:00',
      party: { id: party.id, type: 'person', lastName: 'Tasker' },
      owner: { username: 'sam', name: 'Sam Seller' },
      category: { name: 'Follow-up', colour: '#f2994a' },
      repeat: { interval: 1, frequency: 'MONTHLY', on: 'last day' },
    });
    expect(answer.body.task).not.toHaveProperty('kase');

    const byIds = await sandbox.v2('POST', '/tasks', {
      task: {
        description: 'Kickoff',
        dueOn: '2025-03-02',
        kase: { id: kase.id },
        owner: { id: answer.body.task.owner.id },
        category: { id: answer.body.task.category.id },
      },
    });
    expect(byIds.body.task).toMatchObject({
      kase: { id: kase.id, name: 'Migration' },
      owner: { username: 'sam' },
      category: { name: 'Follow-up' },
    });
  });

  it('refuses invalid task bodies with 422 naming each field', async () => {
    const ok = { description: 'x', dueOn: '2025-03-05' };
    const cases: Array<[unknown, string[]]> = [
      [{ dueOn: '2025-03-05' }, ['description']],
      [{ description: '  ', dueOn: '2025-03-05' }, ['description']],
      [{ description: 'x' }, ['dueOn']],
      [{ description: 'x', dueOn: '2025-02-30' }, ['dueOn']],
      [{ description: 'x', dueOn: '05/03/2025' }, ['dueOn']],
      [{ ...ok, dueTime: '25:00:00' }, ['dueTime']],
      [{ ...ok, dueTime: '14:30' }, ['dueTime']],
      [{ ...ok, party: { id: party.id }, kase: { id: kase.id } }, ['kase']],
      [{ ...ok, party: { id: 999999 } }, ['party.id']],
      [{ ...ok, opportunity: 'big' }, ['opportunity']],
      [{ ...ok, owner: { username: 'nobody' } }, ['owner']],
      [{ ...ok, owner: null }, ['owner']],
      [{ ...ok, category: { name: 'Nope' } }, ['category']],
      [{ ...ok, category: { id: 999999 } }, ['category']],
      [{ ...ok, status: 'PENDING' }, ['status']],
      [{ ...ok, status: 'DONE' }, ['status']],
      [{ ...ok, repeat: { interval: 0, frequency: 'MONTHLY' } }, ['repeat']],
      [{ ...ok, repeat: { interval: 1, frequency: 'HOURLY' } }, ['repeat']],
      [{ ...ok, id: 5 }, ['id']],
      [{ ...ok, priority: 'high' }, ['priority']],
      [{ dueOn: 'soon', detail: 7 }, ['description', 'detail', 'dueOn']],
    ];
    for (const [task, fields] of cases) {
      const answer = await sandbox.v2('POST', '/tasks', { task });
      expect(answer.status, JSON.stringify(task)).toBe(422);
      expect(fieldsOf(answer.body).sort(), JSON.stringify(task)).toEqual(fields);
      expect(answer.body.errors[0].resource).toBe('task');
    }
    const unwrapped = await sandbox.v2('POST', '/tasks', ok);
    expect(unwrapped.status).toBe(400);
    expect(unwrapped.body.message).toMatch(/"task"/);
  });

  it('answers 404 for unknown or malformed task ids and 400 for unknown embeds', async () => {
    expect((await sandbox.v2('GET', '/tasks/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', '/tasks/abc')).status).toBe(404);
    const embed = await sandbox.v2('GET', '/tasks?embed=tags');
    expect(embed.status).toBe(400);
    expect(embed.body.message).toMatch(/party, opportunity, kase, owner, nextTask/);
  });
});

describe('spec 4.5 tasks: lists and status', () => {
  let sandbox: TestSandbox;
  let open: TaskRec;
  let early: TaskRec;
  let done: TaskRec;
  let pending: TaskRec;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ now: () => new Date(START) });
    open = addStoredTask(sandbox, { description: 'open later', dueOn: '2025-05-01' });
    early = addStoredTask(sandbox, { description: 'open earlier, timed', dueOn: '2025-04-01', dueTime: '09:00:00' });
    addStoredTask(sandbox, { description: 'open earlier, untimed', dueOn: '2025-04-01' });
    done = addStoredTask(sandbox, { description: 'done', status: 'COMPLETED', completedAt: '2025-02-01T00:00:00Z' });
    pending = addStoredTask(sandbox, { description: 'waiting', status: 'PENDING' });
  });
  afterAll(() => sandbox.close());

  it('lists open tasks only by default, soonest due first', async () => {
    const answer = await sandbox.v2('GET', '/tasks');
    expect(answer.status).toBe(200);
    expect(answer.body.tasks.map((t: { description: string }) => t.description)).toEqual([
      'open earlier, untimed',
      'open earlier, timed',
      'open later',
    ]);
    expect(ids(answer.body)).toContain(early.id);
  });

  it('filters by a comma-separated status list', async () => {
    expect(ids((await sandbox.v2('GET', '/tasks?status=completed')).body)).toEqual([done.id]);
    expect(ids((await sandbox.v2('GET', '/tasks?status=pending')).body)).toEqual([pending.id]);
    const both = ids((await sandbox.v2('GET', '/tasks?status=open,completed')).body);
    expect(both).toHaveLength(4);
    expect(both).toContain(done.id);
    expect(both).not.toContain(pending.id);
    expect(ids((await sandbox.v2('GET', '/tasks?status=OPEN, pending')).body)).toHaveLength(4);
  });

  it('refuses an unknown status value with 400', async () => {
    const answer = await sandbox.v2('GET', '/tasks?status=open,closed');
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/unknown status "closed"/);
  });

  it('pages the list with a Link header', async () => {
    const first = await sandbox.v2('GET', '/tasks?perPage=2');
    expect(first.body.tasks).toHaveLength(2);
    expect(first.headers.link).toMatch(/page=2.*rel="next"/);
    const second = await sandbox.v2('GET', '/tasks?perPage=2&page=2');
    expect(ids(second.body)).toEqual([open.id]);
    expect(second.headers.link).toMatch(/rel="prev"/);
    expect((await sandbox.v2('GET', '/tasks?perPage=500')).status).toBe(400);
  });
});

describe('spec 4.5 tasks: update and delete', () => {
  let sandbox: TestSandbox;
  let now = START;
  let party: PartyRec;

  beforeAll(async () => {
    sandbox = await startTestSandbox({ now: () => new Date(now) });
    party = addParty(sandbox, 'Updater');
  });
  afterAll(() => sandbox.close());

  it('changes only the properties in the body', async () => {
    const made = await sandbox.v2('POST', '/tasks', {
      task: {
        description: 'Draft',
        detail: 'keep me',
        dueOn: '2025-03-05',
        dueTime: '10:00:00',
        party: { id: party.id },
      },
    });
    now += 60_000;
    const answer = await sandbox.v2('PUT', `/tasks/${made.body.task.id}`, { task: { description: 'Final' } });
    expect(answer.status).toBe(200);
    expect(answer.body.task).toMatchObject({
      description: 'Final',
      detail: 'keep me',
      dueOn: '2025-03-05',
      dueTime: '10:00:00',
      party: { id: party.id },
      createdAt: '2025-03-01T10:00:00Z',
      updatedAt: '2025-03-01T10:01:00Z',
    });
    const cleared = await sandbox.v2('PUT', `/tasks/${made.body.task.id}`, {
      task: { dueTime: null, detail: null, owner: { username: 'kim' } },
    });
    expect(cleared.body.task).not.toHaveProperty('dueTime');
    expect(cleared.body.task).toMatchObject({ detail: null, owner: { username: 'kim' } });
  });

  it('moves a task to another record: naming a link replaces the old one', async () => {
    const kase = addKase(sandbox, party.id, 'Elsewhere');
    const made = await sandbox.v2('POST', '/tasks', {
      task: { description: 'Move me', dueOn: '2025-03-05', party: { id: party.id } },
    });
    const moved = await sandbox.v2('PUT', `/tasks/${made.body.task.id}`, { task: { kase: { id: kase.id } } });
    expect(moved.body.task.kase).toEqual({ id: kase.id, name: 'Elsewhere' });
    expect(moved.body.task).not.toHaveProperty('party');
    const unlinked = await sandbox.v2('PUT', `/tasks/${made.body.task.id}?embed=kase`, { task: { kase: null } });
    expect(unlinked.body.task.kase).toBeNull();
  });

  it('completes and reopens a task; completing files a task entry on its record', async () => {
    const made = await sandbox.v2('POST', '/tasks', {
      task: { description: 'Send contract', dueOn: '2025-03-05', party: { id: party.id } },
    });
    const id = made.body.task.id;
    now += 60_000;
    const completed = await sandbox.v2('PUT', `/tasks/${id}`, { task: { status: 'COMPLETED' } });
    expect(completed.status).toBe(200);
    expect(completed.body.task).toMatchObject({ status: 'COMPLETED', completedAt: timestampOf(now) });
    expect(ids((await sandbox.v2('GET', '/tasks')).body)).not.toContain(id);
    expect(ids((await sandbox.v2('GET', '/tasks?status=completed')).body)).toContain(id);

    const history = sandbox.store.entries.all().filter((e) => e.type === 'task' && e.partyId === party.id);
    expect(history.map((e) => e.content)).toEqual(['Send contract']);
    expect(history[0]?.entryAt).toBe(timestampOf(now));

    const reopened = await sandbox.v2('PUT', `/tasks/${id}`, { task: { status: 'open' } });
    expect(reopened.body.task).toMatchObject({ status: 'OPEN', completedAt: null });
    expect(ids((await sandbox.v2('GET', '/tasks')).body)).toContain(id);
  });

  it('refuses invalid updates with 422 and leaves the task unchanged', async () => {
    const made = await sandbox.v2('POST', '/tasks', { task: { description: 'Stable', dueOn: '2025-03-05' } });
    const cases: Array<[unknown, string[]]> = [
      [{ description: '' }, ['description']],
      [{ dueOn: null }, ['dueOn']],
      [{ status: 'PENDING' }, ['status']],
      [{ hasTrack: true }, ['hasTrack']],
      [{ completedAt: '2025-01-01T00:00:00Z' }, ['completedAt']],
    ];
    for (const [task, fields] of cases) {
      const answer = await sandbox.v2('PUT', `/tasks/${made.body.task.id}`, { task });
      expect(answer.status, JSON.stringify(task)).toBe(422);
      expect(fieldsOf(answer.body), JSON.stringify(task)).toEqual(fields);
    }
    expect(sandbox.store.tasks.get(made.body.task.id)).toMatchObject({
      description: 'Stable',
      dueOn: '2025-03-05',
      status: 'OPEN',
    });
    expect((await sandbox.v2('PUT', '/tasks/999999', { task: { description: 'x' } })).status).toBe(404);
  });

  it('deletes a task: 204 with an empty body, then 404', async () => {
    const made = await sandbox.v2('POST', '/tasks', { task: { description: 'Bin me', dueOn: '2025-03-05' } });
    const answer = await sandbox.v2('DELETE', `/tasks/${made.body.task.id}`);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect((await sandbox.v2('GET', `/tasks/${made.body.task.id}`)).status).toBe(404);
    expect((await sandbox.v2('DELETE', `/tasks/${made.body.task.id}`)).status).toBe(404);
  });
});

describe('spec 2.6 tasks in tracks', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ now: () => new Date(START) });
  });
  afterAll(() => sandbox.close());

  it('shows hasTrack, embeds nextTask, opens the pending next task on completion and leaves the track on delete', async () => {
    const definition = sandbox.store.trackDefinitions.all()[0];
    if (!definition) throw new Error('the seeded account has no track definition');
    const first = addStoredTask(sandbox, { description: 'Step 1', dueOn: '2025-03-02' });
    const second = addStoredTask(sandbox, { description: 'Step 2', dueOn: '2025-03-09', status: 'PENDING' });
    const track = sandbox.store.tracks.insert({
      description: 'Onboarding',
      direction: 'START_DATE',
      trackDateOn: '2025-03-01',
      definitionId: definition.id,
      partyId: null,
      opportunityId: null,
      kaseId: null,
      taskIds: [first.id, second.id],
      createdAt: '2025-03-01T00:00:00Z',
      updatedAt: '2025-03-01T00:00:00Z',
    });
    first.trackId = track.id;
    second.trackId = track.id;

    const read = await sandbox.v2('GET', `/tasks/${first.id}?embed=nextTask`);
    expect(read.body.task.hasTrack).toBe(true);
    expect(read.body.task.nextTask).toEqual({
      id: second.id,
      description: 'Step 2',
      dueOn: '2025-03-09',
      status: 'PENDING',
    });
    const last = await sandbox.v2('GET', `/tasks/${second.id}?embed=nextTask`);
    expect(last.body.task.nextTask).toBeNull();
    expect((await sandbox.v2('GET', `/tasks/${first.id}`)).body.task).not.toHaveProperty('nextTask');

    await sandbox.v2('PUT', `/tasks/${first.id}`, { task: { status: 'COMPLETED' } });
    expect(sandbox.store.tasks.get(second.id)?.status).toBe('OPEN');

    expect((await sandbox.v2('DELETE', `/tasks/${second.id}`)).status).toBe(204);
    expect(sandbox.store.tracks.get(track.id)?.taskIds).toEqual([first.id]);
  });
});

describe('task categories (sandbox addition, not in the spec)', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it('lists the categories with id, name and hex colour', async () => {
    const answer = await sandbox.v2('GET', '/categories');
    expect(answer.status).toBe(200);
    expect(answer.body.categories.map((c: { name: string }) => c.name)).toEqual([
      'Call',
      'Email',
      'Follow-up',
      'Meeting',
    ]);
    for (const category of answer.body.categories) {
      expect(Object.keys(category)).toEqual(['id', 'name', 'colour']);
      expect(category.colour).toMatch(/^#[0-9a-f]{6}$/i);
    }
  });
});

function timestampOf(ms: number): string {
  return `${new Date(ms).toISOString().slice(0, 19)}Z`;
}

describe('4.5 tasks of a track', () => {
  it('opens the pending task of a track when the task before it is completed', async () => {
    const sandbox = await startTestSandbox({ now: () => new Date('2026-01-02T09:00:00Z') });
    try {
      const party = await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Track Co' } });
      const kase = await sandbox.v2('POST', '/kases', {
        kase: { name: 'Onboard', party: { id: party.body.party.id } },
      });
      expect(kase.status).toBe(201);
      const definition = sandbox.store.trackDefinitions.all().find((d) => d.description === 'Onboarding');
      const track = await sandbox.v2('POST', '/tracks', {
        track: { definition: definition?.id, kase: kase.body.kase.id },
      });
      expect(track.status).toBe(201);
      const tasks = sandbox.store.tasks.all().filter((t) => t.trackId === track.body.track.id);
      expect(tasks.map((t) => t.status)).toEqual(['OPEN', 'PENDING', 'OPEN']);
      const done = await sandbox.v2('PUT', `/tasks/${tasks[0]?.id}`, { task: { status: 'COMPLETED' } });
      expect(done.status).toBe(200);
      const next = await sandbox.v2('GET', `/tasks/${tasks[1]?.id}`);
      expect(next.body.task.status).toBe('OPEN');
    } finally {
      await sandbox.close();
    }
  });
});
