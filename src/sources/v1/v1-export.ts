import { open as openFile } from 'node:fs/promises';
import { basename } from 'node:path';
import { FerryError } from '../../errors/index.ts';
import type { CommonReadOptions, SourceItem, SourceLocation } from '../types.ts';
import { flattenRecord, isRecordKind } from './v1-flatten.ts';
import type { V1Node, V1RecordKind } from './v1-flatten.ts';
import { readV1JsonRecords } from './v1-json.ts';
import { readV1XmlRecords } from './v1-xml.ts';
import type { RawV1Record } from './v1-xml.ts';

export interface V1ReadOptions extends Omit<CommonReadOptions, 'headerRow'> {
  /**
   * Which records to read when a file holds several kinds; by default the kind of the first
   * top-level record (`party` when that is a person or an organisation). A kind that only occurs
   * nested inside other records (the `historyItem`s inside each person) is read from there, with
   * `parent.type` and `parent.id` columns.
   */
  record?: 'person' | 'organisation' | 'party' | 'opportunity' | 'kase' | 'task' | 'historyItem';
  /**
   * Most text one record may hold (in characters) before it is yielded as a
   * SOURCE_FIELD_TOO_LARGE row error instead; bounds memory on hostile or broken files.
   * @default 16777216 (16 Mi characters)
   */
  maxRecordChars?: number;
}

export type V1Format = 'xml' | 'json';

const DEFAULT_MAX_RECORD_CHARS = 16 * 1024 * 1024;
const RECORD_OPTIONS = ['person', 'organisation', 'party', 'opportunity', 'kase', 'task', 'historyItem'] as const;

export interface NormalizedV1Options {
  record: V1ReadOptions['record'];
  onMalformed: 'report' | 'stop';
  onWarning: NonNullable<CommonReadOptions['onWarning']>;
  signal: AbortSignal | undefined;
  maxRecordChars: number;
}

/** The options every v1 reader (file or live) takes, checked and defaulted. */
export function normalizeOptions(options: V1ReadOptions): NormalizedV1Options {
  if (options.record !== undefined && !(RECORD_OPTIONS as readonly string[]).includes(options.record)) {
    throw new FerryError(
      'CONFIG_INVALID',
      `record must be one of ${RECORD_OPTIONS.join(', ')}; got ${JSON.stringify(options.record)}`,
    );
  }
  const onMalformed = options.onMalformed ?? 'report';
  if (onMalformed !== 'report' && onMalformed !== 'stop') {
    throw new FerryError('CONFIG_INVALID', `onMalformed must be report or stop; got ${JSON.stringify(onMalformed)}`);
  }
  const maxRecordChars = options.maxRecordChars ?? DEFAULT_MAX_RECORD_CHARS;
  if (!Number.isInteger(maxRecordChars) || maxRecordChars < 1) {
    throw new FerryError('CONFIG_INVALID', `maxRecordChars must be a positive integer; got ${maxRecordChars}`);
  }
  return {
    record: options.record,
    onMalformed,
    onWarning: options.onWarning ?? (() => {}),
    signal: options.signal,
    maxRecordChars,
  };
}

function kindsFor(record: NonNullable<V1ReadOptions['record']>): Set<V1RecordKind> {
  return record === 'party' ? new Set<V1RecordKind>(['person', 'organisation']) : new Set<V1RecordKind>([record]);
}

