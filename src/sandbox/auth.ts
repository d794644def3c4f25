import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from './context.ts';
import { isLegacyPath, sendError } from './error-answer.ts';
import { timestamp } from './http.ts';
import type { AccessTokenRec } from './model.ts';

/**
 * A new random token value. Never one starting with `-`: `--token -x...` reads as a flag, so one
 * printed token in 64 could not be given back on the command line (and failed tests at random).
 */
export function newTokenValue(bytes = 24): string {
  const value = randomBytes(bytes).toString('base64url');
  return value.startsWith('-') ? `A${value.slice(1)}` : value;
}

function challenge(error: string, description: string): string {
  return `Bearer realm="crm", error="${error}", error_description="${description}"`;
}

/**
 * Refuses a request with the challenges of its interface: the legacy interface also offers HTTP
 * Basic (the published v1 clients send the token as the user name), so it names that scheme first.
 */
function refuse(
  request: FastifyRequest,
  reply: FastifyReply,
  status: 401 | 403,
  error: string,
  description: string,
): FastifyReply {
  const bearer = challenge(error, description);
  reply.header(
    'WWW-Authenticate',
    isLegacyPath(request.url) && status === 401 ? ['Basic realm="crm"', bearer] : bearer,
  );
  return sendError(request, reply, status, { error, error_description: description, message: description });
}

/**
 * The token a request carries: `Authorization: Bearer TOKEN` anywhere; on the legacy interface
 * also `Authorization: Basic` with the token as the user name and any password (`curl -u TOKEN:x`),
 * as every published v1 client sends it. Null when there is none.
 */
export function tokenOf(header: string | undefined, legacy: boolean): string | null {
  if (!header) return null;
  const bearer = /^Bearer\s+(\S+)\s*$/i.exec(header);
  if (bearer?.[1]) return bearer[1];
  if (!legacy) return null;
  const basic = /^Basic\s+([A-Za-z0-9+/=_-]+)\s*$/i.exec(header);
  if (!basic?.[1]) return null;
  const decoded = Buffer.from(basic[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  const user = colon === -1 ? decoded : decoded.slice(0, colon);
  return user === '' ? null : user;
}

/** Looks a bearer token up; null when unknown, revoked or expired. */
export function findAccessToken(ctx: SandboxContext, value: string): AccessTokenRec | { expired: true } | null {
  const token = ctx.store.accessTokens.get(value);
  if (!token) return null;
  if (token.expiresAt !== null && Date.parse(token.expiresAt) <= ctx.now().getTime()) return { expired: true };
  return token;
}

/**
 * Checks the token of every request under `/api/` (bearer; on the legacy interface also HTTP
 * Basic, see tokenOf): 401 with `WWW-Authenticate` for a missing, invalid or expired token, 403
 * when a read-only token tries to write. Refusals come in the interface's error shape.
 */
export function installBearerAuth(app: FastifyInstance, ctx: SandboxContext): void {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.url.startsWith('/api/')) return;
    const legacy = isLegacyPath(request.url);
    const token = tokenOf(request.headers.authorization, legacy);
    if (token === null) {
      const missing = legacy
        ? 'missing API token: send it as a bearer token or as the user name of HTTP Basic authentication'
        : 'missing bearer token in the Authorization header';
      return refuse(request, reply, 401, 'invalid_request', missing);
    }
    const found = findAccessToken(ctx, token);
    if (found === null) return refuse(request, reply, 401, 'invalid_token', 'the access token is invalid');
    if ('expired' in found) return refuse(request, reply, 401, 'invalid_token', 'the access token expired');
    const user = ctx.store.users.get(found.userId);
    if (!user) return refuse(request, reply, 401, 'invalid_token', 'the access token belongs to no user');
    const writes = request.method !== 'GET' && request.method !== 'HEAD';
    if (writes && !found.scope.includes('write')) {
      return refuse(request, reply, 403, 'insufficient_scope', 'the access token does not have the write scope');
    }
    request.caller = { user, token: found };
    return undefined;
  });
}

/** Makes `value` a personal token of the user (never expires, full scope). */
export function addPersonalToken(ctx: SandboxContext, value: string, userId: number): void {
  ctx.store.accessTokens.set(value, {
    token: value,
    userId,
    scope: ['read', 'write', 'user_preference'],
    expiresAt: null,
    kind: 'personal',
    clientId: null,
    refreshToken: null,
    issuedAt: timestamp(ctx.now()),
  });
}
