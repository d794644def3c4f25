/**
 * What the v1 route modules share: route registration with the format suffixes, record lookups,
 * `start`/`limit` slicing and the filters of the list endpoints.
 */
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import { badRequest, baseUrlOf, notFound, parseId, queryOf } from '../http.ts';
import type { EntityKind, KaseRec, OpportunityRec, PartyRec, UserRec } from '../model.ts';
import { parseFilterTime } from './input.ts';
import { handleV1Error } from './negotiate.ts';

export type V1Handler = (request: FastifyRequest, reply: FastifyReply) => Promise<unknown> | unknown;

/** Registers one v1 route; every route also answers with `.json` and `.xml` appended to its path. */
export type V1Route = (method: 'GET' | 'POST' | 'PUT' | 'DELETE', path: string, handler: V1Handler) => void;

/** The route registrar every v1 module uses. */
export function v1Router(app: FastifyInstance): V1Route {
  return (method, path, handler) => {
    for (const suffix of ['', '.json', '.xml']) {
      // A route-level error handler, because the sandbox-wide one answers JSON only and errors
      // raised before the handler (a malformed JSON body) must be answered in the negotiated format.
      app.route({ method, url: `${path}${suffix}`, handler, errorHandler: handleV1Error });
    }
  };
}

/** The v1 name of a record kind, as it appears in paths. */
export type V1Kind = 'party' | 'opportunity' | 'kase';

export const ENTITY_OF: Record<V1Kind, EntityKind> = { party: 'parties', opportunity: 'opportunities', kase: 'kases' };

type AnyRecord = PartyRec | OpportunityRec | KaseRec;

const WHAT: Record<V1Kind, string> = { party: 'party', opportunity: 'opportunity', kase: 'case' };

/** A record the caller can see, by the id in the path; 404 otherwise. */
export function findRecord(
  ctx: SandboxContext,
  request: FastifyRequest,
  kind: 'party',
  raw: string | undefined,
): PartyRec;
export function findRecord(
  ctx: SandboxContext,
  request: FastifyRequest,
  kind: 'opportunity',
  raw: string | undefined,
): OpportunityRec;
export function findRecord(
  ctx: SandboxContext,
  request: FastifyRequest,
  kind: 'kase',
  raw: string | undefined,
): KaseRec;
export function findRecord(
  ctx: SandboxContext,
  request: FastifyRequest,
  kind: V1Kind,
  raw: string | undefined,
): AnyRecord;
export function findRecord(
  ctx: SandboxContext,
  request: FastifyRequest,
  kind: V1Kind,
  raw: string | undefined,
): AnyRecord {
  const id = parseId(raw, WHAT[kind]);
  const table =
    kind === 'party' ? ctx.store.parties : kind === 'opportunity' ? ctx.store.opportunities : ctx.store.kases;
  const record = table.get(id);
  if (!record || !visibleTo(record, callerOf(request).user)) throw notFound(`no ${WHAT[kind]} with id ${id}`);
  return record;
}

/** Records restricted for a user are hidden from them as if they did not exist. */
export function visibleTo(record: { restrictedFor: number[] }, user: UserRec): boolean {
  return !record.restrictedFor.includes(user.id);
}

/** `{base}/api{path}` for `Location` headers. */
export function v1Location(request: FastifyRequest, path: string): string {
  return `${baseUrlOf(request)}/api${path}`;
}

function readCount(name: string, raw: string | undefined, min: number): number | null {
  if (raw === undefined || raw === '') return null;
  if (!/^\d{1,9}$/.test(raw) || Number(raw) < min) {
    throw badRequest(`${name} must be an integer of at least ${min}, got ${JSON.stringify(raw)}`);
  }
  return Number(raw);
}

/** Applies `start` (zero-based index of the first record) and `limit` (most records) to a list. */
export function sliceByQuery<T>(request: FastifyRequest, items: readonly T[]): T[] {
  const query = queryOf(request);
  const start = readCount('start', query.start, 0) ?? 0;
  const limit = readCount('limit', query.limit, 1);
  return items.slice(start, limit === null ? undefined : start + limit);
}

/**
 * The `lastmodified` and `tag` filters of the list endpoints: records updated strictly after the
 * time, and records carrying a tag of that name (compared without regard to case).
 */
export function filterByQuery<T extends AnyRecord>(
  ctx: SandboxContext,
  request: FastifyRequest,
  entity: EntityKind,
  records: readonly T[],
): T[] {
  const query = queryOf(request);
  let result = [...records];
  if (query.lastmodified !== undefined && query.lastmodified !== '') {
    const after = parseFilterTime('lastmodified', query.lastmodified).getTime();
    result = result.filter((record) => Date.parse(record.updatedAt) > after);
  }
  if (query.tag !== undefined && query.tag !== '') {
    const wanted = query.tag.toLowerCase();
    const tagIds = new Set(
      ctx.store.tags
        .all()
        .filter((t) => t.entity === entity && t.name.toLowerCase() === wanted)
        .map((t) => t.id),
    );
    result = result.filter((record) => record.tagIds.some((id) => tagIds.has(id)));
  }
  return result;
}

/** The user with this username; undefined when none. */
export function userByUsername(ctx: SandboxContext, username: string): UserRec | undefined {
  return ctx.store.users.all().find((user) => user.username === username);
}
