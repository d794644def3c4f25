/** Visibility of restricted records, reads by id and the deleted lists. */
import type { FastifyRequest } from 'fastify';
import type { Caller } from '../context.ts';
import { forbidden, notFound, parseIdList, parseSince } from '../http.ts';
import type { DeletedRec } from '../model.ts';
import { matchingOnce } from '../paging.ts';
import type { Store, Table } from '../store.ts';

/** Whether the caller may see the record (restricted records are listed separately). */
export function visibleTo(record: { restrictedFor: readonly number[] }, caller: Caller): boolean {
  return !record.restrictedFor.includes(caller.user.id);
}

/** Fetches one record for a single read or write: 404 when unknown, 403 when restricted for the caller. */
export function mustFind<T extends { id: number; restrictedFor: number[] }>(
  table: Table<T>,
  id: number,
  caller: Caller,
  noun: string,
): T {
  const record = table.get(id);
  if (!record) throw notFound(`no ${noun} with id ${id}`);
  if (!visibleTo(record, caller))
    throw forbidden(`the ${noun} with id ${id} is restricted and cannot be seen by ${caller.user.username}`);
  return record;
}

/** Fetches the records of a multi-id read (`1,2,3`, at most 10); 404 names every missing id. */
export function mustFindAll<T extends { id: number; restrictedFor: number[] }>(
  table: Table<T>,
  raw: string,
  caller: Caller,
  noun: string,
): T[] {
  const ids = parseIdList(raw, noun);
  const missing = ids.filter((id) => !table.has(id));
  if (missing.length > 0) throw notFound(`no ${noun} with id ${missing.join(', ')}`);
  return ids.map((id) => mustFind(table, id, caller, noun));
}

/**
 * Keeps records changed at or after `since`. Inclusive, so that a client passing the time of its
 * last run never misses a change made in the same second.
 */
export function changedSince(request: FastifyRequest): (record: { updatedAt: string }) => boolean {
  const since = parseSince(request);
  if (!since) return () => true;
  const from = since.getTime();
  return (record) => Date.parse(record.updatedAt) >= from;
}

/** The `/deleted` answer: deleted records since the date, and records restricted for the caller. */
export function deletedList<T extends { id: number; restrictedFor: number[] }>(
  request: FastifyRequest,
  store: Store,
  caller: Caller,
  deleted: readonly DeletedRec[],
  records: () => Iterable<T>,
  nameOf: (record: T) => string,
  keys: { deleted: string; restricted: string },
): Record<string, unknown> {
  const since = parseSince(request);
  const list = deleted
    .filter((d) => !since || Date.parse(d.deletedAt) >= since.getTime())
    .map((d) => ({ id: d.id, deletedAt: d.deletedAt }));
  // The records hidden from the caller need a scan of the table: once per caller until it changes.
  const hidden = matchingOnce(store, `restricted ${keys.restricted} for ${caller.user.id}`, {
    records,
    matches: (r: T) => !visibleTo(r, caller),
  });
  const restricted = hidden.map((r) => ({ id: r.id, name: nameOf(r), isRestricted: true }));
  return restricted.length > 0 ? { [keys.deleted]: list, [keys.restricted]: restricted } : { [keys.deleted]: list };
}
