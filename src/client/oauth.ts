import { randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { Dispatcher } from 'undici';
import { FerryError } from '../errors/index.ts';
import { ApiError } from './errors.ts';
import type { CredentialStore, StoredProfile } from './credentials.ts';
import { checkBaseUrl } from '../util/index.ts';
import { checkSecureTransport } from './secure-transport.ts';
import type { TokenSource } from './transport.ts';

/** What a person should do about each OAuth error the service can answer. */
const OAUTH_ADVICE: Record<string, string> = {
  invalid_client: 'The client id or secret is not registered with the service. Check --client-id and --client-secret.',
  invalid_request:
    'The request was refused, often because the redirect URI differs from the registered one. Check --redirect-uri.',
  invalid_grant:
    'The authorisation code or refresh token is no longer valid (expired, used or revoked). Log in again with `crm-ferry auth login`.',
  unauthorized_client: 'This application may not use this grant type. Check its registration.',
  unsupported_grant_type: 'The service does not accept this grant type.',
  invalid_scope: 'The scope asked for is not one of "read", "read write" or "read write user_preference".',
  access_denied: 'Access was denied on the approval page. Run the login again and approve.',
  server_error: 'The service failed while authorising. Try again later.',
  temporarily_unavailable: 'The service is busy. Try again in a minute.',
};

export interface TokenAnswer {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
  scope: string;
  subdomain?: string;
}

export interface OAuthClientConfig {
  baseUrl: string;
  clientId: string;
  clientSecret?: string;
  dispatcher?: Dispatcher;
}

function oauthError(path: string, status: number, body: Record<string, unknown>): ApiError {
  const code = typeof body.error === 'string' ? body.error : 'unknown_error';
  const description = typeof body.error_description === 'string' ? body.error_description : '';
  return new ApiError('API_OAUTH', `OAuth error ${code}${description ? `: ${description}` : ''}`, {
    method: 'POST',
    path,
    status,
    serviceMessage: description || code,
    hint: OAUTH_ADVICE[code] ?? 'See the service documentation for this error.',
  });
}

/** POSTs a form to an OAuth endpoint and reads the JSON answer. */
async function postForm(
  config: OAuthClientConfig,
  path: string,
  form: Record<string, string>,
): Promise<{ status: number; body: Record<string, unknown> }> {
  // Every form here carries a secret: the client secret, a code, a refresh token or a token.
  const url = new URL(path, checkSecureTransport(config.baseUrl));
  let answer: Dispatcher.ResponseData;
  // undici whole (fetch, web sockets, caches) is loaded only when a login or a refresh asks for
  // it: every command that connects loads this file, and a run with a token never does either.
  const { request: undiciRequest } = await import('undici');
  try {
    answer = await undiciRequest(url, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', accept: 'application/json' },
      body: new URLSearchParams(form).toString(),
      ...(config.dispatcher ? { dispatcher: config.dispatcher } : {}),
    });
  } catch (error) {
    throw new ApiError('API_NETWORK', `cannot reach the service: ${(error as Error).message}`, {
      method: 'POST',
      path,
      cause: error,
    });
  }
  const text = await answer.body.text();
  let body: Record<string, unknown> = {};
  try {
    body = text ? (JSON.parse(text) as Record<string, unknown>) : {};
  } catch {
    body = {};
  }
  return { status: answer.statusCode, body };
}

function tokenAnswer(path: string, answer: { status: number; body: Record<string, unknown> }): TokenAnswer {
  if (answer.status !== 200) throw oauthError(path, answer.status, answer.body);
  const body = answer.body;
  if (
    typeof body.access_token !== 'string' ||
    typeof body.refresh_token !== 'string' ||
    typeof body.expires_in !== 'number'
  ) {
    throw new ApiError('API_RESPONSE_INVALID', 'the token answer lacks access_token, refresh_token or expires_in', {
      method: 'POST',
      path,
      status: answer.status,
    });
  }
  return body as unknown as TokenAnswer;
}

function clientForm(config: OAuthClientConfig): Record<string, string> {
  return config.clientSecret
    ? { client_id: config.clientId, client_secret: config.clientSecret }
    : { client_id: config.clientId };
}

export async function exchangeCode(config: OAuthClientConfig, code: string, redirectUri: string): Promise<TokenAnswer> {
  const path = '/oauth/token';
  return tokenAnswer(
    path,
    await postForm(config, path, {
      grant_type: 'authorization_code',
      code,
      redirect_uri: redirectUri,
      ...clientForm(config),
    }),
  );
}

