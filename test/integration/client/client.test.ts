import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient, RecordService } from '../../../src/client/index.ts';
import { partySchema, pipelineSchema, trackDefinitionSchema } from '../../../src/client/schemas.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

describe('CrmClient against the sandbox', () => {
  let sandbox: TestSandbox;
  let client: CrmClient;
  let records: RecordService;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ jobDurationMs: 50 });
    client = new CrmClient({ baseUrl: sandbox.url, auth: sandbox.token });
    records = new RecordService(client);
    dir = await mkdtemp(join(tmpdir(), 'ferry-client-'));
  });
  afterAll(async () => {
    await client.close();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates, reads, updates and lists parties across pages', async () => {
    const org = await records.create('party', { type: 'organisation', name: 'Paging Ltd' });
    const ids: number[] = [];
    for (let i = 0; i < 120; i += 1)
      ids.push(
        await records.create('party', {
          type: 'person',
          firstName: 'Page',
          lastName: `Person ${i}`,
          organisation: { id: org },
        }),
      );
    await records.update('party', ids[0] as number, { jobTitle: 'Buyer' });
    expect(await records.read('party', ids[0] as number)).toMatchObject({ id: ids[0], jobTitle: 'Buyer' });
    const listed: number[] = [];
    for await (const party of client.paginate('/parties', 'parties', partySchema, { perPage: 50 }))
      listed.push(party.id);
    expect(listed).toEqual(expect.arrayContaining([org, ...ids]));
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('reads a record, and null for one that does not exist', async () => {
    const made: number[] = [];
    for (let i = 0; i < 13; i += 1)
      made.push(await records.create('party', { type: 'organisation', name: `Chunk ${i}` }));
    expect(await records.read('party', made[12] as number)).toMatchObject({ id: made[12], name: 'Chunk 12' });
    expect(await records.read('party', 999_999_999)).toBeNull();
  });

  it('runs a filter through every page', async () => {
    const found: string[] = [];
    for await (const party of client.filter(
      'parties',
      { conditions: [{ field: 'name', operator: 'starts with', value: 'Chunk' }] },
      { perPage: 5 },
    )) {
      found.push(String(party.name));
    }
    expect(found).toHaveLength(13);
  });

  it('uploads a file, attaches it to a note and downloads it again', async () => {
    const party = await records.create('party', { type: 'organisation', name: 'Files Inc' });
    const file = join(dir, 'Prüfbericht.bin');
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 256));
    await writeFile(file, bytes);
    const token = await client.upload(file, { contentType: 'application/octet-stream' });
    const entry = await records.read(
      'entry',
      await records.create('entry', {
        type: 'note',
        party: { id: party },
        content: 'see attachment',
        attachments: [{ token }],
      }),
    );
    const attachment = (entry?.attachments as Array<{ id: number; filename: string }> | undefined)?.[0];
    expect(attachment?.filename).toBe('Prüfbericht.bin');
    const target = join(dir, 'copy.bin');
    const result = await client.download(attachment?.id as number, target);
    expect(result.bytes).toBe(bytes.length);
    expect(Buffer.compare(await readFile(target), bytes)).toBe(0);
  });

  it('waits for a scheduled delete (202) to complete', async () => {
    const party = await records.create('party', { type: 'organisation', name: 'Gone Soon' });
    await records.create('entry', { type: 'note', party: { id: party }, content: 'history' });
    const before = client.transport.requestsSent;
    expect(await records.remove('party', party)).toBe(true);
    // The DELETE, then the job until it says completed.
    expect(client.transport.requestsSent - before).toBeGreaterThan(1);
    expect(await records.read('party', party)).toBeNull();
    expect(await records.remove('party', party)).toBe(false);
  });

  it('reads the reference lists', async () => {
    expect((await client.users()).map((u) => u.username)).toEqual(expect.arrayContaining(['admin', 'sam', 'kim']));
    expect((await client.countries()).find((c) => c.alpha2Code === 'DE')?.name).toBe('Germany');
    expect((await client.currencies()).some((c) => c.code === 'EUR')).toBe(true);
    expect((await client.fieldDefinitions('parties')).map((d) => d.name)).toContain('Industry');
    expect((await client.taskCategories()).map((c) => c.name)).toContain('Follow-up');
  });

  it('turns a validation failure into API_VALIDATION with field errors', async () => {
    const error = await records.create('party', { type: 'person' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'API_VALIDATION', status: 422 });
    expect((error as { fieldErrors: unknown[] }).fieldErrors.length).toBeGreaterThan(0);
  });

  it('reaches the related lists: people, entries, tracks, contacts, pipelines and icons', async () => {
    const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
      const all: T[] = [];
      for await (const item of items) all.push(item);
      return all;
    };
    const org = await records.create('party', { type: 'organisation', name: 'Related Ltd' });
    const person = await records.create('party', {
      type: 'person',
      firstName: 'Rel',
      lastName: 'Ated',
      organisation: { id: org },
    });
    const contact = await records.create('party', { type: 'person', firstName: 'Extra', lastName: 'Contact' });
    const definition = (
      await collect(client.paginate('/trackdefinitions', 'trackDefinitions', trackDefinitionSchema))
    ).find((d) => d.description === 'Onboarding');
    const kase = await records.create('kase', {
      name: 'Related project',
      party: { id: org },
      tracks: [{ definition: definition?.id }],
    });
    await records.create('entry', { type: 'note', kase: { id: kase }, content: 'on the project' });
    await client.addKaseParty(kase, contact);
    await client.addKaseParty(kase, contact);

    expect((await collect(client.people(org))).map((p) => p.id)).toEqual([person]);
    expect((await collect(client.entriesOf('kases', kase))).map((e) => e.content)).toEqual(['on the project']);
    expect(await collect(client.tracksOf('kases', kase))).toHaveLength(1);
    expect((await collect(client.kasesOf(org))).map((k) => k.id)).toEqual([kase]);
    expect((await collect(client.partiesOf('kases', kase))).map((p) => p.id)).toEqual([contact]);
    expect(await collect(records.contactsOf(kase))).toEqual([contact]);
    await client.removeKaseParty(kase, contact);
    expect(await collect(client.partiesOf('kases', kase))).toEqual([]);

    const pipelines = () => collect(client.paginate('/pipelines', 'pipelines', pipelineSchema));
    const [sales] = await pipelines();
    const copy = await client.duplicatePipeline(sales?.id as number);
    expect((await client.pipelineMilestones(copy.id)).map((m) => m.name)).toContain('Won');
    await client.transport.request({ method: 'DELETE', path: `/pipelines/${copy.id}` });
    expect((await pipelines()).map((p) => p.id)).not.toContain(copy.id);
    expect((await client.pipelinesIncludingArchived()).map((p) => p.id)).toContain(copy.id);
    expect((await client.restorePipeline(copy.id)).id).toBe(copy.id);

    const icons = await client.activityTypeIcons();
    expect(icons).toHaveLength(29);
    expect(icons[0]).toMatchObject({ id: 'BARCHART', order: 0, iconName: 'bar-chart' });
  });
});
