import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type ApiAnswer, type TestSandbox } from '../../helpers/sandbox.ts';

const WEB = {
  clientId: 'web-app',
  clientSecret: 'web-secret-0123456789',
  redirectUri: 'https://app.example/callback',
  name: 'Web <App>',
};
const INSTALLED = {
  clientId: 'desktop-app',
  clientSecret: '',
  redirectUri: 'http://127.0.0.1:5555/cb',
  name: 'Desktop',
};

let clock = new Date('2026-03-01T10:00:00Z');
let sandbox: TestSandbox;

beforeAll(async () => {
  sandbox = await startTestSandbox({ clients: [WEB, INSTALLED], tokenTtlSeconds: 600, now: () => clock });
});
afterAll(() => sandbox.close());

function form(values: Record<string, string>): string {
  return new URLSearchParams(values).toString();
}

function postForm(
  path: string,
  values: Record<string, string>,
  headers: Record<string, string> = {},
): Promise<ApiAnswer> {
  return sandbox.call('POST', path, {
    token: null,
    rawBody: form(values),
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
  });
}

function authorise(query: Record<string, string>): Promise<ApiAnswer> {
  return sandbox.call('GET', `/oauth/authorise?${form(query)}`, { token: null });
}

function locationOf(answer: ApiAnswer): URL {
  expect(answer.status).toBe(302);
  return new URL(String(answer.headers.location));
}

/** Runs the approval step and returns the code from the redirect. */
async function approve(client = WEB, scope = 'read write', state = 'xyz'): Promise<string> {
  const answer = await postForm('/oauth/authorise', {
    response_type: 'code',
    client_id: client.clientId,
    redirect_uri: client.redirectUri,
    scope,
    state,
    decision: 'approve',
  });
  const location = locationOf(answer);
  expect(location.searchParams.get('state')).toBe(state);
  return location.searchParams.get('code') as string;
}

function exchange(code: string, overrides: Record<string, unknown> = {}): Promise<ApiAnswer> {
  return sandbox.call('POST', '/oauth/token', {
    token: null,
    body: {
      grant_type: 'authorization_code',
      code,
      client_id: WEB.clientId,
      client_secret: WEB.clientSecret,
      redirect_uri: WEB.redirectUri,
      ...overrides,
    },
  });
}

function refresh(token: string, overrides: Record<string, unknown> = {}): Promise<ApiAnswer> {
  return sandbox.call('POST', '/oauth/token', {
    token: null,
    body: {
      grant_type: 'refresh_token',
      refresh_token: token,
      client_id: WEB.clientId,
      client_secret: WEB.clientSecret,
      ...overrides,
    },
  });
}

/** Status of an authenticated read; 404 means the token was accepted (the job does not exist). */
async function statusWith(token: string): Promise<number> {
  return (await sandbox.call('GET', '/api/v2/jobs/none', { token })).status;
}

