import type { FastifyReply, FastifyRequest } from 'fastify';
import { baseUrlOf, paginate, parsePage } from './http.ts';
import type { Store } from './store.ts';

/** Pages starting before this many matches are found by walking the table and stopping after the page. */
const WALK_LIMIT = 1000;
/**
 * Most records a walk looks at. A query that matches too few records to fill its page within
 * them (a rare search term, a recent `since`, a narrow filter) is computed once instead and
 * cached, so its later pages do not scan the table again.
 */
const WALK_BUDGET = 5000;
/** Result lists kept per store (least recently used dropped first). */
const CACHE_SIZE = 16;

interface Cached {
  version: number;
  records: unknown[];
}
const caches = new WeakMap<Store, Map<string, Cached>>();
/** Records looked at by list reads, per store: what a page costs, for tests and the docs. */
const visited = new WeakMap<Store, number>();

/** How many records the list reads of `store` have looked at so far. */
export function recordsVisited(store: Store): number {
  return visited.get(store) ?? 0;
}

/** What one list read pages through. */
export interface ListSource<T> {
  /** The records in list order (a table's `values()`): walked lazily. */
  records: () => Iterable<T>;
  /** Keeps the records the list shows (visibility, `since`, a search or filter). */
  matches: (record: T) => boolean;
  /** Orders the matches when the list is not in table order; such a list is computed once per query. */
  sort?: (records: T[]) => T[];
  /** What makes two requests the same query apart from the page: caller, filter body and the like. */
  key: string;
}

/**
 * One page of a list, costing about a page: early pages walk the records and stop after the page
 * (plus one record to know whether a next page exists); deeper pages, sorted lists and queries
 * too selective to fill a page within the walk's budget use the whole result, computed once per
 * query and reused for every page until the store changes.
 * Sets the `Link` header like paginate().
 */
export function pageOf<T>(store: Store, request: FastifyRequest, reply: FastifyReply, source: ListSource<T>): T[] {
  const { page, perPage } = parsePage(request);
  const start = (page - 1) * perPage;
  const key = queryKey(request, source);
  // A query whose result is already at hand (its earlier pages needed a scan) is not walked again.
  if (!source.sort && start < WALK_LIMIT && !cached(store, key)) {
    const walked = walkPage(store, request, reply, source, page, perPage);
    if (walked) return walked;
  }
  return paginate(request, reply, matchingOnce(store, key, source));
}

/** The page found by walking, or null when the walk ran out of budget before it was complete. */
function walkPage<T>(
  store: Store,
  request: FastifyRequest,
  reply: FastifyReply,
  source: ListSource<T>,
  page: number,
  perPage: number,
): T[] | null {
  const start = (page - 1) * perPage;
  const out: T[] = [];
  let seen = 0;
  let more = false;
  let looked = 0;
  for (const record of source.records()) {
    looked += 1;
    if (looked > WALK_BUDGET) {
      visited.set(store, recordsVisited(store) + looked - 1);
      return null;
    }
    if (!source.matches(record)) continue;
    if (seen >= start + perPage) {
      more = true;
      break;
    }
    if (seen >= start) out.push(record);
    seen += 1;
  }
  visited.set(store, recordsVisited(store) + looked);
  // `seen` is the total only when the walk ran out before the page was full.
  const links: string[] = [];
  const link = (target: number): string => {
    const u = new URL(request.url, baseUrlOf(request));
    u.searchParams.set('page', String(target));
    u.searchParams.set('perPage', String(perPage));
    return u.toString();
  };
  if (more) links.push(`<${link(page + 1)}>; rel="next"`);
  if (page > 1) links.push(`<${link(Math.min(page - 1, Math.max(1, Math.ceil(seen / perPage))))}>; rel="prev"`);
  if (links.length > 0) reply.header('Link', links.join(', '));
  return out;
}

/** What makes two requests the same query, apart from the page asked for. */
function queryKey(request: FastifyRequest, source: { key: string }): string {
  const url = new URL(request.url, 'http://x');
  url.searchParams.delete('page');
  url.searchParams.delete('perPage');
  return `${request.method} ${url.pathname}?${url.searchParams.toString()} ${source.key}`;
}

function cached(store: Store, key: string): boolean {
  return caches.get(store)?.get(key)?.version === store.tracker.version;
}

/**
 * The records of `source` that match, sorted when it says how: computed once per `key` and
 * reused until the store changes (the 16 most recently used keys are kept per store).
 */
export function matchingOnce<T>(store: Store, key: string, source: Omit<ListSource<T>, 'key'>): T[] {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map()));
  const version = store.tracker.version;
  const hit = cache.get(key);
  if (hit && hit.version === version) {
    // Most recently used goes last.
    cache.delete(key);
    cache.set(key, hit);
    return hit.records as T[];
  }
  const matches: T[] = [];
  let looked = 0;
  for (const record of source.records()) {
    looked += 1;
    if (source.matches(record)) matches.push(record);
  }
  visited.set(store, recordsVisited(store) + looked);
  const records = source.sort ? source.sort(matches) : matches;
  cache.delete(key);
  cache.set(key, { version, records });
  while (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return records;
}
