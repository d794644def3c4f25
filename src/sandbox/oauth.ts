import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { newTokenValue } from './auth.ts';
import type { SandboxContext } from './context.ts';
import { HttpError, timestamp } from './http.ts';
import type { AuthCodeRec, OAuthClientRec, UserRec } from './model.ts';
import {
  authenticateClient,
  bodyParams,
  noStoreHeaders,
  normaliseScope,
  oauthError,
  type OAuthParams,
  required,
  single,
} from './oauth-params.ts';
import { PAGE_HEADERS, renderConsentPage, renderErrorPage } from './oauth-page.ts';
import { ADMIN_USERNAME } from './seed.ts';

/** How long an authorisation code can be exchanged. */
export const CODE_TTL_MS = 10 * 60 * 1000;

/** The account subdomain the sandbox reports in token answers. */
export const SANDBOX_SUBDOMAIN = 'sandbox';

/** A problem with an authorisation request that goes back to the client by redirect. */
class RedirectableError extends Error {
  constructor(
    readonly error: string,
    readonly description: string,
  ) {
    super(description);
  }
}

/** A problem that must be shown to the user, because the redirect target is not trusted. */
class PageError extends Error {}

interface AuthoriseRequest {
  client: OAuthClientRec;
  redirectUri: string;
  state: string | undefined;
}

function pageParam(params: OAuthParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === '') return undefined;
  if (typeof value !== 'string') throw new PageError(`The parameter ${name} must be given exactly once.`);
  return value;
}

/**
 * Identifies the client and its redirect URI. Until both are trusted every problem goes to an
 * error page: redirecting to an unverified address would make the sandbox an open redirector.
 */
function identify(ctx: SandboxContext, params: OAuthParams): AuthoriseRequest {
  const clientId = pageParam(params, 'client_id');
  if (clientId === undefined) throw new PageError('The request names no application (client_id is missing).');
  const client = ctx.store.oauthClients.get(clientId);
  if (!client) throw new PageError('The application is not registered with this account (unknown client_id).');
  const given = pageParam(params, 'redirect_uri');
  if (given !== undefined && given !== client.redirectUri) {
    throw new PageError('The redirect URI does not match the one registered for the application.');
  }
  // state goes back to the client unchanged; a repeated one cannot, so it counts as a page error.
  const state = pageParam(params, 'state');
  return { client, redirectUri: client.redirectUri, state };
}

/** Checks the parts of an authorisation request that are reported to the client by redirect. */
function checkGrantRequest(params: OAuthParams): { scope: string } {
  for (const name of ['response_type', 'scope', 'decision']) {
    if (Array.isArray(params[name]))
      throw new RedirectableError('invalid_request', `the parameter ${name} was given more than once`);
  }
  const responseType = params.response_type;
  if (responseType === undefined || responseType === '') {
    throw new RedirectableError('invalid_request', 'the parameter response_type is missing');
  }
  if (responseType !== 'code') {
    throw new RedirectableError('unsupported_response_type', 'response_type must be code');
  }
  const rawScope = params.scope;
  if (rawScope !== undefined && typeof rawScope !== 'string') {
    throw new RedirectableError('invalid_scope', 'the scope must be a string');
  }
  const scope = normaliseScope(rawScope);
  if (scope === null) {
    throw new RedirectableError('invalid_scope', 'scope must be "read", "read write" or "read write user_preference"');
  }
  return { scope };
}

function redirectTo(reply: FastifyReply, target: string, values: Record<string, string | undefined>): FastifyReply {
  const url = new URL(target);
  for (const [name, value] of Object.entries(values)) if (value !== undefined) url.searchParams.set(name, value);
  return reply.code(302).header('location', url.toString()).header('cache-control', 'no-store').send();
}

function showErrorPage(reply: FastifyReply, problem: string): FastifyReply {
  return reply.code(400).headers(PAGE_HEADERS).send(renderErrorPage(problem));
}

/**
 * Answers an authorisation request (the consent page, or the user's decision). A problem found
 * before the client and its redirect URI are trusted goes to an error page; one found after goes
 * back to the client by redirect, with the request's state.
 */
