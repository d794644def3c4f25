import { open, rename, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { csvFieldForPeople } from '../mapping/index.ts';
import { makePrivateFolder } from '../util/index.ts';

/**
 * What a run did with a row. `missing`: the record of a row an earlier run wrote, which the input
 * no longer has; kept (and listed) unless --delete-missing deletes it.
 */
export type RowAction = 'created' | 'updated' | 'unchanged' | 'matched' | 'deleted' | 'missing';

export interface SuccessRow {
  /** The row as a spreadsheet numbers it (0 for a record whose row left the input). */
  row: number;
  key: string;
  action: RowAction;
  id: number;
  /** The record's address in the interface. */
  url: string;
  /** What the record goes without or carries as typed: `CODE field: message`, joined by ` | ` (warningsText); '' for none. */
  warnings: string;
}

const COLUMNS = ['_row', 'key', 'action', 'id', 'url', 'warnings'];
const HINT = 'Free the disk (or fix the folder) and run the same command again: what was written is in the journal, and is not written twice.';
const FLUSH_AT = 64 * 1024;
let sequence = 0;

/**
 * The success file of a step: one line per row written, matched or found unchanged, and per
 * record whose row left the input (missing or deleted). Written
 * under a temporary name and renamed when the run ends, like the rejects file, in UTF-8 with a
 * BOM and CRLF so that Excel opens it as it is.
 */
export class SuccessWriter {
  #buffer = `\uFEFF${COLUMNS.join(',')}\r\n`;
  #closed = false;

  private constructor(
    readonly file: string,
    private readonly handle: FileHandle,
    private readonly temp: string,
  ) {}

  static async open(file: string): Promise<SuccessWriter> {
    sequence += 1;
    const temp = join(dirname(file), `.${basename(file)}.${process.pid}.${sequence}.tmp`);
    try {
      // The results folder is refused when it is a link; the file is made fresh (exclusive create) and renamed into place.
      await makePrivateFolder(dirname(file), { what: 'the results folder of the state' });
      return new SuccessWriter(file, await open(temp, 'wx', 0o600), temp);
    } catch (error) {
      if (error instanceof FerryError) throw error;
      throw new FerryError('EXPORT_WRITE', `cannot create the success file ${file}: ${(error as Error).message}`, { location: { file }, cause: error, hint: HINT });
    }
  }

  async write(row: SuccessRow): Promise<void> {
    if (this.#closed) throw new Error('SuccessWriter.write after commit or abort');
    this.#buffer += `${[String(row.row), csvFieldForPeople(row.key), row.action, String(row.id), csvFieldForPeople(row.url), csvFieldForPeople(row.warnings)].join(',')}\r\n`;
    if (this.#buffer.length >= FLUSH_AT) {
      const text = this.#buffer;
      this.#buffer = '';
      try {
        await this.handle.write(text, null, 'utf8');
      } catch (error) {
        throw new FerryError('EXPORT_WRITE', `cannot write the success file ${this.file}: ${(error as Error).message}`, { location: { file: this.file }, cause: error, hint: HINT });
      }
    }
  }

  async commit(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.handle.write(this.#buffer, null, 'utf8');
      await this.handle.sync();
      await this.handle.close();
      await rename(this.temp, this.file);
    } catch (error) {
      await this.handle.close().catch(() => undefined);
      await rm(this.temp, { force: true });
      throw new FerryError('EXPORT_WRITE', `cannot write the success file ${this.file}: ${(error as Error).message}`, { location: { file: this.file }, cause: error, hint: HINT });
    }
  }

  async abort(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.handle.close().catch(() => undefined);
    await rm(this.temp, { force: true });
  }
}
