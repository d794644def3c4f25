import { chmod, mkdir, mkdtemp, readdir, readFile, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { MockAgent } from 'undici';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { CredentialStore, defaultCredentialsPath, type StoredProfile } from '../../../src/client/credentials.ts';
import { exchangeCode, loginWithBrowser, OAuthSession, refreshTokens, revokeToken } from '../../../src/client/oauth.ts';

const ORIGIN = 'https://acme.crm.example';
const JSON_HEADERS = { headers: { 'content-type': 'application/json' } };

describe('credentials file', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'ferry-cred-'));
  });
  afterEach(() => rm(dir, { recursive: true, force: true }));

  it('lives under XDG_CONFIG_HOME, or ~/.config', () => {
    expect(defaultCredentialsPath({ XDG_CONFIG_HOME: '/x/cfg' })).toBe('/x/cfg/crm-ferry/credentials.json');
    expect(defaultCredentialsPath({ HOME: '/home/ana' })).toBe('/home/ana/.config/crm-ferry/credentials.json');
  });

  it('is written with mode 0600 and keeps profiles apart', async () => {
    const store = new CredentialStore(join(dir, 'crm-ferry', 'credentials.json'));
    await store.put('acme', profile('a1', 'r1'));
    await store.put('globex', profile('a2', 'r2'));
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect((await store.get('acme'))?.accessToken).toBe('a1');
    expect(await store.remove('acme')).toBe(true);
    expect(await store.get('acme')).toBeUndefined();
    expect((await store.get('globex'))?.refreshToken).toBe('r2');
  });

  it('keeps its folder 0700, even one that existed before, and leaves no temporary file', async () => {
    const folder = join(dir, 'crm-ferry');
    await mkdir(folder, { mode: 0o755 });
    await chmod(folder, 0o755);
    const store = new CredentialStore(join(folder, 'credentials.json'));
    await store.put('acme', profile('a1', 'r1'));
    await store.put('globex', profile('a2', 'r2'));
    await store.remove('acme');
    expect((await stat(folder)).mode & 0o777).toBe(0o700);
    expect((await stat(store.file)).mode & 0o777).toBe(0o600);
    expect(await readdir(folder)).toEqual(['credentials.json']);
  });

  it('reports a damaged file with what to do', async () => {
    const file = join(dir, 'credentials.json');
    await import('node:fs/promises').then((fs) => fs.writeFile(file, '{not json'));
    await expect(new CredentialStore(file).get('default')).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      hint: expect.stringMatching(/log in again/),
    });
  });
});

function profile(access: string, refresh: string, expiresAt = Date.parse('2026-01-01T01:00:00Z')): StoredProfile {
  return {
    baseUrl: ORIGIN,
    clientId: 'cli',
    clientSecret: '',
    accessToken: access,
    refreshToken: refresh,
    expiresAt,
    scope: 'read write',
  };
}

describe('OAuthSession', () => {
  let agent: MockAgent;
  let dir: string;
  let now: number;
  beforeEach(async () => {
    agent = new MockAgent();
    agent.disableNetConnect();
    dir = await mkdtemp(join(tmpdir(), 'ferry-oauth-'));
    now = Date.parse('2026-01-01T00:00:00Z');
  });
  afterEach(async () => {
    await agent.close();
    await rm(dir, { recursive: true, force: true });
  });

  function tokenReply(access: string, refresh: string) {
    return {
      access_token: access,
      refresh_token: refresh,
      expires_in: 7200,
      token_type: 'bearer',
      scope: 'read write',
      subdomain: 'acme',
    };
  }

  it('refreshes shortly before expiry, once for concurrent callers, and stores the rotated refresh token first', async () => {
    const store = new CredentialStore(join(dir, 'credentials.json'));
    await store.put('default', profile('old-access', 'old-refresh', now + 30_000));
    agent
      .get(ORIGIN)
      .intercept({
        path: '/oauth/token',
        method: 'POST',
        body: (b) => new URLSearchParams(b).get('refresh_token') === 'old-refresh',
      })
      .reply(200, tokenReply('new-access', 'new-refresh'), JSON_HEADERS);
    const session = new OAuthSession((await store.get('default')) as StoredProfile, store, 'default', {
      now: () => now,
      dispatcher: agent,
    });
    const tokens = await Promise.all([session.token(), session.token(), session.token()]);
    expect(tokens).toEqual(['new-access', 'new-access', 'new-access']);
    const saved = JSON.parse(await readFile(store.file, 'utf8'));
    expect(saved.profiles.default).toMatchObject({
      accessToken: 'new-access',
      refreshToken: 'new-refresh',
      expiresAt: now + 7_200_000,
    });
  });

  it('does not refresh a token that is still good', async () => {
    const store = new CredentialStore(join(dir, 'credentials.json'));
    const session = new OAuthSession(profile('fresh', 'r', now + 3_600_000), store, 'default', {
      now: () => now,
      dispatcher: agent,
    });
    expect(await session.token()).toBe('fresh');
  });

  it('turns an invalid_grant into advice to log in again', async () => {
    const store = new CredentialStore(join(dir, 'credentials.json'));
    agent
      .get(ORIGIN)
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(400, { error: 'invalid_grant', error_description: 'incorrect authorization code' }, JSON_HEADERS);
    const session = new OAuthSession(profile('a', 'revoked-refresh', now - 1), store, 'default', {
      now: () => now,
      dispatcher: agent,
    });
    await expect(session.token()).rejects.toMatchObject({
      code: 'API_OAUTH',
      message: '/oauth/token: OAuth error invalid_grant: incorrect authorization code'.replace(/^/, 'POST '),
      hint: expect.stringMatching(/crm-ferry auth login/),
    });
  });

  it.each([
    ['invalid_client', /client id or secret/],
    ['invalid_request', /redirect URI/],
  ])('explains %s at code exchange', async (error, hint) => {
    agent
      .get(ORIGIN)
      .intercept({ path: '/oauth/token', method: 'POST' })
      .reply(400, { error, error_description: 'x' }, JSON_HEADERS);
    await expect(
      exchangeCode({ baseUrl: ORIGIN, clientId: 'c', dispatcher: agent }, 'code', 'http://127.0.0.1:1/cb'),
    ).rejects.toMatchObject({ hint: expect.stringMatching(hint) });
  });
});