/**
 * Reads a legacy v1 export (XML or JSON, told apart by the first character after any BOM) as
 * flat rows, streaming: memory holds one record at a time whatever the file's size. Values are
 * text as the file holds them (JSON numbers keep their digits), except the `.count` columns.
 *
 * Column names (the same for XML and JSON):
 *
 * | Column | From | Example |
 * |---|---|---|
 * | `<field>` | a plain field of the record | `id`, `firstName`, `name`, `createdOn`, `partyId` |
 * | `type` | parties: the element's kind (`person` or `organisation`); history items keep their own `type` | `person` |
 * | `<item>.<n>.<field>` | the n-th (from 1) item of that kind in a list wrapper; the `contacts` and `attachments` wrappers are left out of the name | `email.1.emailAddress`, `email.1.type`, `phone.2.phoneNumber`, `address.1.city`, `website.1.url`, `attachment.1.filename` |
 * | `<object>.<field>` | a field of a nested object that is not a list | `owner.username` |
 * | `customField.<label>` | a custom field's value (`text`, `date` or `boolean`, whichever is set); repeated labels are joined with `;` | `customField.Industry` |
 * | `customField.<tag>.<label>` | a field of a data tag | `customField.Supplier.Rating` |
 * | `customField.#<id>` | a custom field without label | `customField.#12` |
 * | `tags` | tag names joined with `;` (names are not escaped) | `VIP;Newsletter` |
 * | `<list>.count` | number of records in a nested list (history, tasks, opportunities, kases); a number | `history.count` |
 * | `<field>.<n>` | the n-th (from 2) repeat of a plain field | `note.2` |
 * | `parent.type`, `parent.id` | only for records read from inside another record (`record: 'historyItem'` on a parties file) | `person`, `12` |
 * | `party.<n>.id` | a case's additional contacts (whole parties nested in it as `parties`), by v1 id, besides `parties.count` | `party.1.id` |
 *
 * Every row of a kind also carries that kind's documented fields, null when absent, so columns do
 * not depend on which record comes first. Locations: `location.row` is the record number,
 * `location.line` the line it starts on, `location.elementPath` is `/parties/person[12]` (XML,
 * 1-based) or `$.parties.person[11]` (JSON, 0-based).
 *
 * XML entities: only `&lt; &gt; &amp; &quot; &apos;` and character references are read. External
 * entities are never fetched and entities declared in a DOCTYPE are never expanded: a reference to
 * one fails with SOURCE_XML_ENTITY (so XXE and billion-laughs files are refused, not half-read).
 * @throws FerryError SOURCE_NOT_FOUND, SOURCE_UNREADABLE, SOURCE_FORMAT_UNKNOWN, SOURCE_ENCODING,
 *   SOURCE_XML_MALFORMED, SOURCE_XML_ENTITY, SOURCE_JSON_MALFORMED (after yielding the records before the fault)
 */
export async function* readV1Export(file: string, options: V1ReadOptions = {}): AsyncGenerator<SourceItem> {
  const opts = normalizeOptions(options);
  const format = await sniffFormat(file);
  const source = basename(file);
  const bareKind = opts.record !== undefined && opts.record !== 'party' ? opts.record : undefined;
  const raw =
    format === 'xml'
      ? readV1XmlRecords(file, { signal: opts.signal, maxRecordChars: opts.maxRecordChars })
      : readV1JsonRecords(file, { signal: opts.signal, maxRecordChars: opts.maxRecordChars, bareKind });
  yield* rowsOfV1Records(raw, { ...opts, file, source, format });
}

/** Where the records of `rowsOfV1Records` come from, and what it was asked for. */
export interface V1RecordsContext {
  record: V1ReadOptions['record'];
  onMalformed: 'report' | 'stop';
  onWarning: NonNullable<CommonReadOptions['onWarning']>;
  /** Names the records in locations and warnings: the file, or the address of a live list. */
  file: string;
  source: string;
  /** How element paths are written: `/a/b[1]` (XML) or `$.a.b[0]` (JSON). */
  format: V1Format;
}

/**
 * Rows from the top-level records of a v1 export (or of pages of the live interface, which hands
 * over records of the same shape): the records of the kind asked for, flattened, or the records of
 * that kind nested in them (history in parties) with `parent.type` and `parent.id`.
 */