describe('spec 5.1: the authorisation request', () => {
  it('shows a consent page with the request in hidden fields, escaped', async () => {
    const answer = await authorise({ response_type: 'code', client_id: WEB.clientId, state: 'a"<b>' });
    expect(answer.status).toBe(200);
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(answer.headers['x-frame-options']).toBe('DENY');
    expect(answer.text).toContain('<form method="post" action="/oauth/authorise">');
    expect(answer.text).toContain('name="decision" value="approve"');
    expect(answer.text).toContain('name="decision" value="deny"');
    expect(answer.text).toContain('<input type="hidden" name="state" value="a&quot;&lt;b&gt;">');
    expect(answer.text).not.toContain('a"<b>');
    // The default scope and the registered redirect URI are filled in when left out.
    expect(answer.text).toContain('<input type="hidden" name="scope" value="read write">');
    expect(answer.text).toContain(`<input type="hidden" name="redirect_uri" value="${WEB.redirectUri}">`);
    expect(answer.text).toContain('Web &lt;App&gt;');
    expect(answer.text).toMatch(/no login/);
    expect(answer.text).toContain('Alex Admin');
  });

  it.each([
    ['an unknown client_id', { response_type: 'code', client_id: 'nobody' }],
    ['a missing client_id', { response_type: 'code' }],
    [
      'a redirect_uri that differs from the registered one',
      { response_type: 'code', client_id: WEB.clientId, redirect_uri: 'https://app.example/callback/' },
    ],
    [
      'a redirect_uri of another host',
      { response_type: 'token', client_id: WEB.clientId, redirect_uri: 'https://evil.example/cb' },
    ],
  ])('shows an error page and does not redirect for %s', async (_name, query) => {
    const answer = await authorise(query);
    expect(answer.status).toBe(400);
    expect(answer.headers.location).toBeUndefined();
    expect(answer.headers['content-type']).toMatch(/^text\/html/);
    expect(answer.text).toMatch(/cannot be completed/);
  });

  it.each([
    ['unsupported_response_type', { response_type: 'token' }],
    ['invalid_request', { response_type: '' }],
    ['invalid_scope', { response_type: 'code', scope: 'read admin' }],
  ])('redirects with error=%s and the state', async (error, query) => {
    const answer = await authorise({ client_id: WEB.clientId, state: 's-1', ...query });
    const location = locationOf(answer);
    expect(`${location.origin}${location.pathname}`).toBe(WEB.redirectUri);
    expect(location.searchParams.get('error')).toBe(error);
    expect(location.searchParams.get('error_description')).toBeTruthy();
    expect(location.searchParams.get('state')).toBe('s-1');
    expect(location.searchParams.has('code')).toBe(false);
  });

  it('redirects with error=invalid_request when a parameter is repeated', async () => {
    const answer = await sandbox.call(
      'GET',
      `/oauth/authorise?client_id=${WEB.clientId}&response_type=code&scope=read&scope=read`,
      {
        token: null,
      },
    );
    expect(locationOf(answer).searchParams.get('error')).toBe('invalid_request');
  });

  it('redirects with code and state on approval, and access_denied on denial', async () => {
    const code = await approve(WEB, 'read', 'state-42');
    expect(code).toMatch(/^[\w-]{20,}$/);
    const denied = await postForm('/oauth/authorise', {
      response_type: 'code',
      client_id: WEB.clientId,
      state: 'st',
      decision: 'deny',
    });
    const location = locationOf(denied);
    expect(location.searchParams.get('error')).toBe('access_denied');
    expect(location.searchParams.get('state')).toBe('st');
    expect(location.searchParams.has('code')).toBe(false);
  });

  it('refuses an approval post for an unknown client with the error page', async () => {
    const answer = await postForm('/oauth/authorise', {
      response_type: 'code',
      client_id: 'nobody',
      decision: 'approve',
    });
    expect(answer.status).toBe(400);
    expect(answer.headers.location).toBeUndefined();
  });
});