export async function refreshTokens(config: OAuthClientConfig, refreshToken: string): Promise<TokenAnswer> {
  const path = '/oauth/token';
  return tokenAnswer(
    path,
    await postForm(config, path, { grant_type: 'refresh_token', refresh_token: refreshToken, ...clientForm(config) }),
  );
}

/** Revokes a token (RFC 7009). Unknown tokens count as revoked. */
export async function revokeToken(config: OAuthClientConfig, token: string): Promise<void> {
  const path = '/oauth/token/revoke';
  const answer = await postForm(config, path, { token, ...clientForm(config) });
  if (answer.status !== 200) throw oauthError(path, answer.status, answer.body);
}

export function profileFromAnswer(config: OAuthClientConfig, answer: TokenAnswer, now: number): StoredProfile {
  const profile: StoredProfile = {
    baseUrl: config.baseUrl,
    clientId: config.clientId,
    clientSecret: config.clientSecret ?? '',
    accessToken: answer.access_token,
    refreshToken: answer.refresh_token,
    expiresAt: now + answer.expires_in * 1000,
    issuedAt: now,
    scope: answer.scope,
  };
  if (answer.subdomain !== undefined) profile.subdomain = answer.subdomain;
  return profile;
}

/**
 * A TokenSource backed by a stored OAuth profile: refreshes the access token shortly before it
 * expires and after a 401, and writes a rotated refresh token back to disk before using it.
 * Concurrent callers share one refresh.
 */
export class OAuthSession implements TokenSource {
  private refreshing: Promise<void> | null = null;

  constructor(
    private profile: StoredProfile,
    private readonly store: CredentialStore,
    private readonly profileName: string,
    private readonly options: { now?: () => number; marginMs?: number; dispatcher?: Dispatcher } = {},
  ) {}

  private now(): number {
    return this.options.now?.() ?? Date.now();
  }

  /** The account the login belongs to, as the service named it at the token exchange. */
  get subdomain(): string | undefined {
    return this.profile.subdomain;
  }

  async token(): Promise<string> {
    if (this.profile.expiresAt - this.marginMs() <= this.now()) await this.refresh();
    return this.profile.accessToken;
  }

  tokenNow(): string | null {
    return this.profile.expiresAt - this.marginMs() <= this.now() ? null : this.profile.accessToken;
  }

  /**
   * How long before expiry to refresh: a minute, but never more than a tenth of the token's
   * lifetime, so that short-lived tokens are not refreshed on every request.
   */
  private marginMs(): number {
    const wanted = this.options.marginMs ?? 60_000;
    const { issuedAt, expiresAt } = this.profile;
    return issuedAt === undefined ? wanted : Math.min(wanted, (expiresAt - issuedAt) / 10);
  }

  async refreshAfterUnauthorized(): Promise<boolean> {
    await this.refresh();
    return true;
  }

  secrets(): string[] {
    return [this.profile.accessToken, this.profile.refreshToken, this.profile.clientSecret];
  }

  current(): StoredProfile {
    return this.profile;
  }

  refresh(): Promise<void> {
    this.refreshing ??= (async () => {
      try {
        const config: OAuthClientConfig = {
          baseUrl: this.profile.baseUrl,
          clientId: this.profile.clientId,
          clientSecret: this.profile.clientSecret,
        };
        if (this.options.dispatcher) config.dispatcher = this.options.dispatcher;
        const answer = await refreshTokens(config, this.profile.refreshToken);
        const next = profileFromAnswer(config, answer, this.now());
        // Persist first: once the service rotated the refresh token, the old one is dead.
        await this.store.put(this.profileName, next);
        this.profile = next;
      } finally {
        this.refreshing = null;
      }
    })();
    return this.refreshing;
  }
}

export interface LoginOptions extends OAuthClientConfig {
  scope: string;
  /** Must equal the redirect URI registered for the client; a loopback http address. */
  redirectUri: string;
  /** Shows the authorise URL to the person (and opens a browser where possible). */
  showUrl: (url: string) => void | Promise<void>;
  signal?: AbortSignal;
  /** Longest wait for the person to approve. @default 300000 */
  timeoutMs?: number;
}

/**
 * The redirect URI as a URL, if it is a loopback http address: the only place the flow can listen
 * on. Anything else is a configuration error said before a port is opened or a page shown.
 */
