import type { FastifyReply, FastifyRequest } from 'fastify';
import { FerryError } from '../errors/index.ts';

/** One field-level problem in a 422 answer. */
export interface FieldProblem {
  message: string;
  resource: string;
  field: string;
}

/**
 * An error a route throws to answer with a status and a JSON body (a FerryError with the code
 * SANDBOX_REQUEST). The server's error handler turns it into the answer; anything else thrown is a
 * sandbox bug and answers 500.
 */
export class HttpError extends FerryError {
  constructor(
    readonly status: number,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super('SANDBOX_REQUEST', typeof body.message === 'string' ? body.message : `HTTP ${status}`);
  }
}

export function badRequest(message: string): HttpError {
  return new HttpError(400, { message });
}

export function notFound(message = 'could not find the requested resource'): HttpError {
  return new HttpError(404, { message });
}

export function forbidden(message: string): HttpError {
  return new HttpError(403, { message });
}

export function conflict(message: string): HttpError {
  return new HttpError(409, { message });
}

/** 422 with the documented `{message, errors: [{message, resource, field}]}` body. */
export function validationError(resource: string, problems: Array<Omit<FieldProblem, 'resource'>>): HttpError {
  const errors = problems.map((p) => ({ ...p, resource }));
  const message = errors.map((e) => `${e.field}: ${e.message}`).join('; ');
  return new HttpError(422, { message: `validation failed: ${message}`, errors });
}

/** ISO 8601 UTC without milliseconds, as the service writes timestamps. */
export function timestamp(date: Date): string {
  return `${date.toISOString().slice(0, 19)}Z`;
}

type Query = Record<string, string | undefined>;

export function queryOf(request: FastifyRequest): Query {
  return (request.query ?? {}) as Query;
}

/** Parses one positive integer id from a path parameter; anything else is 404 like an unknown record. */
export function parseId(raw: string | undefined, what = 'record'): number {
  if (raw === undefined || !/^\d{1,15}$/.test(raw)) throw notFound(`no ${what} with id ${JSON.stringify(raw ?? '')}`);
  return Number(raw);
}

/** Parses `1,2,3` (at most 10 ids) for multi-id reads. */
export function parseIdList(raw: string, what = 'record'): number[] {
  const parts = raw.split(',');
  if (parts.length > 10) throw badRequest(`at most 10 ids can be read at once, got ${parts.length}`);
  return parts.map((part) => parseId(part.trim(), what));
}

/** Whether a path parameter holds a comma-separated id list rather than one id. */
export function isIdList(raw: string): boolean {
  return raw.includes(',');
}

/** Parses the `embed` query against the values the endpoint allows. */
export function parseEmbed(request: FastifyRequest, allowed: readonly string[]): Set<string> {
  const raw = queryOf(request).embed;
  const result = new Set<string>();
  if (!raw) return result;
  for (const value of raw
    .split(',')
    .map((v) => v.trim())
    .filter(Boolean)) {
    if (!allowed.includes(value)) {
      throw badRequest(`unknown embed value ${JSON.stringify(value)}; this endpoint accepts: ${allowed.join(', ')}`);
    }
    result.add(value);
  }
  return result;
}

/** Parses `since` (a date or timestamp); returns null when absent. */
export function parseSince(request: FastifyRequest): Date | null {
  const raw = queryOf(request).since;
  if (raw === undefined || raw === '') return null;
  const date = new Date(raw);
  if (!/^\d{4}-\d{2}-\d{2}/.test(raw) || Number.isNaN(date.getTime())) {
    throw badRequest(`since must be an ISO 8601 date or timestamp, got ${JSON.stringify(raw)}`);
  }
  return date;
}

/** Parses `page` and `perPage` (1..100, default 50); out-of-range values are a 400. */
export function parsePage(request: FastifyRequest): { page: number; perPage: number } {
  const query = queryOf(request);
  const read = (name: string, fallback: number, max: number): number => {
    const raw = query[name];
    if (raw === undefined || raw === '') return fallback;
    if (!/^\d+$/.test(raw) || Number(raw) < 1 || Number(raw) > max) {
      throw badRequest(`${name} must be an integer from 1 to ${max}, got ${JSON.stringify(raw)}`);
    }
    return Number(raw);
  };
  return { page: read('page', 1, Number.MAX_SAFE_INTEGER), perPage: read('perPage', 50, 100) };
}

/** The absolute URL the request was made to, for `Link` and `Location` headers. */
export function baseUrlOf(request: FastifyRequest): string {
  return `${request.protocol}://${request.headers.host ?? request.hostname}`;
}

/**
 * Cuts one page out of `items` and sets the RFC 5988 `Link` header with `rel="next"` and
 * `rel="prev"` when those pages exist.
 */
export function paginate<T>(request: FastifyRequest, reply: FastifyReply, items: readonly T[]): T[] {
  const { page, perPage } = parsePage(request);
  const start = (page - 1) * perPage;
  const slice = items.slice(start, start + perPage);
  const url = new URL(request.url, baseUrlOf(request));
  const link = (target: number): string => {
    const u = new URL(url);
    u.searchParams.set('page', String(target));
    u.searchParams.set('perPage', String(perPage));
    return u.toString();
  };
  const links: string[] = [];
  if (start + perPage < items.length) links.push(`<${link(page + 1)}>; rel="next"`);
  if (page > 1) links.push(`<${link(Math.min(page - 1, Math.max(1, Math.ceil(items.length / perPage))))}>; rel="prev"`);
  if (links.length > 0) reply.header('Link', links.join(', '));
  return slice;
}

/** Answers 201 with the body and a `Location` header for the new resource. */
export function created(request: FastifyRequest, reply: FastifyReply, path: string, body: unknown): FastifyReply {
  return reply
    .code(201)
    .header('Location', `${baseUrlOf(request)}/api/v2${path}`)
    .send(body);
}

/**
 * Takes the wrapped resource out of a request body (`{party: {...}}` -> `{...}`); a missing or
 * non-object wrapper is a 400 naming what was expected.
 */
export function unwrap(request: FastifyRequest, key: string): Record<string, unknown> {
  const body = request.body;
  if (!body || typeof body !== 'object' || Array.isArray(body)) {
    throw badRequest(`the request body must be a JSON object like {"${key}": {...}}`);
  }
  const inner = (body as Record<string, unknown>)[key];
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) {
    throw badRequest(`the request body must hold the resource under "${key}"`);
  }
  // Everything belongs inside the wrapper (tags, fields and tracks included): a property beside
  // it would be silently lost, so it is refused.
  const extra = Object.keys(body).filter((name) => name !== key);
  if (extra.length > 0) {
    throw badRequest(
      `unexpected ${extra.map((name) => JSON.stringify(name)).join(', ')} beside "${key}": put it inside "${key}"`,
    );
  }
  return inner as Record<string, unknown>;
}
