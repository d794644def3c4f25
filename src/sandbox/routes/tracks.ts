import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';
import type { TrackRec } from '../model.ts';

export interface ApplyTrackInput {
  definitionId: number;
  /** The record the track is applied to: exactly one of these. */
  target: { partyId?: number; opportunityId?: number; kaseId?: number };
  /** Start date of the track, `YYYY-MM-DD`; defaults to today. */
  trackDateOn?: string;
  description?: string;
}

// Placeholder: the routes of this module are being written.
export function registerTrackRoutes(_app: FastifyInstance, _ctx: SandboxContext): void {}

/**
 * Applies a track definition to a record: stores the track and creates its tasks. Used by
 * POST /tracks and by the `tracks[]` shortcut on project and opportunity create. Throws an
 * HttpError (422) when the definition does not exist.
 */
export function applyTrack(_ctx: SandboxContext, _input: ApplyTrackInput): TrackRec {
  throw new Error('applyTrack is not written yet');
}
