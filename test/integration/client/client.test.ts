import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../../src/client/index.ts';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

describe('CrmClient against the sandbox', () => {
  let sandbox: TestSandbox;
  let client: CrmClient;
  let dir: string;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ jobDurationMs: 50 });
    client = new CrmClient({ baseUrl: sandbox.url, auth: sandbox.token });
    dir = await mkdtemp(join(tmpdir(), 'ferry-client-'));
  });
  afterAll(async () => {
    await client.close();
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('creates, reads, updates and lists parties across pages', async () => {
    const org = await client.parties.create({ type: 'organisation', name: 'Paging Ltd' });
    const ids: number[] = [];
    for (let i = 0; i < 120; i += 1) {
      const person = await client.parties.create({ type: 'person', firstName: 'Page', lastName: `Person ${i}`, organisation: { id: org.id } });
      ids.push(person.id);
    }
    const updated = await client.parties.update(ids[0] as number, { jobTitle: 'Buyer' });
    expect(updated).toMatchObject({ id: ids[0], jobTitle: 'Buyer' });
    const listed: number[] = [];
    for await (const party of client.parties.list({ perPage: 50 })) listed.push(party.id);
    expect(listed).toEqual(expect.arrayContaining([org.id, ...ids]));
    expect(new Set(listed).size).toBe(listed.length);
  });

  it('reads many ids in chunks of ten, leaving out ids that do not exist', async () => {
    const made = [];
    for (let i = 0; i < 13; i += 1) made.push((await client.parties.create({ type: 'organisation', name: `Chunk ${i}` })).id);
    const found = await client.parties.getMany([...made, 999_999_999]);
    expect(found.map((p) => p.id)).toEqual(made);
  });

  it('runs a filter through every page', async () => {
    const found: string[] = [];
    for await (const party of client.filter('parties', { conditions: [{ field: 'name', operator: 'starts with', value: 'Chunk' }] }, { perPage: 5 })) {
      found.push(String(party.name));
    }
    expect(found).toHaveLength(13);
  });

  it('uploads a file, attaches it to a note and downloads it again', async () => {
    const party = await client.parties.create({ type: 'organisation', name: 'Files Inc' });
    const file = join(dir, 'Prüfbericht.bin');
    const bytes = Buffer.from(Array.from({ length: 70_000 }, (_, i) => i % 256));
    await writeFile(file, bytes);
    const token = await client.upload(file, { contentType: 'application/octet-stream' });
    const entry = await client.entries.create({ type: 'note', party: { id: party.id }, content: 'see attachment', attachments: [{ token }] });
    const attachment = entry.attachments?.[0];
    expect(attachment?.filename).toBe('Prüfbericht.bin');
    const target = join(dir, 'copy.bin');
    const result = await client.download(attachment?.id as number, target);
    expect(result.bytes).toBe(bytes.length);
    expect(Buffer.compare(await readFile(target), bytes)).toBe(0);
  });

  it('waits for a scheduled delete (202) to complete', async () => {
    const party = await client.parties.create({ type: 'organisation', name: 'Gone Soon' });
    await client.entries.create({ type: 'note', party: { id: party.id }, content: 'history' });
    const result = await client.parties.delete(party.id, { wait: true });
    expect(result.status).toBe(202);
    expect(result.job?.status).toBe('completed');
    await expect(client.parties.get(party.id)).rejects.toMatchObject({ code: 'API_NOT_FOUND' });
  });

  it('reads the reference lists', async () => {
    expect((await client.users()).map((u) => u.username)).toEqual(expect.arrayContaining(['admin', 'sam', 'kim']));
    expect((await client.countries()).find((c) => c.alpha2Code === 'DE')?.name).toBe('Germany');
    expect((await client.currencies()).some((c) => c.code === 'EUR')).toBe(true);
    expect((await client.fieldDefinitions('parties')).map((d) => d.name)).toContain('Industry');
    expect((await client.taskCategories()).map((c) => c.name)).toContain('Follow-up');
  });

  it('turns a validation failure into API_VALIDATION with field errors', async () => {
    const error = await client.parties.create({ type: 'person' }).catch((e: unknown) => e);
    expect(error).toMatchObject({ code: 'API_VALIDATION', status: 422 });
    expect((error as { fieldErrors: unknown[] }).fieldErrors.length).toBeGreaterThan(0);
  });

  it('reaches the related lists: people, entries, tracks, contacts, pipelines and icons', async () => {
    const collect = async <T>(items: AsyncIterable<T>): Promise<T[]> => {
      const all: T[] = [];
      for await (const item of items) all.push(item);
      return all;
    };
    const org = await client.parties.create({ type: 'organisation', name: 'Related Ltd' });
    const person = await client.parties.create({ type: 'person', firstName: 'Rel', lastName: 'Ated', organisation: { id: org.id } });
    const contact = await client.parties.create({ type: 'person', firstName: 'Extra', lastName: 'Contact' });
    const definition = (await collect(client.trackDefinitions.list())).find((d) => d.description === 'Onboarding');
    const kase = await client.kases.create({ name: 'Related project', party: { id: org.id }, tracks: [{ definition: definition?.id }] });
    await client.entries.create({ type: 'note', kase: { id: kase.id }, content: 'on the project' });
    await client.addKaseParty(kase.id, contact.id);
    await client.addKaseParty(kase.id, contact.id);

    expect((await collect(client.people(org.id))).map((p) => p.id)).toEqual([person.id]);
    expect((await collect(client.entriesOf('kases', kase.id))).map((e) => e.content)).toEqual(['on the project']);
    expect(await collect(client.tracksOf('kases', kase.id))).toHaveLength(1);
    expect((await collect(client.kasesOf(org.id))).map((k) => k.id)).toEqual([kase.id]);
    expect((await collect(client.partiesOf('kases', kase.id))).map((p) => p.id)).toEqual([contact.id]);
    await client.removeKaseParty(kase.id, contact.id);
    expect(await collect(client.partiesOf('kases', kase.id))).toEqual([]);

    const [sales] = await collect(client.pipelines.list());
    const copy = await client.duplicatePipeline(sales?.id as number);
    expect((await client.pipelineMilestones(copy.id)).map((m) => m.name)).toContain('Won');
    await client.pipelines.delete(copy.id);
    expect((await collect(client.pipelines.list())).map((p) => p.id)).not.toContain(copy.id);
    expect((await client.pipelinesIncludingArchived()).map((p) => p.id)).toContain(copy.id);
    expect((await client.restorePipeline(copy.id)).id).toBe(copy.id);

    const icons = await client.activityTypeIcons();
    expect(icons).toHaveLength(29);
    expect(icons[0]).toMatchObject({ id: 'BARCHART', order: 0, iconName: 'bar-chart' });
  });
});
