import type { Cell } from './columns.ts';

export type Body = Record<string, unknown>;

export type ExportFormat = 'csv' | 'xlsx' | 'jsonl';

/** A record deleted in the account since the last export. */
export interface DeletedRecord {
  id: number;
  deletedAt: string;
}

/** Takes the rows of one export and, at the end, commits them to the target or leaves no trace. */
export interface ExportWriter {
  /**
   * `cells` in the chosen columns; `record` as the service returned it (JSON Lines). Rows are
   * gathered into larger pieces: a promise comes back only when a piece goes to the file, and the
   * next row waits for it.
   */
  write(cells: Cell[], record: Body): Promise<void> | undefined;
  /** Whether write() reads the cells (CSV, XLSX) or only the record (JSON Lines). */
  readonly usesCells: boolean;
  /** Records deleted since the last export (incremental exports). */
  deleted(records: DeletedRecord[]): Promise<void>;
  /** Finishes the file and moves it to its name. */
  commit(): Promise<string[]>;
  /** Removes what was written; the target, if it exists, stays as it was. */
  abort(): Promise<void>;
  /** Texts cut to what a spreadsheet cell holds (XLSX); 0 for the other formats. */
  readonly textsCut: number;
}

// Kept in files/ (formula.ts) so that every room writing files for people shares it.
export { looksLikeFormula } from '../files/index.ts';