describe('spec 5.2 and 7: the token exchange', () => {
  it('exchanges a code for tokens that the v2 interface accepts', async () => {
    const code = await approve();
    const answer = await exchange(code);
    expect(answer.status).toBe(200);
    expect(answer.headers['cache-control']).toBe('no-store');
    expect(answer.body).toMatchObject({
      expires_in: 600,
      token_type: 'bearer',
      scope: 'read write',
      subdomain: 'sandbox',
    });
    expect(typeof answer.body.access_token).toBe('string');
    expect(typeof answer.body.refresh_token).toBe('string');
    expect(await statusWith(answer.body.access_token)).toBe(404);
    const record = sandbox.store.accessTokens.get(answer.body.access_token);
    expect(record).toMatchObject({ kind: 'oauth', clientId: WEB.clientId, expiresAt: '2026-03-01T10:10:00.000Z' });
  });

  it('accepts a form body and an installed application without a secret', async () => {
    const code = await approve(INSTALLED, 'read');
    const answer = await postForm('/oauth/token', {
      grant_type: 'authorization_code',
      code,
      client_id: INSTALLED.clientId,
      redirect_uri: INSTALLED.redirectUri,
    });
    expect(answer.status).toBe(200);
    expect(answer.body.scope).toBe('read');
    // A read-only token may read but not write.
    expect(await statusWith(answer.body.access_token)).toBe(404);
    const write = await sandbox.call('POST', '/api/v2/jobs/none', { token: answer.body.access_token, body: {} });
    expect(write.status).toBe(403);
  });

  it('accepts client credentials by HTTP Basic and answers 401 for wrong ones', async () => {
    const code = await approve();
    const basic = (id: string, secret: string) => `Basic ${Buffer.from(`${id}:${secret}`).toString('base64')}`;
    const ok = await postForm(
      '/oauth/token',
      { grant_type: 'authorization_code', code, redirect_uri: WEB.redirectUri },
      { authorization: basic(WEB.clientId, WEB.clientSecret) },
    );
    expect(ok.status).toBe(200);
    const wrong = await postForm(
      '/oauth/token',
      { grant_type: 'authorization_code', code: await approve(), redirect_uri: WEB.redirectUri },
      { authorization: basic(WEB.clientId, 'guess') },
    );
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    expect(wrong.headers['www-authenticate']).toMatch(/^Basic/);
  });

  it.each([
    ['a wrong secret', { client_secret: 'web-secret-wrong' }],
    ['a missing secret of a web application', { client_secret: undefined }],
    ['an unknown client', { client_id: 'nobody' }],
  ])('answers invalid_client for %s without echoing the secret', async (_name, overrides) => {
    const answer = await exchange(await approve(), overrides);
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({
      error: 'invalid_client',
      error_description: 'no client found with the given key and secret',
    });
    expect(answer.text).not.toContain('web-secret');
  });

  it('answers invalid_request for a redirect_uri that differs from the authorisation step', async () => {
    const answer = await exchange(await approve(), { redirect_uri: 'https://app.example/other' });
    expect(answer.status).toBe(400);
    expect(answer.body).toEqual({ error: 'invalid_request', error_description: 'invalid redirect_uri' });
  });

  it.each([
    ['grant_type', { grant_type: undefined }],
    ['code', { code: undefined }],
    ['redirect_uri', { redirect_uri: undefined }],
    ['client_id', { client_id: undefined, client_secret: undefined }],
  ])('answers invalid_request naming the missing %s', async (name, overrides) => {
    const answer = await exchange(await approve(), overrides);
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_request');
    expect(answer.body.error_description).toContain(name);
  });

  it('answers unsupported_grant_type for other grants', async () => {
    const answer = await exchange('x', { grant_type: 'password' });
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('unsupported_grant_type');
  });

  it('answers invalid_request for a malformed JSON body and a body of another type', async () => {
    const bad = await sandbox.call('POST', '/oauth/token', {
      token: null,
      rawBody: '{"grant_type":',
      headers: { 'content-type': 'application/json' },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toBe('invalid_request');
    const text = await sandbox.call('POST', '/oauth/token', {
      token: null,
      rawBody: 'hello',
      headers: { 'content-type': 'text/plain' },
    });
    expect(text.status).toBe(400);
    expect(text.body.error).toBe('invalid_request');
  });

  it('answers invalid_grant for an unknown code, one of another client, and an expired one', async () => {
    expect((await exchange('made-up-code')).body).toEqual({
      error: 'invalid_grant',
      error_description: 'incorrect authorization code',
    });
    const installedCode = await approve(INSTALLED);
    expect((await exchange(installedCode)).body.error).toBe('invalid_grant');

    const code = await approve();
    const start = clock;
    clock = new Date(start.getTime() + 10 * 60 * 1000);
    try {
      const expired = await exchange(code);
      expect(expired.status).toBe(400);
      expect(expired.body.error).toBe('invalid_grant');
    } finally {
      clock = start;
    }
  });

  it('accepts a code just before its ten minutes are up', async () => {
    const code = await approve();
    const start = clock;
    clock = new Date(start.getTime() + 10 * 60 * 1000 - 1000);
    try {
      expect((await exchange(code)).status).toBe(200);
    } finally {
      clock = start;
    }
  });

  it('refuses a code used twice and revokes what the first use bought', async () => {
    const code = await approve();
    const first = await exchange(code);
    expect(first.status).toBe(200);
    const second = await exchange(code);
    expect(second.status).toBe(400);
    expect(second.body.error).toBe('invalid_grant');
    expect(await statusWith(first.body.access_token)).toBe(401);
    expect((await refresh(first.body.refresh_token)).body.error).toBe('invalid_grant');
  });
});

describe('spec 5.3: refresh', () => {
  it('rotates the refresh token; old access tokens live until they expire', async () => {
    const first = (await exchange(await approve())).body;
    const renewed = await refresh(first.refresh_token);
    expect(renewed.status).toBe(200);
    expect(renewed.body).toMatchObject({
      token_type: 'bearer',
      expires_in: 600,
      scope: 'read write',
      subdomain: 'sandbox',
    });
    expect(renewed.body.refresh_token).not.toBe(first.refresh_token);
    expect(renewed.body.access_token).not.toBe(first.access_token);

    const reused = await refresh(first.refresh_token);
    expect(reused.status).toBe(400);
    expect(reused.body.error).toBe('invalid_grant');
    expect(reused.text).not.toContain(first.refresh_token);

    expect(await statusWith(first.access_token)).toBe(404);
    expect(await statusWith(renewed.body.access_token)).toBe(404);
    const start = clock;
    clock = new Date(start.getTime() + 600 * 1000);
    try {
      expect(await statusWith(first.access_token)).toBe(401);
      const again = await refresh(renewed.body.refresh_token);
      expect(again.status).toBe(200);
      expect(await statusWith(again.body.access_token)).toBe(404);
    } finally {
      clock = start;
    }
  });

  it('checks the client of a refresh and lets the scope narrow but not widen', async () => {
    const tokens = (await exchange(await approve(WEB, 'read write'))).body;
    expect((await refresh(tokens.refresh_token, { client_secret: 'nope' })).body.error).toBe('invalid_client');
    const wider = await refresh(tokens.refresh_token, { scope: 'read write user_preference' });
    expect(wider.body.error).toBe('invalid_scope');
    const narrow = await refresh(tokens.refresh_token, { scope: 'read' });
    expect(narrow.status).toBe(200);
    expect(narrow.body.scope).toBe('read');
    // The grant keeps its scope: the next refresh may ask for write again.
    const back = await refresh(narrow.body.refresh_token);
    expect(back.body.scope).toBe('read write');
  });

  it('answers invalid_grant for an unknown refresh token', async () => {
    const answer = await refresh('not-a-token');
    expect(answer.status).toBe(400);
    expect(answer.body.error).toBe('invalid_grant');
  });
});

describe('spec 5.4: revocation', () => {
  it('revokes an access token alone', async () => {
    const tokens = (await exchange(await approve())).body;
    const answer = await postForm('/oauth/token/revoke', {
      token: tokens.access_token,
      token_type_hint: 'refresh_token',
    });
    expect(answer.status).toBe(200);
    expect(await statusWith(tokens.access_token)).toBe(401);
    expect((await refresh(tokens.refresh_token)).status).toBe(200);
  });

  it('revokes a refresh token with the access tokens of the application', async () => {
    const tokens = (await exchange(await approve())).body;
    const renewed = (await refresh(tokens.refresh_token)).body;
    const answer = await sandbox.call('POST', '/oauth/token/revoke', {
      token: null,
      body: { token: renewed.refresh_token },
    });
    expect(answer.status).toBe(200);
    expect(await statusWith(tokens.access_token)).toBe(401);
    expect(await statusWith(renewed.access_token)).toBe(401);
    expect((await refresh(renewed.refresh_token)).body.error).toBe('invalid_grant');
  });

  it('answers 200 for unknown tokens and leaves personal tokens alone', async () => {
    expect((await postForm('/oauth/token/revoke', { token: 'never-issued' })).status).toBe(200);
    expect((await postForm('/oauth/token/revoke', { token: sandbox.token })).status).toBe(200);
    expect(await statusWith(sandbox.token)).toBe(404);
  });

  it('answers invalid_request without a token and invalid_client for wrong credentials', async () => {
    const missing = await postForm('/oauth/token/revoke', {});
    expect(missing.status).toBe(400);
    expect(missing.body.error).toBe('invalid_request');
    const wrong = await postForm('/oauth/token/revoke', { token: 'x', client_id: WEB.clientId, client_secret: 'bad' });
    expect(wrong.body.error).toBe('invalid_client');
  });

  it('does not revoke a token for another client that authenticates', async () => {
    const tokens = (await exchange(await approve())).body;
    await postForm('/oauth/token/revoke', { token: tokens.access_token, client_id: INSTALLED.clientId });
    expect(await statusWith(tokens.access_token)).toBe(404);
  });
});
