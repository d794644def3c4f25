import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { FerryError } from '../../src/errors/index.ts';
import { JournalWriter, StateDir } from '../../src/journal/index.ts';
import {
  runImport,
  runRollback,
  runSetup,
  type ImportEvent,
  type ImportSummary,
  type SetupPlan,
} from '../../src/load/index.ts';
import { runCli } from '../helpers/fake-io.ts';
import { allPages as all, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const work = mkdtempSync(join(tmpdir(), 'ferry-setup-'));
const sandboxes: TestSandbox[] = [];
afterEach(async () => {
  while (sandboxes.length > 0) await sandboxes.pop()?.close();
});
afterAll(() => rmSync(work, { recursive: true, force: true }));

async function sandbox(): Promise<TestSandbox> {
  const box = await startTestSandbox();
  sandboxes.push(box);
  return box;
}

const FILES: Record<string, string> = {
  'orgs.csv': 'id,name,size\nO1,Acme,\nO2,Globex,44\n',
  'opps.csv':
    'id,name,org,pipeline,milestone\nD1,Big deal,O1,Partners,Pilot\nD2,Small deal,O2,Partners,Signed\nD3,Old deal,O1,,Won\n',
  'notes.csv': 'id,org,kind,text\nN1,O1,Email,Sent the offer\nN2,O2,Note,Called\nN3,O1,Site visit,Walked the site\n',
  'projects.csv': 'id,name,org,track\nK1,Rollout,O1,Installation checklist\n',
  'tasks.csv': 'id,what,due,category\nT1,File it,2024-05-01,Paperwork\nT2,Ring them,2024-05-02,Call\n',
  'orgs.yaml': `version: 1
entity: party
key: "{{id}}"
fields:
  - { to: name, value: { column: name } }
`,
  'opps.yaml': `version: 1
entity: opportunity
key: "{{id}}"
fields:
  - { to: name, value: { column: name } }
  - { to: party, ref: orgs, key: "{{org}}" }
  - { to: pipeline, value: { column: pipeline } }
  - { to: milestone, value: { column: milestone } }
`,
  'notes.yaml': `version: 1
entity: entry
key: "{{id}}"
fields:
  - { to: party, ref: orgs, key: "{{org}}" }
  - { to: content, value: { column: text } }
  - { to: activityType, value: { column: kind } }
`,
  'projects.yaml': `version: 1
entity: kase
key: "{{id}}"
fields:
  - { to: name, value: { column: name } }
  - { to: party, ref: orgs, key: "{{org}}" }
  - { to: tracks, value: { column: track } }
`,
  'tasks.yaml': `version: 1
entity: task
key: "{{id}}"
fields:
  - { to: description, value: { column: what } }
  - { to: dueOn, value: { column: due } }
  - { to: category, value: { column: category } }
`,
};

const STEPS = ['orgs', 'opps', 'notes', 'projects', 'tasks'];

let folders = 0;
/** A custom field is named by the mapping itself: missing, it stops any run before the first row (not only a strict one). */
const SHOE_SIZE = '  - { to: custom, definition: Shoe size, tag: null, value: { column: size } }\n';

function project(setup: string, options: { shoeSize?: boolean } = {}): { dir: string; plan: string; stateDir: string } {
  folders += 1;
  const dir = join(work, `p${folders}`);
  rmSync(dir, { recursive: true, force: true });
  mkdirSync(dir, { recursive: true });
  for (const [name, text] of Object.entries(FILES))
    writeFileSync(join(dir, name), name === 'orgs.yaml' && options.shoeSize ? text + SHOE_SIZE : text);
  const steps = STEPS.flatMap((s) => [`  - name: ${s}`, `    mapping: ${s}.yaml`, `    input: ${s}.csv`]);
  writeFileSync(join(dir, 'plan.yaml'), ['version: 1', setup, 'steps:', ...steps, ''].join('\n'));
  return { dir, plan: join(dir, 'plan.yaml'), stateDir: join(dir, '.crm-ferry') };
}

const SETUP = `setup:
  milestones:
    - { name: Pilot, pipeline: Partners, probability: 40 }`;

async function withClient<T>(box: TestSandbox, work: (client: CrmClient) => Promise<T>): Promise<T> {
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  try {
    return await work(client);
  } finally {
    await client.close();
  }
}

const account = (box: TestSandbox) => ({ baseUrl: box.url, account: box.url });

async function run(
  box: TestSandbox,
  p: { plan: string; stateDir: string },
  extra: { strict?: boolean; dryRun?: boolean } = {},
  events: ImportEvent[] = [],
): Promise<ImportSummary> {
  return withClient(box, (client) =>
    runImport(
      { source: { kind: 'plan', planFile: p.plan }, stateDir: p.stateDir, ...extra },
      { client, account: account(box), onEvent: (e) => events.push(e) },
    ),
  );
}

/** What the account has of the kinds set-up makes, by name. */
async function configuration(box: TestSandbox) {
  const pipelines = await all(box, '/pipelines', 'pipelines');
  const milestones = (
    await Promise.all(pipelines.map((p) => all(box, `/pipelines/${p.id}/milestones`, 'milestones')))
  ).flat();
  return {
    pipelines: pipelines.map((p) => p.name).sort(),
    milestones: milestones.map((m) => `${m.pipeline?.name ?? ''}/${m.name}/${m.probability}`).sort(),
    activityTypes: (await all(box, '/activitytypes', 'activityTypes')).map((a) => a.name).sort(),
    trackDefinitions: (await all(box, '/trackdefinitions', 'trackDefinitions')).map((t) => t.description).sort(),
  };
}

describe('setup: the account configuration the rows need', () => {
  it('--strict lists what the interface cannot create and stops before any write', async () => {
    const box = await sandbox();
    const p = project(SETUP, { shoeSize: true });
    const before = await configuration(box);
    const partiesBefore = (await all(box, '/parties', 'parties')).length;
    const events: ImportEvent[] = [];
    const error = await run(box, p, { strict: true }, events).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(FerryError);
    expect((error as FerryError).code).toBe('MAPPING_UNKNOWN_NAME');
    expect((error as FerryError).message).toContain('custom field `Shoe size`');
    expect((error as FerryError).message).toContain('task category `Paperwork`');
    const plan = events.find((e): e is Extract<ImportEvent, { type: 'setup' }> => e.type === 'setup')
      ?.plan as SetupPlan;
    expect(plan.checklist.map((c) => [c.kind, c.name, c.steps, c.rows])).toEqual([
      ['fieldDefinition', 'Shoe size', ['orgs'], 1],
      ['taskCategory', 'Paperwork', ['tasks'], 1],
    ]);
    // Told before the rows were touched, and nothing was created or written.
    expect(events.findIndex((e) => e.type === 'setup')).toBeLessThan(
      Math.max(
        0,
        events.findIndex((e) => e.type === 'start'),
      ) + 1,
    );
    expect(await configuration(box)).toEqual(before);
    expect((await all(box, '/parties', 'parties')).length).toBe(partiesBefore);
  });

  it('creates what is missing once, the rows use it, a second run creates nothing, and rollback removes it', async () => {
    const box = await sandbox();
    const p = project(SETUP);
    const before = await configuration(box);
    const first = await run(box, p);
    expect(first.stopped).toBeNull();
    expect(first.setup?.created.map((c) => `${c.kind} ${c.name}`)).toEqual([
      'pipeline Partners',
      'milestone Pilot',
      'milestone Signed',
      'activityType Email',
      'activityType Site visit',
      'trackDefinition Installation checklist',
    ]);
    // Not creatable: listed, and the rows that name them rejected as before.
    expect(first.setup?.checklist.map((c) => c.name)).toEqual(['Paperwork']);
    expect(first.steps.find((s) => s.step === 'tasks')?.rejected).toBe(1);
    const after = await configuration(box);
    expect(after.pipelines).toEqual([...before.pipelines, 'Partners'].sort());
    // The plan's probability for Pilot; Signed, named by a row only, gets the service's default.
    expect(after.milestones).toEqual(expect.arrayContaining(['Partners/Pilot/40', 'Partners/Signed/0']));
    expect(after.activityTypes).toEqual([...before.activityTypes, 'Email', 'Site visit'].sort());
    expect(after.trackDefinitions).toEqual([...before.trackDefinitions, 'Installation checklist'].sort());

    const opps = first.steps.find((s) => s.step === 'opps');
    expect([opps?.created, opps?.rejected]).toEqual([3, 0]);
    expect(first.steps.find((s) => s.step === 'notes')?.created).toBe(3);
    expect(first.steps.find((s) => s.step === 'projects')?.created).toBe(1);
    const deals = await all(box, '/opportunities?embed=milestone', 'opportunities');
    expect(deals.find((d) => d.name === 'Big deal')?.milestone.name).toBe('Pilot');
    const entries = await all(box, '/entries?embed=activityType', 'entries');
    expect(entries.find((e) => e.content === 'Sent the offer')?.activityType.name).toBe('Email');
    const kase = (await all(box, '/kases', 'kases')).find((k) => k.name === 'Rollout');
    const tracks = await all(box, `/kases/${kase.id}/tracks`, 'tracks');
    expect(tracks.map((t) => t.description)).toEqual(['Installation checklist']);

    const second = await run(box, p);
    expect(second.setup?.created).toEqual([]);
    expect(second.setup?.create).toEqual([]);
    expect(await configuration(box)).toEqual(after);

    const rolled = await withClient(box, (client) =>
      runRollback({ stateDir: p.stateDir }, { client, account: account(box) }),
    );
    expect(rolled.steps.find((s) => s.step === 'setup')?.deleted).toBe(6);
    // The rows went first (an opportunity holds its milestone), then the set-up.
    expect((await all(box, '/opportunities', 'opportunities')).length).toBe(0);
    expect(await configuration(box)).toEqual(before);
  });

  it('a dry run maps the rows as if set up, and creates nothing', async () => {
    const box = await sandbox();
    const p = project('setup:');
    const before = await configuration(box);
    const summary = await run(box, p, { dryRun: true });
    expect(summary.setup?.dryRun).toBe(true);
    expect(summary.setup?.create.map((c) => c.name)).toEqual([
      'Partners',
      'Pilot',
      'Signed',
      'Email',
      'Site visit',
      'Installation checklist',
    ]);
    expect(summary.steps.find((s) => s.step === 'opps')?.rejected).toBe(0);
    expect(await configuration(box)).toEqual(before);
  });

  it('`crm-ferry setup` alone: derived from the rows, idempotent, and undone by rollback', async () => {
    const box = await sandbox();
    const p = project('');
    const before = await configuration(box);
    const first = await withClient(box, (client) =>
      runSetup({ planFile: p.plan, stateDir: p.stateDir }, { client, account: account(box) }),
    );
    expect(first.created.map((c) => c.name)).toEqual([
      'Partners',
      'Pilot',
      'Signed',
      'Email',
      'Site visit',
      'Installation checklist',
    ]);
    const again = await withClient(box, (client) =>
      runSetup({ planFile: p.plan, stateDir: p.stateDir }, { client, account: account(box) }),
    );
    expect(again.created).toEqual([]);
    expect(again.present).toBeGreaterThan(0);
    const strict = await withClient(box, (client) =>
      runSetup({ planFile: p.plan, stateDir: p.stateDir, strict: true }, { client, account: account(box) }),
    ).catch((e: unknown) => e);
    expect((strict as FerryError).code).toBe('MAPPING_UNKNOWN_NAME');
    await withClient(box, (client) => runRollback({ stateDir: p.stateDir }, { client, account: account(box) }));
    expect(await configuration(box)).toEqual(before);
  });

  it("a set-up cut off after its intent is settled by name on the next: the item is that run's, created once, and rolled back", async () => {
    const box = await sandbox();
    const p = project('setup:');
    const before = await configuration(box);
    // The first set-up sent POST /pipelines and was killed before it journalled the answer.
    const made = await box.v2('POST', '/pipelines', { pipeline: { name: 'Partners' } });
    const state = await StateDir.open({ dir: p.stateDir, account: account(box), users: async () => [] });
    const journal = await JournalWriter.open(state.journalFile('_setup'));
    await journal.append({
      t: 'intent',
      k: 'pipeline:partners',
      op: 'create',
      run: '20240101T000000Z-1-1',
      at: new Date().toISOString(),
      fp: '',
      body: { kind: 'pipeline', name: 'Partners', pipeline: null, request: { name: 'Partners' } },
    });
    await journal.close();
    await state.close();
    const report = await withClient(box, (client) =>
      runSetup({ planFile: p.plan, stateDir: p.stateDir }, { client, account: account(box) }),
    );
    expect(report.created[0]).toEqual({ kind: 'pipeline', name: 'Partners', id: made.body.pipeline.id });
    expect(report.created.filter((c) => c.kind === 'pipeline')).toHaveLength(1);
    expect((await all(box, '/pipelines', 'pipelines')).filter((x) => x.name === 'Partners')).toHaveLength(1);
    await withClient(box, (client) =>
      runRollback({ stateDir: p.stateDir, all: true }, { client, account: account(box) }),
    );
    expect(await configuration(box)).toEqual(before);
  });

  it('crm-ferry setup on the command line: the checklist on stderr before anything, --strict exits 2, then creates', async () => {
    const box = await sandbox();
    const p = project(SETUP, { shoeSize: true });
    const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token };
    const strict = await runCli(['setup', 'plan.yaml', '--strict'], { cwd: p.dir, env });
    expect(strict.code).toBe(2);
    expect(strict.stderr).toContain('[ ] custom field `Shoe size` (parties): named by 1 row of orgs');
    expect(strict.stderr).toContain('[ ] task category `Paperwork`: named by 1 row of tasks');
    expect(strict.stderr).toMatch(/error \[MAPPING_UNKNOWN_NAME\]: --strict: the account lacks/);
    expect((await all(box, '/pipelines', 'pipelines')).map((x) => x.name)).not.toContain('Partners');
    const done = await runCli(['setup', 'plan.yaml'], { cwd: p.dir, env });
    expect(done.code).toBe(0);
    expect(done.stderr).toContain('milestone `Pilot` in pipeline Partners (listed in the plan)');
    expect(done.stdout).toMatch(/^Set-up: created pipeline `Partners` \(id \d+\), milestone `Pilot`/);
    const none = project('');
    const usage = await runCli(['run', 'plan.yaml', '--strict'], { cwd: none.dir, env });
    expect(usage.code).toBe(2);
    expect(usage.stderr).toContain("--strict checks the account against a plan's `setup:`");
  });

  it('validate --online of a plan with setup: rejects what run would, not what set-up creates, and tells the checklist', async () => {
    const box = await sandbox();
    const p = project(SETUP);
    const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token };
    const validated = await runCli(['validate', '--plan', 'plan.yaml', '--online', '--json'], { cwd: p.dir, env });
    expect(validated.code).toBe(3);
    expect(validated.stderr).toContain('[ ] task category `Paperwork`');
    const report = JSON.parse(validated.stdout) as { steps: Array<{ step: string; ok: number; rejected: number }> };
    const ran = await run(box, p);
    expect(report.steps.map((s) => `${s.step} ${s.ok}/${s.rejected}`)).toEqual(
      ran.steps.map((s) => `${s.step} ${s.created}/${s.rejected}`),
    );
  });

  it('rollback keeps, and says, what the set-up created that records of other runs still use', async () => {
    const box = await sandbox();
    const p = project(SETUP);
    await run(box, p);
    const pilot = (await all(box, '/opportunities?embed=milestone', 'opportunities')).find((d) => d.name === 'Big deal')
      .milestone.id;
    const someone = (await box.v2('POST', '/parties', { party: { type: 'organisation', name: 'Initech' } })).body.party
      .id;
    // Someone else's opportunity in the new milestone, written by hand, not by the run.
    expect(
      (
        await box.v2('POST', '/opportunities', {
          opportunity: { name: 'By hand', party: { id: someone }, milestone: { id: pilot } },
        })
      ).status,
    ).toBe(201);
    const rolled = await withClient(box, (client) =>
      runRollback({ stateDir: p.stateDir }, { client, account: account(box) }),
    );
    expect(rolled.setupKept).toEqual([
      { kind: 'milestone', id: pilot, reason: expect.stringContaining('is used by 1 opportunity') },
    ]);
    expect((await box.v2('GET', `/milestones/${pilot}`)).status).toBe(200);
    expect((await all(box, '/activitytypes', 'activityTypes')).map((t) => t.name)).not.toContain('Site visit');
  });
});