function loopbackRedirect(redirectUri: string): URL {
  let url: URL | undefined;
  try {
    url = new URL(redirectUri);
  } catch {
    // said below
  }
  if (!url || url.protocol !== 'http:' || !/^(127\.0\.0\.1|localhost|\[::1\])$/.test(url.hostname)) {
    throw new FerryError(
      'CONFIG_INVALID',
      `the redirect URI must be a loopback http address, e.g. http://127.0.0.1:8976/callback, got ${JSON.stringify(redirectUri)}`,
      {
        hint: 'Register the client with a redirect URI like http://127.0.0.1:8976/callback and pass it with --redirect-uri.',
      },
    );
  }
  return url;
}

/**
 * The authorisation code flow for an installed application: listens on the loopback redirect
 * URI, sends the person to the approval page, checks `state`, exchanges the code.
 */
export async function loginWithBrowser(options: LoginOptions): Promise<TokenAnswer> {
  // Said before the person approves anything: the code exchange would be refused afterwards.
  checkBaseUrl(options.baseUrl);
  checkSecureTransport(options.baseUrl);
  const redirect = loopbackRedirect(options.redirectUri);
  const state = randomBytes(24).toString('base64url');
  const authorise = new URL('/oauth/authorise', options.baseUrl);
  authorise.search = new URLSearchParams({
    response_type: 'code',
    client_id: options.clientId,
    redirect_uri: options.redirectUri,
    scope: options.scope,
    state,
  }).toString();

  const code = await new Promise<string>((resolve, reject) => {
    const server = createServer((req, res) => {
      const url = new URL(req.url ?? '/', options.redirectUri);
      if (url.pathname !== redirect.pathname) {
        res.writeHead(404).end();
        return;
      }
      const finish = (status: number, text: string, outcome: () => void): void => {
        // The browser must not keep this connection: the listener goes away right after.
        res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', connection: 'close' }).end(text);
        cleanup();
        outcome();
      };
      if (url.searchParams.get('state') !== state) {
        finish(400, 'The state does not match this login; it was not started by crm-ferry. Close this window.', () =>
          reject(
            new ApiError(
              'API_OAUTH',
              'the redirect carried a state that does not match this login (possible forgery)',
              { method: 'GET', path: redirect.pathname },
            ),
          ),
        );
        return;
      }
      const error = url.searchParams.get('error');
      if (error) {
        finish(400, `Login failed: ${error}. You can close this window.`, () =>
          reject(
            oauthError('/oauth/authorise', 400, {
              error,
              error_description: url.searchParams.get('error_description') ?? '',
            }),
          ),
        );
        return;
      }
      const received = url.searchParams.get('code');
      if (!received) {
        finish(400, 'No code in the redirect.', () =>
          reject(new ApiError('API_OAUTH', 'the redirect carried no code', { method: 'GET', path: redirect.pathname })),
        );
        return;
      }
      finish(200, 'crm-ferry is logged in. You can close this window.', () => resolve(received));
    });
    const timer = setTimeout(() => {
      cleanup();
      reject(
        new ApiError('API_TIMEOUT', 'nobody approved the login in time', {
          method: 'GET',
          path: '/oauth/authorise',
          hint: 'Run `crm-ferry auth login` again.',
        }),
      );
    }, options.timeoutMs ?? 300_000);
    const onAbort = (): void => {
      cleanup();
      reject(options.signal?.reason ?? new Error('aborted'));
    };
    function cleanup(): void {
      clearTimeout(timer);
      options.signal?.removeEventListener('abort', onAbort);
      server.close();
      server.closeIdleConnections();
    }
    options.signal?.addEventListener('abort', onAbort, { once: true });
    server.once('error', (error: NodeJS.ErrnoException) => {
      cleanup();
      reject(
        new ApiError(
          'API_OAUTH',
          `cannot listen on ${redirect.host} for the redirect: ${error.code ?? error.message}`,
          {
            method: 'GET',
            path: redirect.pathname,
            hint: 'Another program uses that port; close it or register another redirect URI.',
          },
        ),
      );
    });
    const port = redirect.port === '' ? 80 : Number(redirect.port);
    server.listen(port, redirect.hostname.replace(/^\[|\]$/g, ''), () => {
      void Promise.resolve(options.showUrl(authorise.toString())).catch(() => undefined);
    });
  });
  return exchangeCode(options, code, options.redirectUri);
}
