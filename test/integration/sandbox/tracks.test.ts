import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HttpError } from '../../../src/sandbox/http.ts';
import type { KaseRec, OpportunityRec, PartyRec, TrackDefinitionRec } from '../../../src/sandbox/model.ts';
import { applyTrack, scheduleTasks } from '../../../src/sandbox/routes/tracks.ts';
import { addKase, addOpportunity, addParty } from '../../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

const NOW = new Date('2026-03-02T10:00:00Z');
const AT = '2026-03-01T00:00:00Z';

// Records are stored directly so that these tests do not depend on the party, project and
// opportunity routes.
const STAMPS = { createdAt: AT, updatedAt: AT };

function storeParty(sandbox: TestSandbox, ownerId: number | null): PartyRec {
  return addParty(sandbox.store, {
    type: 'organisation',
    firstName: null,
    lastName: null,
    name: 'Acme',
    ownerId,
    ...STAMPS,
  });
}

function storeKase(sandbox: TestSandbox, partyId: number, ownerId: number | null): KaseRec {
  return addKase(sandbox.store, partyId, { name: 'Rollout', ownerId, ...STAMPS });
}

function storeOpportunity(sandbox: TestSandbox, partyId: number, ownerId: number | null): OpportunityRec {
  const milestone = sandbox.store.milestones.all()[0];
  return addOpportunity(sandbox.store, partyId, {
    ownerId,
    milestoneId: milestone?.id ?? 0,
    value: null,
    expectedCloseOn: null,
    probability: 10,
    ...STAMPS,
  });
}

function definitionNamed(sandbox: TestSandbox, description: string): TrackDefinitionRec {
  const found = sandbox.store.trackDefinitions.all().find((d) => d.description === description);
  if (!found) throw new Error(`seeded track definition ${description} is missing`);
  return found;
}

function userId(sandbox: TestSandbox, username: string): number {
  const user = sandbox.store.users.all().find((u) => u.username === username);
  if (!user) throw new Error(`seeded user ${username} is missing`);
  return user.id;
}

function categoryId(sandbox: TestSandbox, name: string): number {
  const category = sandbox.store.taskCategories.all().find((c) => c.name === name);
  if (!category) throw new Error(`seeded task category ${name} is missing`);
  return category.id;
}

describe('4.7 tracks: scheduling of the tasks', () => {
  const definition = (
    id: number,
    daysAfterRule: 'TRACK_START' | 'LAST_TASK',
    daysAfter: number,
    dayDelayRule: 'TRACK_DAYS' | 'TRACK_WORKDAYS' | 'TRACK_WEEKS',
    displayOrder = id,
  ) => ({
    id,
    description: `t${id}`,
    daysAfterRule,
    daysAfter,
    displayOrder,
    dayDelayRule,
    assigneeType: 'ENTITY_OWNER',
    categoryId: null,
  });

  it.each([
    // 2026-01-02 is a Friday.
    ['calendar days from the start', [definition(1, 'TRACK_START', 3, 'TRACK_DAYS')], ['2026-01-05']],
    ['workdays skip the weekend', [definition(1, 'TRACK_START', 1, 'TRACK_WORKDAYS')], ['2026-01-05']],
    ['five workdays from a Friday', [definition(1, 'TRACK_START', 5, 'TRACK_WORKDAYS')], ['2026-01-09']],
    ['weeks', [definition(1, 'TRACK_START', 2, 'TRACK_WEEKS')], ['2026-01-16']],
    ['zero days is the start date', [definition(1, 'TRACK_START', 0, 'TRACK_WORKDAYS')], ['2026-01-02']],
    [
      'after the previous task',
      [
        definition(1, 'TRACK_START', 10, 'TRACK_DAYS'),
        definition(2, 'LAST_TASK', 1, 'TRACK_WEEKS'),
        definition(3, 'TRACK_START', 1, 'TRACK_DAYS'),
      ],
      ['2026-01-12', '2026-01-19', '2026-01-03'],
    ],
    [
      'a first task after the previous one starts at the track start',
      [definition(1, 'LAST_TASK', 2, 'TRACK_DAYS')],
      ['2026-01-04'],
    ],
    [
      'display order, not list order, decides the previous task',
      [definition(1, 'LAST_TASK', 1, 'TRACK_DAYS', 2), definition(2, 'TRACK_START', 5, 'TRACK_DAYS', 1)],
      ['2026-01-07', '2026-01-08'],
    ],
    ['across a month end', [definition(1, 'TRACK_START', 30, 'TRACK_DAYS')], ['2026-02-01']],
  ])('%s', (_name, definitions, expected) => {
    expect(scheduleTasks(definitions, '2026-01-02').map((s) => s.dueOn)).toEqual(expected);
  });
});