function answerAuthorise(
  ctx: SandboxContext,
  reply: FastifyReply,
  params: OAuthParams,
  answer: (target: AuthoriseRequest) => FastifyReply,
): FastifyReply {
  let target: AuthoriseRequest;
  try {
    target = identify(ctx, params);
  } catch (error) {
    if (error instanceof PageError) return showErrorPage(reply, error.message);
    throw error;
  }
  try {
    return answer(target);
  } catch (error) {
    if (!(error instanceof RedirectableError)) throw error;
    return redirectTo(reply, target.redirectUri, {
      error: error.error,
      error_description: error.description,
      state: target.state,
    });
  }
}

function adminOf(ctx: SandboxContext): UserRec {
  const admin = ctx.store.users.all().find((u) => u.username === ADMIN_USERNAME);
  if (!admin) throw new Error('the sandbox account has no Administrator');
  return admin;
}

/**
 * Turns Fastify's own rejections on the token endpoints (malformed JSON, body too large) into
 * OAuth error bodies, so clients parse one error format there.
 */
function tokenErrorHandler(
  error: FastifyError | HttpError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (error instanceof HttpError) return reply.code(error.status).headers(error.headers).send(error.body);
  const status = error.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return reply
      .code(status)
      .headers(noStoreHeaders())
      .send({ error: 'invalid_request', error_description: error.message });
  }
  request.log.error(error);
  return reply
    .code(500)
    .headers(noStoreHeaders())
    .send({ error: 'server_error', error_description: 'internal sandbox error; this is a bug in the sandbox' });
}

/**
 * The OAuth 2 authorisation server of the sandbox (spec 5.1 to 5.4 and the errors of spec 7):
 * authorisation code grant with a consent page, token exchange, rotating refresh tokens and
 * RFC 7009 revocation. Issued tokens go into the store, where the bearer hook finds them.
 */
