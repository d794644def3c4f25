import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';

const ICON_IDS = [
  'BARCHART',
  'PIECHART',
  'MONEY',
  'TAG',
  'CAMERA',
  'PICTURE',
  'BELL',
  'CAR',
  'PLANE',
  'DOCUMENT',
  'DOCUMENT2',
  'SPREADSHEET',
  'PHONE',
  'PERSONWALKING',
  'SHOPPINGCART',
  'LOCATION',
  'CLIPBOARD',
  'MIC',
  'MEETING',
  'PACKAGE',
  'CLOCK',
  'DOUBLESPEECHBUBBLE',
  'COG',
  'LINK',
  'STAR',
  'CREDITCARD',
  'MAIL',
  'LINECHART',
  'SHOPPINGBASKET',
];

describe('4.9 activity types: icons', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it('lists the 29 icons in order, none of them system icons', async () => {
    const answer = await sandbox.v2('GET', '/activitytypes/icons');
    expect(answer.status).toBe(200);
    const icons = answer.body.activityTypeIcons as Array<Record<string, unknown>>;
    expect(icons.map((i) => i.id)).toEqual(ICON_IDS);
    expect(icons.map((i) => i.order)).toEqual(ICON_IDS.map((_, index) => index));
    expect(icons.every((i) => i.isSystem === false)).toBe(true);
    expect(icons.every((i) => /^[a-z0-9]+(-[a-z0-9]+)*$/.test(String(i.iconName)))).toBe(true);
  });

  it('gives each icon its hyphenated icon name and a display name', async () => {
    const answer = await sandbox.v2('GET', '/activitytypes/icons');
    const byId = new Map((answer.body.activityTypeIcons as Array<Record<string, unknown>>).map((i) => [i.id, i]));
    expect(byId.get('DOCUMENT2')).toEqual({
      order: 10,
      id: 'DOCUMENT2',
      displayName: 'Document 2',
      iconName: 'document-2',
      isSystem: false,
    });
    expect(byId.get('DOUBLESPEECHBUBBLE')?.iconName).toBe('double-speech-bubble');
    expect(byId.get('SHOPPINGBASKET')).toMatchObject({
      order: 28,
      iconName: 'shopping-basket',
      displayName: 'Shopping basket',
    });
  });
});

