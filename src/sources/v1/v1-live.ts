/**
 * A live legacy v1 account as a source: the lists of the v1 interface read page by page, each
 * record completed with what an export script nests in it (custom fields, tags, a case's additional
 * contacts, history), and handed to the same flattening as v1 export files, so the rows (columns and
 * values) are those of the export the account would give: history items with their
 * `attachment.<n>.*` columns, cases with `party.<n>.id`. The files themselves are not read: the v1
 * interface has no attachment download, and mapping a live row's attachment gives a NOT_CARRIED
 * warning instead of a path (src/mapping/compile-fields.ts, `addAttachment`). Given a `spool`
 * (the importer gives one in the run's state folder), a read keeps what it fetched page by page
 * and a later read of the same list takes it from there, reading live from the recorded page on
 * (v1-spool.ts).
 */
import { FerryError } from '../../errors/index.ts';
import type { V1Reader } from '../../client/index.ts';
import { V1_LIST_OF_RECORD, V1_LIVE_PREFIX, v1FilterTime, type V1List } from '../../util/index.ts';
import type { SourceItem } from '../types.ts';
import { normalizeOptions, rowsOfV1Records, type V1ReadOptions } from './v1-export.ts';
import type { V1Node, V1RecordKind } from './v1-flatten.ts';
import { readV1JsonRecords } from './v1-json.ts';
import { readV1XmlRecords, type RawV1Record } from './v1-xml.ts';
import { readV1Spool, V1Spool, v1SpoolBase, type V1SpoolEntry, type V1SpoolKey } from './v1-spool.ts';
import { V1PageRepeats, wrappedSubList, type V1PageRecords } from './v1-pages.ts';

export interface V1LiveReadOptions extends V1ReadOptions {
  /** The list to read; by default the one `record` lives in (history: the parties'). */
  list?: V1List;
  /**
   * Records asked for per page (`limit`); the sub-lists of a record (history) are paged the same way.
   * @default 100
   */
  pageSize?: number;
  /** Only records changed after this moment (`lastmodified`); the task list has no such filter and is read whole. */
  since?: Date;
  /** Zero-based index of the first record of the list to read (`start`), to go on after an interruption. @default 0 */
  startAt?: number;
  /**
   * Called after the rows of each page of the list were yielded, with the `start` of the next page:
   * the point a later read may go on from.
   */
  onPage?: (next: number) => void | Promise<void>;
  /**
   * The folder where the read keeps what it fetched (v1-spool.ts: a `.jsonl` and a `.cursor.json`
   * named by the read, in a run's state folder): a read of the same list, format, `since` and page
   * size (history or not) takes the records recorded there first, without a request, and reads
   * live from the page after them; reads of it at once in this process share it, each page and
   * each record's sub-lists fetched once. Not with `startAt`, nor with `onPage`.
   */
  spool?: string;
  /**
   * Read the spool only, and only when it holds the whole list (a count of the rows beside the
   * run): never a request. Throws USAGE when it does not hold it.
   * @default false
   */
  spoolOnly?: boolean;
}

/** Custom fields (`/customfields`) are on these paths; the opportunity one is spelled so by the service. */
const CUSTOM_FIELDS_PATH: Record<Exclude<V1List, 'tasks'>, string> = {
  party: 'party',
  opportunity: 'opportuntity',
  kase: 'kase',
};

/** Where a live source's rows say they come from: `v1+https://HOST/api/party`. */
export function v1LiveName(baseUrl: string, list: V1List): string {
  return `${V1_LIVE_PREFIX}${baseUrl}/api/${list}`;
}

/**
 * Reads a live v1 list as rows, the same rows `readV1Export` gives for the export of that list with
 * custom fields, tags, history (and a case's additional contacts) nested in each record. Requests:
 * one per page of the list, plus per record one for its custom fields and one for its tags (two
 * when the list already carries them: none), one for a case's additional contacts, and, when history
 * is read, one per page of each record's history instead. Every request goes through the reader's
 * transport (governor, retries, credentials).
 * @throws ApiError when the service refuses or stays unreachable; FerryError SOURCE_XML_MALFORMED or
 *   SOURCE_JSON_MALFORMED when a page does not parse.
 */
