/**
 * The routes projects and opportunities share: list, search, deleted, show (one or several ids),
 * create, update, delete, and the additional parties. They differ only in names, bodies and
 * serializers, which a RecordKind gives.
 */
import { pageOf } from '../paging.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerOf, type Caller, type SandboxContext } from '../context.ts';
import { badRequest, created, isIdList, paginate, parseEmbed, parseId, queryOf, timestamp, unwrap } from '../http.ts';
import type { DeletedRec, FieldValueRec, PartyRec, PartyWorkRec } from '../model.ts';
import type { Table } from '../store.ts';
import { PARTY_EMBEDS, serializeParty } from './record-serializers.ts';
import {
  applyTags,
  type Body,
  changedSince,
  deletedList,
  dropFieldsOfRemovedTags,
  mustFind,
  mustFindAll,
  planFields,
  planTags,
  type Problems,
  readIdRef,
  readString,
  resolveOwnerTeam,
  visibleTo,
} from './record-common.ts';
import { applyTracksOrUndo, readTracks } from './record-tracks.ts';

/** What the body readers below write into: the fields projects and opportunities share. */
interface SharedFields {
  name: string;
  description: string | null;
  partyId: number;
  ownerId: number | null;
  teamId: number | null;
  tagIds: number[];
  fields: FieldValueRec[];
}

/** The part of a new project or opportunity the two share, before the request's fields are applied. */
export function blankPartyWork(at: string): Omit<PartyWorkRec, 'id'> {
  return {
    name: '',
    description: null,
    partyId: 0,
    partyIds: [],
    ownerId: null,
    teamId: null,
    lastContactedAt: null,
    tagIds: [],
    fields: [],
    restrictedFor: [],
    createdAt: at,
    updatedAt: at,
  };
}

/** Reads the name, the description and the party of a create or update body into `record`. */
export function readNameDescription(
  body: Body,
  record: SharedFields,
  mode: 'create' | 'update',
  problems: Problems,
): void {
  const name = readString(body, 'name', problems, { required: mode === 'create', max: 255 });
  if (name) record.name = name;
  const description = readString(body, 'description', problems, { nullable: true, max: 100_000 });
  if (description !== undefined) record.description = description;
}

/** Reads the party a body links to (required on create) into `record`. */
export function readParty(
  ctx: SandboxContext,
  body: Body,
  record: SharedFields,
  mode: 'create' | 'update',
  problems: Problems,
): void {
  if (mode === 'create' && body.party === undefined) problems.add('party', 'is required: {"id": <party id>}');
  const partyId = readIdRef(body.party, 'party', problems);
  if (typeof partyId === 'number') {
    if (!ctx.store.parties.has(partyId)) problems.add('party', `no party with id ${partyId}`);
    else record.partyId = partyId;
  }
}

/**
 * The end of applying a body, the same for both kinds: owner or team (one is needed), tags,
 * custom fields and, on create, tracks; then every problem found is thrown at once.
 */
export function finishBody<R extends SharedFields>(
  ctx: SandboxContext,
  caller: Caller,
  body: Body,
  base: R,
  record: R,
  mode: 'create' | 'update',
  problems: Problems,
  kind: { entity: 'kases' | 'opportunities'; tracksFor: 'KASE' | 'OPPORTUNITY'; aNoun: string },
): { record: R; tracks: number[]; applyTagChanges: () => void } {
  Object.assign(record, resolveOwnerTeam(ctx, body, caller, problems, mode === 'create' ? null : base));
  if (record.ownerId === null && record.teamId === null)
    problems.add('owner', `${kind.aNoun} needs an owner or a team`);
  const tagPlan = planTags(ctx, kind.entity, base.tagIds, body.tags, mode, problems);
  const fields = planFields(ctx, kind.entity, null, base.fields, body.fields, mode, problems);
  const tracks = mode === 'create' ? readTracks(ctx, body.tracks, kind.tracksFor, problems) : [];
  problems.check();
  record.fields = dropFieldsOfRemovedTags(ctx, fields, tagPlan.removed);
  return {
    record,
    tracks,
    applyTagChanges: () => {
      record.tagIds = applyTags(ctx, kind.entity, tagPlan, record.fields);
    },
  };
}

/** What the shared routes need of a record kind. */
export interface RecordKind<
  R extends { id: number; name: string; partyIds: number[]; restrictedFor: number[]; updatedAt: string },
> {
  /** The path segment and list key (`kases`), the wrapper of one record (`kase`). */
  plural: 'kases' | 'opportunities';
  singular: 'kase' | 'opportunity';
  /** The record's name in messages (`project`). */
  noun: string;
  /** The route parameter of its id (`kaseId`). */
  param: string;
  /** The key of restricted records in the `/deleted` answer. */
  restrictedKey: string;
  embeds: readonly string[];
  table(ctx: SandboxContext): Table<R>;
  deleted(ctx: SandboxContext): readonly DeletedRec[];
  serialize(ctx: SandboxContext, record: R, embed: ReadonlySet<string>): Record<string, unknown>;
  matches(ctx: SandboxContext, record: R, q: string): boolean;
  blank(at: string): Omit<R, 'id'>;
  applyBody(
    ctx: SandboxContext,
    caller: Caller,
    body: Body,
    base: R,
    mode: 'create' | 'update',
  ): { record: R; tracks: number[]; applyTagChanges: () => void };
  remove(ctx: SandboxContext, id: number): void;
  /** Where tracks applied on create go. */
  trackTarget(id: number): { kaseId: number } | { opportunityId: number };
}

