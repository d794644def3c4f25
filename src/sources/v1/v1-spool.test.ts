import { createHash } from 'node:crypto';
import { appendFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import type { V1Body, V1Reader } from '../../client/index.ts';
import type { SourceItem } from '../types.ts';
import { readV1Live, type V1LiveReadOptions } from './v1-live.ts';
import { removeV1Spools, v1SpoolFiles } from './v1-spool.ts';

/** An answer's body held in memory, as V1Reader hands it over. */
function bodyOf(text: string): V1Body {
  const bytes = Buffer.from(text);
  return {
    size: bytes.length,
    digest: createHash('sha256').update(bytes).digest('hex'),
    chunks: async function* () {
      yield bytes;
    },
    dispose: async () => undefined,
  } as unknown as V1Body;
}

/**
 * An old account of `count` organisations whose list carries their custom fields and tags (so a
 * record costs no request of its own), except the ids in `gone`, whose sub-lists answer 404 (a
 * record deleted while the list is read). Every request is logged.
 */
function fakeAccount(
  count: number,
  gone: ReadonlySet<number> = new Set(),
  bare = false,
): { reader: V1Reader; requests: string[] } {
  const requests: string[] = [];
  const reader = {
    format: 'xml',
    transport: { origin: 'http://127.0.0.1:9' },
    async get(path: string, query: { [key: string]: string | number | undefined }) {
      const start = Number(query['start']);
      const limit = Number(query['limit']);
      requests.push(`${path}?start=${start}`);
      let body = '<?xml version="1.0" encoding="UTF-8"?><parties>';
      for (let id = start + 1; id <= Math.min(count, start + limit); id++) {
        body += `<organisation><id>${id}</id><name>Org ${id}</name>${gone.has(id) || bare ? '' : '<customFields/><tags/>'}</organisation>`;
      }
      return { path: `${path}?start=${start}&limit=${limit}`, body: bodyOf(`${body}</parties>`) };
    },
    async getIfFound(path: string) {
      requests.push(path);
      // With `bare`, the sub-lists of a record the account still has are there, and empty.
      return bare && !gone.has(Number(path.split('/')[3])) ? { path, body: bodyOf('') } : null;
    },
  };
  return { reader: reader as unknown as V1Reader, requests };
}

async function names(items: AsyncIterable<SourceItem>, stopAfter = Infinity): Promise<string[]> {
  const out: string[] = [];
  for await (const item of items) {
    if (item.kind === 'row') out.push(String(item.values['name']));
    if (out.length >= stopAfter) break;
  }
  return out;
}

const all = (count: number): string[] => Array.from({ length: count }, (_, i) => `Org ${i + 1}`);

let dir: string;
let spools: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'ferry-spool-'));
  spools = join(dir, 'spool');
});

/** The files of the one spool in the folder. */
function files(): { records: string; cursor: string } {
  const cursors = readdirSync(spools).filter((name) => name.endsWith('.cursor.json'));
  expect(cursors).toHaveLength(1);
  return v1SpoolFiles(join(spools, (cursors[0] as string).replace(/\.cursor\.json$/, '')));
}
afterEach(() => rmSync(dir, { recursive: true, force: true }));