export async function* readV1Live(reader: V1Reader, options: V1LiveReadOptions = {}): AsyncGenerator<SourceItem> {
  const opts = normalizeOptions(options);
  const pageSize = options.pageSize ?? 100;
  const startAt = options.startAt ?? 0;
  for (const [name, value, min] of [
    ['pageSize', pageSize, 1],
    ['startAt', startAt, 0],
  ] as const) {
    if (!Number.isInteger(value) || value < min)
      throw new FerryError('CONFIG_INVALID', `${name} must be an integer of at least ${min}; got ${value}`);
  }
  const list = options.list ?? V1_LIST_OF_RECORD[opts.record ?? 'party'];
  const file = v1LiveName(reader.transport.origin, list);
  const history = opts.record === 'historyItem';
  if (history && list === 'tasks') {
    throw new FerryError(
      'USAGE',
      'tasks have no history in the v1 interface; read history from /api/party, /api/opportunity or /api/kase',
      { location: { file } },
    );
  }
  const filters: Record<string, string | undefined> = {};
  if (options.since !== undefined && list !== 'tasks') filters['lastmodified'] = v1FilterTime(options.since);
  if (options.spool !== undefined && (options.startAt !== undefined || options.onPage !== undefined)) {
    throw new FerryError(
      'USAGE',
      'a spooled read goes on from its own cursor; give spool, or startAt and onPage, not both',
      { location: { file } },
    );
  }
  const bareKind: V1RecordKind | undefined = list === 'tasks' ? 'task' : list === 'party' ? undefined : list;
  const signal = opts.signal;

  const parse = (
    chunks: AsyncIterable<Buffer>,
    where: string,
    kind: V1RecordKind | undefined,
  ): AsyncGenerator<RawV1Record> =>
    reader.format === 'xml'
      ? readV1XmlRecords(where, { signal, maxRecordChars: opts.maxRecordChars, chunks })
      : readV1JsonRecords(where, { signal, maxRecordChars: opts.maxRecordChars, chunks, bareKind: kind });
  const where = (path: string): string => `${V1_LIVE_PREFIX}${reader.transport.origin}${path}`;

  /**
   * One page of the list, read whole within the reader's limits (its deadline and size cap), its
   * records parsed as they are taken: a page of any size is never held as records at once.
   */
  const page = async (start: number): Promise<V1PageRecords> => {
    const answer = await reader.get(`/api/${list}`, { ...filters, start, limit: pageSize }, signal);
    const records = async function* (): AsyncGenerator<RawV1Record> {
      for await (const record of parse(answer.body.chunks(), where(answer.path), bareKind))
        yield { ...record, elementPath: `${answer.path} ${record.elementPath}` };
    };
    return { path: answer.path, digest: answer.body.digest, records: records(), dispose: () => answer.body.dispose() };
  };

  /**
   * A sub-list of a record (`/api/kase/7/tag`) read as the body of an element of its kind, so the
   * same parser reads it as it would read it nested in an export; its top-level elements.
   */
  const subList = async (path: string, query: Record<string, string | number> = {}): Promise<V1Node[] | null> => {
    const answer = await reader.getIfFound(path, query, signal);
    if (answer === null) return null;
    const nodes: V1Node[] = [];
    try {
      for await (const record of parse(wrappedSubList(answer.body, reader.format), where(answer.path), 'kase')) {
        if (record.error) throw record.error;
        nodes.push(...record.node.children);
      }
    } finally {
      await answer.body.dispose();
    }
    return nodes;
  };

  /** A record's whole history, page by page, as one `history` list. */
  const historyOf = async (kind: Exclude<V1List, 'tasks'>, id: string): Promise<V1Node | null> => {
    const items: V1Node[] = [];
    const repeats = new V1PageRepeats();
    for (let start = 0; ; start += pageSize) {
      const answer = await reader.getIfFound(
        `/api/${kind}/${encodeURIComponent(id)}/history`,
        { start, limit: pageSize },
        signal,
      );
      if (answer === null) return null;
      let count = 0;
      try {
        repeats.check({ path: answer.path, digest: answer.body.digest });
        for await (const record of parse(answer.body.chunks(), where(answer.path), 'historyItem')) {
          if (record.error) throw record.error;
          items.push(record.node);
          count++;
        }
      } finally {
        await answer.body.dispose();
      }
      if (count < pageSize) break;
    }
    return { name: 'history', text: null, children: items };
  };

  /** The record with its sub-lists nested, or a warning when it was deleted after the page was read. */
  const complete = async (record: RawV1Record): Promise<V1SpoolEntry> => {
    if (record.error || list === 'tasks') return { record };
    const id = record.node.children.find((child) => child.name === 'id' && child.children.length === 0)?.text;
    if (id === undefined || id === null || id === '') return { record };
    const kind = list;
    const children = [...record.node.children];
    const has = (name: string): boolean => children.some((child) => child.name === name);
    const wanted: Array<() => Promise<V1Node[] | null>> = [];
    const base = `/api/${kind}/${encodeURIComponent(id)}`;
    if (history) {
      if (!has('history')) {
        wanted.push(async () => {
          const node = await historyOf(kind, id);
          return node && [node];
        });
      }
    } else {
      if (!has('customFields'))
        wanted.push(() => subList(`/api/${CUSTOM_FIELDS_PATH[kind]}/${encodeURIComponent(id)}/customfields`));
      if (!has('tags')) wanted.push(() => subList(`${base}/tag`));
      if (kind === 'kase' && !has('parties')) wanted.push(() => subList(`${base}/party`));
    }
    for (const fetch of wanted) {
      const nodes = await fetch();
      if (nodes === null) {
        // Kept with the records when spooled, so that a read from the spool says it too.
        return {
          warning: {
            code: 'OTHER',
            message: `${record.node.name} ${id} was deleted from the old account while ${file} was read; it is left out of this read`,
            location: { file, row: 0, elementPath: record.elementPath },
          },
        };
      }
      children.push(...nodes);
    }
    return { record: { ...record, node: { ...record.node, children } } };
  };

  /** The records of spooled or fetched entries, their warnings said where they stand. */
  const recordsOf = async function* (entries: AsyncIterable<V1SpoolEntry>): AsyncGenerator<RawV1Record> {
    for await (const entry of entries) {
      if ('warning' in entry) opts.onWarning(entry.warning);
      else yield entry.record;
    }
  };

  /** The list read from the account, page by page, each record completed as it is taken. */
  const fetched = async function* (): AsyncGenerator<V1SpoolEntry> {
    const repeats = new V1PageRepeats();
    for (let start = startAt; ; ) {
      const found = await page(start);
      let count = 0;
      try {
        repeats.check(found);
        for await (const record of found.records) {
          count += 1;
          yield await complete(record);
        }
      } finally {
        await found.dispose();
      }
      start += count;
      // A short page is the last; the rows of this page were taken before the next start is said.
      await options.onPage?.(start);
      if (count < pageSize) return;
    }
  };

  const records = (): AsyncGenerator<RawV1Record> => {
    // What a record is completed with depends on history alone: the kinds of one list share a read.
    const key: V1SpoolKey = {
      address: reader.transport.origin,
      list,
      record: history ? 'historyItem' : null,
      wireFormat: reader.format,
      since: options.since?.toISOString() ?? null,
      pageSize,
    };
    if (options.spool === undefined) {
      if (options.spoolOnly)
        throw new FerryError('USAGE', `a read of ${file} from its spool alone needs the spool's folder`, {
          location: { file },
        });
      return recordsOf(fetched());
    }
    const base = v1SpoolBase(options.spool, key);
    if (!options.spoolOnly) return recordsOf(readV1Spool(base, key, { page, complete }));
    return (async function* () {
      const whole = await V1Spool.whole(base, key);
      if (!whole)
        throw new FerryError(
          'USAGE',
          `the spool of ${file} does not hold the whole list (yet), and this read takes nothing from the account`,
          { location: { file } },
        );
      yield* recordsOf(whole);
    })();
  };

  yield* rowsOfV1Records(records(), { ...opts, file, source: `${V1_LIVE_PREFIX}${list}`, format: reader.format });
}
