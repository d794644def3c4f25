/** verify's files: the differences and, beside them, the rows and values not carried. */
import { mkdir } from 'node:fs/promises';
import { basename, dirname, extname, join } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { csvDocument, csvFieldForPeople, writeFileAtomic } from '../files/index.ts';
import { type VerifyDifference, type VerifyNotCarried } from './types.ts';

/** The file of the rows and values not carried, beside the differences file. */
export function notCarriedFileOf(differencesFile: string): string {
  const name = basename(differencesFile);
  const own = /differences/i.test(name)
    ? name.replace(/differences/i, 'not-carried')
    : `${basename(name, extname(name))}.not-carried${extname(name) || '.csv'}`;
  return join(dirname(differencesFile), own);
}

const DIFFERENCE_COLUMNS = ['step', 'kind', 'changed_in', 'row', 'key', 'field', 'in_file', 'in_account', 'id'];

function differenceCells(d: VerifyDifference): string[] {
  return [
    d.step,
    d.kind,
    d.changedIn,
    d.row === null ? '' : String(d.row),
    d.key,
    d.field,
    d.inFile,
    d.inAccount,
    d.id === null ? '' : String(d.id),
  ];
}

const NOT_CARRIED_COLUMNS = ['step', 'kind', 'row', 'key', 'column', 'value', 'reason', 'code', 'rule', 'id'];

function notCarriedCells(n: VerifyNotCarried): string[] {
  return [
    n.step,
    n.kind,
    String(n.row),
    n.key,
    n.column,
    n.value,
    n.reason,
    n.code,
    n.rule,
    n.id === null ? '' : String(n.id),
  ];
}

/** A CSV file framed for Excel like the other result files (files/csv.ts), written whole and atomically. */
async function writeCsv(
  file: string,
  columns: readonly string[],
  rows: ReadonlyArray<readonly string[]>,
  what: string,
): Promise<void> {
  const text = csvDocument(
    columns,
    rows.map((cells) => cells.map(csvFieldForPeople)),
    'excel',
  );
  try {
    await mkdir(dirname(file), { recursive: true, mode: 0o700 });
    await writeFileAtomic(file, text);
  } catch (error) {
    throw new FerryError('EXPORT_WRITE', `cannot write the ${what} file ${file}: ${(error as Error).message}`, {
      location: { file },
      cause: error,
      hint: 'Free the disk or give another --differences FILE, then run verify again.',
    });
  }
}

/** Writes the differences and, beside them, the rows and values not carried; gives the second file's name. */
export async function writeVerifyFiles(
  differencesFile: string,
  differences: readonly VerifyDifference[],
  notCarried: readonly VerifyNotCarried[],
): Promise<string> {
  const notCarriedFile = notCarriedFileOf(differencesFile);
  await writeCsv(differencesFile, DIFFERENCE_COLUMNS, differences.map(differenceCells), 'differences');
  await writeCsv(notCarriedFile, NOT_CARRIED_COLUMNS, notCarried.map(notCarriedCells), 'not-carried');
  return notCarriedFile;
}
