import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parse } from 'csv-parse/sync';
import { afterAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { normaliseExportOptions, runExport } from '../../src/export/index.ts';
import { runImport } from '../../src/load/index.ts';
import { runVerify } from '../../src/verify/index.ts';
import { addPersonalToken } from '../../src/sandbox/auth.ts';
import { runCli } from '../helpers/fake-io.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-roundtrip-history-'));
const bundled = (name: string): string => join(ROOT, 'mappings', `${name}.yaml`);
/** Each export of the round trip, and the bundled mappings its file is written for and read with. */
const EXPORTS = [
  { entity: 'parties', file: 'parties.csv', mappings: ['roundtrip-organisations', 'roundtrip-people'] },
  { entity: 'opportunities', file: 'opportunities.csv', mappings: ['roundtrip-opportunities'] },
  { entity: 'kases', file: 'kases.csv', mappings: ['roundtrip-kases'] },
  { entity: 'entries', file: 'entries.csv', mappings: ['roundtrip-entries'] },
  { entity: 'tasks', file: 'tasks.csv', mappings: ['roundtrip-tasks'] },
] as const;
const STEPS = [
  ['organisations', 'roundtrip-organisations', 'parties.csv'],
  ['people', 'roundtrip-people', 'parties.csv'],
  ['opportunities', 'roundtrip-opportunities', 'opportunities.csv'],
  ['kases', 'roundtrip-kases', 'kases.csv'],
  ['entries', 'roundtrip-entries', 'entries.csv'],
  ['tasks', 'roundtrip-tasks', 'tasks.csv'],
] as const;
const boxes: TestSandbox[] = [];
afterAll(async () => {
  for (const box of boxes) await box.close();
  rmSync(dir, { recursive: true, force: true });
});

type Body = Record<string, any>;

async function created(box: TestSandbox, path: string, key: string, body: Body): Promise<number> {
  const answer = await box.v2('POST', path, { [key]: body });
  expect(answer.status, JSON.stringify(answer.body)).toBe(201);
  return answer.body[key].id;
}

