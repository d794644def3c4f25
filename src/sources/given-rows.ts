/**
 * Rows a caller hands in instead of a file: another system's API, a database, rows built in code.
 * They are read through the same mapping as a file's rows; the mapping's key gives each row the
 * stable key a re-run and a resumed run find it by. The caller gives a function that reads them,
 * because a run may read them more than once (verify reads the source again; the progress display
 * counts them).
 */
import { FerryError } from '../errors/index.ts';
import type { CellValue, SourceItem } from './types.ts';

/** Reads the rows again from the start, each an object of column -> value; `signal` ends a read early. */
export type RowReader = (
  signal?: AbortSignal,
) => AsyncIterable<Record<string, unknown>> | Iterable<Record<string, unknown>>;

/** A value as a cell holds it: text, a number, a yes/no, a date, or nothing; anything else as its JSON text. */
function cellOf(value: unknown): CellValue {
  if (value === undefined || value === null) return null;
  if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' || value instanceof Date)
    return value;
  if (typeof value === 'bigint') return value.toString();
  return JSON.stringify(value);
}

/**
 * The rows of `read` as source items of `name` (`row` counts from 1, `location.row` as a sheet would
 * with a header row). A row that is not an object is an item that could not be read, as a broken
 * line of a file is: it is rejected, and the rest go on.
 */
export async function* readGivenRows(name: string, read: RowReader, signal?: AbortSignal): AsyncGenerator<SourceItem> {
  let row = 0;
  for await (const given of read(signal)) {
    signal?.throwIfAborted();
    row += 1;
    const location = { file: name, row: row + 1 };
    if (given === null || typeof given !== 'object' || Array.isArray(given)) {
      const error = new FerryError(
        'SOURCE_UNREADABLE',
        `row ${row} of ${name} is ${given === null ? 'null' : Array.isArray(given) ? 'a list' : `a ${typeof given}`}, not an object of column values`,
        { location },
      );
      yield { kind: 'error', source: name, row, error, location };
      continue;
    }
    const values: Record<string, CellValue> = {};
    for (const [column, value] of Object.entries(given)) values[column] = cellOf(value);
    yield { kind: 'row', source: name, row, values, location };
  }
}
