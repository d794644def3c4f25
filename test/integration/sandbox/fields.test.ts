import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

let sandbox: TestSandbox;
beforeAll(async () => {
  sandbox = await startTestSandbox();
});
afterAll(() => sandbox.close());

const definition = (name: string): any => {
  const found = sandbox.store.fieldDefinitions.all().find((d) => d.name === name);
  if (!found) throw new Error(`no seeded field ${name}`);
  return found;
};

describe('custom field definitions (2.1; listings beyond the spec)', () => {
  it('lists the party definitions with type, options, data tag and important', async () => {
    const answer = await sandbox.v2('GET', '/parties/fields/definitions');
    expect(answer.status).toBe(200);
    const byName = Object.fromEntries(answer.body.definitions.map((d: any) => [d.name, d]));
    expect(Object.keys(byName)).toEqual(
      expect.arrayContaining(['Industry', 'Customer since', 'VIP', 'Account number', 'Support level']),
    );
    expect(byName.Industry).toMatchObject({
      type: 'List',
      options: expect.arrayContaining(['Retail']),
      tag: null,
      important: false,
    });
    expect(byName['Account number']).toMatchObject({
      type: 'Text',
      important: true,
      options: null,
      pattern: expect.any(String),
    });
    expect(byName['Support level'].tag).toEqual({ id: definition('Support level').tagId, name: 'Customer' });
    expect(byName['Preferred language'].forClass).toBe('PERSON');
    expect(answer.body.definitions.some((d: any) => d.name === 'Priority')).toBe(false);
  });

  it('lists opportunity and project definitions separately', async () => {
    const opportunities = await sandbox.v2('GET', '/opportunities/fields/definitions');
    expect(opportunities.body.definitions.map((d: any) => d.name)).toEqual([
      'Lead source',
      'Signed',
      'Contract start',
      'Competitor',
    ]);
    const kases = await sandbox.v2('GET', '/kases/fields/definitions');
    expect(kases.body.definitions.map((d: any) => d.name)).toEqual(['Priority', 'Go-live', 'Reference', 'Billable']);
    expect(kases.body.definitions[0].forClass).toBeUndefined();
  });

  it('pages definitions with a Link header', async () => {
    const first = await sandbox.v2('GET', '/kases/fields/definitions?perPage=3');
    expect(first.body.definitions).toHaveLength(3);
    expect(first.headers.link).toMatch(/rel="next"/);
    const second = await sandbox.v2('GET', '/kases/fields/definitions?perPage=3&page=2');
    expect(second.body.definitions.map((d: any) => d.name)).toEqual(['Billable']);
    expect((await sandbox.v2('GET', '/kases/fields/definitions?perPage=0')).status).toBe(400);
  });

  it('reads one definition and answers 404 for another entity or an unknown id', async () => {
    const vip = definition('VIP');
    const answer = await sandbox.v2('GET', `/parties/fields/definitions/${vip.id}`);
    expect(answer.body.definition).toMatchObject({ id: vip.id, name: 'VIP', type: 'Boolean' });
    expect((await sandbox.v2('GET', `/kases/fields/definitions/${vip.id}`)).status).toBe(404);
    expect((await sandbox.v2('GET', '/parties/fields/definitions/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', '/parties/fields/definitions/vip')).status).toBe(404);
  });
});