export function registerOAuthRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const sweepCodes = (): void => {
    // A used code is kept until it would have expired, so that a replay is still recognised.
    const now = ctx.now().getTime();
    for (const [value, code] of ctx.store.authCodes)
      if (Date.parse(code.expiresAt) <= now) ctx.store.authCodes.delete(value);
  };

  /** Revokes every token the client holds for the user: the application loses its access. */
  const revokeGrant = (clientId: string, userId: number): void => {
    for (const refresh of ctx.store.refreshTokens.values()) {
      if (refresh.clientId !== clientId || refresh.userId !== userId) continue;
      refresh.revoked = true;
      ctx.store.refreshTokens.touch(refresh.token);
    }
    for (const [value, access] of ctx.store.accessTokens) {
      if (access.kind === 'oauth' && access.clientId === clientId && access.userId === userId)
        ctx.store.accessTokens.delete(value);
    }
  };

  const issueTokens = (client: OAuthClientRec, userId: number, grantScope: string[], accessScope: string[]) => {
    const now = ctx.now().getTime();
    const refreshToken = newTokenValue(32);
    const accessToken = newTokenValue(32);
    ctx.store.refreshTokens.set(refreshToken, {
      token: refreshToken,
      userId,
      clientId: client.clientId,
      scope: grantScope,
      revoked: false,
    });
    ctx.store.accessTokens.set(accessToken, {
      token: accessToken,
      userId,
      scope: accessScope,
      expiresAt: new Date(now + ctx.settings.tokenTtlSeconds * 1000).toISOString(),
      kind: 'oauth',
      clientId: client.clientId,
      refreshToken,
      issuedAt: timestamp(ctx.now()),
    });
    return {
      access_token: accessToken,
      refresh_token: refreshToken,
      expires_in: ctx.settings.tokenTtlSeconds,
      token_type: 'bearer',
      scope: accessScope.join(' '),
      subdomain: SANDBOX_SUBDOMAIN,
    };
  };

  app.get('/oauth/authorise', async (request, reply) => {
    const params = (request.query ?? {}) as OAuthParams;
    return answerAuthorise(ctx, reply, params, (target) => {
      const { scope } = checkGrantRequest(params);
      const page = renderConsentPage(target.client, adminOf(ctx), {
        response_type: 'code',
        client_id: target.client.clientId,
        redirect_uri: target.redirectUri,
        scope,
        state: target.state,
      });
      return reply.code(200).headers(PAGE_HEADERS).send(page);
    });
  });

  app.post('/oauth/authorise', async (request, reply) => {
    const body = request.body;
    const params: OAuthParams = body && typeof body === 'object' && !Buffer.isBuffer(body) ? (body as OAuthParams) : {};
    return answerAuthorise(ctx, reply, params, (target) => {
      const { scope } = checkGrantRequest(params);
      const decision = params.decision;
      if (decision === 'deny') throw new RedirectableError('access_denied', 'the user denied access');
      if (decision !== 'approve') throw new RedirectableError('invalid_request', 'decision must be approve or deny');
      sweepCodes();
      const code: AuthCodeRec = {
        code: newTokenValue(24),
        clientId: target.client.clientId,
        redirectUri: target.redirectUri,
        userId: adminOf(ctx).id,
        scope: scope.split(' '),
        expiresAt: new Date(ctx.now().getTime() + CODE_TTL_MS).toISOString(),
        used: false,
      };
      ctx.store.authCodes.set(code.code, code);
      return redirectTo(reply, target.redirectUri, { code: code.code, state: target.state });
    });
  });

  app.post('/oauth/token', { errorHandler: tokenErrorHandler }, async (request, reply) => {
    const params = bodyParams(request);
    const grantType = required(params, 'grant_type');
    if (grantType !== 'authorization_code' && grantType !== 'refresh_token') {
      throw oauthError('unsupported_grant_type', 'grant_type must be authorization_code or refresh_token');
    }
    const client = authenticateClient(ctx, request, params);

    if (grantType === 'authorization_code') {
      const value = required(params, 'code');
      const redirectUri = required(params, 'redirect_uri');
      const code = ctx.store.authCodes.get(value);
      const incorrect = oauthError('invalid_grant', 'incorrect authorization code');
      if (!code || code.clientId !== client.clientId) throw incorrect;
      if (code.used) {
        // RFC 6749 section 4.1.2: a replayed code may mean it was stolen, so what it bought is revoked.
        revokeGrant(code.clientId, code.userId);
        throw incorrect;
      }
      if (Date.parse(code.expiresAt) <= ctx.now().getTime()) throw incorrect;
      if (redirectUri !== code.redirectUri) throw oauthError('invalid_request', 'invalid redirect_uri');
      code.used = true;
      return reply.headers(noStoreHeaders()).send(issueTokens(client, code.userId, code.scope, code.scope));
    }

    const value = required(params, 'refresh_token');
    const refresh = ctx.store.refreshTokens.get(value);
    if (!refresh || refresh.revoked || refresh.clientId !== client.clientId || !ctx.store.users.get(refresh.userId)) {
      throw oauthError('invalid_grant', 'the refresh token is invalid, revoked or already used');
    }
    let accessScope = refresh.scope;
    const askedScope = single(params, 'scope');
    if (askedScope !== undefined) {
      // RFC 6749 section 6: a refresh may narrow the scope, never widen it.
      const normal = normaliseScope(askedScope);
      const parts = normal?.split(' ') ?? [];
      if (normal === null || !parts.every((p) => refresh.scope.includes(p))) {
        throw oauthError('invalid_scope', 'the scope asked for exceeds the scope of the grant');
      }
      accessScope = parts;
    }
    // Rotation: the old refresh token stops working now; access tokens it bought live until expiry.
    refresh.revoked = true;
    return reply.headers(noStoreHeaders()).send(issueTokens(client, refresh.userId, refresh.scope, accessScope));
  });

  app.post('/oauth/token/revoke', { errorHandler: tokenErrorHandler }, async (request, reply) => {
    const params = bodyParams(request);
    const value = required(params, 'token');
    // The spec's revocation request carries only the token; credentials are checked when sent.
    const client = authenticateClient(ctx, request, params, true);
    const access = ctx.store.accessTokens.get(value);
    const refresh = ctx.store.refreshTokens.get(value);
    const ownedBy = (clientId: string | null): boolean => client === null || clientId === client.clientId;
    // Personal tokens are made in the account preferences, not by this server, so they stay.
    if (access && access.kind === 'oauth' && ownedBy(access.clientId)) ctx.store.accessTokens.delete(value);
    if (refresh && ownedBy(refresh.clientId)) revokeGrant(refresh.clientId, refresh.userId);
    // RFC 7009 section 2.2: unknown and already revoked tokens are answered 200 all the same.
    return reply.code(200).headers(noStoreHeaders()).send();
  });
}