/** Seeds the first account with history: notes with files, types and dates, done tasks, projects with contacts and tracks. */
async function seed(a: TestSandbox): Promise<void> {
  const idOf = async (path: string, key: string, name: string, field = 'name'): Promise<{ id: number }> => ({
    id: ((await allPages(a, path, key)) as Body[]).find((x) => x[field] === name)?.id ?? -1,
  });
  const kim = await idOf('/users', 'users', 'kim', 'username');
  const support = await idOf('/teams', 'teams', 'Support');
  const north = await created(a, '/parties', 'party', { type: 'organisation', name: 'Acme Ltd', about: 'north' });
  const south = await created(a, '/parties', 'party', { type: 'organisation', name: 'Acme Ltd', about: 'south' });
  const ada = await created(a, '/parties', 'party', {
    type: 'person',
    firstName: 'Ada',
    lastName: 'Lovelace',
    organisation: { id: south },
  });
  const grace = await created(a, '/parties', 'party', { type: 'person', firstName: 'Grace', lastName: 'Hopper' });
  const pipeline = (await a.v2('GET', '/pipelines')).body.pipelines[0].id;
  const proposal = await idOf(`/pipelines/${pipeline}/milestones`, 'milestones', 'Proposal');
  const deal = await created(a, '/opportunities', 'opportunity', {
    name: 'Widgets 2027',
    party: { id: north },
    milestone: proposal,
  });
  const onboarding = await idOf('/trackdefinitions', 'trackDefinitions', 'Onboarding', 'description');
  const rollout = await created(a, '/kases', 'kase', {
    name: 'Rollout',
    description: 'Phase one',
    party: { id: south },
    opportunity: { id: deal },
    owner: kim,
    team: support,
    stage: { id: 102 },
    expectedCloseOn: '2027-01-31',
    tags: [{ name: 'priority' }],
    fields: [
      { definition: { name: 'Reference', tag: null }, value: 'R-17' },
      { definition: { name: 'Billable', tag: null }, value: true },
    ],
    tracks: [{ definition: onboarding }],
  });
  for (const contact of [ada, grace, north])
    expect((await a.v2('POST', `/kases/${rollout}/parties/${contact}`)).status).toBe(204);
  const closed = await created(a, '/kases', 'kase', {
    name: 'Audit',
    party: { id: north },
    status: 'CLOSED',
    closedOn: '2026-09-30',
  });

  const client = new CrmClient({ baseUrl: a.url, auth: a.token });
  const upload = async (name: string, content: string | Buffer, contentType: string): Promise<{ token: string }> => {
    const file = join(dir, `upload-${name}`);
    writeFileSync(file, content);
    return { token: await client.upload(file, { filename: name, contentType }) };
  };
  const meeting = await idOf('/activitytypes', 'activityTypes', 'Meeting');
  await created(a, '/entries', 'entry', {
    type: 'note',
    content: 'Kick-off, "quoted"\nsecond line',
    party: { id: ada },
    activityType: meeting,
    entryAt: '2024-03-05T09:30:00Z',
    attachments: [
      await upload('minutes.txt', 'minutes\n', 'text/plain'),
      await upload('plan.dat', Buffer.from([0, 1, 2, 255]), 'application/vnd.acme-plan'),
    ],
  });
  await created(a, '/entries', 'entry', {
    type: 'note',
    content: 'Same name, other file',
    kase: { id: rollout },
    attachments: [await upload('minutes.txt', 'other minutes\n', 'text/markdown')],
  });
  await created(a, '/entries', 'entry', {
    type: 'note',
    content: 'On the deal',
    opportunity: { id: deal },
    entryAt: '2023-12-31T23:59:00Z',
  });
  await client.close();
  // A note of another user than the one who imports (the Administrator): its author heads it.
  addPersonalToken(a.context, 'kims-token', kim.id);
  const kims = await a.call('POST', '/api/v2/entries', {
    token: 'kims-token',
    body: {
      entry: {
        type: 'note',
        content: 'Kim was here\n\nwith two lines',
        party: { id: grace },
        entryAt: '2024-01-02T03:04:05Z',
      },
    },
  });
  expect(kims.status).toBe(201);

  const call = await idOf('/categories', 'categories', 'Call');
  await created(a, '/tasks', 'task', {
    description: 'Send contract',
    detail: 'PDF',
    dueOn: '2026-11-02',
    dueTime: '14:30:00',
    category: call,
    owner: kim,
    party: { id: grace },
  });
  await created(a, '/tasks', 'task', {
    description: 'Closing call',
    dueOn: '2026-09-29',
    status: 'COMPLETED',
    kase: { id: closed },
  });
  await created(a, '/tasks', 'task', {
    description: 'Price check',
    dueOn: '2026-12-01',
    opportunity: { id: deal },
    status: 'COMPLETED',
  });
}

