import { stat } from 'node:fs/promises';
import { dirname, extname, isAbsolute, relative, resolve, sep } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';
import {
  accountOf,
  type CatalogPart,
  type CrmClient,
  EVERY_TASK_STATUS,
  type Filter,
  readCatalogPart,
  RecordService,
} from '../client/index.ts';
import { asFerryError, FerryError, guarded, parseOptions } from '../errors/index.ts';
import { type AccountIdentity, type StateStoreOptions, StoreState, stateStoreSchema } from '../journal/index.ts';
import { loadMapping } from '../mapping/index.ts';
import { fileNameFor, jsonText, replaceFile, writeFileAtomic } from '../files/index.ts';
import { makePrivateFolder, pathInside, readTextInput } from '../util/index.ts';
import { chooseColumns, embedFor, type Cell, type Column } from './columns.ts';
import { columnsFromMappings } from './mapping-columns.ts';
import {
  buildFilter,
  checkFilterFile,
  EXPORT_ENTITIES,
  isFilterEntity,
  namesNeeded,
  parseOrderBy,
  parseWhere,
  passesLocal,
  type ExportEntity,
  type FilterEntity,
  type LocalCondition,
} from './filter.ts';
import { checkTarget, openWriter, removeStaleTemps, type DeletedRecord, type ExportFormat } from './writers.ts';

type Body = Record<string, unknown>;

const FORMATS: Record<string, ExportFormat> = { '.csv': 'csv', '.xlsx': 'xlsx', '.jsonl': 'jsonl', '.ndjson': 'jsonl' };

/**
 * A listed record is an object; its fields are read as they come. z.looseObject would copy every
 * record, which cost 1.4 µs a record (more than a CSV row takes to write).
 */
const RECORD = z.custom<Body>((value) => typeof value === 'object' && value !== null && !Array.isArray(value), {
  message: 'expected a record (an object)',
});

const NO_CELLS: Cell[] = [];

/** Clock differences with the service that an incremental export absorbs by overlapping. */
const OVERLAP_MS = 5 * 60_000;

export const exportOptionsSchema = z.object({
  entity: z.enum(EXPORT_ENTITIES),
  /** The file to write; null for standard output (CSV, JSON Lines). */
  out: z.string().nullable(),
  format: z.enum(['csv', 'xlsx', 'jsonl']),
  where: z.array(z.string()).default([]),
  /** Any one condition instead of all of them. @default false */
  any: z.boolean().default(false),
  orderBy: z.string().nullable().default(null),
  /** A filter file (YAML or JSON) instead of --where. */
  filterFile: z.string().nullable().default(null),
  columns: z.array(z.string()).nullable().default(null),
  /** Mapping files (the import's language) whose columns the export writes, instead of `columns`. */
  mappings: z.array(z.string()).default([]),
  /**
   * Entries: the folder each entry's attachments are downloaded into (`DIR/<attachment id>/<file
   * name>`), for a mapping that reads attachments. @default null
   */
  attachments: z.string().nullable().default(null),
  /** CSV without BOM and with LF. @default false */
  plain: z.boolean().default(false),
  /** No protection of texts that look like formulas. @default false */
  raw: z.boolean().default(false),
  /** 'auto' (with a state file), a date or a timestamp; null exports everything. */
  since: z.string().nullable().default(null),
  stateFile: z.string().nullable().default(null),
  /**
   * Keep the time of the last complete export in a PostgreSQL store (`--state-store`) under its key
   * instead of a state file: an export scheduled on machines that come and go. @default null
   */
  stateStore: stateStoreSchema.nullable().default(null),
});

export type ExportOptions = z.output<typeof exportOptionsSchema>;

function usage(message: string, hint?: string): never {
  throw new FerryError('USAGE', message, hint ? { hint } : {});
}

/** Flag values as a command line gives them. */
export interface ExportFlags {
  entity?: string;
  out?: string;
  format?: string;
  where?: string[];
  any?: boolean;
  orderBy?: string;
  filter?: string;
  columns?: string;
  mapping?: string[];
  attachments?: string;
  plain?: boolean;
  raw?: boolean;
  since?: string;
  state?: string;
  /** `--state-store` with the export's key there (`--state-key`, or the --state file's name and the account). */
  stateStore?: StateStoreOptions;
  cwd: string;
}

