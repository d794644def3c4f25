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

/**
 * Texts a spreadsheet would take for a formula (OWASP "CSV injection"), and the full-width forms
 * of = + - @ that Apple Numbers folds into them.
 */
export function looksLikeFormula(text: string): boolean {
  // One look at the first character: a regular expression cost more than the rest of the cell.
  switch (text.charCodeAt(0)) {
    case 0x3d: // =
    case 0x2b: // +
    case 0x2d: // -
    case 0x40: // @
    case 0x09: // tab
    case 0x0d: // carriage return
    case 0xff1d:
    case 0xff0b:
    case 0xff0d:
    case 0xff20:
      return true;
    default:
      return false;
  }
}
