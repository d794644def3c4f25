import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';
import type { SandboxContext } from './context.ts';
import { HttpError } from './http.ts';
import type { OAuthClientRec } from './model.ts';

/** The scope sets the service grants; anything else is `invalid_scope`. */
export const SCOPE_SETS = ['read', 'read write', 'read write user_preference'] as const;
/** The scope granted when a request names none. */
export const DEFAULT_SCOPE = 'read write';

/** Parameters of an OAuth request: query string or body, each value a string or a repeated list. */
export type OAuthParams = Record<string, unknown>;

// Token answers carry credentials, and error answers must not be cached in front of them either
// (RFC 6749 section 5.1).
const NO_STORE = { 'cache-control': 'no-store', pragma: 'no-cache' };

/** An RFC 6749 section 5.2 error answer: `{error, error_description}`, 400 unless told. */
export function oauthError(
  error: string,
  description: string,
  status = 400,
  headers: Record<string, string> = {},
): HttpError {
  return new HttpError(status, { error, error_description: description }, { ...NO_STORE, ...headers });
}

/** The headers every token endpoint answer carries. */
export function noStoreHeaders(): Record<string, string> {
  return { ...NO_STORE };
}

/**
 * The body of a token or revocation request as parameters. Fastify hands over an object for JSON
 * and form bodies, and a Buffer for anything else, which is refused.
 */
export function bodyParams(request: FastifyRequest): OAuthParams {
  const body = request.body;
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body) || Buffer.isBuffer(body)) {
    throw oauthError('invalid_request', 'the body must be a JSON object or application/x-www-form-urlencoded');
  }
  return body as OAuthParams;
}

/**
 * One parameter as a string. RFC 6749 section 3.1 forbids repeating a parameter, so a repeated one
 * is refused; non-string JSON values are refused too, because the service's parameters are all
 * strings. An empty string counts as absent, as form submissions send empty fields.
 */
export function single(params: OAuthParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null || value === '') return undefined;
  if (Array.isArray(value)) throw oauthError('invalid_request', `the parameter ${name} was given more than once`);
  if (typeof value !== 'string') throw oauthError('invalid_request', `the parameter ${name} must be a string`);
  return value;
}

/** One parameter that must be present; its absence is `invalid_request` naming it. */
export function required(params: OAuthParams, name: string): string {
  const value = single(params, name);
  if (value === undefined) throw oauthError('invalid_request', `the parameter ${name} is missing`);
  return value;
}

/**
 * Normalises a requested scope into one of the granted sets, or null when it is not one of them.
 * Order and repeats do not matter (`write read` is `read write`).
 */
export function normaliseScope(raw: string | undefined): string | null {
  if (raw === undefined || raw.trim() === '') return DEFAULT_SCOPE;
  const asked = new Set(raw.trim().split(/\s+/));
  for (const set of SCOPE_SETS) {
    const parts = set.split(' ');
    if (parts.length === asked.size && parts.every((p) => asked.has(p))) return set;
  }
  return null;
}

/**
 * Compares two secrets in time that does not depend on where they differ. Hashing first makes the
 * inputs the same length, so the length of the real secret does not leak either.
 */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash('sha256').update(given, 'utf8').digest();
  const b = createHash('sha256').update(expected, 'utf8').digest();
  return timingSafeEqual(a, b);
}

function decodeFormComponent(text: string): string {
  return decodeURIComponent(text.replace(/\+/g, ' '));
}

/** Client credentials from `Authorization: Basic` (RFC 6749 section 2.3.1), if sent that way. */
function basicCredentials(request: FastifyRequest): { id: string; secret: string } | null {
  const header = request.headers.authorization;
  const match = header ? /^Basic\s+(\S+)\s*$/i.exec(header) : null;
  if (!match?.[1]) return null;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw oauthError('invalid_client', 'the Basic credentials are malformed', 401, basicChallenge());
  try {
    return { id: decodeFormComponent(decoded.slice(0, colon)), secret: decodeFormComponent(decoded.slice(colon + 1)) };
  } catch {
    throw oauthError('invalid_client', 'the Basic credentials are malformed', 401, basicChallenge());
  }
}

function basicChallenge(): Record<string, string> {
  return { 'www-authenticate': 'Basic realm="crm"' };
}

const NO_CLIENT = 'no client found with the given key and secret';

/**
 * Authenticates the client of a token or revocation request by `client_id` and `client_secret`
 * in the body, or by HTTP Basic. Installed applications have an empty secret and authenticate with
 * their id alone. Returns null when `optional` and no client id was sent at all.
 */
export function authenticateClient(ctx: SandboxContext, request: FastifyRequest, params: OAuthParams): OAuthClientRec;
export function authenticateClient(
  ctx: SandboxContext,
  request: FastifyRequest,
  params: OAuthParams,
  optional: true,
): OAuthClientRec | null;
export function authenticateClient(
  ctx: SandboxContext,
  request: FastifyRequest,
  params: OAuthParams,
  optional = false,
): OAuthClientRec | null {
  const basic = basicCredentials(request);
  const bodyId = single(params, 'client_id');
  const bodySecret = single(params, 'client_secret');
  if (basic && (bodySecret !== undefined || (bodyId !== undefined && bodyId !== basic.id))) {
    // RFC 6749 section 2.3: a client uses one authentication method per request.
    throw oauthError(
      'invalid_request',
      'send client credentials either in the body or in the Authorization header, not both',
    );
  }
  const id = basic?.id ?? bodyId;
  const secret = basic?.secret ?? bodySecret ?? '';
  if (id === undefined) {
    if (optional) return null;
    throw oauthError('invalid_request', 'the parameter client_id is missing');
  }
  const client = ctx.store.oauthClients.get(id);
  // Compare even for an unknown client so that the answer time says nothing about which ids exist.
  const matches = secretsEqual(secret, client?.clientSecret ?? '\u0000unknown client');
  if (!client || !matches) {
    throw basic
      ? oauthError('invalid_client', NO_CLIENT, 401, basicChallenge())
      : oauthError('invalid_client', NO_CLIENT);
  }
  return client;
}
