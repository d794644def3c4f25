import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../../helpers/sandbox.ts';
import { addPersonalToken } from '../../../src/sandbox/auth.ts';

describe('4.11 countries and currencies', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it('lists ISO countries with English names, alpha codes and an integer numeric code', async () => {
    const answer = await sandbox.v2('GET', '/countries');
    expect(answer.status).toBe(200);
    const countries = answer.body.countries as Array<Record<string, unknown>>;
    expect(countries.length).toBeGreaterThan(240);
    expect(countries).toContainEqual({ alpha2Code: 'GB', alpha3Code: 'GBR', numericCode: 826, name: 'United Kingdom' });
    // A leading zero in the standard's numeric code does not survive as an integer.
    expect(countries).toContainEqual({ alpha2Code: 'AD', alpha3Code: 'AND', numericCode: 20, name: 'Andorra' });
    for (const country of countries) {
      expect(country.alpha2Code).toMatch(/^[A-Z]{2}$/);
      expect(country.alpha3Code).toMatch(/^[A-Z]{3}$/);
      expect(Number.isInteger(country.numericCode)).toBe(true);
    }
    expect(new Set(countries.map((c) => c.alpha2Code)).size).toBe(countries.length);
  });

  it('sorts countries by name', async () => {
    const names = (await sandbox.v2('GET', '/countries')).body.countries.map(
      (c: { name: string }) => c.name,
    ) as string[];
    expect(names).toEqual([...names].sort((a, b) => a.localeCompare(b, 'en')));
    expect(names[0]).toBe('Afghanistan');
  });

  it('lists ISO currencies with code, symbol and name', async () => {
    const answer = await sandbox.v2('GET', '/currencies');
    expect(answer.status).toBe(200);
    const currencies = answer.body.currencies as Array<Record<string, unknown>>;
    expect(currencies).toContainEqual({ code: 'EUR', symbol: '€', name: 'Euro' });
    expect(currencies).toContainEqual({ code: 'GBP', symbol: '£', name: 'Pound Sterling' });
    expect(currencies.find((c) => c.code === 'USD')?.symbol).toBe('$');
    for (const currency of currencies) {
      expect(currency.code).toMatch(/^[A-Z]{3}$/);
      expect(typeof currency.symbol).toBe('string');
      expect(String(currency.symbol).length).toBeGreaterThan(0);
    }
    expect(new Set(currencies.map((c) => c.code)).size).toBe(currencies.length);
  });

  it('leaves out the placeholder codes for metals, testing and no currency', async () => {
    const codes = new Set(
      (await sandbox.v2('GET', '/currencies')).body.currencies.map((c: { code: string }) => c.code),
    );
    for (const code of ['XAU', 'XAG', 'XTS', 'XXX']) expect(codes.has(code), code).toBe(false);
    // Shared regional currencies are real currencies and stay.
    expect(codes.has('XAF')).toBe(true);
    expect(codes.has('XCD')).toBe(true);
  });
});

describe('4.13 users and teams', () => {
  let sandbox: TestSandbox;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
  });
  afterAll(() => sandbox.close());

  it("lists the account's users with role and teams", async () => {
    const answer = await sandbox.v2('GET', '/users');
    expect(answer.status).toBe(200);
    const users = answer.body.users as Array<Record<string, unknown>>;
    expect(users.map((u) => u.username)).toEqual(['admin', 'sam', 'kim']);
    const sales = sandbox.store.teams.all().find((t) => t.name === 'Sales');
    const support = sandbox.store.teams.all().find((t) => t.name === 'Support');
    expect(users[1]).toEqual({
      id: expect.any(Number),
      username: 'sam',
      name: 'Sam Seller',
      email: 'sam@sandbox.example',
      pictureURL: expect.stringMatching(/^https:\/\//),
      role: 'User',
      team: { id: sales?.id, name: 'Sales' },
      teams: [{ id: sales?.id, name: 'Sales' }],
      currency: 'GBP',
      timezone: 'UTC',
      locale: 'en_GB',
      loggedIn: false,
      lastLoginAt: null,
      status: 'ACTIVE',
      deleted: false,
      taskReminder: false,
      party: null,
    });
    expect(users[0]?.role).toBe('Administrator');
    expect(users[0]?.teams).toEqual([
      { id: sales?.id, name: 'Sales' },
      { id: support?.id, name: 'Support' },
    ]);
    const paged = await sandbox.v2('GET', '/users?perPage=2');
    expect(paged.body.users).toHaveLength(2);
    expect(String(paged.headers.link)).toMatch(/rel="next"/);
  });

  it('reads one user, and 404 for an unknown or malformed id', async () => {
    const kim = sandbox.store.users.all().find((u) => u.username === 'kim');
    const answer = await sandbox.v2('GET', `/users/${kim?.id}`);
    expect(answer.status).toBe(200);
    expect(answer.body.user).toMatchObject({
      id: kim?.id,
      username: 'kim',
      name: 'Kim Keeper',
      role: 'User',
      team: { name: 'Support' },
    });
    expect((await sandbox.v2('GET', '/users/999999')).status).toBe(404);
    expect((await sandbox.v2('GET', '/users/kim')).status).toBe(404);
  });

  it('reads the user of the token at /users/current (beyond the spec)', async () => {
    const admin = await sandbox.v2('GET', '/users/current');
    expect(admin.status).toBe(200);
    expect(admin.body.user).toMatchObject({ username: 'admin', role: 'Administrator' });
    const kim = sandbox.store.users.all().find((u) => u.username === 'kim');
    addPersonalToken(sandbox.context, 'kims-token-123', kim?.id as number);
    const answer = await sandbox.call('GET', '/api/v2/users/current', { token: 'kims-token-123' });
    expect(answer.body.user).toMatchObject({ id: kim?.id, username: 'kim' });
  });

  it('lists the teams', async () => {
    const answer = await sandbox.v2('GET', '/teams');
    expect(answer.status).toBe(200);
    expect(answer.body.teams.map((t: { name: string }) => t.name)).toEqual(['Sales', 'Support']);
    expect(answer.body.teams[0]).toEqual({ id: expect.any(Number), name: 'Sales' });
  });

  it('needs a token like every other endpoint', async () => {
    expect((await sandbox.call('GET', '/api/v2/users', { token: null })).status).toBe(401);
  });
});
