import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { addPersonalToken } from '../../../src/sandbox/auth.ts';
import type { OpportunityRec } from '../../../src/sandbox/model.ts';
import { addOpportunity } from '../../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

const NOW = new Date('2026-03-02T10:00:00Z');
const SAM_TOKEN = 'sam-personal-token-1';

async function start(): Promise<TestSandbox> {
  const sandbox = await startTestSandbox({ now: () => NOW });
  const sam = sandbox.store.users.all().find((u) => u.username === 'sam');
  if (!sam) throw new Error('seeded user sam is missing');
  addPersonalToken(sandbox.context, SAM_TOKEN, sam.id);
  return sandbox;
}

function salesPipelineId(sandbox: TestSandbox): number {
  const sales = sandbox.store.pipelines.all().find((p) => p.name === 'Sales');
  if (!sales) throw new Error('seeded pipeline Sales is missing');
  return sales.id;
}

/** Stores an opportunity directly, so these tests do not depend on the opportunity routes. */
function storeOpportunity(sandbox: TestSandbox, milestoneId: number): OpportunityRec {
  const at = '2026-03-01T00:00:00Z';
  return addOpportunity(sandbox.store, 1, {
    ownerId: null,
    milestoneId,
    value: null,
    expectedCloseOn: null,
    probability: 10,
    createdAt: at,
    updatedAt: at,
  });
}

describe('4.10 pipelines: reads', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await start();
  });
  afterAll(() => sandbox.close());

  it('lists the seeded pipeline with id, name and description', async () => {
    const answer = await sandbox.v2('GET', '/pipelines');
    expect(answer.status).toBe(200);
    expect(answer.body.pipelines).toEqual([
      {
        id: salesPipelineId(sandbox),
        name: 'Sales',
        description: 'New business',
        createdAt: expect.stringMatching(/Z$/),
        updatedAt: expect.stringMatching(/Z$/),
      },
    ]);
  });

  it('pages the list with a Link header', async () => {
    await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'Partners' } });
    const first = await sandbox.v2('GET', '/pipelines?perPage=1');
    expect(first.body.pipelines).toHaveLength(1);
    expect(String(first.headers.link)).toMatch(/page=2.*rel="next"/);
    const second = await sandbox.v2('GET', '/pipelines?perPage=1&page=2');
    expect(second.body.pipelines[0].name).toBe('Partners');
    expect(String(second.headers.link)).toMatch(/rel="prev"/);
  });

  it('leaves the description out when a pipeline has none', async () => {
    const answer = await sandbox.v2('GET', '/pipelines');
    const partners = answer.body.pipelines.find((p: { name: string }) => p.name === 'Partners');
    expect(partners).toBeDefined();
    expect('description' in partners).toBe(false);
  });

  it('reads one pipeline and several by comma-separated ids', async () => {
    const id = salesPipelineId(sandbox);
    const one = await sandbox.v2('GET', `/pipelines/${id}`);
    expect(one.status).toBe(200);
    expect(one.body.pipeline.name).toBe('Sales');
    const partners = sandbox.store.pipelines.all().find((p) => p.name === 'Partners');
    const many = await sandbox.v2('GET', `/pipelines/${partners?.id},${id}`);
    expect(many.status).toBe(200);
    expect(many.body.pipelines.map((p: { name: string }) => p.name)).toEqual(['Partners', 'Sales']);
  });

  it('answers 404 when any id of a multi-id read is unknown, and for bad ids', async () => {
    const id = salesPipelineId(sandbox);
    const answer = await sandbox.v2('GET', `/pipelines/${id},999999`);
    expect(answer.status).toBe(404);
    expect(answer.body.message).toMatch(/999999/);
    expect((await sandbox.v2('GET', '/pipelines/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', '/pipelines/abc')).status).toBe(404);
  });

  it('refuses more than 10 ids with 400', async () => {
    const answer = await sandbox.v2('GET', `/pipelines/${Array.from({ length: 11 }, (_, i) => i + 1).join(',')}`);
    expect(answer.status).toBe(400);
  });

  it('rejects an includeDeleted that is not a boolean', async () => {
    const answer = await sandbox.v2('GET', '/pipelines?includeDeleted=yes');
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/includeDeleted/);
  });
});

