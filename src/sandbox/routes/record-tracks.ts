/**
 * The `tracks[]` shortcut on project and opportunity create: checked before the record is stored,
 * applied after, so that a bad definition id is a 422 and leaves nothing behind.
 */
import type { SandboxContext } from '../context.ts';
import { applyTrack } from './tracks.ts';
import { isObject, type Problems, readIdRef } from './record-common.ts';

/** Reads `tracks[]` (`{definition: {id}}` or `{definition: id}`, mixed freely) into definition ids. */
export function readTracks(
  ctx: SandboxContext,
  input: unknown,
  captureRule: 'KASE' | 'OPPORTUNITY',
  problems: Problems,
): number[] {
  if (input === undefined) return [];
  if (!Array.isArray(input)) {
    problems.add('tracks', 'must be an array of {"definition": {"id": <integer>}}');
    return [];
  }
  const ids: number[] = [];
  input.forEach((element, index) => {
    const at = `tracks[${index}]`;
    if (!isObject(element) || element.definition === undefined) {
      problems.add(`${at}.definition`, 'is required: {"definition": {"id": <integer>}} or {"definition": <integer>}');
      return;
    }
    const id = readIdRef(element.definition, `${at}.definition`, problems);
    if (id === undefined || id === null) return;
    const definition = ctx.store.trackDefinitions.get(id);
    if (!definition) problems.add(`${at}.definition`, `no track definition with id ${id}`);
    else if (definition.captureRule !== captureRule) {
      problems.add(
        `${at}.definition`,
        `track definition ${id} is for ${definition.captureRule} records, not ${captureRule}`,
      );
    } else ids.push(id);
  });
  return ids;
}

/**
 * Applies the tracks to a record just stored; when that fails the record and any track already
 * applied are removed again, so a create happens completely or not at all. Tasks of a record
 * without owner go to `ownerId` (the caller).
 */
export function applyTracksOrUndo(
  ctx: SandboxContext,
  definitionIds: readonly number[],
  target: { kaseId: number } | { opportunityId: number },
  ownerId: number,
): void {
  try {
    for (const definitionId of definitionIds) applyTrack(ctx, { definitionId, target, fallbackOwnerId: ownerId });
  } catch (error) {
    const { store } = ctx;
    const key = 'kaseId' in target ? 'kaseId' : 'opportunityId';
    const id = 'kaseId' in target ? target.kaseId : target.opportunityId;
    for (const track of store.tracks.all()) {
      if (track[key] !== id) continue;
      for (const taskId of track.taskIds) store.tasks.delete(taskId);
      store.tracks.delete(track.id);
    }
    if ('kaseId' in target) store.kases.delete(id);
    else store.opportunities.delete(id);
    throw error;
  }
}