const SINCE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?)?$/;

/**
 * A date (YYYY-MM-DD) or an ISO 8601 timestamp that names a real day. Date.parse alone took
 * `--since 1` and `--since "Nov 24"` for 2001 and `2026-02-30` for 2 March, and exported from then.
 */
function isSinceDate(text: string): boolean {
  const match = SINCE.exec(text);
  if (!match || Number.isNaN(Date.parse(text))) return false;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const check = new Date(Date.UTC(year, month - 1, day));
  return check.getUTCFullYear() === year && check.getUTCMonth() === month - 1 && check.getUTCDate() === day;
}

/**
 * Options of runExport as a program gives them: what to export (`entity`) and where (`out`); the
 * rest is optional. Paths are taken as given (relative ones from the process's folder).
 */
export interface ExportOptionsInput {
  entity: ExportEntity;
  /** The file to write (.csv, .xlsx, .jsonl); null writes CSV or JSON Lines to `deps.stdout`. */
  out: string | null;
  /** @default from the extension of `out`; CSV for a stream */
  format?: ExportFormat | undefined;
  /** Conditions as `crm-ferry export --where` takes them (docs/export.md), all of which must hold. */
  where?: string[] | undefined;
  /** Any one condition of `where` instead of all of them. @default false */
  any?: boolean | undefined;
  orderBy?: string | null | undefined;
  /** A filter file (YAML or JSON) instead of `where`. */
  filterFile?: string | null | undefined;
  /** The columns, by name. @default every column of the entity */
  columns?: string[] | null | undefined;
  /** Mapping files (the import's language) whose columns the export writes, instead of `columns`. */
  mappings?: string[] | undefined;
  /** Entries: the folder the attachments the mapping reads are downloaded into. */
  attachments?: string | null | undefined;
  /** CSV without BOM and with LF. @default false */
  plain?: boolean | undefined;
  /** No protection of texts that look like formulas. @default false */
  raw?: boolean | undefined;
  /** 'auto' (with `stateFile`: since the last complete export), a date or a timestamp; null (the default) exports everything. */
  since?: string | null | undefined;
  /** Where `since: 'auto'` keeps the time of the last complete export. */
  stateFile?: string | null | undefined;
  /** Where `since: 'auto'` keeps it in a PostgreSQL store instead (its address and the export's key there). */
  stateStore?: StateStoreOptions | null | undefined;
}

/** How an option is named in a message: its flag on the command line, its name in the library. */
type OptionName = (option: Exclude<keyof ExportOptionsInput, 'entity' | 'plain' | 'raw'>) => string;

const FLAG_NAMES: Record<Parameters<OptionName>[0], string> = {
  out: '--out',
  format: '--format',
  where: '--where',
  any: '--any',
  orderBy: '--order-by',
  filterFile: '--filter',
  columns: '--columns',
  mappings: '--mapping',
  attachments: '--attachments',
  since: '--since',
  stateFile: '--state',
  stateStore: '--state-store',
};
const flagName: OptionName = (option) => FLAG_NAMES[option];
const libraryName: OptionName = (option) => `\`${option}\``;

/** The shape of ExportOptionsInput, checked before what the options mean together. */
const exportInputSchema = exportOptionsSchema
  .extend({ out: z.string().min(1).nullable(), format: z.enum(['csv', 'xlsx', 'jsonl']).optional() })
  .strict();

/**
 * Checks and completes the options of an export: each mistake is one USAGE error, naming the
 * options as `name` does (flags for the command line).
 */
