import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../client/index.ts';
import { startTestSandbox, type TestSandbox } from '../../test/helpers/sandbox.ts';
import { readAccountCatalog } from '../client/account-catalog.ts';
import { CatalogResolver, resolveRecord, type AccountCatalog } from './resolve.ts';
import type { MappedRecord, NameUse } from './types.ts';

let sandbox: TestSandbox;
let client: CrmClient;
let catalog: AccountCatalog;
let resolver: CatalogResolver;
let renewalsId: number;

beforeAll(async () => {
  sandbox = await startTestSandbox();
  // A second pipeline with the same milestones makes `Won` ambiguous without a pipeline.
  const copy = await sandbox.v2(
    'POST',
    '/pipelines/' + (await sandbox.v2('GET', '/pipelines')).body.pipelines[0].id + '/duplicate',
  );
  expect(copy.status).toBe(201);
  const renewals = await sandbox.v2('POST', '/pipelines', { pipeline: { name: 'Renewals' } });
  renewalsId = renewals.body.pipeline.id;
  expect(
    (
      await sandbox.v2('POST', '/milestones', {
        milestone: { name: 'Renewed', probability: 100, pipeline: { id: renewalsId } },
      })
    ).status,
  ).toBe(201);
  client = new CrmClient({ baseUrl: sandbox.url, auth: sandbox.token });
  catalog = await readAccountCatalog(client);
  resolver = new CatalogResolver(await readAccountCatalog(client));
});

afterAll(async () => {
  await client?.close();
  await sandbox?.close();
});

describe('readAccountCatalog (sandbox)', () => {
  it('reads users, teams, pipelines with milestones, activity types, categories, fields and tracks', () => {
    expect(catalog.users.map((u) => u.username)).toEqual(['admin', 'sam', 'kim']);
    expect(catalog.teams?.map((t) => t.name)).toEqual(['Sales', 'Support']);
    expect(catalog.pipelines.map((p) => p.name)).toEqual(['Sales', 'Sales (copy)', 'Renewals']);
    expect(catalog.milestones.filter((m) => m.name === 'Won').map((m) => m.pipelineName)).toEqual([
      'Sales',
      'Sales (copy)',
    ]);
    expect(catalog.activityTypes.map((a) => a.name)).toEqual(
      expect.arrayContaining(['Note', 'Meeting', 'Call', 'Email follow-up']),
    );
    expect(catalog.taskCategories.map((c) => c.name)).toEqual(['Call', 'Email', 'Follow-up', 'Meeting']);
    expect(catalog.fieldDefinitions.parties.find((d) => d.name === 'Contract end')?.tag).toBe('Customer');
    expect(catalog.fieldDefinitions.parties.find((d) => d.name === 'Industry')?.tag).toBeNull();
    expect(catalog.fieldDefinitions.kases.map((d) => d.name)).toEqual(['Priority', 'Go-live', 'Reference', 'Billable']);
    expect(catalog.trackDefinitions.map((t) => t.name)).toEqual(['Onboarding', 'Deal follow-up']);
  });
});

