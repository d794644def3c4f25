import { open, rm, stat, type FileHandle } from 'node:fs/promises';
import { FerryError } from '../errors/index.ts';
import { csvField, csvFieldForPeople, CsvFile } from '../files/index.ts';
import type { CellValue } from '../sources/index.ts';
import { checkInputPath } from '../util/index.ts';
import { reasonText } from './reasons.ts';
import type { RejectedRow } from './types.ts';

/** The importer's rejects carry the service's HTTP status, before the columns below. */
export const STATUS_COLUMN = '_http_status';

/**
 * Columns the rejects file adds after the input's own, in this order: `_message` is the reason in
 * the words of the person who owns the data (reasonText), `_rule` the place of the rule in the
 * mapping for the person who edits it.
 */
export const REJECT_COLUMNS = ['_row', '_field', '_code', '_message', '_rule', '_raw'] as const;

/** The columns of rejects files written before `_rule` was added: still read as rejects files. */
const EARLIER_REJECT_COLUMNS = ['_row', '_field', '_code', '_message', '_raw'] as const;

/** Every column a rejects file of any version adds: not the input's own. */
const OWN_COLUMNS: ReadonlySet<string> = new Set([...REJECT_COLUMNS, STATUS_COLUMN]);

const BOM = '\uFEFF';

/**
 * A value as the rejects file shows it: as close as possible to what the input held, so that a
 * person can fix the row and feed the file back in. Dates from workbooks become ISO text
 * (date only at midnight UTC, which is how a date-only cell arrives).
 */
export function cellText(value: CellValue | undefined): string {
  if (value === null || value === undefined) return '';
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime())) return '';
    const iso = value.toISOString();
    return iso.endsWith('T00:00:00.000Z') ? iso.slice(0, 10) : iso;
  }
  return String(value);
}

/** The first 64 KiB of `file` as text, or null when it cannot be read or is no regular file (a FIFO would block the open). */
async function headOf(file: string): Promise<string | null> {
  let handle: FileHandle | undefined;
  try {
    // Nothing under /proc, /sys or /dev is read, not even to look (the reader refuses it after).
    await checkInputPath(file, 'the file', (message) => new Error(message));
    if (!(await stat(file)).isFile()) return null;
    handle = await open(file, 'r');
    const buffer = Buffer.alloc(64 * 1024);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    return buffer.subarray(0, bytesRead).toString('utf8');
  } catch {
    return null;
  } finally {
    await handle?.close();
  }
}

/**
 * Whether `file` reads as a rejects file crm-ferry wrote, perhaps fixed in a spreadsheet since and
 * saved again (which may drop the byte-order mark or write `;` between fields): its header line
 * ends with the reject columns. Such a file is read as what it is, whatever the mapping's
 * `source:` says of the original input.
 */
export async function readsAsRejectsFile(file: string): Promise<boolean> {
  const first = (await headOf(file))?.replace(/^\uFEFF/, '').split(/\r?\n/)[0] ?? '';
  return [',', ';', '\t', '|'].some(
    (delimiter) =>
      first.endsWith(REJECT_COLUMNS.join(delimiter)) || first.endsWith(EARLIER_REJECT_COLUMNS.join(delimiter)),
  );
}

/**
 * True when `file` is a rejects file crm-ferry wrote, as it wrote it (its first line, after the
 * byte-order mark, ends with the reject columns). Such a file may be overwritten or removed; any
 * other file is the user's and is not.
 */
export async function isRejectsFile(file: string): Promise<boolean> {
  const text = await headOf(file);
  if (text === null || !text.startsWith(BOM)) return false;
  const end = text.indexOf('\r\n');
  const first = end === -1 ? text : text.slice(0, end);
  return first.endsWith(REJECT_COLUMNS.join(',')) || first.endsWith(EARLIER_REJECT_COLUMNS.join(','));
}

/** What happened to an older file at the target when the run had nothing to write. */
export type StaleRejects = 'none' | 'removed' | 'kept-not-ours';

/**
 * Removes a rejects file left by an earlier run when this run has none: leaving it would say
 * rows are rejected that are now fine. A file the tool did not write is left alone.
 */