function checkExportOptions(input: ExportOptionsInput, name: OptionName, outAsGiven?: string): ExportOptions {
  const given = parseOptions(exportInputSchema, input, 'runExport');
  const { entity, out } = given;
  const shownOut = outAsGiven ?? out;
  const forOut = name === flagName ? '--out FILE' : '`out` (a file)';
  let format = given.format;
  const named = out === null ? undefined : FORMATS[extname(out).toLowerCase()];
  // An XLSX file named .csv opens as garbage, and the next tool that trusts the name fails.
  if (format !== undefined && named !== undefined && format !== named)
    usage(
      `${name('format')} ${format} disagrees with the extension of ${shownOut} (${named})`,
      `Name the file .${format}, or leave ${name('format')} out.`,
    );
  format ??= out === null ? 'csv' : named;
  if (!format)
    usage(
      `cannot tell the format of ${shownOut} from its extension`,
      `Name it .csv, .xlsx or .jsonl, or give ${name('format')}.`,
    );
  if (format === 'xlsx' && out === null) usage(`XLSX cannot go to standard output; give ${forOut}.xlsx`);
  const filterable = isFilterEntity(entity);
  const { where, any, orderBy, filterFile, columns, mappings, attachments, since, stateFile, stateStore } = given;
  if (!filterable && (where.length > 0 || filterFile || orderBy || any))
    usage(
      `${entity} cannot be filtered: ${name('where')}, ${name('any')}, ${name('orderBy')} and ${name('filterFile')} work for parties, opportunities and kases`,
    );
  if (filterFile && where.length > 0) usage(`give ${name('where')} or ${name('filterFile')}, not both`);
  if (any && where.length < 2) usage(`${name('any')} combines two or more ${name('where')} conditions`);
  if (since !== null) {
    if (entity === 'entries' || entity === 'tasks')
      usage(
        `${name('since')} works for parties, opportunities and kases; the service cannot list ${entity} changed since a date`,
      );
    if (since === 'auto' && !stateFile && !stateStore)
      usage(
        `${name('since')} auto needs ${name === flagName ? '--state FILE (or --state-store URL with --state-key KEY)' : '`stateFile` or `stateStore`'}, where the time of the last export is kept`,
      );
    if (since !== 'auto' && !isSinceDate(since))
      usage(`${name('since')} takes auto, a date (YYYY-MM-DD) or a timestamp, got ${JSON.stringify(since)}`);
    if (out === null) usage(`an incremental export writes its deleted ids beside the output: give ${forOut}`);
  }
  if (stateFile && since === null) usage(`${name('stateFile')} goes with ${name('since')} auto`);
  if (stateFile && stateStore) usage(`give ${name('stateFile')} or ${name('stateStore')}, not both`);
  if (filterable && where.length > 0) parseWhere(entity, where, undefined, any);
  if (filterable && orderBy) parseOrderBy(entity, orderBy);
  if (columns !== null && columns.length === 0) usage(`${name('columns')} needs at least one column name`);
  const twice = columns?.find(
    (column, i) => columns.findIndex((other) => other.toLowerCase() === column.toLowerCase()) !== i,
  );
  if (twice !== undefined)
    usage(`${name('columns')} names ${JSON.stringify(twice)} twice: a column is written once; name each column once`);
  if (mappings.length > 0 && columns !== null) usage(`give ${name('columns')} or ${name('mappings')}, not both`);
  if (mappings.length > 0 && format === 'jsonl')
    usage(`${name('mappings')} chooses columns, and JSON Lines holds whole records: export to CSV or XLSX`);
  if (attachments !== null) {
    if (entity !== 'entries')
      usage(`${name('attachments')} downloads the files of entries, and this export is of ${entity}`);
    if (mappings.length === 0)
      usage(
        `${name('attachments')} goes with a ${name === flagName ? '--mapping' : '`mappings` file'} that reads attachments (the file names the attachment column gives)`,
      );
    if (out === null) usage(`${name('attachments')} writes paths relative to the output file: give ${forOut}`);
    if (attachments === '') usage(`${name('attachments')} needs a folder`);
  }
  return { ...given, format };
}

