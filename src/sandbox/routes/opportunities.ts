/**
 * Opportunities (spec 4.2). The milestone decides the default probability and whether the
 * opportunity is closed: moving onto a complete milestone stamps `closedOn`, moving off clears it.
 */
import { code as currencyByCode } from 'currency-codes';
import type { FastifyInstance } from 'fastify';
import type { Caller, SandboxContext } from '../context.ts';
import { timestamp } from '../http.ts';
import type { MilestoneRec, OpportunityRec } from '../model.ts';
import { OPPORTUNITY_EMBEDS, serializeOpportunity } from './record-serializers.ts';
import { deleteOpportunity } from './record-cascade.ts';
import {
  type Body,
  checkKeys,
  isObject,
  nameOrPartyMatches,
  Problems,
  readDate,
  readIdRef,
  readInteger,
  readString,
  today,
} from './record-common.ts';
import {
  blankPartyWork,
  finishBody,
  readNameDescription,
  readParty,
  type RecordKind,
  registerRecordRoutes,
} from './record-routes.ts';

/** Bases of an opportunity's duration; only FIXED has no duration. */
export const DURATION_BASES = ['FIXED', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR'] as const;

const OPPORTUNITY_KEYS = [
  'name',
  'description',
  'party',
  'owner',
  'team',
  'milestone',
  'lostReason',
  'value',
  'expectedCloseOn',
  'closedOn',
  'probability',
  'durationBasis',
  'duration',
  'tags',
  'fields',
];
const READ_ONLY_KEYS = ['id', 'createdAt', 'updatedAt', 'lastContactedAt', 'missingImportantFields'];

/** A milestone by `{id}`, id, or `{name}` (unique among the milestones of active pipelines). */
function readMilestone(ctx: SandboxContext, value: unknown, problems: Problems): MilestoneRec | undefined {
  if (value === undefined) return undefined;
  if (isObject(value) && value.id === undefined && value.name !== undefined) {
    if (typeof value.name !== 'string') {
      problems.add('milestone.name', 'must be a string');
      return undefined;
    }
    const wanted = value.name.toLowerCase();
    const matches = ctx.store.milestones
      .all()
      .filter((m) => m.name.toLowerCase() === wanted && ctx.store.pipelines.get(m.pipelineId)?.archived === false);
    if (matches.length === 1) return matches[0];
    problems.add(
      'milestone',
      matches.length === 0
        ? `no milestone named ${JSON.stringify(value.name)} in an active pipeline`
        : `${matches.length} milestones are named ${JSON.stringify(value.name)}; give the milestone id`,
    );
    return undefined;
  }
  const id = readIdRef(value, 'milestone', problems);
  if (id === undefined || id === null) return undefined;
  const milestone = ctx.store.milestones.get(id);
  if (!milestone) problems.add('milestone', `no milestone with id ${id}`);
  return milestone;
}

function readValue(value: unknown, problems: Problems): OpportunityRec['value'] | undefined {
  if (value === undefined) return undefined;
  if (value === null) return null;
  if (!isObject(value)) {
    problems.add('value', 'must be {"amount": <number>, "currency": "<ISO code>"} or null');
    return undefined;
  }
  checkKeys(value, ['amount', 'currency'], [], problems, 'value.');
  const { amount, currency } = value;
  let ok = true;
  if (typeof amount !== 'number' || !Number.isFinite(amount) || amount < 0) {
    problems.add('value.amount', `must be a number of at least 0, got ${JSON.stringify(amount ?? null)}`);
    ok = false;
  }
  if (typeof currency !== 'string' || !/^[A-Z]{3}$/.test(currency) || !currencyByCode(currency)) {
    problems.add(
      'value.currency',
      `must be an ISO 4217 currency code such as "GBP", got ${JSON.stringify(currency ?? null)}`,
    );
    ok = false;
  }
  return ok ? { amount: amount as number, currency: currency as string } : undefined;
}

/** Checks a create or update body and applies it to a copy of `base`; stores nothing. */
function applyOpportunityBody(
  ctx: SandboxContext,
  caller: Caller,
  body: Body,
  base: OpportunityRec,
  mode: 'create' | 'update',
): { record: OpportunityRec; tracks: number[]; applyTagChanges: () => void } {
  const problems = new Problems('opportunity');
  const record: OpportunityRec = { ...base };
  checkKeys(body, mode === 'create' ? [...OPPORTUNITY_KEYS, 'tracks'] : OPPORTUNITY_KEYS, READ_ONLY_KEYS, problems);

  readNameDescription(body, record, mode, problems);
  const lostReason = readString(body, 'lostReason', problems, { nullable: true, max: 255 });
  if (lostReason !== undefined) record.lostReason = lostReason;
  readParty(ctx, body, record, mode, problems);

  if (mode === 'create' && body.milestone === undefined)
    problems.add('milestone', 'is required: {"id": <milestone id>} or {"name": "..."}');
  const milestone = readMilestone(ctx, body.milestone, problems);
  const milestoneChanged = milestone !== undefined && milestone.id !== base.milestoneId;
  if (milestone) record.milestoneId = milestone.id;
  if (milestone && (mode === 'create' || milestoneChanged)) {
    // The milestone history the service answers from (lastStageChangedAt, lastOpenMilestone).
    record.milestoneChangedAt = timestamp(ctx.now());
    const before = mode === 'create' ? undefined : ctx.store.milestones.get(base.milestoneId);
    if (!milestone.complete) record.lastOpenMilestoneId = milestone.id;
    else if (before && !before.complete) record.lastOpenMilestoneId = before.id;
  }

  const value = readValue(body.value, problems);
  if (value !== undefined) record.value = value;

  const probability = readInteger(body, 'probability', problems, { min: 0, max: 100 });
  if (typeof probability === 'number') record.probability = probability;
  else if (milestone && (mode === 'create' || milestoneChanged)) record.probability = milestone.probability;

  const expectedCloseOn = readDate(body, 'expectedCloseOn', problems);
  if (expectedCloseOn !== undefined) record.expectedCloseOn = expectedCloseOn;
  const closedOn = readDate(body, 'closedOn', problems);
  const current = milestone ?? ctx.store.milestones.get(record.milestoneId);
  if (current?.complete) {
    if (closedOn !== undefined) record.closedOn = closedOn ?? today(ctx);
    else if (milestoneChanged || record.closedOn === null) record.closedOn = today(ctx);
  } else {
    if (typeof closedOn === 'string')
      problems.add('closedOn', 'only a closed opportunity (on a complete milestone) has a close date');
    record.closedOn = null;
  }

  if (body.durationBasis !== undefined) {
    if (typeof body.durationBasis !== 'string' || !(DURATION_BASES as readonly string[]).includes(body.durationBasis)) {
      problems.add(
        'durationBasis',
        `must be one of ${DURATION_BASES.join(', ')}, got ${JSON.stringify(body.durationBasis)}`,
      );
    } else record.durationBasis = body.durationBasis;
  }
  const duration = readInteger(body, 'duration', problems, { nullable: true, min: 1, max: 1_000_000 });
  if (duration !== undefined) record.duration = duration;
  if (record.durationBasis === 'FIXED') {
    if (typeof duration === 'number') problems.add('duration', 'a FIXED opportunity has no duration');
    record.duration = null;
  } else if (record.duration === null) {
    problems.add('duration', `is required with durationBasis ${record.durationBasis}`);
  }

  return finishBody(ctx, caller, body, base, record, mode, problems, {
    entity: 'opportunities',
    tracksFor: 'OPPORTUNITY',
    aNoun: 'an opportunity',
  });
}

function blankOpportunity(at: string): Omit<OpportunityRec, 'id'> {
  return {
    ...blankPartyWork(at),
    milestoneId: 0,
    lostReason: null,
    value: null,
    expectedCloseOn: null,
    closedOn: null,
    probability: 0,
    durationBasis: 'FIXED',
    duration: null,
  };
}

/** Opportunities as the shared record routes (and v1 creates, through createRecord) take them. */
export const OPPORTUNITY_KIND: RecordKind<OpportunityRec> = {
  plural: 'opportunities',
  singular: 'opportunity',
  noun: 'opportunity',
  param: 'opportunityId',
  restrictedKey: 'restrictedOpportunities',
  embeds: OPPORTUNITY_EMBEDS,
  table: (ctx) => ctx.store.opportunities,
  deleted: (ctx) => ctx.store.deleted.opportunities,
  serialize: serializeOpportunity,
  matches: nameOrPartyMatches,
  blank: blankOpportunity,
  applyBody: applyOpportunityBody,
  remove: deleteOpportunity,
  trackTarget: (opportunityId) => ({ opportunityId }),
};

/** Registers the v2 opportunity endpoints (spec 4.2). */
export function registerOpportunityRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  registerRecordRoutes<OpportunityRec>(app, ctx, OPPORTUNITY_KIND);
}
