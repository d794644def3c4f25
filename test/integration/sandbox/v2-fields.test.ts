/**
 * The v2 fields live answers of the service carry beyond the spec (issue 40), asked for as a
 * Python v2 client and a declarative connector ask (bearer token, Accept: application/json),
 * computed from the store where they mean something: users' account settings and `loggedIn` of
 * the token's user, owners' `pictureURL` and `deleted`, a person's organisation's `type`, tasks'
 * `active` and `taskDayDelayRule`, opportunities' `lastOpenMilestone` and `lastStageChangedAt`
 * from their milestone history, the pipeline of each milestone of `GET /milestones`, and
 * `createdAt`/`updatedAt` of pipelines, lost reasons, boards and stages.
 */
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPersonalToken } from '../../../src/sandbox/auth.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

let sandbox: TestSandbox;
let clock = new Date('2026-05-04T09:00:00Z');
const SAM_TOKEN = 'sams-token-for-fields';

beforeAll(async () => {
  sandbox = await startTestSandbox({ now: () => clock });
  const sam = sandbox.store.users.all().find((u) => u.username === 'sam')!;
  addPersonalToken(sandbox.context, SAM_TOKEN, sam.id);
});
afterAll(() => sandbox.close());

/** A GET or write as the Python v2 client sends it. */
async function v2(
  method: string,
  path: string,
  body?: unknown,
  token = sandbox.token,
): Promise<{ status: number; json: any }> {
  const answer = await request(`${sandbox.url}/api/v2${path}`, {
    method: method as 'GET',
    headers: {
      authorization: `Bearer ${token}`,
      accept: 'application/json',
      'user-agent': 'python-requests/2.31.0',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await answer.body.text();
  return { status: answer.statusCode, json: text === '' ? undefined : JSON.parse(text) };
}

describe('users', () => {
  it("gives the account's settings, status and deleted; loggedIn and lastLoginAt (when its token was issued) for the token's user only", async () => {
    const current = await v2('GET', '/users/current', undefined, SAM_TOKEN);
    expect(current.status).toBe(200);
    expect(current.json.user).toMatchObject({
      username: 'sam',
      currency: 'GBP',
      timezone: 'UTC',
      locale: 'en_GB',
      loggedIn: true,
      lastLoginAt: '2026-05-04T09:00:00Z',
      status: 'ACTIVE',
      deleted: false,
      taskReminder: false,
      party: null,
    });
    const all = (await v2('GET', '/users', undefined, SAM_TOKEN)).json.users;
    expect(all.map((u: any) => [u.username, u.loggedIn, u.lastLoginAt])).toEqual([
      ['admin', false, null],
      ['sam', true, '2026-05-04T09:00:00Z'],
      ['kim', false, null],
    ]);
    expect((await v2('GET', `/users/${current.json.user.id}`)).json.user.loggedIn).toBe(false);
  });
});

describe('owners, organisations, tasks', () => {
  it("names an owner with pictureURL and deleted, and a person's organisation with its type", async () => {
    const org = (await v2('POST', '/parties', { party: { type: 'organisation', name: 'Fields Ltd' } })).json.party;
    const person = (
      await v2('POST', '/parties', {
        party: { type: 'person', firstName: 'Fi', lastName: 'Elds', organisation: { id: org.id } },
      })
    ).json.party;
    const read = (await v2('GET', `/parties/${person.id}`)).json.party;
    expect(read.owner).toEqual({
      id: expect.any(Number),
      username: 'admin',
      name: 'Alex Admin',
      pictureURL: expect.stringMatching(/^https:\/\/.+\.png$/),
      deleted: false,
    });
    expect(read.organisation).toEqual({
      id: org.id,
      type: 'organisation',
      name: 'Fields Ltd',
      pictureURL: org.pictureURL,
    });
  });

  it("gives a task's active flag and, for a task of a track, its definition's day rule", async () => {
    const plain = (await v2('POST', '/tasks', { task: { description: 'Plain', dueOn: '2026-05-10' } })).json.task;
    expect(plain).toMatchObject({ active: true, taskDayDelayRule: null });
    const done = (await v2('PUT', `/tasks/${plain.id}`, { task: { status: 'COMPLETED' } })).json.task;
    expect(done.active).toBe(false);

    const party = (await v2('POST', '/parties', { party: { type: 'organisation', name: 'Tracked Ltd' } })).json.party;
    const kase = (await v2('POST', '/kases', { kase: { name: 'Onboard', party: { id: party.id } } })).json.kase;
    const onboarding = sandbox.store.trackDefinitions.all().find((d) => d.description === 'Onboarding')!;
    expect(
      (
        await v2('POST', '/tracks', {
          track: { definition: onboarding.id, kase: { id: kase.id }, trackDateOn: '2026-05-04' },
        })
      ).status,
    ).toBe(201);
    const tasks = (await v2('GET', '/tasks?status=open,pending&perPage=100')).json.tasks.filter((t: any) => t.hasTrack);
    expect(tasks.map((t: any) => [t.description, t.status, t.active, t.taskDayDelayRule]).sort()).toEqual([
      ['Check-in', 'OPEN', true, 'TRACK_WEEKS'],
      ['Send training material', 'PENDING', false, 'TRACK_WORKDAYS'],
      ['Welcome call', 'OPEN', true, 'TRACK_DAYS'],
    ]);
  });
});

describe('opportunities', () => {
  it('gives the last open milestone and when the milestone last changed, from its milestone history', async () => {
    const party = (await v2('POST', '/parties', { party: { type: 'organisation', name: 'Deal Ltd' } })).json.party;
    clock = new Date('2026-05-04T10:00:00Z');
    const made = (
      await v2('POST', '/opportunities', {
        opportunity: { name: 'Big deal', party: { id: party.id }, milestone: { name: 'New' } },
      })
    ).json.opportunity;
    expect(made).toMatchObject({
      lastOpenMilestone: { id: made.milestone.id, name: 'New' },
      lastStageChangedAt: '2026-05-04T10:00:00Z',
    });
    clock = new Date('2026-05-05T10:00:00Z');
    const proposal = (
      await v2('PUT', `/opportunities/${made.id}`, { opportunity: { milestone: { name: 'Proposal' } } })
    ).json.opportunity;
    expect(proposal).toMatchObject({
      lastOpenMilestone: { name: 'Proposal' },
      lastStageChangedAt: '2026-05-05T10:00:00Z',
    });
    clock = new Date('2026-05-06T10:00:00Z');
    const won = (await v2('PUT', `/opportunities/${made.id}`, { opportunity: { milestone: { name: 'Won' } } })).json
      .opportunity;
    expect(won).toMatchObject({
      milestone: { name: 'Won' },
      lastOpenMilestone: { name: 'Proposal' },
      lastStageChangedAt: '2026-05-06T10:00:00Z',
    });
    // A change of something else is no change of milestone.
    clock = new Date('2026-05-07T10:00:00Z');
    const renamed = (await v2('PUT', `/opportunities/${made.id}`, { opportunity: { name: 'Bigger deal' } })).json
      .opportunity;
    expect(renamed).toMatchObject({
      updatedAt: '2026-05-07T10:00:00Z',
      lastOpenMilestone: { name: 'Proposal' },
      lastStageChangedAt: '2026-05-06T10:00:00Z',
    });
    // Made closed, it never was open.
    const lost = (
      await v2('POST', '/opportunities', {
        opportunity: { name: 'Lost cause', party: { id: party.id }, milestone: { name: 'Lost' } },
      })
    ).json.opportunity;
    expect(lost).toMatchObject({ lastOpenMilestone: null, lastStageChangedAt: '2026-05-07T10:00:00Z' });
  });
});

describe('milestones, pipelines, boards, stages, lost reasons', () => {
  it('names the pipeline of each milestone of GET /milestones, and stamps the account lists', async () => {
    const milestones = (await v2('GET', '/milestones')).json.milestones;
    expect(milestones.every((m: any) => m.pipeline?.name === 'Sales' && typeof m.pipeline.id === 'number')).toBe(true);
    const seeded = '2026-05-04T09:00:00Z';
    const stamped = { createdAt: seeded, updatedAt: seeded };
    expect((await v2('GET', '/pipelines')).json.pipelines[0]).toMatchObject({ name: 'Sales', ...stamped });
    expect((await v2('GET', '/boards')).json.boards).toEqual([
      { id: 100, name: 'Projects', description: null, ...stamped },
    ]);
    expect((await v2('GET', '/stages')).json.stages.map((s: any) => [s.name, s.createdAt, s.updatedAt])).toEqual(
      ['Planned', 'In progress', 'Review', 'Done'].map((n) => [n, seeded, seeded]),
    );
    expect((await v2('GET', '/lostreasons/111')).json.lostReason).toEqual({
      id: 111,
      name: 'Price',
      includedForConversion: true,
      ...stamped,
    });
    // The token's user logged in when the token was issued, whatever the time now.
    expect(clock.toISOString()).not.toBe('2026-05-04T09:00:00.000Z');
    expect((await v2('GET', '/users/current', undefined, SAM_TOKEN)).json.user.lastLoginAt).toBe(
      '2026-05-04T09:00:00Z',
    );
  });
});