export async function removeStaleRejects(file: string): Promise<StaleRejects> {
  try {
    await stat(file);
  } catch {
    return 'none';
  }
  if (!(await isRejectsFile(file))) return 'kept-not-ours';
  await rm(file, { force: true });
  return 'removed';
}

/** A line of a rejects file: a rejected row, or a warning about a written one (its code a WarningCode). */
export type RejectsLine = Omit<RejectedRow, 'kind' | 'code'> & { code: string };

/**
 * Writes rejected rows as CSV for Excel and for a second try: UTF-8 with a byte-order mark (so
 * Excel does not read it as the local code page), RFC 4180 quoting, CRLF line ends. The input's
 * columns come first, then `_row` (the row as a spreadsheet numbers it: the header is row 1),
 * `_field`, `_code`, `_message` (the reason, reasonText), `_rule` (the rule's place in the
 * mapping) and `_raw` (the text of a record that could not be read).
 *
 * Rows go to a temporary file beside the target, which replaces the target only in `commit()`:
 * a crash or an abort never leaves a half-written file under the real name.
 */
export class RejectsWriter {
  readonly file: string;
  readonly columns: readonly string[];
  readonly #csv: CsvFile;
  #closed = false;
  readonly #status: boolean;
  /** csvField, or csvFieldForPeople in a file made to be opened (warnings). */
  readonly #field: (text: string) => string;

  private constructor(file: string, columns: readonly string[], csv: CsvFile, status: boolean, forPeople: boolean) {
    this.#field = forPeople ? csvFieldForPeople : csvField;
    this.file = file;
    this.columns = columns;
    this.#status = status;
    this.#csv = csv;
  }

  /**
   * Opens a writer for `file` with the input's column names. Throws EXPORT_WRITE when `file`
   * exists and is not a rejects file this tool wrote, or when the folder is not writable.
   */
  static async open(
    file: string,
    columns: readonly string[],
    options: { status?: boolean; forPeople?: boolean } = {},
  ): Promise<RejectsWriter> {
    await assertWritableTarget(file);
    // A rejects file validated again carries the old reasons; the new ones replace them.
    const own = columns.filter((column) => !OWN_COLUMNS.has(column));
    const status = options.status ?? false;
    const csv = await CsvFile.open(file, [...own, ...(status ? [STATUS_COLUMN] : []), ...REJECT_COLUMNS], {
      what: 'the rejects file',
    });
    return new RejectsWriter(file, own, csv, status, options.forPeople ?? false);
  }

  /** Rows written so far. */
  get count(): number {
    return this.#csv.count;
  }

  /** Adds one rejected row, or (in a warnings file, which has the same columns) one warning about a row. */
  async write(rejected: RejectsLine): Promise<void> {
    if (this.#closed) throw new Error('RejectsWriter.write after commit or abort');
    const values = rejected.values;
    const field = this.#field;
    const cells = this.columns.map((column) => field(cellText(values?.[column])));
    if (this.#status) cells.push(rejected.status === undefined ? '' : String(rejected.status));
    cells.push(
      String(rejected.location.row),
      field(rejected.field),
      rejected.code,
      field(reasonText(rejected)),
      field(rejected.rule ?? ''),
      field(values === null ? (rejected.raw ?? '') : ''),
    );
    await this.#csv.add(cells);
  }

  /** Writes what is buffered, syncs, and moves the file to its name (replacing a file of an earlier run). */
  async commit(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#csv.commit();
  }

  /** Drops the temporary file; the target (if any) stays as it was. */
  async abort(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#csv.abort();
  }
}

/** Refuses a target that holds something other than an earlier rejects file. */
export async function assertWritableTarget(file: string): Promise<void> {
  let exists = true;
  try {
    if ((await stat(file)).isDirectory()) {
      throw new FerryError('EXPORT_WRITE', `the rejects file ${file} is a folder`, { location: { file } });
    }
  } catch (error) {
    if (error instanceof FerryError) throw error;
    exists = false;
  }
  if (exists && !(await isRejectsFile(file))) {
    throw new FerryError(
      'EXPORT_WRITE',
      `${file} exists and is not a rejects file written by crm-ferry; not overwriting it`,
      {
        location: { file },
        hint: 'Move the file away, or choose another name with --rejects (or --rejects-dir for plans).',
      },
    );
  }
}