describe('4.7 tracks', () => {
  let sandbox: TestSandbox;
  let kase: KaseRec;
  let party: PartyRec;
  let opportunity: OpportunityRec;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ now: () => NOW });
    party = storeParty(sandbox, userId(sandbox, 'kim'));
    kase = storeKase(sandbox, party.id, userId(sandbox, 'sam'));
    opportunity = storeOpportunity(sandbox, party.id, null);
  });
  afterAll(() => sandbox.close());

  it('applies a definition to a project: 201, Location, and no write-only properties echoed', async () => {
    const definition = definitionNamed(sandbox, 'Onboarding');
    const answer = await sandbox.v2('POST', '/tracks', {
      track: {
        description: 'Onboard Acme',
        trackDateOn: '2026-01-02',
        definition: definition.id,
        kase: { id: kase.id },
      },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.track).toEqual({
      id: expect.any(Number),
      description: 'Onboard Acme',
      direction: 'START_DATE',
      trackDateOn: '2026-01-02',
    });
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/tracks/${answer.body.track.id}`);
  });

  it('creates the tasks from the task definitions: due dates, owner, category, status and link', async () => {
    const track = sandbox.store.tracks.all().find((t) => t.kaseId === kase.id);
    expect(track).toBeDefined();
    const tasks = sandbox.store.tasks.all().filter((t) => t.trackId === track?.id);
    expect(tasks.map((t) => [t.description, t.dueOn])).toEqual([
      ['Welcome call', '2026-01-02'],
      // three working days after the welcome call on a Friday
      ['Send training material', '2026-01-07'],
      ['Check-in', '2026-01-16'],
    ]);
    for (const task of tasks) {
      expect(task).toMatchObject({
        ownerId: userId(sandbox, 'sam'),
        kaseId: kase.id,
        partyId: null,
        opportunityId: null,
      });
    }
    // The task counted from the previous one waits until that one is done.
    expect(tasks.map((t) => t.status)).toEqual(['OPEN', 'PENDING', 'OPEN']);
    expect(tasks.map((t) => t.categoryId)).toEqual([
      categoryId(sandbox, 'Call'),
      categoryId(sandbox, 'Email'),
      categoryId(sandbox, 'Follow-up'),
    ]);
    expect(track?.taskIds).toEqual(tasks.map((t) => t.id));
  });

  it("defaults the description to the definition's and the date to today, with {id} forms", async () => {
    const definition = definitionNamed(sandbox, 'Deal follow-up');
    const answer = await sandbox.v2('POST', '/tracks?embed=task', {
      track: { definition: { id: definition.id }, opportunity: opportunity.id },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.track).toMatchObject({ description: 'Deal follow-up', trackDateOn: '2026-03-02' });
    expect(answer.body.track.tasks.map((t: { description: string }) => t.description)).toEqual([
      'Send proposal',
      'Follow-up call',
    ]);
    expect(Object.keys(answer.body.track.tasks[0]).sort()).toEqual(['description', 'id']);
    // The opportunity has no owner, so its tasks go to the caller.
    const tasks = sandbox.store.tasks.all().filter((t) => t.trackId === answer.body.track.id);
    expect(tasks.map((t) => t.ownerId)).toEqual([userId(sandbox, 'admin'), userId(sandbox, 'admin')]);
    expect(tasks.map((t) => t.dueOn)).toEqual(['2026-03-03', '2026-03-10']);
  });

  it("applies a party definition to a party, owned by the party's owner", async () => {
    const made = await sandbox.v2('POST', '/trackdefinitions', {
      trackDefinition: {
        description: 'Nurture',
        captureRule: 'PARTY',
        taskDefinitions: [{ description: 'Say hello', daysAfter: 1 }],
      },
    });
    expect(made.status).toBe(201);
    const answer = await sandbox.v2('POST', '/tracks', {
      track: { definition: made.body.trackDefinition.id, party: { id: party.id }, trackDateOn: '2026-04-01' },
    });
    expect(answer.status).toBe(201);
    const tasks = sandbox.store.tasks.all().filter((t) => t.trackId === answer.body.track.id);
    expect(tasks).toHaveLength(1);
    expect(tasks[0]).toMatchObject({ partyId: party.id, ownerId: userId(sandbox, 'kim'), dueOn: '2026-04-02' });
  });

  it('lists the tracks of a project, party and opportunity, with embed=task', async () => {
    const kaseTracks = await sandbox.v2('GET', `/kases/${kase.id}/tracks?embed=task`);
    expect(kaseTracks.status).toBe(200);
    expect(kaseTracks.body.tracks).toHaveLength(1);
    expect(kaseTracks.body.tracks[0].tasks).toHaveLength(3);
    const partyTracks = await sandbox.v2('GET', `/parties/${party.id}/tracks`);
    expect(partyTracks.body.tracks.map((t: { description: string }) => t.description)).toEqual(['Nurture']);
    expect('tasks' in partyTracks.body.tracks[0]).toBe(false);
    const opportunityTracks = await sandbox.v2('GET', `/opportunities/${opportunity.id}/tracks`);
    expect(opportunityTracks.body.tracks).toHaveLength(1);
  });

  it('answers 404 for the tracks of an unknown record, and 400 for an unknown embed', async () => {
    expect((await sandbox.v2('GET', '/kases/999999/tracks')).status).toBe(404);
    expect((await sandbox.v2('GET', '/parties/999999/tracks')).status).toBe(404);
    const embed = await sandbox.v2('GET', `/kases/${kase.id}/tracks?embed=owner`);
    expect(embed.status).toBe(400);
    expect(embed.body.message).toMatch(/task/);
  });

  it('reads one track, with or without its tasks, and 404 for an unknown one', async () => {
    const track = sandbox.store.tracks.all()[0];
    const plain = await sandbox.v2('GET', `/tracks/${track?.id}`);
    expect(plain.status).toBe(200);
    expect(plain.body.track.id).toBe(track?.id);
    expect(plain.body.track.tasks).toBeUndefined();
    const embedded = await sandbox.v2('GET', `/tracks/${track?.id}?embed=task`);
    expect(embedded.body.track.tasks.map((t: { id: number }) => t.id)).toEqual(track?.taskIds);
    expect((await sandbox.v2('GET', '/tracks/999999')).status).toBe(404);
  });

  it('answers 422 and stores nothing for bad track input', async () => {
    const onboarding = definitionNamed(sandbox, 'Onboarding').id;
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ kase: kase.id }, 'definition'],
      [{ definition: 999999, kase: kase.id }, 'definition'],
      [{ definition: 'Onboarding', kase: kase.id }, 'definition'],
      [{ definition: onboarding }, 'kase'],
      [{ definition: onboarding, kase: kase.id, party: party.id }, 'kase'],
      [{ definition: onboarding, kase: 999999 }, 'kase'],
      [{ definition: onboarding, kase: 'x' }, 'kase'],
      // Onboarding is a project definition.
      [{ definition: onboarding, opportunity: opportunity.id }, 'definition'],
      [{ definition: onboarding, kase: kase.id, trackDateOn: '2026-02-30' }, 'trackDateOn'],
      [{ definition: onboarding, kase: kase.id, trackDateOn: 20260101 }, 'trackDateOn'],
      [{ definition: onboarding, kase: kase.id, description: 5 }, 'description'],
      [{ definition: onboarding, kase: kase.id, direction: 'START_DATE', colour: 1 }, 'colour'],
    ];
    const tracks = sandbox.store.tracks.size;
    const tasks = sandbox.store.tasks.size;
    for (const [track, field] of cases) {
      const answer = await sandbox.v2('POST', '/tracks', { track });
      expect(answer.status, JSON.stringify(track)).toBe(422);
      expect(
        answer.body.errors.map((e: { field: string }) => e.field),
        JSON.stringify(track),
      ).toContain(field);
    }
    expect(sandbox.store.tracks.size).toBe(tracks);
    expect(sandbox.store.tasks.size).toBe(tasks);
    expect((await sandbox.v2('POST', '/tracks', { definition: onboarding })).status).toBe(400);
  });

  it('changes only description and trackDateOn; moving the date moves the open tasks', async () => {
    const made = await sandbox.v2('POST', '/tracks', {
      track: { definition: definitionNamed(sandbox, 'Onboarding').id, kase: kase.id, trackDateOn: '2026-01-02' },
    });
    const id = made.body.track.id;
    const [first, second] = sandbox.store.tasks.all().filter((t) => t.trackId === id);
    if (!first || !second) throw new Error('the track has no tasks');
    second.status = 'COMPLETED';
    const answer = await sandbox.v2('PUT', `/tracks/${id}?embed=task`, {
      track: { description: 'Renamed', trackDateOn: '2026-01-12' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.track).toMatchObject({ id, description: 'Renamed', trackDateOn: '2026-01-12' });
    expect(answer.body.track.tasks).toHaveLength(3);
    expect(sandbox.store.tasks.get(first.id)?.dueOn).toBe('2026-01-12');
    // A completed task keeps its date.
    expect(sandbox.store.tasks.get(second.id)?.dueOn).toBe('2026-01-07');

    const refused = await sandbox.v2('PUT', `/tracks/${id}`, { track: { definition: 1, kase: kase.id } });
    expect(refused.status).toBe(422);
    expect(refused.body.errors.map((e: { field: string }) => e.field)).toEqual(['definition', 'kase']);
    const badDate = await sandbox.v2('PUT', `/tracks/${id}`, { track: { trackDateOn: 'soon' } });
    expect(badDate.status).toBe(422);
    expect(sandbox.store.tracks.get(id)?.trackDateOn).toBe('2026-01-12');
    expect((await sandbox.v2('PUT', '/tracks/999999', { track: { description: 'x' } })).status).toBe(404);
  });

  it('deletes a track with its tasks', async () => {
    const made = await sandbox.v2('POST', '/tracks', {
      track: { definition: definitionNamed(sandbox, 'Onboarding').id, kase: kase.id },
    });
    const id = made.body.track.id;
    const taskIds = sandbox.store.tracks.get(id)?.taskIds ?? [];
    expect(taskIds).toHaveLength(3);
    const answer = await sandbox.v2('DELETE', `/tracks/${id}`);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(sandbox.store.tracks.has(id)).toBe(false);
    expect(taskIds.some((taskId) => sandbox.store.tasks.has(taskId))).toBe(false);
    expect((await sandbox.v2('GET', `/tracks/${id}`)).status).toBe(404);
    expect((await sandbox.v2('DELETE', `/tracks/${id}`)).status).toBe(404);
  });

  it('applyTrack throws a 422 HttpError for an unknown definition, for the create shortcuts', () => {
    let thrown: unknown;
    try {
      applyTrack(sandbox.context, { definitionId: 999999, target: { kaseId: kase.id } });
    } catch (error) {
      thrown = error;
    }
    expect(thrown).toBeInstanceOf(HttpError);
    expect((thrown as HttpError).status).toBe(422);
    const track = applyTrack(sandbox.context, {
      definitionId: definitionNamed(sandbox, 'Onboarding').id,
      target: { kaseId: kase.id },
      trackDateOn: '2026-05-01',
    });
    expect(track.kaseId).toBe(kase.id);
    expect(track.taskIds.map((id) => sandbox.store.tasks.get(id)?.dueOn)).toEqual([
      '2026-05-01',
      '2026-05-06',
      '2026-05-15',
    ]);
  });
});

describe('4.8 track definitions', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ now: () => NOW });
  });
  afterAll(() => sandbox.close());

  it('lists all definitions by default and filters by type through the capture rule', async () => {
    const all = await sandbox.v2('GET', '/trackdefinitions');
    expect(all.status).toBe(200);
    expect(all.body.trackDefinitions.map((d: { description: string }) => d.description)).toEqual([
      'Onboarding',
      'Deal follow-up',
    ]);
    const kases = await sandbox.v2('GET', '/trackdefinitions?type=kases');
    expect(kases.body.trackDefinitions.map((d: { description: string }) => d.description)).toEqual(['Onboarding']);
    const opportunities = await sandbox.v2('GET', '/trackdefinitions?type=opportunities');
    expect(opportunities.body.trackDefinitions.map((d: { description: string }) => d.description)).toEqual([
      'Deal follow-up',
    ]);
    const parties = await sandbox.v2('GET', '/trackdefinitions?type=parties');
    expect(parties.body.trackDefinitions).toEqual([]);
    const paged = await sandbox.v2('GET', '/trackdefinitions?type=all&perPage=1');
    expect(paged.body.trackDefinitions).toHaveLength(1);
    expect(String(paged.headers.link)).toMatch(/rel="next"/);
  });

  it('answers 400 for an unknown type', async () => {
    const answer = await sandbox.v2('GET', '/trackdefinitions?type=tasks');
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/type/);
  });

  it('reads one definition with its task definitions in full', async () => {
    const definition = definitionNamed(sandbox, 'Onboarding');
    const answer = await sandbox.v2('GET', `/trackdefinitions/${definition.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.trackDefinition).toMatchObject({
      id: definition.id,
      description: 'Onboarding',
      tag: 'onboarding',
      captureRule: 'KASE',
      direction: 'START_DATE',
    });
    expect(answer.body.trackDefinition.taskDefinitions[1]).toEqual({
      id: expect.any(Number),
      description: 'Send training material',
      daysAfterRule: 'LAST_TASK',
      daysAfter: 3,
      displayOrder: 1,
      dayDelayRule: 'TRACK_WORKDAYS',
      trackTaskAssignee: { assigneeType: 'ENTITY_OWNER' },
      category: { id: categoryId(sandbox, 'Email'), name: 'Email', colour: '#27ae60' },
    });
    expect((await sandbox.v2('GET', '/trackdefinitions/999999')).status).toBe(404);
  });

  it('creates a definition with defaults, categories by id or {name}', async () => {
    const answer = await sandbox.v2('POST', '/trackdefinitions', {
      trackDefinition: {
        description: 'Renewal',
        captureRule: 'OPPORTUNITY',
        tag: 'renewal',
        taskDefinitions: [
          { description: 'Remind', daysAfter: 2, category: { name: 'meeting' } },
          {
            description: 'Chase',
            daysAfterRule: 'LAST_TASK',
            daysAfter: 1,
            dayDelayRule: 'TRACK_WEEKS',
            category: categoryId(sandbox, 'Call'),
          },
        ],
      },
    });
    expect(answer.status).toBe(201);
    const made = answer.body.trackDefinition;
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/trackdefinitions/${made.id}`);
    expect(made).toMatchObject({
      description: 'Renewal',
      captureRule: 'OPPORTUNITY',
      direction: 'START_DATE',
      tag: 'renewal',
    });
    expect(
      made.taskDefinitions.map((t: Record<string, unknown>) => [
        t.description,
        t.daysAfterRule,
        t.dayDelayRule,
        t.displayOrder,
        (t.category as { name: string }).name,
      ]),
    ).toEqual([
      ['Remind', 'TRACK_START', 'TRACK_DAYS', 0, 'Meeting'],
      ['Chase', 'LAST_TASK', 'TRACK_WEEKS', 1, 'Call'],
    ]);
  });

  it('answers 422 for bad definition input', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ captureRule: 'KASE' }, 'description'],
      [{ description: 'X' }, 'captureRule'],
      [{ description: 'X', captureRule: 'TASK' }, 'captureRule'],
      [{ description: 'X', captureRule: 'KASE', direction: 'END_DATE' }, 'direction'],
      [{ description: 'X', captureRule: 'KASE', tag: 3 }, 'tag'],
      [{ description: 'X', captureRule: 'KASE', taskDefinitions: {} }, 'taskDefinitions'],
      [{ description: 'X', captureRule: 'KASE', taskDefinitions: [{}] }, 'taskDefinitions[0].description'],
      [
        {
          description: 'X',
          captureRule: 'KASE',
          taskDefinitions: [{ description: 'a', dayDelayRule: 'TRACK_MONTHS' }],
        },
        'taskDefinitions[0].dayDelayRule',
      ],
      [
        { description: 'X', captureRule: 'KASE', taskDefinitions: [{ description: 'a', daysAfter: -1 }] },
        'taskDefinitions[0].daysAfter',
      ],
      [
        { description: 'X', captureRule: 'KASE', taskDefinitions: [{ description: 'a', category: { name: 'Nope' } }] },
        'taskDefinitions[0].category',
      ],
      [
        { description: 'X', captureRule: 'KASE', taskDefinitions: [{ description: 'a', category: 999999 }] },
        'taskDefinitions[0].category',
      ],
      [
        {
          description: 'X',
          captureRule: 'KASE',
          taskDefinitions: [{ description: 'a', trackTaskAssignee: { assigneeType: 'ME' } }],
        },
        'taskDefinitions[0].trackTaskAssignee',
      ],
      [
        { description: 'X', captureRule: 'KASE', taskDefinitions: [{ description: 'a', due: 1 }] },
        'taskDefinitions[0].due',
      ],
    ];
    const before = sandbox.store.trackDefinitions.size;
    for (const [trackDefinition, field] of cases) {
      const answer = await sandbox.v2('POST', '/trackdefinitions', { trackDefinition });
      expect(answer.status, JSON.stringify(trackDefinition)).toBe(422);
      expect(
        answer.body.errors.map((e: { field: string }) => e.field),
        JSON.stringify(trackDefinition),
      ).toContain(field);
    }
    expect(sandbox.store.trackDefinitions.size).toBe(before);
  });

  it('updates a definition: adds, changes and deletes task definitions in one request', async () => {
    const made = await sandbox.v2('POST', '/trackdefinitions', {
      trackDefinition: {
        description: 'Steps',
        captureRule: 'KASE',
        taskDefinitions: [{ description: 'One' }, { description: 'Two' }],
      },
    });
    const id = made.body.trackDefinition.id;
    const [one, two] = made.body.trackDefinition.taskDefinitions as Array<{ id: number }>;
    const answer = await sandbox.v2('PUT', `/trackdefinitions/${id}`, {
      trackDefinition: {
        description: 'Steps v2',
        taskDefinitions: [
          { id: one?.id, description: 'One, changed', daysAfter: 4, category: { name: 'Email' } },
          { id: two?.id, _delete: true },
          { description: 'Three', daysAfterRule: 'LAST_TASK' },
        ],
      },
    });
    expect(answer.status).toBe(200);
    const updated = answer.body.trackDefinition;
    expect(updated.description).toBe('Steps v2');
    expect(updated.captureRule).toBe('KASE');
    expect(
      updated.taskDefinitions.map((t: Record<string, unknown>) => [
        t.id === one?.id,
        t.description,
        t.daysAfter,
        t.displayOrder,
      ]),
    ).toEqual([
      [true, 'One, changed', 4, 0],
      [false, 'Three', 0, 1],
    ]);
    expect(updated.taskDefinitions[0].category.name).toBe('Email');
    expect(sandbox.store.trackDefinitions.get(id)?.taskDefinitions).toHaveLength(2);
  });

  it('answers 422 and changes nothing when any element of an update is bad', async () => {
    const definition = definitionNamed(sandbox, 'Deal follow-up');
    const before = JSON.stringify(definition);
    const first = definition.taskDefinitions[0];
    const answer = await sandbox.v2('PUT', `/trackdefinitions/${definition.id}`, {
      trackDefinition: {
        description: 'Changed',
        taskDefinitions: [
          { id: first?.id, description: 'Changed too' },
          { id: 999999, description: 'Ghost' },
          { _delete: true },
        ],
      },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors.map((e: { field: string }) => e.field)).toEqual([
      'taskDefinitions[1].id',
      'taskDefinitions[2]._delete',
      'taskDefinitions[2].description',
    ]);
    expect(JSON.stringify(sandbox.store.trackDefinitions.get(definition.id))).toBe(before);
    expect(
      (await sandbox.v2('PUT', '/trackdefinitions/999999', { trackDefinition: { description: 'x' } })).status,
    ).toBe(404);
  });

  it('deletes a definition; tracks already applied keep their tasks', async () => {
    const made = await sandbox.v2('POST', '/trackdefinitions', {
      trackDefinition: {
        description: 'Short-lived',
        captureRule: 'PARTY',
        taskDefinitions: [{ description: 'Only task' }],
      },
    });
    const id = made.body.trackDefinition.id;
    const party = storeParty(sandbox, null);
    const track = applyTrack(sandbox.context, { definitionId: id, target: { partyId: party.id } });
    const answer = await sandbox.v2('DELETE', `/trackdefinitions/${id}`);
    expect(answer.status).toBe(204);
    expect((await sandbox.v2('GET', `/trackdefinitions/${id}`)).status).toBe(404);
    expect((await sandbox.v2('DELETE', `/trackdefinitions/${id}`)).status).toBe(404);
    expect(sandbox.store.tracks.has(track.id)).toBe(true);
    expect(track.taskIds.every((taskId) => sandbox.store.tasks.has(taskId))).toBe(true);
  });
});
