import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';
import type { KaseRec } from '../model.ts';

export const KASE_EMBEDS = ['tags', 'fields', 'party', 'opportunity', 'missingImportantFields'] as const;

// Placeholder: the routes of this module are being written.
export function registerKaseRoutes(_app: FastifyInstance, _ctx: SandboxContext): void {}

/** The v2 wire shape of a record, with the embeds asked for. */
export function serializeKase(_ctx: SandboxContext, _record: KaseRec, _embed: ReadonlySet<string>): Record<string, unknown> {
  throw new Error('serializeKase is not written yet');
}