describe('a spooled live v1 read', () => {
  const options = (extra: V1LiveReadOptions = {}): V1LiveReadOptions => ({
    record: 'organisation',
    pageSize: 3,
    spool: spools,
    ...extra,
  });

  it('reads a list once: a second read takes the same rows from the spool without a request', async () => {
    const account = fakeAccount(10);
    expect(await names(readV1Live(account.reader, options()))).toEqual(all(10));
    expect(account.requests).toEqual([
      '/api/party?start=0',
      '/api/party?start=3',
      '/api/party?start=6',
      '/api/party?start=9',
    ]);
    const again = fakeAccount(10);
    expect(await names(readV1Live(again.reader, options()))).toEqual(all(10));
    expect(again.requests).toEqual([]);
    // The files name the address, never a credential.
    const cursor = JSON.parse(readFileSync(files().cursor, 'utf8'));
    expect(cursor).toMatchObject({
      next: 10,
      done: true,
      key: { address: 'http://127.0.0.1:9', list: 'party', record: null, wireFormat: 'xml', since: null, pageSize: 3 },
    });
  });

  it('goes on from the recorded page after a read stopped within a page, each row once', async () => {
    const first = fakeAccount(10);
    // Stopped at row 5, in the second page: the first page is recorded, the second is not.
    expect(await names(readV1Live(first.reader, options()), 5)).toEqual(all(5));
    expect(JSON.parse(readFileSync(files().cursor, 'utf8'))).toMatchObject({ next: 3, done: false });
    const resumed = fakeAccount(10);
    expect(await names(readV1Live(resumed.reader, options()))).toEqual(all(10));
    expect(resumed.requests).toEqual(['/api/party?start=3', '/api/party?start=6', '/api/party?start=9']);
  });

  it('cuts off lines past the recorded pages, and drops a spool of another read', async () => {
    await names(readV1Live(fakeAccount(10).reader, options()), 4);
    // What a process killed after appending, before recording the page, leaves.
    appendFileSync(
      files().records,
      '{"r":{"n":["organisation",null,[["id","99"],["name","Stray"]]],"p":"/x","l":1}}\n{"r":',
    );
    const resumed = fakeAccount(10);
    expect(await names(readV1Live(resumed.reader, options()))).toEqual(all(10));
    expect(resumed.requests[0]).toBe('/api/party?start=3');
    // Another page size (or list, kind, format, since) is another read: from the first page.
    const other = fakeAccount(10);
    expect(await names(readV1Live(other.reader, options({ pageSize: 4 })))).toEqual(all(10));
    expect(other.requests).toEqual(['/api/party?start=0', '/api/party?start=4', '/api/party?start=8']);
    const since = fakeAccount(10);
    await names(readV1Live(since.reader, options({ pageSize: 4, since: new Date('2021-01-01T00:00:00Z') })));
    expect(since.requests[0]).toBe('/api/party?start=0');
  });

  it('says the warnings of the spooled pages again', async () => {
    const warnings: string[] = [];
    const account = fakeAccount(5, new Set([2]));
    expect(
      await names(readV1Live(account.reader, options({ onWarning: (w) => void warnings.push(w.message) }))),
    ).toEqual(['Org 1', 'Org 3', 'Org 4', 'Org 5']);
    const replayed: string[] = [];
    const again = fakeAccount(5, new Set([2]));
    expect(await names(readV1Live(again.reader, options({ onWarning: (w) => void replayed.push(w.message) })))).toEqual(
      ['Org 1', 'Org 3', 'Org 4', 'Org 5'],
    );
    expect(again.requests).toEqual([]);
    expect(warnings).toEqual([expect.stringMatching(/^organisation 2 was deleted from the old account/)]);
    expect(replayed).toEqual(warnings);
  });

  it('keeps a record that could not be read as the same error', async () => {
    const errors = async (items: AsyncIterable<SourceItem>) => {
      const out: unknown[] = [];
      for await (const item of items)
        if (item.kind === 'error')
          out.push({ code: item.error.code, message: item.error.message, location: item.location });
      return out;
    };
    // Every record is longer than this: each is an error row.
    const first = await errors(readV1Live(fakeAccount(4).reader, options({ maxRecordChars: 3 })));
    expect(first).toHaveLength(4);
    const again = fakeAccount(4);
    expect(await errors(readV1Live(again.reader, options({ maxRecordChars: 3 })))).toEqual(first);
    expect(again.requests).toEqual([]);
  });

  it('is gone once removed: the next read reads the account again', async () => {
    await names(readV1Live(fakeAccount(4).reader, options()));
    await removeV1Spools(spools);
    const next = fakeAccount(4);
    expect(await names(readV1Live(next.reader, options()))).toEqual(all(4));
    expect(next.requests).toEqual(['/api/party?start=0', '/api/party?start=3']);
  });

  it('is shared by reads of the same list at once: each page and sub-list fetched once, and a read that waits holds up no other', async () => {
    const account = fakeAccount(10, new Set([4]), true);
    const warned: string[][] = [[], []];
    const read = (n: 0 | 1, record: 'organisation' | 'person') =>
      readV1Live(account.reader, options({ record, onWarning: (w) => void warned[n]?.push(w.message) }));
    // The organisations' read takes its first row, then waits (its rows wait for a slot, say).
    const waiting = read(0, 'organisation');
    expect(await waiting.next()).toMatchObject({ value: { kind: 'row', values: { name: 'Org 1' } } });
    // The people's read (none here) shares the party list: it fetches the rest itself, meanwhile.
    expect(await names(read(1, 'person'))).toEqual([]);
    const pages = ['/api/party?start=0', '/api/party?start=3', '/api/party?start=6', '/api/party?start=9'];
    const subLists = (id: number) => [`/api/party/${id}/customfields`, `/api/party/${id}/tag`];
    const once = [...pages, ...[1, 2, 3, 5, 6, 7, 8, 9, 10].flatMap(subLists), '/api/party/4/customfields'];
    expect([...account.requests].sort()).toEqual(once.sort());
    // The waiting read goes on from the spool, without a request, the deletion said to it too.
    expect(await names({ [Symbol.asyncIterator]: () => waiting })).toEqual(
      all(10).filter((name) => name !== 'Org 1' && name !== 'Org 4'),
    );
    expect(account.requests).toHaveLength(once.length);
    expect(warned[0]?.[0]).toMatch(/^organisation 4 was deleted/);
    expect(warned[1]?.[0]).toBe(warned[0]?.[0]);
    expect(JSON.parse(readFileSync(files().cursor, 'utf8'))).toMatchObject({ next: 10, done: true });
  });

  it('refuses a spool and startAt together', async () => {
    await expect(names(readV1Live(fakeAccount(4).reader, options({ startAt: 3 })))).rejects.toMatchObject({
      code: 'USAGE',
    });
  });
});
