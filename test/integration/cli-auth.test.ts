import { mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { fakeIo } from '../helpers/fake-io.ts';
import { addParty } from '../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { steppingClock } from '../helpers/scaled-clock.ts';

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen(0, '127.0.0.1', () => {
      const address = server.address();
      server.close(() => resolve(typeof address === 'object' && address ? address.port : 0));
    });
  });
}

/** Plays the person at the browser: opens the approval page, presses a button, follows the redirect. */
async function actAsPerson(authoriseUrl: string, decision: 'approve' | 'deny'): Promise<void> {
  const page = await request(authoriseUrl);
  expect(page.statusCode).toBe(200);
  const html = await page.body.text();
  const fields = new URLSearchParams();
  for (const match of html.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)">/g)) {
    fields.set(
      match[1] as string,
      (match[2] as string)
        .replace(/&amp;/g, '&')
        .replace(/&quot;/g, '"')
        .replace(/&#39;/g, "'")
        .replace(/&lt;/g, '<')
        .replace(/&gt;/g, '>'),
    );
  }
  expect(html).toMatch(/name="decision" value="approve"/);
  fields.set('decision', decision);
  const url = new URL(authoriseUrl);
  const posted = await request(`${url.origin}/oauth/authorise`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: fields.toString(),
  });
  expect(posted.statusCode).toBe(302);
  await posted.body.dump();
  const back = await request(String(posted.headers.location));
  await back.body.dump();
}

describe('crm-ferry auth, as a new user would use it against the sandbox', () => {
  let sandbox: TestSandbox;
  let dir: string;
  let redirectUri: string;
  // Sandbox time moves a second each time the sandbox reads it (a few reads a request), not with
  // the wall clock: a busy machine once let a refreshed token expire before its request arrived.
  const clock = steppingClock(1000);

  beforeAll(async () => {
    redirectUri = `http://127.0.0.1:${await freePort()}/callback`;
    // Access tokens live 60 s of sandbox time, a few dozen requests: they expire again and again
    // during the long listing below.
    sandbox = await startTestSandbox({
      now: clock.date,
      tokenTtlSeconds: 60,
      clients: [{ clientId: 'ferry-cli', clientSecret: '', redirectUri }],
    });
    dir = await mkdtemp(join(tmpdir(), 'ferry-auth-'));
    for (let i = 0; i < 300; i += 1)
      addParty(sandbox.store, { type: 'organisation', firstName: null, lastName: null, name: `Org ${i}` });
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  function env(): NodeJS.ProcessEnv {
    return { XDG_CONFIG_HOME: dir };
  }

  async function login(decision: 'approve' | 'deny'): Promise<{ code: number; out: string; err: string }> {
    const f = fakeIo(env());
    const running = main(
      [
        'auth',
        'login',
        '--base-url',
        sandbox.url,
        '--client-id',
        'ferry-cli',
        '--redirect-uri',
        redirectUri,
        '--no-browser',
      ],
      f.io,
    );
    let url: string | undefined;
    for (let i = 0; i < 200 && !url; i += 1) {
      url = /https?:\/\/\S+\/oauth\/authorise\S*/.exec(f.out())?.[0];
      if (!url) await new Promise((r) => setTimeout(r, 10));
    }
    expect(url).toBeDefined();
    await actAsPerson(url as string, decision);
    const code = await running;
    return { code, out: f.out(), err: f.err() };
  }

  it('refuses a denied login with advice and stores nothing', async () => {
    const result = await login('deny');
    expect(result.code).toBe(4);
    expect(result.err).toMatch(/OAuth error access_denied/);
    expect(result.err).toMatch(/Run the login again and approve/);
    await expect(stat(join(dir, 'crm-ferry', 'credentials.json'))).rejects.toThrow();
  });

  it('logs in with the browser flow and stores the tokens readable only by the user', async () => {
    const result = await login('approve');
    expect(result.code).toBe(0);
    expect(result.out).toMatch(/Logged in to http:\/\/127\.0\.0\.1:\d+ with scope "read write"/);
    const file = join(dir, 'crm-ferry', 'credentials.json');
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const saved = JSON.parse(await readFile(file, 'utf8'));
    expect(saved.profiles.default).toMatchObject({ clientId: 'ferry-cli', scope: 'read write', subdomain: 'sandbox' });
    expect(result.out).not.toContain(saved.profiles.default.accessToken);
  });

  it('keeps a long api --paginate running across many token expiries, rotating the refresh token', async () => {
    const file = join(dir, 'crm-ferry', 'credentials.json');
    const before = JSON.parse(await readFile(file, 'utf8')).profiles.default.refreshToken;
    const f = fakeIo({ ...env(), CRM_FERRY_BASE_URL: sandbox.url });
    expect(await main(['api', '/parties', '--paginate', '--query', 'perPage=3'], f.io)).toBe(0);
    // --query perPage overrides the default page size of 100
    const lines = f.out().trim().split('\n');
    expect(lines).toHaveLength(300);
    const after = JSON.parse(await readFile(file, 'utf8')).profiles.default.refreshToken;
    expect(after).not.toBe(before);
    expect(f.err()).toBe('');
  });

  it('shows the status of the login', async () => {
    const f = fakeIo(env());
    expect(await main(['auth', 'status'], f.io)).toBe(0);
    expect(f.out()).toMatch(/client:\s+ferry-cli/);
    expect(f.out()).toMatch(/scope:\s+read write/);
    expect(f.out()).toMatch(/users:\s+3 in the account/);
  });

  it('auth logout and status follow CRM_FERRY_PROFILE, as every other command does', async () => {
    const file = join(dir, 'crm-ferry', 'credentials.json');
    const f = fakeIo({ ...env(), CRM_FERRY_PROFILE: 'acme' });
    expect(await main(['auth', 'logout'], f.io)).toBe(0);
    expect(f.out()).toBe('No stored login under profile "acme".\n');
    // The default login, which CRM_FERRY_PROFILE did not name, is still there.
    expect(JSON.parse(await readFile(file, 'utf8')).profiles).toHaveProperty('default');
    const status = fakeIo({ ...env(), CRM_FERRY_PROFILE: 'default' });
    expect(await main(['auth', 'status', '--profile', 'default'], status.io)).toBe(0);
    expect(status.out()).toMatch(/^profile:\s+default$/m);
  });

  it('logs out: revokes at the service and forgets the tokens', async () => {
    const file = join(dir, 'crm-ferry', 'credentials.json');
    const stored = JSON.parse(await readFile(file, 'utf8')).profiles.default;
    const f = fakeIo(env());
    expect(await main(['auth', 'logout'], f.io)).toBe(0);
    expect(f.out()).toMatch(/Revoked and removed the login of profile "default"/);
    await expect(stat(file)).rejects.toThrow();
    const refused = await sandbox.call('GET', '/api/v2/users', { token: stored.accessToken });
    expect(refused.status).toBe(401);
    const again = fakeIo({ ...env(), CRM_FERRY_BASE_URL: sandbox.url });
    expect(await main(['api', '/users'], again.io)).toBe(2);
    expect(again.err()).toMatch(/no credentials/);
  });
});
