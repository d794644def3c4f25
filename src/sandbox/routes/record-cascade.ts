/**
 * Deleting parties, projects and opportunities together with what hangs off them. Records that
 * only point at a deleted record (people of an organisation, additional contacts) are unlinked
 * rather than deleted, as the service keeps them.
 */
import type { SandboxContext } from '../context.ts';
import { timestamp } from '../http.ts';

function logDeleted(ctx: SandboxContext, table: 'parties' | 'kases' | 'opportunities', id: number): void {
  ctx.store.deleted[table].push({ id, deletedAt: timestamp(ctx.now()) });
}

function deleteTrack(ctx: SandboxContext, trackId: number): void {
  const track = ctx.store.tracks.get(trackId);
  if (!track) return;
  for (const taskId of track.taskIds) ctx.store.tasks.delete(taskId);
  ctx.store.tracks.delete(trackId);
}

/** Removes entries, tasks and tracks filed on the record. */
function deleteAttached(ctx: SandboxContext, key: 'partyId' | 'kaseId' | 'opportunityId', id: number): void {
  const { store } = ctx;
  for (const entry of store.entries.all()) {
    if (entry[key] === id) {
      for (const attachment of entry.attachments) store.blobs.delete(attachment.blobId);
      store.entries.delete(entry.id);
    } else if (key === 'partyId' && entry.partyIds.includes(id)) {
      // An email filed on several parties stays with the others.
      entry.partyIds = entry.partyIds.filter((p) => p !== id);
      store.entries.touch(entry);
      if (entry.partyIds.length === 0 && entry.kaseId === null && entry.opportunityId === null)
        store.entries.delete(entry.id);
    }
  }
  for (const track of store.tracks.all()) if (track[key] === id) deleteTrack(ctx, track.id);
  for (const task of store.tasks.all()) if (task[key] === id) store.tasks.delete(task.id);
}

/** Deletes a project, its entries, tasks and tracks; records it in the deleted log. */
export function deleteKase(ctx: SandboxContext, id: number): void {
  if (!ctx.store.kases.delete(id)) return;
  deleteAttached(ctx, 'kaseId', id);
  logDeleted(ctx, 'kases', id);
}

/** Deletes an opportunity and what is filed on it; projects linked to it lose the link. */
export function deleteOpportunity(ctx: SandboxContext, id: number): void {
  if (!ctx.store.opportunities.delete(id)) return;
  for (const kase of ctx.store.kases.all()) {
    if (kase.opportunityId !== id) continue;
    kase.opportunityId = null;
    ctx.store.kases.touch(kase);
  }
  deleteAttached(ctx, 'opportunityId', id);
  logDeleted(ctx, 'opportunities', id);
}

/**
 * Deletes a party with its projects and opportunities (each logged as deleted) and what is filed
 * on it. People of a deleted organisation stay, without the organisation.
 */
export function deleteParty(ctx: SandboxContext, id: number): void {
  const { store } = ctx;
  if (!store.parties.delete(id)) return;
  for (const kase of store.kases.all()) {
    if (kase.partyId === id) deleteKase(ctx, kase.id);
    else if (kase.partyIds.includes(id)) {
      kase.partyIds = kase.partyIds.filter((p) => p !== id);
      store.kases.touch(kase);
    }
  }
  for (const opportunity of store.opportunities.all()) {
    if (opportunity.partyId === id) deleteOpportunity(ctx, opportunity.id);
    else if (opportunity.partyIds.includes(id)) {
      opportunity.partyIds = opportunity.partyIds.filter((p) => p !== id);
      store.opportunities.touch(opportunity);
    }
  }
  for (const person of store.partyIndex.employees(id)) {
    person.organisationId = null;
    store.parties.touch(person);
  }
  deleteAttached(ctx, 'partyId', id);
  logDeleted(ctx, 'parties', id);
}

/** Whether deleting the party is heavy enough for the service to schedule it. */
export function partyDeleteIsScheduled(ctx: SandboxContext, id: number): boolean {
  const { store } = ctx;
  const party = store.parties.get(id);
  if (!party) return false;
  if (store.entries.all().some((e) => e.partyId === id || e.partyIds.includes(id))) return true;
  return party.type === 'organisation' && store.partyIndex.employees(id).length > 0;
}
