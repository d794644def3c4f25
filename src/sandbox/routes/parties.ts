import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';
import type { PartyRec } from '../model.ts';

export const PARTY_EMBEDS = ['tags', 'fields', 'organisation', 'missingImportantFields'] as const;

// Placeholder: the routes of this module are being written.
export function registerPartyRoutes(_app: FastifyInstance, _ctx: SandboxContext): void {}

/** The v2 wire shape of a record, with the embeds asked for. */
export function serializeParty(_ctx: SandboxContext, _record: PartyRec, _embed: ReadonlySet<string>): Record<string, unknown> {
  throw new Error('serializeParty is not written yet');
}
