import { dirname } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { csvFieldForPeople, CsvFile } from '../files/index.ts';
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
const HINT =
  'Free the disk (or fix the folder) and run the same command again: what was written is in the journal, and is not written twice.';

/**
 * The success file of a step: one line per row written, matched or found unchanged, and per
 * record whose row left the input (missing or deleted). Written
 * under a temporary name and renamed when the run ends, like the rejects file, in UTF-8 with a
 * BOM and CRLF so that Excel opens it as it is.
 */
export class SuccessWriter {
  #closed = false;

  private constructor(
    readonly file: string,
    private readonly csv: CsvFile,
  ) {}

  static async open(file: string): Promise<SuccessWriter> {
    try {
      // The results folder is refused when it is a link; the file is made fresh (exclusive create) and renamed into place.
      await makePrivateFolder(dirname(file), { what: 'the results folder of the state' });
      return new SuccessWriter(file, await CsvFile.open(file, COLUMNS, { what: 'the success file', hint: HINT }));
    } catch (error) {
      if (error instanceof FerryError) throw error;
      throw new FerryError('EXPORT_WRITE', `cannot create the success file ${file}: ${(error as Error).message}`, {
        location: { file },
        cause: error,
        hint: HINT,
      });
    }
  }

  async write(row: SuccessRow): Promise<void> {
    if (this.#closed) throw new Error('SuccessWriter.write after commit or abort');
    await this.csv.add([
      String(row.row),
      csvFieldForPeople(row.key),
      row.action,
      String(row.id),
      csvFieldForPeople(row.url),
      csvFieldForPeople(row.warnings),
    ]);
  }

  async commit(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.csv.commit();
  }

  async abort(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.csv.abort();
  }
}