export async function* rowsOfV1Records(
  raw: AsyncIterable<RawV1Record>,
  context: V1RecordsContext,
): AsyncGenerator<SourceItem> {
  const { file, source, format } = context;
  const opts = context;
  let wanted = opts.record === undefined ? undefined : kindsFor(opts.record);
  let count = 0;
  const skipped = new Map<string, number>();

  const location = (record: { line: number; elementPath: string }): SourceLocation => ({
    file,
    row: count,
    line: record.line,
    elementPath: record.elementPath,
  });

  for await (const record of raw) {
    if (record.error) {
      count++;
      if (opts.onMalformed === 'stop') throw record.error;
      yield { kind: 'error', source, row: count, error: record.error, location: location(record) };
      continue;
    }
    const kind = record.node.name as V1RecordKind;
    wanted ??= kindsFor(kind === 'person' || kind === 'organisation' ? 'party' : kind);
    if (wanted.has(kind)) {
      count++;
      yield {
        kind: 'row',
        source,
        row: count,
        values: flattenRecord(record.node, kind),
        location: location(record),
        recordKind: kind,
      };
      continue;
    }
    const nested = findNested(record, wanted, format);
    if (nested.length === 0) {
      skipped.set(kind, (skipped.get(kind) ?? 0) + 1);
      continue;
    }
    const parentId =
      record.node.children.find((child) => child.name === 'id' && child.children.length === 0)?.text ?? null;
    for (const inner of nested) {
      count++;
      const values = flattenRecord(inner.node, inner.node.name as V1RecordKind);
      values['parent.type'] = kind;
      values['parent.id'] = parentId;
      yield { kind: 'row', source, row: count, values, location: location(inner), recordKind: inner.node.name };
    }
  }
  if (count === 0 && skipped.size === 0) {
    opts.onWarning({
      code: 'OTHER',
      message: `${file} holds no v1 records: no person, organisation, opportunity, kase, task or historyItem was found where a list keeps them`,
      location: { file, row: 0 },
    });
  }
  for (const [kind, times] of skipped) {
    opts.onWarning({
      code: 'OTHER',
      message: `${times} ${kind} record(s) skipped: this read takes ${[...(wanted ?? [])].join(' and ')} records; read the file again with record ${kind} to get them`,
      location: { file, row: count },
    });
  }
}

/** The records of the wanted kinds inside another record, with paths that point at them. */
function findNested(record: RawV1Record, wanted: Set<V1RecordKind>, format: V1Format): RawV1Record[] {
  const found: RawV1Record[] = [];
  const visit = (node: V1Node, path: string): void => {
    const seen = new Map<string, number>();
    for (const child of node.children) {
      const n = (seen.get(child.name) ?? 0) + 1;
      seen.set(child.name, n);
      const childPath = format === 'xml' ? `${path}/${child.name}[${n}]` : `${path}.${child.name}[${n - 1}]`;
      if (isRecordKind(child.name) && wanted.has(child.name)) {
        found.push({ node: child, elementPath: childPath, line: record.line });
      } else if (child.children.length > 0) {
        visit(child, childPath);
      }
    }
  };
  visit(record.node, record.elementPath);
  return found;
}

/** Tells XML from JSON by the first meaningful character; anything else is not a v1 export. */
async function sniffFormat(file: string): Promise<V1Format> {
  let handle;
  try {
    handle = await openFile(file, 'r');
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    throw new FerryError(
      code === 'ENOENT' ? 'SOURCE_NOT_FOUND' : 'SOURCE_UNREADABLE',
      code === 'ENOENT' ? `${file} does not exist` : `${file} cannot be opened: ${(error as Error).message}`,
      {
        location: { file },
        cause: error,
        hint:
          code === 'ENOENT'
            ? 'Check the path; relative paths are resolved from the current directory.'
            : 'Check that the file is readable by the current user and is not a directory.',
      },
    );
  }
  try {
    const head = Buffer.alloc(4096);
    const { bytesRead } = await handle.read(head, 0, head.length, 0).catch((error: unknown) => {
      throw new FerryError('SOURCE_UNREADABLE', `${file} cannot be read: ${(error as Error).message}`, {
        location: { file },
        cause: error,
        hint: 'Check that the file is readable by the current user and is not a directory.',
      });
    });
    const bytes = head.subarray(0, bytesRead);
    if ((bytes[0] === 0xff && bytes[1] === 0xfe) || (bytes[0] === 0xfe && bytes[1] === 0xff)) return 'xml';
    const text = bytes
      .toString('latin1')
      .replace(/^\xef\xbb\xbf/, '')
      .trimStart();
    if (text.startsWith('<')) return 'xml';
    if (text.startsWith('{') || text.startsWith('[')) return 'json';
    throw new FerryError(
      'SOURCE_FORMAT_UNKNOWN',
      text === ''
        ? `${file} is empty`
        : `${file} is neither XML nor JSON: it starts with ${JSON.stringify(text.slice(0, 20))}`,
      {
        location: { file, row: 1 },
        hint: 'A v1 export is the XML or JSON saved from the legacy interface (parties.xml, opportunities.json ...).',
      },
    );
  } finally {
    await handle.close();
  }
}