describe('tags (2.1; listings beyond the spec)', () => {
  it('lists the tags of each entity, including tags created by a record', async () => {
    const parties = await sandbox.v2('GET', '/parties/tags');
    expect(parties.status).toBe(200);
    expect(parties.body.tags).toEqual(
      expect.arrayContaining([
        { id: expect.any(Number), name: 'Customer', description: 'Customers under contract', dataTag: true },
        { id: expect.any(Number), name: 'Prospect', description: null, dataTag: false },
      ]),
    );
    expect((await sandbox.v2('GET', '/kases/tags')).body.tags).toEqual([]);

    const party = (await sandbox.v2('POST', '/parties', { party: { type: 'person', lastName: 'T' } })).body.party;
    const opportunity = await sandbox.v2('POST', '/opportunities', {
      opportunity: {
        name: 'Tagged',
        party: { id: party.id },
        milestone: { name: 'New' },
        tags: [{ name: 'Enterprise' }],
      },
    });
    expect(opportunity.status).toBe(201);
    const tags = await sandbox.v2('GET', '/opportunities/tags');
    expect(tags.body.tags).toEqual([
      { id: opportunity.body.opportunity.tags[0].id, name: 'Enterprise', description: null, dataTag: false },
    ]);
    // A tag belongs to one entity: the party tag list does not show it.
    expect((await sandbox.v2('GET', '/parties/tags')).body.tags.some((t: any) => t.name === 'Enterprise')).toBe(false);
  });

  it('creates a tag (beyond the spec), reads it back, and refuses a second of the same name', async () => {
    const made = await sandbox.v2('POST', '/parties/tags', { tag: { name: ' Partner ' } });
    expect(made.status).toBe(201);
    expect(made.body.tag).toEqual({ id: expect.any(Number), name: 'Partner', description: null, dataTag: false });
    const id = made.body.tag.id as number;
    expect(new URL(String(made.headers.location)).pathname).toBe(`/api/v2/parties/tags/${id}`);
    expect((await sandbox.v2('GET', `/parties/tags/${id}`)).body.tag).toEqual(made.body.tag);
    expect((await sandbox.v2('GET', `/kases/tags/${id}`)).status).toBe(404);
    // A record naming the tag gets this one rather than a new one.
    const party = await sandbox.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Tagged Partner', tags: [{ name: 'partner' }] },
    });
    expect(party.body.party.tags).toEqual([{ id, name: 'Partner', dataTag: false }]);

    const again = await sandbox.v2('POST', '/parties/tags', { tag: { name: 'PARTNER' } });
    expect(again.status).toBe(422);
    expect(again.body.errors).toEqual([
      { field: 'name', resource: 'tag', message: `a parties tag named "Partner" exists already (id ${id})` },
    ]);
    // The same name is free on another entity.
    expect((await sandbox.v2('POST', '/kases/tags', { tag: { name: 'Partner' } })).status).toBe(201);
    const blank = await sandbox.v2('POST', '/parties/tags', { tag: { name: ' ', colour: 'red' } });
    expect(blank.status).toBe(422);
    expect(blank.body.errors.map((e: any) => e.field)).toEqual(['colour', 'name']);
  });

  it('pages tags', async () => {
    const answer = await sandbox.v2('GET', '/parties/tags?perPage=1&page=2');
    expect(answer.body.tags).toHaveLength(1);
    expect(answer.headers.link).toMatch(/rel="prev"/);
  });
});

describe('custom field values on records (2.1, 4.1 create rule 3)', () => {
  it.each([
    ['Date', 'Customer since', '2024-02-29', '2023-02-29'],
    ['Date', 'Customer since', '2024-01-05', '5 Jan 2024'],
    ['Boolean', 'VIP', true, 'true'],
    ['List', 'Industry', 'Software', 'software'],
    ['Text', 'Account number', 'GB-123456', 'GB123456'],
  ])('checks a %s value (%s): %j is stored, %j is refused', async (_type, name, good, bad) => {
    const id = definition(name).id;
    const ok = await sandbox.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Values', fields: [{ definition: id, value: good }] },
    });
    expect(ok.status).toBe(201);
    expect(ok.body.party.fields[0]).toMatchObject({ definition: { id, name }, value: good, tagId: null });
    const refused = await sandbox.v2('POST', '/parties', {
      party: { type: 'organisation', name: 'Values', fields: [{ definition: id, value: bad }] },
    });
    expect(refused.status).toBe(422);
    expect(refused.body.errors[0]).toMatchObject({ field: 'fields[0].value', resource: 'party' });
  });

  it('needs tag null for a field named outside data tags, and the right tag for a data-tag field', async () => {
    const create = (definitionRef: unknown): Promise<any> =>
      sandbox.v2('POST', '/parties', {
        party: { type: 'organisation', name: 'Refs', fields: [{ definition: definitionRef, value: 'Gold' }] },
      });
    expect((await create({ name: 'Support level' })).body.errors[0].field).toBe('fields[0].definition.tag');
    expect((await create({ name: 'Support level', tag: null })).status).toBe(422);
    expect((await create({ name: 'Support level', tag: 'Prospect' })).status).toBe(422);
    const customer = sandbox.store.tags.all().find((t) => t.name === 'Customer');
    const byTagId = await create({ name: 'Support level', tag: customer?.id });
    expect(byTagId.status).toBe(201);
    expect(byTagId.body.party.fields[0].tagId).toBe(customer?.id);
  });

  it('keeps one value per field: setting a field again replaces its value', async () => {
    const id = definition('Industry').id;
    const party = (
      await sandbox.v2('POST', '/parties', {
        party: { type: 'organisation', name: 'Once', fields: [{ definition: id, value: 'Retail' }] },
      })
    ).body.party;
    const answer = await sandbox.v2('PUT', `/parties/${party.id}`, {
      party: { fields: [{ definition: id, value: 'Finance' }] },
    });
    expect(answer.body.party.fields).toEqual([
      { id: party.fields[0].id, definition: { id, name: 'Industry' }, value: 'Finance', tagId: null },
    ]);
  });
});