/** Checks and completes the flags of `crm-ferry export`; every mistake is one USAGE line. */
export function normaliseExportOptions(flags: ExportFlags): ExportOptions {
  const entity = flags.entity;
  if (!entity || !(EXPORT_ENTITIES as readonly string[]).includes(entity))
    usage(`export needs an ENTITY: ${EXPORT_ENTITIES.join(', ')}${entity ? ` (got ${JSON.stringify(entity)})` : ''}`);
  const path = (p: string): string => (isAbsolute(p) ? p : resolve(flags.cwd, p));
  if (flags.out === undefined || flags.out === '')
    usage('export needs --out FILE (.csv, .xlsx, .jsonl), or --out - for standard output');
  const format = flags.format;
  if (format !== undefined && !['csv', 'xlsx', 'jsonl'].includes(format))
    usage(`--format takes csv, xlsx or jsonl, got ${JSON.stringify(format)}`);
  const columns =
    flags.columns === undefined
      ? null
      : flags.columns
          .split(',')
          .map((c) => c.trim())
          .filter(Boolean);
  return checkExportOptions(
    {
      entity: entity as ExportEntity,
      out: flags.out === '-' ? null : path(flags.out),
      format: format as ExportFormat | undefined,
      where: flags.where ?? [],
      any: flags.any ?? false,
      orderBy: flags.orderBy ?? null,
      filterFile: flags.filter ? path(flags.filter) : null,
      columns,
      mappings: (flags.mapping ?? []).map(path),
      attachments: flags.attachments === undefined ? null : flags.attachments === '' ? '' : path(flags.attachments),
      plain: flags.plain ?? false,
      raw: flags.raw ?? false,
      since: flags.since ?? null,
      // With a store, --state only names the export's state there.
      stateFile: flags.state && !flags.stateStore ? path(flags.state) : null,
      stateStore: flags.stateStore ?? null,
    },
    flagName,
    flags.out,
  );
}

/** What an incremental export remembers between runs. */
interface ExportState {
  format: 1;
  account: string;
  entity: ExportEntity;
  /** The filter and columns the state was made for: another query starts again from everything. */
  query: string;
  /** When the last complete export started, minus the overlap: the next one asks for changes since. */
  since: string;
}

/** The state of an incremental export: in a file (`--state`) or a PostgreSQL store (`--state-store`). */
interface ExportCursor {
  /** How it is named in messages. */
  where: string;
  read(): Promise<ExportState | null>;
  write(state: ExportState): Promise<void>;
  close(): Promise<void>;
}

function fileCursor(file: string): ExportCursor {
  return {
    where: file,
    read: () => readState(file),
    write: (state) => writeFileAtomic(file, jsonText(state)),
    close: async () => undefined,
  };
}

/** The export's state kept in a store, under the store's run lock for its key while the export runs. */
async function storeCursor(options: StateStoreOptions): Promise<ExportCursor> {
  const stored = await StoreState.open(options);
  const where = `${JSON.stringify(options.key)} in the state store at ${stored.address}`;
  return {
    where,
    read: async () => {
      const content = await stored.readFile(EXPORT_STATE_FILE);
      return content === null ? null : parseState(content.toString('utf8'), where);
    },
    write: (state) => stored.putFile(EXPORT_STATE_FILE, jsonText(state)),
    close: () => stored.close(),
  };
}

/** The name an export's state has among a store's files. */
const EXPORT_STATE_FILE = 'export.json';

