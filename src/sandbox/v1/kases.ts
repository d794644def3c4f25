/** Cases (projects) in the v1 interface: read, create, update, delete, deleted list, contacts. */
import type { FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import { badRequest, queryOf, timestamp } from '../http.ts';
import type { KaseRec } from '../model.ts';
import { firstStageId } from '../routes/account-lists.ts';
import { blankKase } from '../routes/kases.ts';
import {
  filterByQuery,
  findRecord,
  sliceByQuery,
  userByUsername,
  v1Location,
  visibleTo,
  type V1Route,
} from './common.ts';
import { FieldReader, isoDate, parseFilterTime, parseMoment, v1Timestamp } from './input.ts';
import { readBody, sendEmpty, sendNode } from './negotiate.ts';
import { kaseNode, partyNode } from './shapes.ts';
import { listNode, recordNode } from './xml.ts';

const WRITABLE = ['name', 'description', 'owner', 'status', 'closeDate'] as const;
const READ_ONLY = ['id', 'partyId', 'createdOn', 'updatedOn'] as const;

interface KaseChanges {
  name?: string;
  description?: string | null;
  ownerId?: number;
  status?: 'OPEN' | 'CLOSED';
  closedOn?: string | null;
}

/** Reads and checks the writable fields of a case body; a problem anywhere is one 422. */
function readKase(ctx: SandboxContext, request: FastifyRequest, creating: boolean): KaseChanges {
  const reader = new FieldReader('kase', readBody(request, 'kase'), WRITABLE, READ_ONLY);
  const changes: KaseChanges = {};
  const name = creating ? reader.requiredText('name') : reader.text('name');
  if (name === null) reader.fail('name', 'cannot be empty');
  else if (name !== undefined) changes.name = name;
  const description = reader.text('description');
  if (description !== undefined) changes.description = description;
  // Owner and status are optional with defaults (the caller, OPEN): an explicit null or an empty
  // element (`<owner/>`, as serialisers write an unset field) means the same as leaving it out.
  const owner = reader.text('owner');
  if (owner !== undefined && owner !== null) {
    const user = userByUsername(ctx, owner);
    if (user) changes.ownerId = user.id;
    else reader.fail('owner', `no user with username ${JSON.stringify(owner)}`);
  }
  const status = reader.text('status');
  if (status === 'OPEN' || status === 'CLOSED') changes.status = status;
  else if (status !== undefined && status !== null)
    reader.fail('status', `must be OPEN or CLOSED, got ${JSON.stringify(status)}`);
  const closeDate = reader.text('closeDate');
  if (closeDate !== undefined && closeDate !== null) {
    const moment = parseMoment(closeDate);
    if (moment) changes.closedOn = moment.date;
    else
      reader.fail(
        'closeDate',
        `must be a date like 2011-09-14 or 2011-09-14T15:22:01Z, got ${JSON.stringify(closeDate)}`,
      );
  }
  reader.check();
  return changes;
}

/** Applies status rules: a close date only counts on a closed case; closing without one uses today. */
function applyKaseChanges(ctx: SandboxContext, kase: KaseRec, changes: KaseChanges): void {
  if (changes.name !== undefined) kase.name = changes.name;
  if (changes.description !== undefined) kase.description = changes.description;
  if (changes.ownerId !== undefined) {
    kase.ownerId = changes.ownerId;
    kase.teamId = ctx.store.users.get(changes.ownerId)?.defaultTeamId ?? null;
  }
  const status = changes.status ?? kase.status;
  if (status === 'CLOSED') {
    if (changes.closedOn) kase.closedOn = changes.closedOn;
    else if (kase.status !== 'CLOSED' || kase.closedOn === null) kase.closedOn = isoDate(ctx.now());
  } else {
    kase.closedOn = null;
  }
  kase.status = status;
}

/** Removes a case with what hangs off it only: its tasks, tracks and entries. */
function deleteKase(ctx: SandboxContext, kase: KaseRec): void {
  const { store } = ctx;
  for (const task of store.tasks.all()) if (task.kaseId === kase.id) store.tasks.delete(task.id);
  for (const track of store.tracks.all()) if (track.kaseId === kase.id) store.tracks.delete(track.id);
  for (const entry of store.entries.all()) if (entry.kaseId === kase.id) store.entries.delete(entry.id);
  store.kases.delete(kase.id);
  store.deleted.kases.push({ id: kase.id, deletedAt: timestamp(ctx.now()) });
}

/** Case routes: `/api/kase...` and the cases of a party. */
export function registerKaseRoutes(route: V1Route, ctx: SandboxContext): void {
  const { store } = ctx;
  const kasesList = (items: KaseRec[]) =>
    listNode(
      'kases',
      ['kase'],
      items.map((k) => kaseNode(ctx, k)),
    );

  route('GET', '/api/kase', (request, reply) => {
    const user = callerOf(request).user;
    const visible = store.kases.all().filter((k) => visibleTo(k, user));
    const matching = filterByQuery(ctx, request, 'kases', visible);
    return sendNode(request, reply, kasesList(sliceByQuery(request, matching)));
  });

  route('GET', '/api/kase/deleted', (request, reply) => {
    const raw = queryOf(request).since;
    if (raw === undefined || raw === '')
      throw badRequest('the query parameter since is required, e.g. since=20110101T000000');
    const since = parseFilterTime('since', raw).getTime();
    const deleted = store.deleted.kases.filter((d) => Date.parse(d.deletedAt) > since);
    const items = deleted.map((d) =>
      recordNode('kase', [
        ['id', d.id],
        ['deletedDate', v1Timestamp(d.deletedAt)],
      ]),
    );
    return sendNode(request, reply, listNode('deletedKases', ['kase'], items));
  });

  route('GET', '/api/kase/:id', (request, reply) => {
    const kase = findRecord(ctx, request, 'kase', (request.params as { id?: string }).id);
    return sendNode(request, reply, kaseNode(ctx, kase));
  });

  route('GET', '/api/party/:id/kase', (request, reply) => {
    const party = findRecord(ctx, request, 'party', (request.params as { id?: string }).id);
    const user = callerOf(request).user;
    const kases = store.kases.all().filter((k) => k.partyId === party.id && visibleTo(k, user));
    return sendNode(request, reply, kasesList(sliceByQuery(request, kases)));
  });

  route('POST', '/api/party/:id/kase', (request, reply) => {
    const party = findRecord(ctx, request, 'party', (request.params as { id?: string }).id);
    const changes = readKase(ctx, request, true);
    const caller = callerOf(request).user;
    const at = timestamp(ctx.now());
    const kase = store.kases.insert({
      // The same new project as v2 makes (open, on the first stage), then the v1 fields.
      ...blankKase(at),
      stageId: firstStageId(store),
      name: changes.name ?? '',
      partyId: party.id,
      ownerId: caller.id,
      teamId: caller.defaultTeamId,
    });
    applyKaseChanges(ctx, kase, changes);
    return sendEmpty(reply, 201, v1Location(request, `/kase/${kase.id}`));
  });

  route('PUT', '/api/kase/:id', (request, reply) => {
    const kase = findRecord(ctx, request, 'kase', (request.params as { id?: string }).id);
    const changes = readKase(ctx, request, false);
    applyKaseChanges(ctx, kase, changes);
    kase.updatedAt = timestamp(ctx.now());
    return sendNode(request, reply, kaseNode(ctx, kase));
  });

  route('DELETE', '/api/kase/:id', (request, reply) => {
    const kase = findRecord(ctx, request, 'kase', (request.params as { id?: string }).id);
    deleteKase(ctx, kase);
    return sendEmpty(reply);
  });

  route('GET', '/api/kase/:id/party', (request, reply) => {
    const kase = findRecord(ctx, request, 'kase', (request.params as { id?: string }).id);
    const user = callerOf(request).user;
    const parties = kase.partyIds.flatMap((id) => {
      const party = store.parties.get(id);
      return party && visibleTo(party, user) ? [partyNode(ctx, party)] : [];
    });
    return sendNode(request, reply, listNode('parties', ['person', 'organisation'], parties));
  });

  route('POST', '/api/kase/:id/party/:partyId', (request, reply) => {
    const params = request.params as { id?: string; partyId?: string };
    const kase = findRecord(ctx, request, 'kase', params.id);
    const party = findRecord(ctx, request, 'party', params.partyId);
    // The primary party is already on the case, so adding it changes nothing.
    if (party.id === kase.partyId || kase.partyIds.includes(party.id)) return sendEmpty(reply, 200);
    kase.partyIds.push(party.id);
    kase.updatedAt = timestamp(ctx.now());
    return sendEmpty(reply, 201, v1Location(request, `/kase/${kase.id}/party`));
  });

  route('DELETE', '/api/kase/:id/party/:partyId', (request, reply) => {
    const params = request.params as { id?: string; partyId?: string };
    const kase = findRecord(ctx, request, 'kase', params.id);
    const party = findRecord(ctx, request, 'party', params.partyId);
    if (kase.partyIds.includes(party.id)) {
      kase.partyIds = kase.partyIds.filter((id) => id !== party.id);
      kase.updatedAt = timestamp(ctx.now());
    }
    return sendEmpty(reply);
  });
}
