import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from './context.ts';
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

function refuse(reply: FastifyReply, status: 401 | 403, error: string, description: string): FastifyReply {
  return reply
    .code(status)
    .header('WWW-Authenticate', challenge(error, description))
    .send({ error, error_description: description, message: description });
}

/** Looks a bearer token up; null when unknown, revoked or expired. */
export function findAccessToken(ctx: SandboxContext, value: string): AccessTokenRec | { expired: true } | null {
  const token = ctx.store.accessTokens.get(value);
  if (!token) return null;
  if (token.expiresAt !== null && Date.parse(token.expiresAt) <= ctx.now().getTime()) return { expired: true };
  return token;
}

/**
 * Checks `Authorization: Bearer` on every request under `/api/`: 401 with `WWW-Authenticate` for a
 * missing, invalid or expired token, 403 when a read-only token tries to write.
 */
export function installBearerAuth(app: FastifyInstance, ctx: SandboxContext): void {
  app.decorateRequest('caller', null);
  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.url.startsWith('/api/')) return;
    const header = request.headers.authorization;
    const match = header ? /^Bearer\s+(\S+)\s*$/i.exec(header) : null;
    if (!match?.[1]) {
      return refuse(reply, 401, 'invalid_request', 'missing bearer token in the Authorization header');
    }
    const found = findAccessToken(ctx, match[1]);
    if (found === null) return refuse(reply, 401, 'invalid_token', 'the access token is invalid');
    if ('expired' in found) return refuse(reply, 401, 'invalid_token', 'the access token expired');
    const user = ctx.store.users.get(found.userId);
    if (!user) return refuse(reply, 401, 'invalid_token', 'the access token belongs to no user');
    const writes = request.method !== 'GET' && request.method !== 'HEAD';
    if (writes && !found.scope.includes('write')) {
      return refuse(reply, 403, 'insufficient_scope', 'the access token does not have the write scope');
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
  });
}