/** Creates a record of the kind from a v2 create body, with the tracks it names; v1 creates come here too. */
export function createRecord<
  R extends { id: number; name: string; partyIds: number[]; restrictedFor: number[]; updatedAt: string },
>(ctx: SandboxContext, kind: RecordKind<R>, caller: Caller, body: Body): R {
  const at = timestamp(ctx.now());
  const {
    record: draft,
    tracks,
    applyTagChanges,
  } = kind.applyBody(ctx, caller, body, { ...kind.blank(at), id: 0 } as R, 'create');
  applyTagChanges();
  const { id: _ignored, ...rest } = draft;
  const record = kind.table(ctx).insert(rest as Omit<R, 'id'>);
  applyTracksOrUndo(ctx, tracks, kind.trackTarget(record.id), caller.user.id);
  return record;
}

/** Registers the shared routes; returns the lookup of the record a request's path names, for the kind's own routes. */
export function registerRecordRoutes<
  R extends { id: number; name: string; partyIds: number[]; restrictedFor: number[]; updatedAt: string },
>(app: FastifyInstance, ctx: SandboxContext, kind: RecordKind<R>): (request: FastifyRequest) => R {
  const { plural, singular, noun } = kind;
  const table = kind.table(ctx);
  const base = `/api/v2/${plural}`;
  const list = (
    request: FastifyRequest,
    reply: FastifyReply,
    matches: (record: R) => boolean,
  ): Record<string, unknown> => {
    const embed = parseEmbed(request, kind.embeds);
    const caller = callerOf(request);
    const page = pageOf(ctx.store, request, reply, {
      records: () => table.values(),
      matches: (r) => visibleTo(r, caller) && matches(r),
      key: `caller ${caller.user.id}`,
    });
    return { [plural]: page.map((r) => kind.serialize(ctx, r, embed)) };
  };
  const find = (request: FastifyRequest): R => {
    const id = (request.params as Record<string, string>)[kind.param] as string;
    return mustFind(table, parseId(id, noun), callerOf(request), noun);
  };
  // A written record is answered with its tags and fields whatever was asked to embed.
  const written = (request: FastifyRequest): Set<string> =>
    new Set([...parseEmbed(request, kind.embeds), 'tags', 'fields']);

  app.get(base, async (request, reply) => list(request, reply, changedSince(request)));

  app.get(`${base}/search`, async (request, reply) => {
    const q = queryOf(request).q;
    if (q === undefined || q.trim() === '') throw badRequest('the search needs a non-empty q parameter');
    return list(request, reply, (r) => kind.matches(ctx, r, q));
  });

  app.get(`${base}/deleted`, async (request) =>
    deletedList(
      request,
      ctx.store,
      callerOf(request),
      kind.deleted(ctx),
      () => table.values(),
      (r) => r.name,
      { deleted: plural, restricted: kind.restrictedKey },
    ),
  );

  app.get(`${base}/:${kind.param}`, async (request) => {
    const id = (request.params as Record<string, string>)[kind.param] as string;
    const embed = parseEmbed(request, kind.embeds);
    if (isIdList(id))
      return { [plural]: mustFindAll(table, id, callerOf(request), noun).map((r) => kind.serialize(ctx, r, embed)) };
    return { [singular]: kind.serialize(ctx, find(request), embed) };
  });

  app.post(base, async (request, reply) => {
    const embed = written(request);
    const caller = callerOf(request);
    const record = createRecord(ctx, kind, caller, unwrap(request, singular));
    return created(request, reply, `/${plural}/${record.id}`, { [singular]: kind.serialize(ctx, record, embed) });
  });

  app.put(`${base}/:${kind.param}`, async (request) => {
    const embed = written(request);
    const caller = callerOf(request);
    const existing = find(request);
    const body = unwrap(request, singular);
    const { record, applyTagChanges } = kind.applyBody(ctx, caller, body, existing, 'update');
    applyTagChanges();
    record.updatedAt = timestamp(ctx.now());
    table.put(record);
    return { [singular]: kind.serialize(ctx, record, embed) };
  });

  app.delete(`${base}/:${kind.param}`, async (request, reply) => {
    kind.remove(ctx, find(request).id);
    return reply.code(204).send();
  });

  app.get(`${base}/:${kind.param}/parties`, async (request, reply) => {
    const record = find(request);
    const embed = parseEmbed(request, PARTY_EMBEDS);
    const caller = callerOf(request);
    const parties = record.partyIds.flatMap((id) => {
      const party: PartyRec | undefined = ctx.store.parties.get(id);
      return party && visibleTo(party, caller) ? [party] : [];
    });
    return { parties: paginate(request, reply, parties).map((p) => serializeParty(ctx, p, embed)) };
  });

  return find;
}