describe('CatalogResolver (sandbox)', () => {
  const user = (name: string) => resolver.resolve('user', name);
  it('users by username, any case; unknown ones get suggestions', () => {
    const sam = catalog.users.find((u) => u.username === 'sam')?.id;
    expect(user('SAM')).toBe(sam);
    expect(user(' sam ')).toBe(sam);
    expect(user('samm')).toBeUndefined();
    expect(resolver.suggest('user', 'samm')).toEqual(['sam']);
    expect(resolver.explain('user', 'samm')).toBe('unknown user `samm`; did you mean `sam`?');
  });

  it('users by email address, any case', () => {
    expect(user('Kim@Sandbox.Example')).toBe(catalog.users.find((u) => u.username === 'kim')?.id);
  });

  it('milestones within a pipeline, or the only match across active pipelines', () => {
    const renewed = catalog.milestones.find((m) => m.name === 'Renewed');
    expect(resolver.resolve('milestone', 'Renewed', { pipeline: null })).toBe(renewed?.id);
    const salesWon = catalog.milestones.find((m) => m.name === 'Won' && m.pipelineName === 'Sales');
    expect(resolver.resolve('milestone', 'won', { pipeline: 'sales' })).toBe(salesWon?.id);
    expect(resolver.resolve('milestone', 'Won', { pipeline: null })).toBeUndefined();
    expect(resolver.explain('milestone', 'Won', { pipeline: null })).toBe(
      'milestone `Won` is in several pipelines (`Sales`, `Sales (copy)`); name the pipeline (a `pipeline` field) to choose one',
    );
    expect(resolver.resolve('milestone', 'Renewed', { pipeline: 'Sales' })).toBeUndefined();
  });

  it('says which milestone or pipeline is unknown, with the closest names', () => {
    expect(resolver.explain('milestone', 'Wonn', { pipeline: 'Sales' })).toBe(
      'unknown milestone `Wonn` in pipeline `Sales`; did you mean `Won`?',
    );
    expect(resolver.explain('milestone', 'Won', { pipeline: 'Sals' })).toBe(
      'unknown pipeline `Sals`; did you mean `Sales`?',
    );
    expect(resolver.suggest('milestone', 'Proposl', { pipeline: 'Sales' })).toEqual(['Proposal']);
  });

  it('custom fields by name within entity and data tag', () => {
    const industry = catalog.fieldDefinitions.parties.find((d) => d.name === 'Industry')?.id;
    expect(resolver.resolve('fieldDefinition', 'Industry', { entity: 'parties', tag: null })).toBe(industry);
    expect(resolver.resolve('fieldDefinition', 'Industry', { entity: 'parties', tag: 'Customer' })).toBeUndefined();
    expect(resolver.resolve('fieldDefinition', 'Industry', { entity: 'kases', tag: null })).toBeUndefined();
    const contractEnd = catalog.fieldDefinitions.parties.find((d) => d.name === 'Contract end')?.id;
    expect(resolver.resolve('fieldDefinition', 'contract end', { entity: 'parties', tag: 'customer' })).toBe(
      contractEnd,
    );
    expect(resolver.explain('fieldDefinition', 'Industy', { entity: 'parties', tag: null })).toBe(
      'unknown custom field `Industy` without a data tag of parties; did you mean `Industry`?',
    );
    expect(resolver.explain('fieldDefinition', 'Support levl', { entity: 'parties', tag: 'Customer' })).toBe(
      'unknown custom field `Support levl` in data tag `Customer` of parties; did you mean `Support level`?',
    );
  });

  it('activity types (built-in ones too), task categories, track definitions, teams and pipelines', () => {
    expect(resolver.resolve('activityType', 'meeting')).toBe(-2);
    expect(resolver.resolve('activityType', '-3')).toBe(-3);
    expect(resolver.resolve('taskCategory', 'Follow-up')).toBe(
      catalog.taskCategories.find((c) => c.name === 'Follow-up')?.id,
    );
    expect(resolver.resolve('trackDefinition', 'Onboarding')).toBe(catalog.trackDefinitions[0]?.id);
    expect(resolver.resolve('team', 'support')).toBe(catalog.teams?.[1]?.id);
    expect(resolver.resolve('pipeline', 'Renewals')).toBe(renewalsId);
    expect(resolver.suggest('taskCategory', 'Cal')).toEqual(['Call']);
    expect(resolver.explain('activityType', 'Meetng')).toBe('unknown activity type `Meetng`; did you mean `Meeting`?');
  });

  it('stages by name (any case) or id, read from GET /stages; unknown ones get suggestions', () => {
    expect(catalog.stages?.map((s) => [s.name, s.boardName])).toEqual([
      ['Planned', 'Projects'],
      ['In progress', 'Projects'],
      ['Review', 'Projects'],
      ['Done', 'Projects'],
    ]);
    expect(resolver.resolve('stage', 'review')).toBe(103);
    expect(resolver.resolve('stage', '102')).toBe(102);
    expect(resolver.resolve('stage', '999')).toBeUndefined();
    expect(resolver.explain('stage', 'Reviw')).toBe('unknown project stage `Reviw`; did you mean `Review`?');
  });

  it('a stage name on two boards is ambiguous; without a stage list, ids pass and names cannot be checked', () => {
    const twoBoards = new CatalogResolver({
      ...catalog,
      stages: [...(catalog.stages ?? []), { id: 201, name: 'Review', boardName: 'Support' }],
    });
    expect(twoBoards.resolve('stage', 'Review')).toBeUndefined();
    expect(twoBoards.explain('stage', 'Review')).toBe(
      "project stage `Review` is on several boards (`Projects` (id 103), `Support` (id 201)); give the stage's id",
    );
    const unlisted = new CatalogResolver({ ...catalog, stages: null });
    expect(unlisted.resolve('stage', '102')).toBe(102);
    expect(unlisted.resolve('stage', 'Review')).toBeUndefined();
    expect(unlisted.explain('stage', 'Review')).toMatch(
      /^project stage `Review` cannot be checked by name: the service does not list stages/,
    );
  });

  it('lost reasons by name, written as the account spells them', () => {
    expect(catalog.lostReasons?.map((r) => r.name)).toEqual([
      'Price',
      'Competitor',
      'No budget',
      'Timing',
      'No decision',
    ]);
    const id = resolver.resolve('lostReason', 'no BUDGET');
    expect(resolver.nameOf('lostReason', id as number)).toBe('No budget');
    expect(resolver.explain('lostReason', 'Competitors')).toBe(
      'unknown lost reason `Competitors`; did you mean `Competitor`?',
    );
    const record: MappedRecord = {
      kind: 'record',
      entity: 'opportunity',
      key: 'k',
      row: 2,
      location: { file: 'o.csv', row: 2 } as any,
      record: { lostReason: null },
      names: [{ path: ['lostReason'], kind: 'lostReason', name: 'price', yamlPath: 'fields[3]' }],
      refs: [],
      attachments: [],
      valuesOf: () => ({}),
    };
    expect(resolveRecord(record, resolver)).toEqual([]);
    expect(record.record.lostReason).toBe('Price');
  });

  it('the filled record is accepted by the sandbox', async () => {
    const org = await sandbox.v2('POST', '/parties', { party: { type: 'organisation', name: 'Acme' } });
    const names: NameUse[] = [
      { path: ['owner'], kind: 'user', name: 'kim', yamlPath: 'fields[2]' },
      { path: ['milestone'], kind: 'milestone', name: 'Proposal', scope: { pipeline: 'Sales' }, yamlPath: 'fields[3]' },
      {
        path: ['fields', 0, 'definition'],
        kind: 'fieldDefinition',
        name: 'Lead source',
        scope: { entity: 'opportunities', tag: null },
        yamlPath: 'fields[4].definition',
      },
    ];
    const mapped: MappedRecord = {
      kind: 'record',
      entity: 'opportunity',
      key: 'D-1',
      row: 2,
      location: { file: 'deals.csv', row: 2 },
      record: {
        name: 'Big deal',
        party: { id: org.body.party.id },
        owner: null,
        milestone: null,
        fields: [{ definition: null, value: 'Web' }],
      },
      names,
      refs: [],
      attachments: [],
      valuesOf: () => ({}),
    };
    expect(resolveRecord(mapped, resolver)).toEqual([]);
    const created = await sandbox.v2('POST', '/opportunities?embed=fields', { opportunity: mapped.record });
    expect(created.status).toBe(201);
    expect(created.body.opportunity.milestone.name).toBe('Proposal');
    expect(created.body.opportunity.owner.username).toBe('kim');
    expect(created.body.opportunity.fields[0].value).toBe('Web');
  });
});
