import type { FastifyReply, FastifyRequest } from 'fastify';
import { baseUrlOf, paginate, parsePage } from './http.ts';
import type { Store } from './store.ts';

/** Pages starting before this many matches are found by walking the table and stopping after the page. */
const WALK_LIMIT = 1000;
/** Result lists kept per store (least recently used dropped first). */
const CACHE_SIZE = 16;

interface Cached {
  version: number;
  records: unknown[];
}
const caches = new WeakMap<Store, Map<string, Cached>>();

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
 * (plus one record to know whether a next page exists); deeper pages and sorted lists use the
 * whole result, computed once per query and reused for every page until the store changes.
 * Sets the `Link` header like paginate().
 */
export function pageOf<T>(store: Store, request: FastifyRequest, reply: FastifyReply, source: ListSource<T>): T[] {
  const { page, perPage } = parsePage(request);
  const start = (page - 1) * perPage;
  if (!source.sort && start < WALK_LIMIT) return walkPage(request, reply, source, page, perPage);
  return paginate(request, reply, cachedMatches(store, request, source));
}

function walkPage<T>(request: FastifyRequest, reply: FastifyReply, source: ListSource<T>, page: number, perPage: number): T[] {
  const start = (page - 1) * perPage;
  const out: T[] = [];
  let seen = 0;
  let more = false;
  for (const record of source.records()) {
    if (!source.matches(record)) continue;
    if (seen >= start + perPage) {
      more = true;
      break;
    }
    if (seen >= start) out.push(record);
    seen += 1;
  }
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

function cachedMatches<T>(store: Store, request: FastifyRequest, source: ListSource<T>): T[] {
  let cache = caches.get(store);
  if (!cache) caches.set(store, (cache = new Map()));
  const url = new URL(request.url, 'http://x');
  url.searchParams.delete('page');
  url.searchParams.delete('perPage');
  const key = `${request.method} ${url.pathname}?${url.searchParams.toString()} ${source.key}`;
  const version = store.tracker.version;
  const hit = cache.get(key);
  if (hit && hit.version === version) {
    // Most recently used goes last.
    cache.delete(key);
    cache.set(key, hit);
    return hit.records as T[];
  }
  const matches: T[] = [];
  for (const record of source.records()) if (source.matches(record)) matches.push(record);
  const records = source.sort ? source.sort(matches) : matches;
  cache.delete(key);
  cache.set(key, { version, records });
  while (cache.size > CACHE_SIZE) cache.delete(cache.keys().next().value as string);
  return records;
}