describe('OAuthSession with short-lived tokens', () => {
  it('refreshes a token that lives 5 s only in its last tenth, not on every request', async () => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    const dir = await mkdtemp(join(tmpdir(), 'ferry-oauth-short-'));
    try {
      let now = Date.parse('2026-01-01T00:00:00Z');
      const store = new CredentialStore(join(dir, 'credentials.json'));
      const stored: StoredProfile = { ...profile('short', 'r1', now + 5000), issuedAt: now };
      agent
        .get(ORIGIN)
        .intercept({ path: '/oauth/token', method: 'POST' })
        .reply(
          200,
          { access_token: 'next', refresh_token: 'r2', expires_in: 5, token_type: 'bearer', scope: 'read write' },
          JSON_HEADERS,
        );
      const session = new OAuthSession(stored, store, 'default', { now: () => now, dispatcher: agent });
      expect(await session.token()).toBe('short');
      now += 4000;
      expect(await session.token()).toBe('short');
      now += 600;
      expect(await session.token()).toBe('next');
    } finally {
      await agent.close();
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describe('OAuth calls and the transport rule', () => {
  const insecure = { baseUrl: 'http://crm.example.com', clientId: 'cli', clientSecret: 'client-secret' };
  it.each([
    [
      'the code exchange',
      (dispatcher: MockAgent) =>
        exchangeCode({ ...insecure, dispatcher }, 'the-code', 'http://127.0.0.1:8976/callback'),
    ],
    ['a refresh', (dispatcher: MockAgent) => refreshTokens({ ...insecure, dispatcher }, 'refresh-token')],
    ['a revocation', (dispatcher: MockAgent) => revokeToken({ ...insecure, dispatcher }, 'refresh-token')],
    [
      'a login',
      () =>
        loginWithBrowser({
          ...insecure,
          scope: 'read',
          redirectUri: 'http://127.0.0.1:0/callback',
          showUrl: () => undefined,
        }),
    ],
  ])('refuses %s over plain http off loopback before sending anything', async (_what, call) => {
    const agent = new MockAgent();
    agent.disableNetConnect();
    // An interceptor that must stay unused: a request reaching the agent would consume it.
    agent.get('http://crm.example.com').intercept({ path: /.*/, method: 'POST' }).reply(200, {}).persist();
    try {
      await expect(call(agent)).rejects.toMatchObject({ code: 'CONFIG_INSECURE_TRANSPORT' });
      // A persistent interceptor stays pending only while nothing has used it.
      expect(agent.pendingInterceptors()).toHaveLength(1);
    } finally {
      await agent.close();
    }
  });
});

describe('loginWithBrowser checks its own addresses (the command line only passes them on)', () => {
  const config = { baseUrl: 'http://127.0.0.1:9', clientId: 'cli', clientSecret: '', scope: 'read' };
  it.each([
    [
      'a redirect URI that is no URL',
      { redirectUri: 'garbage' },
      /redirect URI must be a loopback http address.*"garbage"/,
    ],
    [
      'a redirect URI off this machine',
      { redirectUri: 'http://example.com/cb' },
      /redirect URI must be a loopback http address/,
    ],
    [
      'an https redirect URI',
      { redirectUri: 'https://127.0.0.1:8976/cb' },
      /redirect URI must be a loopback http address/,
    ],
    [
      'a base address that is no URL',
      { baseUrl: 'nope', redirectUri: 'http://127.0.0.1:0/cb' },
      /base address "nope" is not a URL/,
    ],
  ])('%s: a configuration error before anything listens or is shown', async (_what, change, message) => {
    let shown = false;
    const login = loginWithBrowser({ ...config, ...change, showUrl: () => void (shown = true) });
    await expect(login).rejects.toMatchObject({ code: 'CONFIG_INVALID', message: expect.stringMatching(message) });
    expect(shown).toBe(false);
  });
});
