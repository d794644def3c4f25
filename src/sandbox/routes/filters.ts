import type { FastifyInstance, FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import { type CompiledFilter, compileFilter, FilterError, parseFilterBody, utcDate } from '../filters/index.ts';
import type { EntityRecords, FilterEntity } from '../filters/index.ts';
import { badRequest, parseEmbed, parsePage } from '../http.ts';
import { pageOf } from '../paging.ts';
import { boardsWithStages } from './account-lists.ts';
import {
  KASE_EMBEDS,
  OPPORTUNITY_EMBEDS,
  PARTY_EMBEDS,
  serializeKase,
  serializeOpportunity,
  serializeParty,
} from './record-serializers.ts';

interface Endpoint<E extends FilterEntity> {
  entity: E;
  embeds: readonly string[];
  records(ctx: SandboxContext): Iterable<EntityRecords[E]>;
  /** The record of an id, not counted as changed. */
  peek(ctx: SandboxContext, id: number): EntityRecords[E] | undefined;
  /** The records a filter can match by the texts it names, from an index; null: walk them all. */
  holding?(ctx: SandboxContext, texts: CompiledFilter<EntityRecords[E]>['texts']): Iterable<EntityRecords[E]> | null;
  serialize(ctx: SandboxContext, record: EntityRecords[E], embed: ReadonlySet<string>): Record<string, unknown>;
}

const ENDPOINTS: { [E in FilterEntity]: Endpoint<E> } = {
  parties: {
    entity: 'parties',
    embeds: PARTY_EMBEDS,
    records: (ctx) => ctx.store.parties.values(),
    peek: (ctx, id) => ctx.store.parties.peek(id),
    holding: (ctx, texts) => ctx.store.partyIndex.filterCandidates(texts),
    serialize: serializeParty,
  },
  opportunities: {
    entity: 'opportunities',
    embeds: OPPORTUNITY_EMBEDS,
    records: (ctx) => ctx.store.opportunities.values(),
    peek: (ctx, id) => ctx.store.opportunities.peek(id),
    serialize: serializeOpportunity,
  },
  kases: {
    entity: 'kases',
    embeds: KASE_EMBEDS,
    records: (ctx) => ctx.store.kases.values(),
    peek: (ctx, id) => ctx.store.kases.peek(id),
    serialize: serializeKase,
  },
};

function runFilter<E extends FilterEntity>(
  ctx: SandboxContext,
  endpoint: Endpoint<E>,
  request: FastifyRequest,
): { embed: Set<string>; filter: ReturnType<typeof compileFilter>; userId: number } {
  // Every input is checked before any record is read, so a bad page or embed fails fast too.
  const embed = parseEmbed(request, endpoint.embeds);
  parsePage(request);
  const caller = callerOf(request);
  let filter;
  try {
    filter = compileFilter(endpoint.entity, parseFilterBody(request.body), {
      store: ctx.store,
      callerId: caller.user.id,
      today: utcDate(ctx.now()),
      boards: boardsWithStages(ctx.store),
    });
  } catch (error) {
    if (error instanceof FilterError) throw badRequest(`invalid filter: ${error.message}`);
    throw error;
  }
  return { embed, filter, userId: caller.user.id };
}

/** The records of `ids` (ascending) that exist, in id order: the table's order. */
function* recordsOf<E extends FilterEntity>(
  ctx: SandboxContext,
  endpoint: Endpoint<E>,
  ids: readonly number[],
): Generator<EntityRecords[E]> {
  for (const id of ids) {
    const record = endpoint.peek(ctx, id);
    if (record) yield record;
  }
}

/**
 * POST `/api/v2/{parties|opportunities|kases}/filters/results`: the records passing a structured
 * filter, ordered and paged like the entity's list and in the same format.
 */
export function registerFilterRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  for (const endpoint of Object.values(ENDPOINTS) as Endpoint<FilterEntity>[]) {
    app.post(`/api/v2/${endpoint.entity}/filters/results`, async (request, reply) => {
      const { embed, filter, userId } = runFilter(ctx, endpoint, request);
      // The filter is run over the records once per query; its pages come from that result.
      const page = pageOf(ctx.store, request, reply, {
        // Records named by id (a read of many records by id, as verify makes) are looked up, not walked for.
        // A name, e-mail address or phone number the filter names: the parties holding it, from the index.
        records: () =>
          filter.ids
            ? recordsOf(ctx, endpoint, filter.ids)
            : ((filter.texts.length > 0 ? endpoint.holding?.(ctx, filter.texts) : null) ?? endpoint.records(ctx)),
        matches: (record) => !record.restrictedFor.includes(userId) && filter.matches(record),
        sort: (records) => filter.sort(records),
        key: `caller ${userId} ${JSON.stringify(request.body)}`,
      });
      return { [endpoint.entity]: page.map((record) => endpoint.serialize(ctx, record, embed)) };
    });
  }
}