/** Everything of an account a client can set on projects, notes and tasks, links named by what they link to. */
async function snapshot(box: TestSandbox): Promise<Record<string, unknown[]>> {
  const parties = (await allPages(box, '/parties', 'parties')) as Body[];
  const partyName = new Map(parties.map((p) => [p.id, `${p.name ?? `${p.firstName} ${p.lastName}`}/${p.about ?? ''}`]));
  const kasesListed = (await allPages(box, '/kases?embed=tags,fields', 'kases')) as Body[];
  const kaseName = new Map(kasesListed.map((k) => [k.id, k.name]));
  const opportunityName = new Map(
    ((await allPages(box, '/opportunities', 'opportunities')) as Body[]).map((o) => [o.id, o.name]),
  );
  const kases = [];
  for (const k of kasesListed) {
    const contacts = ((await allPages(box, `/kases/${k.id}/parties`, 'parties')) as Body[])
      .map((p) => partyName.get(p.id))
      .sort();
    const tracks = ((await allPages(box, `/kases/${k.id}/tracks`, 'tracks')) as Body[]).map((t) => t.description);
    kases.push({
      name: k.name,
      description: k.description,
      party: partyName.get(k.party?.id),
      opportunity: opportunityName.get(k.opportunity?.id) ?? null,
      owner: k.owner?.username,
      team: k.team?.name ?? null,
      status: k.status,
      stage: k.stage?.name,
      startOn: k.startOn,
      expectedCloseOn: k.expectedCloseOn,
      closedOn: k.closedOn,
      tags: (k.tags as Body[]).map((t) => t.name).sort(),
      fields: (k.fields as Body[]).map((f) => `${f.definition.name}=${f.value}`).sort(),
      contacts,
      tracks,
    });
  }
  const entries = [];
  for (const e of (await allPages(
    box,
    '/entries?embed=party,kase,opportunity,creator,activityType',
    'entries',
  )) as Body[]) {
    const files = [];
    for (const attachment of e.attachments as Body[])
      files.push({
        filename: attachment.filename,
        contentType: attachment.contentType,
        bytes: (await box.v2('GET', `/attachments/${attachment.id}`)).text,
      });
    // The service writes a task's entry when the task is completed, by the user and at the time of that.
    const written = e.type === 'task' ? {} : { creator: e.creator?.name ?? e.creator?.username, entryAt: e.entryAt };
    entries.push({
      type: e.type,
      content: e.content,
      ...written,
      activityType: e.activityType?.name,
      on: partyName.get(e.party?.id) ?? kaseName.get(e.kase?.id) ?? opportunityName.get(e.opportunity?.id),
      files,
    });
  }
  const tasks = (
    (await allPages(box, '/tasks?status=open,completed,pending&embed=party,kase,opportunity,owner', 'tasks')) as Body[]
  ).map((t) => ({
    description: t.description,
    detail: t.detail,
    dueOn: t.dueOn,
    dueTime: t.dueTime,
    category: t.category?.name ?? null,
    owner: t.owner?.username,
    status: t.status,
    hasTrack: t.hasTrack,
    on: partyName.get(t.party?.id) ?? kaseName.get(t.kase?.id) ?? opportunityName.get(t.opportunity?.id),
  }));
  const order = (items: unknown[]): unknown[] =>
    items
      .map((item) => JSON.stringify(item))
      .sort()
      .map((text) => JSON.parse(text));
  return { kases: order(kases), entries: order(entries), tasks: order(tasks) };
}

async function exportAll(box: TestSandbox, into: string): Promise<Record<string, Array<Record<string, string>>>> {
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  const files: Record<string, Array<Record<string, string>>> = {};
  try {
    for (const { entity, file, mappings } of EXPORTS) {
      const out = join(into, file);
      const options = normaliseExportOptions({
        entity,
        out,
        raw: true,
        mapping: mappings.map(bundled),
        ...(entity === 'entries' ? { attachments: 'attachments' } : {}),
        cwd: into,
      });
      await runExport(options, { client, account: { baseUrl: box.url, account: box.url } });
      files[entity] = parse(readFileSync(out, 'utf8'), { bom: true, columns: true });
    }
  } finally {
    await client.close();
  }
  return files;
}

