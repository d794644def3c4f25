/**
 * Projects (spec 4.1), still called `kase` on the wire.
 *
 * A project's stage is one of the account's stages (routes/account-lists.ts lists them); a new
 * project starts on the first stage of the first board.
 */
import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { Caller, SandboxContext } from '../context.ts';
import { notFound, parseId, timestamp, validationError } from '../http.ts';
import type { KaseRec } from '../model.ts';
import { firstStageId, stagesInOrder } from './account-lists.ts';
import { KASE_EMBEDS, serializeKase } from './record-serializers.ts';
import { deleteKase } from './record-cascade.ts';
import { type Body, checkKeys, nameOrPartyMatches, Problems, readDate, readIdRef, today } from './record-common.ts';
import { blankPartyWork, finishBody, readNameDescription, readParty, registerRecordRoutes } from './record-routes.ts';

const KASE_KEYS = [
  'name',
  'description',
  'party',
  'owner',
  'team',
  'status',
  'opportunity',
  'stage',
  'startOn',
  'expectedCloseOn',
  'closedOn',
  'tags',
  'fields',
];
const READ_ONLY_KEYS = ['id', 'createdAt', 'updatedAt', 'lastContactedAt', 'missingImportantFields'];

function readStage(ctx: SandboxContext, value: unknown, problems: Problems): number | undefined {
  if (value === undefined) return undefined;
  const id = readIdRef(value, 'stage', problems);
  if (id === undefined || id === null) return undefined;
  if (!ctx.store.stages.has(id)) {
    const known = stagesInOrder(ctx.store).map((s) => `${s.id} (${s.name})`);
    problems.add(
      'stage',
      `no stage with id ${id}; the stages are ${known.join(', ') || 'none'} (GET /stages lists them)`,
    );
    return undefined;
  }
  return id;
}

/** Checks a create or update body and applies it to a copy of `base`; stores nothing. */
function applyKaseBody(
  ctx: SandboxContext,
  caller: Caller,
  body: Body,
  base: KaseRec,
  mode: 'create' | 'update',
): { record: KaseRec; tracks: number[]; applyTagChanges: () => void } {
  const problems = new Problems('kase');
  const record: KaseRec = { ...base };
  checkKeys(body, mode === 'create' ? [...KASE_KEYS, 'tracks'] : KASE_KEYS, READ_ONLY_KEYS, problems);

  readNameDescription(body, record, mode, problems);
  readParty(ctx, body, record, mode, problems);

  const opportunityId = readIdRef(body.opportunity, 'opportunity', problems, true);
  if (opportunityId === null) record.opportunityId = null;
  else if (typeof opportunityId === 'number') {
    if (!ctx.store.opportunities.has(opportunityId))
      problems.add('opportunity', `no opportunity with id ${opportunityId}`);
    else record.opportunityId = opportunityId;
  }

  const stageId = readStage(ctx, body.stage, problems);
  if (stageId !== undefined) record.stageId = stageId;
  else if (mode === 'create') record.stageId = firstStageId(ctx.store);

  if (body.status !== undefined) {
    if (body.status !== 'OPEN' && body.status !== 'CLOSED')
      problems.add('status', `must be "OPEN" or "CLOSED", got ${JSON.stringify(body.status)}`);
    else record.status = body.status;
  }
  for (const key of ['startOn', 'expectedCloseOn', 'closedOn'] as const) {
    const value = readDate(body, key, problems);
    if (value !== undefined) record[key] = value;
  }
  // Closing stamps the close date when none is given; reopening clears it.
  if (record.status === 'CLOSED' && base.status !== 'CLOSED' && body.closedOn === undefined)
    record.closedOn = today(ctx);
  if (record.status === 'OPEN' && base.status === 'CLOSED' && body.closedOn === undefined) record.closedOn = null;

  return finishBody(ctx, caller, body, base, record, mode, problems, {
    entity: 'kases',
    tracksFor: 'KASE',
    aNoun: 'a project',
  });
}

/** A new project before the request's fields are applied: open, on no stage yet (creating puts it on the first). */
export function blankKase(at: string): Omit<KaseRec, 'id'> {
  return {
    ...blankPartyWork(at),
    status: 'OPEN',
    opportunityId: null,
    stageId: null,
    startOn: null,
    expectedCloseOn: null,
    closedOn: null,
  };
}

/** Registers the v2 project endpoints (spec 4.1). */
export function registerKaseRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { store } = ctx;
  const findKase = registerRecordRoutes<KaseRec>(app, ctx, {
    plural: 'kases',
    singular: 'kase',
    noun: 'project',
    param: 'kaseId',
    restrictedKey: 'restrictedKases',
    embeds: KASE_EMBEDS,
    table: () => store.kases,
    deleted: () => store.deleted.kases,
    serialize: serializeKase,
    matches: nameOrPartyMatches,
    blank: blankKase,
    applyBody: applyKaseBody,
    remove: deleteKase,
    trackTarget: (kaseId) => ({ kaseId }),
  });

  const contactTarget = (request: FastifyRequest): { kase: KaseRec; partyId: number } => {
    const kase = findKase(request);
    const { partyId } = request.params as { partyId: string };
    const id = parseId(partyId, 'party');
    if (!store.parties.has(id)) throw notFound(`no party with id ${id}`);
    return { kase, partyId: id };
  };

  app.post('/api/v2/kases/:kaseId/parties/:partyId', async (request, reply) => {
    const { kase, partyId } = contactTarget(request);
    if (kase.partyId === partyId) {
      throw validationError('kase', [
        { field: 'party', message: `party ${partyId} is the project's own party, not an additional contact` },
      ]);
    }
    if (!kase.partyIds.includes(partyId)) {
      kase.partyIds = [...kase.partyIds, partyId];
      kase.updatedAt = timestamp(ctx.now());
    }
    return reply.code(204).send();
  });

  app.delete('/api/v2/kases/:kaseId/parties/:partyId', async (request, reply) => {
    const { kase, partyId } = contactTarget(request);
    if (!kase.partyIds.includes(partyId))
      throw notFound(`party ${partyId} is not an additional contact of project ${kase.id}`);
    kase.partyIds = kase.partyIds.filter((id) => id !== partyId);
    kase.updatedAt = timestamp(ctx.now());
    return reply.code(204).send();
  });
}