describe('4.10 pipelines: writes', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await start();
  });
  afterAll(() => sandbox.close());

  it('creates a pipeline: 201, the pipeline and a Location', async () => {
    const answer = await sandbox.v2('POST', '/pipelines', { pipeline: { name: ' Renewals ', description: 'Yearly' } });
    expect(answer.status).toBe(201);
    expect(answer.body.pipeline).toMatchObject({ name: 'Renewals', description: 'Yearly' });
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/pipelines/${answer.body.pipeline.id}`);
    expect(sandbox.store.pipelines.get(answer.body.pipeline.id)?.archived).toBe(false);
  });

  it('answers 422 naming the field for a missing or wrong-typed name and unknown properties', async () => {
    const missing = await sandbox.v2('POST', '/pipelines', { pipeline: { description: 'x' } });
    expect(missing.status).toBe(422);
    expect(missing.body.errors).toContainEqual({ field: 'name', message: 'is required', resource: 'pipeline' });
    const typed = await sandbox.v2('POST', '/pipelines', { pipeline: { name: 42 } });
    expect(typed.status).toBe(422);
    expect(typed.body.errors[0].field).toBe('name');
    const unknown = await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'X', colour: 'red' } });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors[0].field).toBe('colour');
  });

  it('answers 400 when the body does not hold a pipeline object', async () => {
    const answer = await sandbox.v2('POST', '/pipelines', { name: 'Loose' });
    expect(answer.status).toBe(400);
    expect(answer.body.message).toMatch(/"pipeline"/);
  });

  it('duplicates a pipeline with copies of its milestones', async () => {
    const sourceId = salesPipelineId(sandbox);
    const answer = await sandbox.v2('POST', `/pipelines/${sourceId}/duplicate`);
    expect(answer.status).toBe(201);
    const copy = answer.body.pipeline;
    expect(copy.id).not.toBe(sourceId);
    expect(copy.name).toBe('Sales (copy)');
    const original = await sandbox.v2('GET', `/pipelines/${sourceId}/milestones`);
    const copied = await sandbox.v2('GET', `/pipelines/${copy.id}/milestones`);
    const shape = (m: Record<string, unknown>) => [m.name, m.probability, m.complete];
    expect(copied.body.milestones.map(shape)).toEqual(original.body.milestones.map(shape));
    expect(copied.body.milestones.length).toBe(6);
    const originalIds = new Set(original.body.milestones.map((m: { id: number }) => m.id));
    expect(copied.body.milestones.some((m: { id: number }) => originalIds.has(m.id))).toBe(false);
    expect(copied.body.milestones[0].pipeline).toEqual({ id: copy.id, name: 'Sales (copy)' });
  });

  it('answers 404 when duplicating an unknown pipeline', async () => {
    expect((await sandbox.v2('POST', '/pipelines/999999/duplicate')).status).toBe(404);
  });

  it('updates only the properties given and can clear the description', async () => {
    const made = await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'Temp', description: 'd' } });
    const id = made.body.pipeline.id;
    const renamed = await sandbox.v2('PUT', `/pipelines/${id}`, { pipeline: { name: 'Temporary' } });
    expect(renamed.status).toBe(200);
    expect(renamed.body.pipeline).toEqual({
      id,
      name: 'Temporary',
      description: 'd',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const cleared = await sandbox.v2('PUT', `/pipelines/${id}`, { pipeline: { description: null } });
    expect(cleared.body.pipeline).toEqual({
      id,
      name: 'Temporary',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    const empty = await sandbox.v2('PUT', `/pipelines/${id}`, { pipeline: { name: '' } });
    expect(empty.status).toBe(422);
    expect((await sandbox.v2('PUT', '/pipelines/999999', { pipeline: { name: 'x' } })).status).toBe(404);
  });

  it('archives with 204, lists archived ones only with includeDeleted, and restores with 200', async () => {
    const made = await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'Old' } });
    const id = made.body.pipeline.id;
    const archived = await sandbox.v2('DELETE', `/pipelines/${id}`);
    expect(archived.status).toBe(204);
    expect(archived.text).toBe('');
    const active = await sandbox.v2('GET', '/pipelines');
    expect(active.body.pipelines.some((p: { id: number }) => p.id === id)).toBe(false);
    const all = await sandbox.v2('GET', '/pipelines?includeDeleted=true');
    expect(all.body.pipelines.some((p: { id: number }) => p.id === id)).toBe(true);
    // An archived pipeline can still be read by id.
    expect((await sandbox.v2('GET', `/pipelines/${id}`)).status).toBe(200);

    const again = await sandbox.v2('DELETE', `/pipelines/${id}`);
    expect(again.status).toBe(422);
    expect(again.body.message).toMatch(/already archived/);

    const restored = await sandbox.v2('POST', `/pipelines/${id}/restore`);
    expect(restored.status).toBe(200);
    expect(restored.body.pipeline).toEqual({
      id,
      name: 'Old',
      createdAt: expect.any(String),
      updatedAt: expect.any(String),
    });
    expect(sandbox.store.pipelines.get(id)?.archived).toBe(false);
    const twice = await sandbox.v2('POST', `/pipelines/${id}/restore`);
    expect(twice.status).toBe(422);
    expect(twice.body.message).toMatch(/not archived/);
  });

  it('answers 404 when archiving or restoring an unknown pipeline', async () => {
    expect((await sandbox.v2('DELETE', '/pipelines/999999')).status).toBe(404);
    expect((await sandbox.v2('POST', '/pipelines/999999/restore')).status).toBe(404);
  });
});

describe('4.10 / 5.5 pipelines: Administrator role', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await start();
  });
  afterAll(() => sandbox.close());

  const asSam = (method: string, path: string, body?: unknown) =>
    sandbox.call(method, `/api/v2${path}`, { token: SAM_TOKEN, ...(body === undefined ? {} : { body }) });

  it('lets a plain User read pipelines', async () => {
    const answer = await asSam('GET', '/pipelines');
    expect(answer.status).toBe(200);
    expect(answer.body.pipelines).toHaveLength(1);
  });

  it('refuses every pipeline write by a plain User with 403 and changes nothing', async () => {
    const id = salesPipelineId(sandbox);
    const before = sandbox.store.pipelines.size;
    const attempts = [
      await asSam('POST', '/pipelines', { pipeline: { name: 'Mine' } }),
      await asSam('POST', `/pipelines/${id}/duplicate`),
      await asSam('PUT', `/pipelines/${id}`, { pipeline: { name: 'Renamed' } }),
      await asSam('DELETE', `/pipelines/${id}`),
      await asSam('POST', `/pipelines/${id}/restore`),
    ];
    for (const answer of attempts) {
      expect(answer.status).toBe(403);
      expect(answer.body.message).toMatch(/Administrator/);
    }
    expect(sandbox.store.pipelines.size).toBe(before);
    expect(sandbox.store.pipelines.get(id)).toMatchObject({ name: 'Sales', archived: false });
  });
});

describe('8 limits: at most 30 active pipelines', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await start();
  });
  afterAll(() => sandbox.close());

  it('refuses create, duplicate and restore past 30 active pipelines with 422', async () => {
    const extra: number[] = [];
    for (let i = 2; i <= 30; i++) {
      const answer = await sandbox.v2('POST', '/pipelines', { pipeline: { name: `P${i}` } });
      expect(answer.status).toBe(201);
      extra.push(answer.body.pipeline.id);
    }
    const over = await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'P31' } });
    expect(over.status).toBe(422);
    expect(over.body.message).toMatch(/30 active pipelines/);
    const dup = await sandbox.v2('POST', `/pipelines/${salesPipelineId(sandbox)}/duplicate`);
    expect(dup.status).toBe(422);

    const archivedId = extra[0] as number;
    expect((await sandbox.v2('DELETE', `/pipelines/${archivedId}`)).status).toBe(204);
    // Archiving made room for one more, after which the archived one cannot come back.
    expect((await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'Fills the gap' } })).status).toBe(201);
    const restore = await sandbox.v2('POST', `/pipelines/${archivedId}/restore`);
    expect(restore.status).toBe(422);
    expect(sandbox.store.pipelines.get(archivedId)?.archived).toBe(true);
    expect(sandbox.store.pipelines.all().filter((p) => !p.archived)).toHaveLength(30);
  });

  it('keeps the last active pipeline: archiving it is 422', async () => {
    const single = await start();
    try {
      const answer = await single.v2('DELETE', `/pipelines/${salesPipelineId(single)}`);
      expect(answer.status).toBe(422);
      expect(answer.body.message).toMatch(/last active pipeline/);
    } finally {
      await single.close();
    }
  });
});

describe('4.6 milestones', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await start();
  });
  afterAll(() => sandbox.close());

  it('lists the oldest active pipeline on /milestones, each with its pipeline as the service answers', async () => {
    const answer = await sandbox.v2('GET', '/milestones');
    expect(answer.status).toBe(200);
    expect(answer.body.milestones.map((m: { name: string }) => m.name)).toEqual([
      'New',
      'Qualified',
      'Proposal',
      'Negotiation',
      'Won',
      'Lost',
    ]);
    expect(answer.body.milestones[0]).toEqual({
      id: expect.any(Number),
      name: 'New',
      complete: false,
      probability: 10,
      daysUntilStale: 14,
      pipeline: { id: expect.any(Number), name: 'Sales' },
      createdAt: '2026-03-02T10:00:00Z',
      updatedAt: '2026-03-02T10:00:00Z',
    });
  });

  it('leaves daysUntilStale out on complete milestones', async () => {
    const answer = await sandbox.v2('GET', '/milestones');
    const won = answer.body.milestones.find((m: { name: string }) => m.name === 'Won');
    expect(won.complete).toBe(true);
    expect('daysUntilStale' in won).toBe(false);
  });

  it("lists a pipeline's milestones with the pipeline summary, and 404 for an unknown pipeline", async () => {
    const id = salesPipelineId(sandbox);
    const answer = await sandbox.v2('GET', `/pipelines/${id}/milestones?perPage=2`);
    expect(answer.body.milestones).toHaveLength(2);
    expect(answer.body.milestones[0].pipeline).toEqual({ id, name: 'Sales' });
    expect(String(answer.headers.link)).toMatch(/rel="next"/);
    expect((await sandbox.v2('GET', '/pipelines/999999/milestones')).status).toBe(404);
  });

  it('reads one milestone, and 404 for an unknown one', async () => {
    const first = sandbox.store.milestones.all()[0];
    const answer = await sandbox.v2('GET', `/milestones/${first?.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.milestone.name).toBe('New');
    expect(answer.body.milestone.pipeline.name).toBe('Sales');
    expect((await sandbox.v2('GET', '/milestones/999999')).status).toBe(404);
  });

  it('creates a milestone in the oldest active pipeline by default, before the complete ones', async () => {
    const answer = await sandbox.v2('POST', '/milestones', {
      milestone: { name: 'Demo', description: 'Product demo', probability: 60, daysUntilStale: 7 },
    });
    expect(answer.status).toBe(201);
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/milestones/${answer.body.milestone.id}`);
    expect(answer.body.milestone).toMatchObject({
      name: 'Demo',
      description: 'Product demo',
      probability: 60,
      complete: false,
      daysUntilStale: 7,
      pipeline: { id: salesPipelineId(sandbox), name: 'Sales' },
    });
    const list = await sandbox.v2('GET', '/milestones');
    expect(list.body.milestones.map((m: { name: string }) => m.name)).toEqual([
      'New',
      'Qualified',
      'Proposal',
      'Negotiation',
      'Demo',
      'Won',
      'Lost',
    ]);
  });

  it('creates a milestone in the pipeline given as {id}', async () => {
    const pipeline = await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'Support deals' } });
    const pipelineId = pipeline.body.pipeline.id;
    const answer = await sandbox.v2('POST', '/milestones', {
      milestone: { name: 'Open', probability: 20, pipeline: { id: pipelineId } },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.milestone.pipeline).toEqual({ id: pipelineId, name: 'Support deals' });
    const done = await sandbox.v2('POST', '/milestones', {
      milestone: { name: 'Done', probability: 100, complete: true, daysUntilStale: 9, pipeline: { id: pipelineId } },
    });
    expect(done.body.milestone.complete).toBe(true);
    expect('daysUntilStale' in done.body.milestone).toBe(false);
  });

  it('answers 422 for bad milestone input', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ probability: 10 }, 'name'],
      [{ name: 'P', probability: 101 }, 'probability'],
      [{ name: 'P', probability: 1.5 }, 'probability'],
      [{ name: 'P', pipeline: { id: 999999 } }, 'pipeline'],
      [{ name: 'P', pipeline: 'Sales' }, 'pipeline'],
      [{ name: 'P', complete: 'yes' }, 'complete'],
      [{ name: 'P', stage: 1 }, 'stage'],
      [{ name: 'new' }, 'name'],
    ];
    for (const [milestone, field] of cases) {
      const answer = await sandbox.v2('POST', '/milestones', { milestone });
      expect(answer.status, JSON.stringify(milestone)).toBe(422);
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toContain(field);
      expect(answer.body.errors[0].resource).toBe('milestone');
    }
  });

  it('refuses a milestone in an archived pipeline', async () => {
    const made = await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'Shelved' } });
    await sandbox.v2('DELETE', `/pipelines/${made.body.pipeline.id}`);
    const answer = await sandbox.v2('POST', '/milestones', {
      milestone: { name: 'X', pipeline: { id: made.body.pipeline.id } },
    });
    expect(answer.status).toBe(422);
    expect(answer.body.errors[0].message).toMatch(/archived/);
  });

  it('updates name, description and probability, leaving the rest', async () => {
    const made = await sandbox.v2('POST', '/milestones', {
      milestone: { name: 'Trial', probability: 30, daysUntilStale: 5 },
    });
    const id = made.body.milestone.id;
    const answer = await sandbox.v2('PUT', `/milestones/${id}`, {
      milestone: { name: 'Free trial', probability: 35, description: 'Two weeks' },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.milestone).toMatchObject({
      id,
      name: 'Free trial',
      probability: 35,
      description: 'Two weeks',
      daysUntilStale: 5,
    });
    expect(sandbox.store.milestones.get(id)?.name).toBe('Free trial');
  });

  it('answers 422 for a bad update and 404 for an unknown milestone', async () => {
    const made = await sandbox.v2('POST', '/milestones', { milestone: { name: 'Pilot', probability: 40 } });
    const id = made.body.milestone.id;
    const bad = await sandbox.v2('PUT', `/milestones/${id}`, { milestone: { probability: -1 } });
    expect(bad.status).toBe(422);
    const move = await sandbox.v2('PUT', `/milestones/${id}`, { milestone: { pipeline: { id: 999999 } } });
    expect(move.status).toBe(422);
    expect(move.body.errors[0].field).toBe('pipeline');
    const clash = await sandbox.v2('PUT', `/milestones/${id}`, { milestone: { name: 'Won' } });
    expect(clash.status).toBe(422);
    expect(sandbox.store.milestones.get(id)).toMatchObject({ name: 'Pilot', probability: 40 });
    expect((await sandbox.v2('PUT', '/milestones/999999', { milestone: { name: 'x' } })).status).toBe(404);
  });

  it('refuses to delete a milestone an opportunity uses (422), then deletes it once unused', async () => {
    const made = await sandbox.v2('POST', '/milestones', { milestone: { name: 'Contract', probability: 90 } });
    const id = made.body.milestone.id;
    const opportunity = storeOpportunity(sandbox, id);
    const refused = await sandbox.v2('DELETE', `/milestones/${id}`);
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ resource: 'milestone', field: 'milestone' });
    expect(refused.body.message).toMatch(new RegExp(`used by 1 opportunity \\(${opportunity.id}\\)`));
    expect(sandbox.store.milestones.has(id)).toBe(true);

    sandbox.store.opportunities.delete(opportunity.id);
    const deleted = await sandbox.v2('DELETE', `/milestones/${id}`);
    expect(deleted.status).toBe(204);
    expect((await sandbox.v2('GET', `/milestones/${id}`)).status).toBe(404);
    expect((await sandbox.v2('DELETE', `/milestones/${id}`)).status).toBe(404);
  });

  it('follows the oldest active pipeline when the oldest one is archived', async () => {
    const fresh = await start();
    try {
      const second = await fresh.v2('POST', '/pipelines', { pipeline: { name: 'Second' } });
      await fresh.v2('POST', '/milestones', { milestone: { name: 'Only', pipeline: { id: second.body.pipeline.id } } });
      expect((await fresh.v2('DELETE', `/pipelines/${salesPipelineId(fresh)}`)).status).toBe(204);
      const answer = await fresh.v2('GET', '/milestones');
      expect(answer.body.milestones.map((m: { name: string }) => m.name)).toEqual(['Only']);
      const created = await fresh.v2('POST', '/milestones', { milestone: { name: 'Defaulted' } });
      expect(created.body.milestone.pipeline.id).toBe(second.body.pipeline.id);
    } finally {
      await fresh.close();
    }
  });
});
