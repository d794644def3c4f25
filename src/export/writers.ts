/**
 * The door to the export's writers: openWriter picks one by format. The writers and their parts
 * live beside it, one concern a file: deleted-ids.ts (the ids deleted since the last export, beside it),
 * check-target.ts, text-writers.ts (CSV, JSON Lines), ooxml.ts and xlsx-writer.ts.
 */
import { FerryError } from '../errors/index.ts';
import { CsvWriter, JsonlWriter } from './text-writers.ts';
import type { ExportFormat, ExportWriter } from './writer-types.ts';
import { XLSX_MAX_ROWS, XlsxWriter } from './xlsx-writer.ts';

export { deletedFileOf, removeStaleTemps } from './deleted-ids.ts';
export { checkTarget } from './check-target.ts';
export { XLSX_MAX_TEXT } from './ooxml.ts';
export { looksLikeFormula, type DeletedRecord, type ExportFormat, type ExportWriter } from './writer-types.ts';
export { XLSX_MAX_ROWS } from './xlsx-writer.ts';

/** The writer for a format; `target` null writes to standard output (CSV and JSON Lines only). */
export function openWriter(
  format: ExportFormat,
  target: string | null,
  header: string[],
  options: {
    plain: boolean;
    raw: boolean /** Where a `target` of null is written; required then. */;
    stdout?: NodeJS.WritableStream;
    now?: () => Date /** @default XLSX_MAX_ROWS */;
    xlsxMaxRows?: number;
  },
): ExportWriter {
  if (format === 'jsonl') return new JsonlWriter(target, options.stdout);
  if (format === 'csv') return new CsvWriter(target, header, options);
  if (target === null) throw new FerryError('USAGE', 'XLSX cannot go to standard output; give --out FILE.xlsx');
  return new XlsxWriter(
    target,
    header,
    options.raw,
    options.now?.() ?? new Date(),
    options.xlsxMaxRows ?? XLSX_MAX_ROWS,
  );
}