describe('round trip of projects, notes and tasks', () => {
  it("the second account has the same projects, notes (files included) and tasks; the importing user's notes keep their text, another author heads hers", async () => {
    const a = await startTestSandbox();
    const b = await startTestSandbox();
    boxes.push(a, b);
    // The second account has the first's stages under other ids: a stage is carried by its name.
    for (const stage of b.store.stages.all()) {
      b.store.stages.delete(stage.id);
      b.store.stages.put({ ...stage, id: stage.id + 200 });
    }
    await seed(a);
    const out = mkdtempSync(join(dir, 'export-'));
    const files = await exportAll(a, out);

    // The files are beside the export, named by attachment id and file name: two minutes.txt stay two.
    const listed = (files.entries ?? []).flatMap((row) =>
      row.attachmentFiles ? (JSON.parse(row.attachmentFiles) as Array<{ file: string; contentType: string }>) : [],
    );
    expect(listed.map((f) => f.file.replace(/\/\d+\//, '/N/')).sort()).toEqual([
      'attachments/N/minutes.txt',
      'attachments/N/minutes.txt',
      'attachments/N/plan.dat',
    ]);
    expect(listed.map((f) => readFileSync(join(out, f.file), 'utf8')).sort()).toEqual([
      '\u0000\u0001\u0002\ufffd',
      'minutes\n',
      'other minutes\n',
    ]);
    expect(JSON.parse(files.kases?.find((k) => k.name === 'Rollout')?.additionalContacts ?? '[]')).toHaveLength(3);
    expect(files.kases?.find((k) => k.name === 'Rollout')?.stage).toBe('In progress');

    writeFileSync(
      join(out, 'plan.yaml'),
      [
        'version: 1',
        'steps:',
        ...STEPS.map(
          ([name, mapping, input]) => `  - { name: ${name}, mapping: ${bundled(mapping)}, input: ${input} }`,
        ),
        '',
      ].join('\n'),
    );
    const client = new CrmClient({ baseUrl: b.url, auth: b.token });
    const run = () =>
      runImport(
        { source: { kind: 'plan', planFile: join(out, 'plan.yaml') }, stateDir: join(out, 'state') },
        { client, account: { baseUrl: b.url, account: b.url } },
      );
    const summary = await run();
    expect(summary.stopped).toBeNull();
    expect(summary.steps.map((s) => [s.step, s.created, s.rejected])).toEqual([
      ['organisations', 2, 0],
      ['people', 2, 0],
      ['opportunities', 1, 0],
      ['kases', 2, 0],
      ['entries', 4, 0],
      ['tasks', 3, 0],
    ]);
    // Every column of the new files is read: nothing is listed as not carried.
    expect(summary.steps.slice(3).map((s) => s.notCarried)).toEqual([[], [], []]);
    // A second import sends nothing: every record, its contacts and its files are as written.
    const again = await run();
    await client.close();
    expect(again.steps.map((s) => [s.created, s.updated, s.unchanged])).toEqual(
      STEPS.map((_, i) => [0, 0, [2, 2, 1, 2, 4, 3][i]]),
    );

    const before = await snapshot(a);
    const after = await snapshot(b);
    expect(after.kases).toEqual(before.kases);
    expect(after.tasks).toEqual(before.tasks);
    // Notes are written by the importing user: the Administrator's, who imports, keep their text
    // byte for byte; another author's (Kim's) is headed with her name.
    const authored = (before.entries as Body[]).map((e) =>
      e.type === 'note'
        ? {
            ...e,
            creator: 'Alex Admin',
            content: e.creator === 'Alex Admin' ? e.content : `Originally by ${e.creator}\n\n${e.content}`,
          }
        : e,
    );
    // (in one order: the second account lists the notes in the order the import wrote them)
    const inOrder = (entries: unknown[]): Body[] =>
      [...(entries as Body[])].sort((x, y) =>
        `${x.type}|${x.on}|${x.entryAt}`.localeCompare(`${y.type}|${y.on}|${y.entryAt}`),
      );
    expect(inOrder(after.entries as Body[])).toEqual(inOrder(authored));
    expect((after.entries as Body[]).filter((e) => e.type === 'note').map((e) => e.content)).toEqual(
      expect.arrayContaining([
        'Kick-off, "quoted"\nsecond line',
        'Same name, other file',
        'On the deal',
        'Originally by Kim Keeper\n\nKim was here\n\nwith two lines',
      ]),
    );
    expect((before.entries as Body[]).find((e) => e.content.startsWith('Kick-off'))?.files).toHaveLength(2);

    // Exported from the second account and imported into a third, a note keeps its one author line.
    const c = await startTestSandbox();
    boxes.push(c);
    const second = mkdtempSync(join(dir, 'export-b-'));
    await exportAll(b, second);
    writeFileSync(join(second, 'plan.yaml'), readFileSync(join(out, 'plan.yaml')));
    const third = new CrmClient({ baseUrl: c.url, auth: c.token });
    await runImport(
      { source: { kind: 'plan', planFile: join(second, 'plan.yaml') }, stateDir: join(second, 'state') },
      { client: third, account: { baseUrl: c.url, account: c.url } },
    );
    await third.close();
    expect(inOrder((await snapshot(c)).entries as Body[])).toEqual(inOrder(authored));

    // Verify finds the notes carried, the Administrator's also in the form earlier versions wrote
    // (headed with her own name), and not a note whose text differs.
    const verify = async (): Promise<unknown[]> => {
      const checker = new CrmClient({ baseUrl: b.url, auth: b.token });
      const verified = await runVerify(
        { source: { kind: 'plan', planFile: join(out, 'plan.yaml') }, stateDir: join(out, 'state') },
        { client: checker, account: { baseUrl: b.url, account: b.url } },
      );
      await checker.close();
      return verified.differences.map((d) => [d.key, d.field, d.inAccount]);
    };
    expect(await verify()).toEqual([]);
    const deal = ((await allPages(b, '/entries', 'entries')) as Body[]).find((e) => e.content === 'On the deal');
    expect(
      (await b.v2('PUT', `/entries/${deal?.id}`, { entry: { content: 'Originally by Alex Admin\n\nOn the deal' } }))
        .status,
    ).toBe(200);
    expect(await verify()).toEqual([]);
    expect((await b.v2('PUT', `/entries/${deal?.id}`, { entry: { content: 'Off the deal' } })).status).toBe(200);
    expect(await verify()).toEqual([[expect.any(String), 'content', 'Off the deal']]);
  });
});

describe('export --attachments', () => {
  it('on the command line: the files beside the output, the column naming them', async () => {
    const a = await startTestSandbox({ tokens: ['history-token'] });
    boxes.push(a);
    const client = new CrmClient({ baseUrl: a.url, auth: 'history-token' });
    const file = join(dir, 'report.pdf');
    writeFileSync(file, '%PDF-1.4 tiny');
    const party = await created(a, '/parties', 'party', { type: 'person', firstName: 'Ada', lastName: 'Lovelace' });
    const attachment = await client.upload(file, { contentType: 'application/pdf' });
    await client.close();
    await created(a, '/entries', 'entry', {
      type: 'note',
      content: 'Signed',
      party: { id: party },
      attachments: [{ token: attachment }],
    });
    const cwd = mkdtempSync(join(dir, 'cli-'));
    mkdirSync(join(cwd, 'out'));
    const { code, stderr } = await runCli(
      [
        'export',
        'entries',
        '--mapping',
        bundled('roundtrip-entries'),
        '--attachments',
        'files',
        '--raw',
        '--out',
        'out/entries.csv',
        '--base-url',
        a.url,
        '--token',
        'history-token',
      ],
      { env: {}, cwd },
    );
    expect(code, stderr).toBe(0);
    const [row] = parse(readFileSync(join(cwd, 'out/entries.csv'), 'utf8'), { bom: true, columns: true }) as Array<
      Record<string, string>
    >;
    const [listed] = JSON.parse(row?.attachmentFiles ?? '[]') as Array<{ file: string; contentType: string }>;
    expect(listed?.contentType).toBe('application/pdf');
    expect(listed?.file).toMatch(/^\.\.\/files\/\d+\/report\.pdf$/);
    expect(readFileSync(join(cwd, 'out', listed?.file ?? ''), 'utf8')).toBe('%PDF-1.4 tiny');
  });

  it('is refused where it cannot apply, and a mapping that reads attachments needs it', async () => {
    const base = { out: join(dir, 'x.csv'), cwd: dir };
    expect(() =>
      normaliseExportOptions({ ...base, entity: 'tasks', attachments: 'files', mapping: [bundled('roundtrip-tasks')] }),
    ).toThrow(/--attachments downloads the files of entries, and this export is of tasks/);
    expect(() => normaliseExportOptions({ ...base, entity: 'entries', attachments: 'files' })).toThrow(
      /goes with a --mapping/,
    );
    const a = await startTestSandbox();
    boxes.push(a);
    const client = new CrmClient({ baseUrl: a.url, auth: a.token });
    try {
      await expect(
        runExport(normaliseExportOptions({ ...base, entity: 'entries', mapping: [bundled('roundtrip-entries')] }), {
          client,
          account: { baseUrl: a.url, account: a.url },
        }),
      ).rejects.toThrow(/reads attachments \(column "attachmentFiles"\).*not in the account's listing/);
      // Files no column names would be downloaded for nothing.
      const noFiles = join(dir, 'no-files.yaml');
      writeFileSync(
        noFiles,
        'version: 1\nentity: entry\nkey: "{{id}}"\nfields:\n  - { to: content, value: { column: content } }\n',
      );
      await expect(
        runExport(normaliseExportOptions({ ...base, entity: 'entries', mapping: [noFiles], attachments: 'files' }), {
          client,
          account: { baseUrl: a.url, account: a.url },
        }),
      ).rejects.toThrow(/--attachments: the mapping reads no attachments/);
      await expect(
        runExport(
          normaliseExportOptions({
            ...base,
            entity: 'entries',
            mapping: [bundled('roundtrip-entries')],
            attachments: noFiles,
          }),
          { client, account: { baseUrl: a.url, account: a.url } },
        ),
      ).rejects.toThrow(/is not a folder/);
    } finally {
      await client.close();
    }
  });
});
