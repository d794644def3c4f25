import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';
import type { OpportunityRec } from '../model.ts';

export const OPPORTUNITY_EMBEDS = ['tags', 'fields', 'party', 'milestone', 'missingImportantFields'] as const;

// Placeholder: the routes of this module are being written.
export function registerOpportunityRoutes(_app: FastifyInstance, _ctx: SandboxContext): void {}

/** The v2 wire shape of a record, with the embeds asked for. */
export function serializeOpportunity(_ctx: SandboxContext, _record: OpportunityRec, _embed: ReadonlySet<string>): Record<string, unknown> {
  throw new Error('serializeOpportunity is not written yet');
}