describe('4.9 activity types', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it("lists the built-in types first (-1 Note, -2 Meeting, -3 Call), then the account's own", async () => {
    await sandbox.v2('POST', '/activitytypes', { activityType: { name: 'Lunch', icon: { id: 'STAR' } } });
    const answer = await sandbox.v2('GET', '/activitytypes');
    expect(answer.status).toBe(200);
    const types = answer.body.activityTypes as Array<{ id: number; name: string }>;
    expect(types.slice(0, 3).map((t) => [t.id, t.name])).toEqual([
      [-1, 'Note'],
      [-2, 'Meeting'],
      [-3, 'Call'],
    ]);
    expect(types.slice(3).map((t) => t.name)).toEqual(['Email follow-up', 'Lunch']);
    const paged = await sandbox.v2('GET', '/activitytypes?perPage=2&page=2');
    expect(paged.body.activityTypes.map((t: { id: number }) => t.id)).toEqual([-3, types[3]?.id]);
  });

  it('reads one type with its full icon, including built-in negative ids', async () => {
    const answer = await sandbox.v2('GET', '/activitytypes/-2');
    expect(answer.status).toBe(200);
    expect(answer.body.activityType).toEqual({
      id: -2,
      name: 'Meeting',
      icon: { order: 18, id: 'MEETING', displayName: 'Meeting', iconName: 'meeting', isSystem: false },
      updateLastContacted: true,
    });
  });

  it('answers 404 for unknown and malformed ids', async () => {
    expect((await sandbox.v2('GET', '/activitytypes/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', '/activitytypes/-9')).status).toBe(404);
    expect((await sandbox.v2('GET', '/activitytypes/abc')).status).toBe(404);
  });

  it('creates a type: 201, Location, updateLastContacted defaulting to false', async () => {
    const answer = await sandbox.v2('POST', '/activitytypes', {
      activityType: { name: 'Site visit', icon: { id: 'CAR' } },
    });
    expect(answer.status).toBe(201);
    expect(answer.body.activityType).toMatchObject({
      name: 'Site visit',
      icon: { id: 'CAR', iconName: 'car' },
      updateLastContacted: false,
    });
    expect(answer.headers.location).toBe(`${sandbox.url}/api/v2/activitytypes/${answer.body.activityType.id}`);
    expect(answer.body.activityType.id).toBeGreaterThan(0);
  });

  it('answers 422 for bad activity type input', async () => {
    const cases: Array<[Record<string, unknown>, string]> = [
      [{ icon: { id: 'STAR' } }, 'name'],
      [{ name: '  ', icon: { id: 'STAR' } }, 'name'],
      [{ name: 'A' }, 'icon'],
      [{ name: 'A', icon: { id: 'UNICORN' } }, 'icon'],
      [{ name: 'A', icon: { id: 'STAR' }, updateLastContacted: 'yes' }, 'updateLastContacted'],
      [{ name: 'A', icon: { id: 'STAR' }, colour: 'red' }, 'colour'],
      [{ name: 'call', icon: { id: 'STAR' } }, 'name'],
    ];
    const before = sandbox.store.activityTypes.size;
    for (const [activityType, field] of cases) {
      const answer = await sandbox.v2('POST', '/activitytypes', { activityType });
      expect(answer.status, JSON.stringify(activityType)).toBe(422);
      expect(answer.body.errors.map((e: { field: string }) => e.field)).toContain(field);
    }
    expect(sandbox.store.activityTypes.size).toBe(before);
  });

  it("updates the account's own types, leaving omitted properties", async () => {
    const made = await sandbox.v2('POST', '/activitytypes', {
      activityType: { name: 'Demo', icon: { id: 'MIC' }, updateLastContacted: true },
    });
    const id = made.body.activityType.id;
    const answer = await sandbox.v2('PUT', `/activitytypes/${id}`, {
      activityType: { name: 'Product demo', icon: { id: 'LINK' } },
    });
    expect(answer.status).toBe(200);
    expect(answer.body.activityType).toMatchObject({
      id,
      name: 'Product demo',
      icon: { id: 'LINK' },
      updateLastContacted: true,
    });
    const bad = await sandbox.v2('PUT', `/activitytypes/${id}`, { activityType: { icon: { id: 'NOPE' } } });
    expect(bad.status).toBe(422);
    expect(sandbox.store.activityTypes.get(id)?.iconId).toBe('LINK');
    expect((await sandbox.v2('PUT', '/activitytypes/999999', { activityType: { name: 'x' } })).status).toBe(404);
  });

  it('lets a built-in type change updateLastContacted only', async () => {
    const flag = await sandbox.v2('PUT', '/activitytypes/-1', { activityType: { updateLastContacted: true } });
    expect(flag.status).toBe(200);
    expect(flag.body.activityType).toMatchObject({ id: -1, name: 'Note', updateLastContacted: true });
    const rename = await sandbox.v2('PUT', '/activitytypes/-1', { activityType: { name: 'Memo' } });
    expect(rename.status).toBe(422);
    expect(rename.body.errors[0].field).toBe('name');
    const icon = await sandbox.v2('PUT', '/activitytypes/-3', { activityType: { icon: { id: 'STAR' } } });
    expect(icon.status).toBe(422);
    expect(sandbox.store.activityTypes.get(-1)?.name).toBe('Note');
  });

  it("deletes the account's own type (204) and unlinks its entries; built-ins cannot be deleted", async () => {
    const made = await sandbox.v2('POST', '/activitytypes', { activityType: { name: 'Temp', icon: { id: 'BELL' } } });
    const id = made.body.activityType.id;
    const at = '2026-01-01T00:00:00Z';
    const entry = sandbox.store.entries.insert({
      type: 'note',
      content: 'hi',
      subject: null,
      creatorId: 1,
      activityTypeId: id,
      entryAt: at,
      partyId: null,
      kaseId: null,
      opportunityId: null,
      partyIds: [],
      attachments: [],
      participants: [],
      createdAt: at,
      updatedAt: at,
    });
    const answer = await sandbox.v2('DELETE', `/activitytypes/${id}`);
    expect(answer.status).toBe(204);
    expect(answer.text).toBe('');
    expect(sandbox.store.entries.get(entry.id)?.activityTypeId).toBeNull();
    expect((await sandbox.v2('GET', `/activitytypes/${id}`)).status).toBe(404);

    for (const builtIn of [-1, -2, -3]) {
      const refused = await sandbox.v2('DELETE', `/activitytypes/${builtIn}`);
      expect(refused.status).toBe(422);
      expect(refused.body.message).toMatch(/built-in/);
      expect(sandbox.store.activityTypes.has(builtIn)).toBe(true);
    }
    expect((await sandbox.v2('DELETE', '/activitytypes/999999')).status).toBe(404);
  });
});

describe('4.9 / 5.5 activity types on an account that is not a teams edition', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox({ teamsEdition: false });
  });
  afterAll(() => sandbox.close());

  it('refuses to create an activity type with 403 but still lists and updates', async () => {
    const before = sandbox.store.activityTypes.size;
    const answer = await sandbox.v2('POST', '/activitytypes', {
      activityType: { name: 'Lunch', icon: { id: 'STAR' } },
    });
    expect(answer.status).toBe(403);
    expect(answer.body.message).toMatch(/teams edition/);
    expect(sandbox.store.activityTypes.size).toBe(before);
    expect((await sandbox.v2('GET', '/activitytypes')).body.activityTypes).toHaveLength(before);
    expect(
      (await sandbox.v2('PUT', '/activitytypes/-2', { activityType: { updateLastContacted: false } })).status,
    ).toBe(200);
  });
});