async function readState(file: string): Promise<ExportState | null> {
  let text: string;
  try {
    text = await readTextInput(
      file,
      'the export state',
      (message) => new FerryError('USAGE', message, { location: { file } }),
    );
  } catch (error) {
    if (error instanceof FerryError) throw error;
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new FerryError('EXPORT_WRITE', `cannot read the export state ${file}: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  return parseState(text, file);
}

function parseState(text: string, where: string): ExportState {
  try {
    const state = JSON.parse(text) as ExportState;
    if (
      state === null ||
      typeof state !== 'object' ||
      state.format !== 1 ||
      typeof state.account !== 'string' ||
      typeof state.query !== 'string'
    )
      throw new Error('unexpected content');
    // Sent to the service as it is: a time it refuses would read as the service's fault (exit 4).
    if (typeof state.since !== 'string' || Number.isNaN(Date.parse(state.since)))
      throw new Error(`its time ${JSON.stringify(state.since)} is not a timestamp`);
    return state;
  } catch (error) {
    throw new FerryError('EXPORT_WRITE', `the export state ${where} is damaged (${(error as Error).message})`, {
      location: { file: where },
      hint: 'Remove it to export everything again.',
    });
  }
}

/** What an export tells as it goes. */
export type ExportEvent = { type: 'progress'; records: number; requests: number };

export interface ExportDeps {
  client: CrmClient;
  /** The account an incremental state belongs to (it is never applied to another). @default accountOf(client) */
  account?: AccountIdentity | undefined;
  /** Stops the export cleanly: no file is written, the state is unchanged, and the summary says `interrupted`. */
  signal?: AbortSignal | undefined;
  /**
   * Where an export with `out: null` goes (CSV or JSON Lines); required then. The library reads
   * nothing of the process it runs in: the command passes its standard output.
   */
  stdout?: NodeJS.WritableStream | undefined;
  /** Told every 100 records: those written and the requests sent so far. */
  onEvent?: ((event: ExportEvent) => void) | undefined;
  now?: (() => Date) | undefined;
}

export interface ExportSummary {
  records: number;
  /** Records the service sent: more than `records` when conditions were checked here (or an incremental filter export asked by the day). */
  read: number;
  /** The `--where` conditions the service's filter cannot express, checked here on every record read. */
  checkedHere: string[];
  deleted: number;
  requests: number;
  elapsedMs: number;
  /**
   * Of elapsedMs, the time spent turning records into rows and handing them to the file (the
   * main thread's work, the finishing of the file included).
   */
  writingMs: number;
  /**
   * Of elapsedMs, the time spent waiting for the file (the disk, or zlib's thread for XLSX) to
   * take a piece; the next page may arrive meanwhile.
   */
  fileWaitMs: number;
  files: string[];
  /** Texts cut to the 32,767 characters a spreadsheet cell holds (XLSX only). */
  textsCut: number;
  /** The instant changes were exported from, or null for everything. */
  since: string | null;
  interrupted: boolean;
}

/** The service's filter (null: none, every record is listed), and the conditions checked here on what it sends. */
interface LoadedFilter {
  filter: Filter | null;
  local: LocalCondition[];
}

/**
 * The account's names this export uses, and no others: the custom fields of its entity (its
 * columns, and conditions on them) and the users and teams its conditions name. The whole catalog
 * was a dozen requests, where a nightly export of a few changed records reads one page. Entries
 * and tasks have no custom fields and take no conditions: null, and no request.
 */
async function readExportNames(
  client: CrmClient,
  entity: ExportEntity,
  where: readonly string[],
): Promise<CatalogPart | null> {
  if (!isFilterEntity(entity)) return null;
  return readCatalogPart(client, { fieldDefinitions: [entity], ...namesNeeded(entity, where) });
}

async function loadFilter(
  options: ExportOptions,
  entity: FilterEntity,
  catalog: CatalogPart | null,
): Promise<LoadedFilter> {
  const file = options.filterFile;
  if (file) {
    let text: string;
    try {
      text = await readTextInput(
        file,
        'the filter file',
        (message) => new FerryError('USAGE', message, { location: { file } }),
      );
    } catch (error) {
      if (error instanceof FerryError) throw error;
      throw new FerryError('USAGE', `cannot read the filter file ${file}: ${(error as Error).message}`, {
        location: { file },
      });
    }
    let value: unknown;
    try {
      value = file.endsWith('.json') ? JSON.parse(text) : parseYaml(text, { maxAliasCount: 100 });
    } catch (error) {
      // The YAML parser's message goes on with a code frame of the file; its first line says what is wrong.
      const message = ((error as Error).message.split('\n')[0] ?? '').replace(/:$/, '');
      const line = (error as { linePos?: Array<{ line: number }> }).linePos?.[0]?.line;
      throw new FerryError('USAGE', `the filter file ${file} does not parse: ${message}`, {
        location: line === undefined ? { file } : { file, line },
      });
    }
    return { filter: checkFilterFile(entity, value, file), local: [] };
  }
  const { conditions, local } = parseWhere(entity, options.where, catalog, options.any);
  const orderBy = options.orderBy ? parseOrderBy(entity, options.orderBy) : undefined;
  return { filter: conditions.length > 0 || orderBy ? buildFilter(conditions, options.any, orderBy) : null, local };
}

function dayBefore(instant: string): string {
  return new Date(Date.parse(instant) - 86_400_000).toISOString().slice(0, 10);
}

/**
 * Downloads an attachment into `dir`/<attachment id>/<file name> and returns the file's path. The
 * name is the service's, made one file name the file system takes (fileNameFor, as the restore
 * names a backup's files). Nothing already in `dir` is followed: an id folder or a file that is a
 * link (planted to send the bytes elsewhere) is refused, and the bytes go to a file made fresh
 * beside the target, renamed into place. Folders are 0700 and files 0600: they are the account's.
 */
async function downloadAttachment(client: CrmClient, dir: string, id: number, filename: unknown): Promise<string> {
  const context = {
    what: `--attachments ${dir}, attachment ${id}`,
    hint: 'The folder holds a link crm-ferry did not make. Remove it (or give --attachments a folder of its own), then export again.',
  };
  const folder = await pathInside(dir, String(id), context);
  await makePrivateFolder(folder, context);
  const name = fileNameFor(typeof filename === 'string' && filename !== '' ? filename : 'attachment');
  const file = await pathInside(dir, `${id}/${name}`, context);
  try {
    await replaceFile(file, async (temp) => {
      await client.download(id, temp);
    });
  } catch (error) {
    if (error instanceof FerryError) throw error;
    throw new FerryError('EXPORT_WRITE', `cannot write the attachment ${file}: ${(error as Error).message}`, {
      location: { file },
      cause: error,
    });
  }
  return file;
}

/**
 * What a mapping reads that the listing does not hold: a project's additional contacts and
 * tracks (read from their own endpoints into `parties` and `tracks`), an entry's attachments
 * (downloaded, each one's path relative to the output put in its `file`).
 */
async function fetchBeside(
  record: Body,
  fetches: ReadonlySet<Column['fetches']>,
  options: ExportOptions,
  deps: ExportDeps,
): Promise<void> {
  const id = record.id;
  if (typeof id !== 'number') return;
  const all = async (path: string, key: string): Promise<Body[]> => {
    const items: Body[] = [];
    for await (const item of deps.client.paginate(path, key, RECORD, { signal: deps.signal })) items.push(item);
    return items;
  };
  if (fetches.has('parties')) record.parties = await all(`/kases/${id}/parties`, 'parties');
  if (fetches.has('tracks')) record.tracks = await all(`/${options.entity}/${id}/tracks`, 'tracks');
  if (fetches.has('attachments') && options.attachments !== null && Array.isArray(record.attachments)) {
    // Checked by runExport: an export that downloads attachments writes a file.
    const base = dirname(options.out as string);
    for (const attachment of record.attachments as Body[]) {
      if (typeof attachment.id !== 'number') continue;
      const file = await downloadAttachment(deps.client, options.attachments, attachment.id, attachment.filename);
      // Forward slashes: the file may be imported on another system.
      attachment.file = relative(base, file).split(sep).join('/');
    }
  }
}

/**
 * Exports every record of an entity (or a filter's result) to CSV, XLSX or JSON Lines,
 * streaming: the next page is on its way while the current one is written. The file appears under
 * its name only when complete. With `since`, only what changed (and the ids deleted) since then;
 * with `since: 'auto'` and a state file, since the last complete export.
 */
export function runExport(given: ExportOptionsInput, deps: ExportDeps): Promise<ExportSummary> {
  return guarded('runExport', async () => {
    const options = checkExportOptions(given, libraryName);
    // The store's state is held (its run lock) from before the first request to the end.
    const cursor = options.stateStore ? await storeCursor(options.stateStore) : null;
    try {
      return await exportRecords(options, deps, cursor);
    } finally {
      await cursor?.close();
    }
  });
}

async function exportRecords(
  checked: ExportOptions,
  deps: ExportDeps,
  stored: ExportCursor | null,
): Promise<ExportSummary> {
  let options = checked;
  const account = (deps.account ?? accountOf(deps.client)).account;
  const now = deps.now ?? (() => new Date());
  const started = Date.now();
  const requestsAtStart = deps.client.transport.requestsSent;
  const entity = options.entity;
  // A place the file (or the state) could never be written is found before any request.
  if (options.out !== null) options = { ...options, out: await checkTarget(options.out) };
  if (options.stateFile !== null) options = { ...options, stateFile: await checkTarget(options.stateFile, '--state') };
  const cursor = stored ?? (options.stateFile !== null ? fileCursor(options.stateFile) : null);
  // A filter file needs no names from the account: a mistake in it is found before any request.
  const fromFile = isFilterEntity(entity) && options.filterFile ? await loadFilter(options, entity, null) : null;
  const mappings = await Promise.all(
    options.mappings.map(async (file) => ({ file, mapping: await loadMapping(file) })),
  );
  const catalog = await readExportNames(deps.client, entity, fromFile ? [] : options.where);
  const columns =
    mappings.length > 0
      ? columnsFromMappings(entity, mappings, catalog)
      : chooseColumns(entity, catalog, options.columns);
  const fetches = new Set(columns.flatMap((c) => (c.fetches ? [c.fetches] : [])));
  if (fetches.has('attachments') && options.attachments === null) {
    const column = columns.find((c) => c.fetches === 'attachments')?.name ?? '';
    usage(
      `the mapping reads attachments (column ${JSON.stringify(column)}), and their files are not in the account's listing`,
      'Give --attachments DIR: each file is downloaded to DIR/<attachment id>/<file name>, and the column names it.',
    );
  }
  if (options.attachments !== null) {
    if (options.out === null) usage('--attachments writes paths relative to the output file: give --out FILE');
    if (!fetches.has('attachments'))
      usage(
        '--attachments: the mapping reads no attachments (`to: attachment` with `items: {column: ...}`), so no file would be named in the export',
        'Leave --attachments out, or read the attachments in the mapping.',
      );
    const found = await stat(options.attachments).catch(() => null);
    if (found !== null && !found.isDirectory()) usage(`--attachments: ${options.attachments} is not a folder`);
    if (found === null) await makePrivateFolder(options.attachments, { what: '--attachments' });
  }
  const { filter, local } =
    fromFile ?? (isFilterEntity(entity) ? await loadFilter(options, entity, catalog) : { filter: null, local: [] });
  const checkedHere = local.map((l) => l.text);
  const query = JSON.stringify({
    entity,
    filter,
    ...(checkedHere.length > 0 ? { checkedHere, any: options.any } : {}),
    columns: options.columns,
    ...(options.mappings.length > 0 ? { mappings: options.mappings } : {}),
  });

  const state = cursor ? await cursor.read() : null;
  if (state && state.account !== account) {
    throw new FerryError(
      'EXPORT_WRITE',
      `the export state ${cursor?.where} belongs to ${state.account}, and this export is connected to ${account}`,
      {
        location: { file: cursor?.where ?? '' },
        hint: 'Give each account its own --state file (or --state-key).',
      },
    );
  }
  // Taken before the first request, less the overlap: whatever changes from here on is exported
  // again next time, never missed.
  const nextSince = new Date(now().getTime() - OVERLAP_MS).toISOString();
  let since: string | null = null;
  if (options.since === 'auto') since = state && state.query === query && state.entity === entity ? state.since : null;
  else if (options.since !== null) since = new Date(Date.parse(options.since)).toISOString();

  if (options.out !== null) await removeStaleTemps(dirname(options.out));
  const writer = openWriter(
    options.format,
    options.out,
    columns.map((c) => c.name),
    { plain: options.plain, raw: options.raw, ...(deps.stdout ? { stdout: deps.stdout } : {}), now },
  );
  const summary: ExportSummary = {
    records: 0,
    read: 0,
    checkedHere,
    deleted: 0,
    requests: 0,
    elapsedMs: 0,
    writingMs: 0,
    fileWaitMs: 0,
    files: [],
    textsCut: 0,
    since,
    interrupted: false,
  };
  try {
    const embed = embedFor(entity).join(',');
    const params: Record<string, string> = { embed };
    if (entity === 'tasks') params.status = EVERY_TASK_STATUS;
    let pages: AsyncGenerator<{ records: Body[] }>;
    if (filter !== null) {
      const conditions = [
        ...filter.conditions,
        ...(since ? [{ field: 'updatedOn', operator: 'is after', value: dayBefore(since) }] : []),
      ];
      pages = deps.client.pages(`/${entity}/filters/results`, entity, RECORD, {
        method: 'POST',
        json: { filter: { ...filter, conditions } },
        query: params,
        signal: deps.signal,
      });
    } else {
      if (since) params.since = since;
      pages = deps.client.pages(`/${entity}`, entity, RECORD, { query: params, signal: deps.signal });
    }
    // A filter asks by day; the instant decides (only for an incremental filter export).
    const sinceMs = since !== null && filter !== null ? Date.parse(since) : null;
    const cells = writer.usesCells;
    // The main thread's own work is timed from each page's arrival to its end, less the waits
    // inside it (for the file, for what a record needs besides): two clock reads a page, not a record.
    let writing = 0;
    let waiting = 0;
    for await (const page of pages) {
      let at = performance.now();
      for (const record of page.records) {
        summary.read += 1;
        if (sinceMs !== null && typeof record.updatedAt === 'string' && Date.parse(record.updatedAt) < sinceMs)
          continue;
        if (local.length > 0 && !passesLocal(local, options.any, record)) continue;
        if (fetches.size > 0) {
          writing += performance.now() - at;
          await fetchBeside(record, fetches, options, deps);
          at = performance.now();
        }
        const handing = writer.write(cells ? columns.map((c) => c.value(record)) : NO_CELLS, record);
        if (handing) {
          const handed = performance.now();
          writing += handed - at;
          await handing;
          at = performance.now();
          waiting += at - handed;
        }
        summary.records += 1;
        if (summary.records % 100 === 0)
          deps.onEvent?.({
            type: 'progress',
            records: summary.records,
            requests: deps.client.transport.requestsSent - requestsAtStart,
          });
      }
      writing += performance.now() - at;
    }
    if (since !== null && isFilterEntity(entity)) {
      const gone: DeletedRecord[] = (await new RecordService(deps.client).deleted(entity, since)).map((d) => ({
        id: d.id,
        deletedAt: d.deletedAt,
      }));
      summary.deleted = gone.length;
      await writer.deleted(gone);
    } else if (options.since === 'auto') {
      // The first run of a nightly export: nothing deleted yet, but the file is there every night.
      await writer.deleted([]);
    }
    if (deps.signal?.aborted) throw deps.signal.reason ?? new Error('aborted');
    const committing = performance.now();
    summary.files = await writer.commit();
    summary.textsCut = writer.textsCut;
    summary.writingMs = writing + (performance.now() - committing);
    summary.fileWaitMs = waiting;
  } catch (error) {
    await writer.abort();
    if (deps.signal?.aborted) {
      summary.interrupted = true;
      summary.elapsedMs = Date.now() - started;
      summary.requests = deps.client.transport.requestsSent - requestsAtStart;
      return summary;
    }
    // What was read before the failure; no file was written.
    const failure = asFerryError(error, 'runExport');
    failure.partial = {
      ...summary,
      elapsedMs: Date.now() - started,
      requests: deps.client.transport.requestsSent - requestsAtStart,
    };
    throw failure;
  }
  if (cursor) {
    const next: ExportState = { format: 1, account, entity, query, since: nextSince };
    try {
      await cursor.write(next);
    } catch (error) {
      // The export's files are in place; the next run starts from the previous state and exports
      // this window again, so nothing is missed.
      const failure = new FerryError(
        'EXPORT_WRITE',
        `the export is written, but its state ${cursor.where} could not be saved: ${(error as Error).message}`,
        {
          location: { file: cursor.where },
          hint: 'The next run exports these changes again. Make the state file writable (or the state store reachable).',
          cause: error,
        },
      );
      failure.partial = {
        ...summary,
        elapsedMs: Date.now() - started,
        requests: deps.client.transport.requestsSent - requestsAtStart,
      };
      throw failure;
    }
  }
  summary.elapsedMs = Date.now() - started;
  summary.requests = deps.client.transport.requestsSent - requestsAtStart;
  return summary;
}
