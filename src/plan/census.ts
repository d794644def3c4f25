import { isEmpty } from '../mapping/compile-template.ts';
import type { CellValue } from '../sources/types.ts';

/** A source column no field reads that holds values: what the run leaves behind, said in its summary. */
export interface NotCarried {
  column: string;
  /** Rows with a value in it. */
  rows: number;
}

/**
 * Counts, per column the mapping does not read, the rows that hold a value there, so that a
 * column left out is a decision the summary shows ("not carried: column X, 42 rows with a
 * value") rather than an accident. v1 exports name each item kind and position as a column
 * (`phone.3`, `address.2`): an item no field reads is counted the same way.
 */
export class ColumnCensus {
  readonly #counts = new Map<string, number>();
  /** Positions of the unread columns, per header (CSV rows share one header object). */
  #positions: { header: readonly string[]; unread: number[] } | null = null;

  /** `read`: the columns the mapping reads, or a test for them (numbered columns, `phone.*.type`, match by number). */
  constructor(read: ReadonlySet<string> | ((column: string) => boolean)) {
    this.#reads = typeof read === 'function' ? read : (column) => read.has(column);
  }

  readonly #reads: (column: string) => boolean;

  #add(column: string): void {
    this.#counts.set(column, (this.#counts.get(column) ?? 0) + 1);
  }

  /** A row given as fields in header order. */
  countFields(fields: readonly CellValue[], header: readonly string[]): void {
    if (this.#positions?.header !== header) {
      const unread: number[] = [];
      header.forEach((column, i) => {
        if (!this.#reads(column) && column !== '') unread.push(i);
      });
      this.#positions = { header, unread };
    }
    for (const i of this.#positions.unread) if (!isEmpty(fields[i])) this.#add(header[i] as string);
  }

  /** A row given by name. */
  countValues(values: Readonly<Record<string, CellValue>>): void {
    for (const column in values) if (!this.#reads(column) && !isEmpty(values[column])) this.#add(column);
  }

  /** The unread columns that held a value, most rows first. */
  result(): NotCarried[] {
    return [...this.#counts].map(([column, rows]) => ({ column, rows })).sort((a, b) => b.rows - a.rows || a.column.localeCompare(b.column));
  }
}

/** One line of a summary for a step's not-carried columns, or none. */
export function notCarriedLines(list: readonly NotCarried[], indent: string): string[] {
  return list.map((n) => `${indent}not carried: column ${JSON.stringify(n.column)}, ${n.rows} row${n.rows === 1 ? '' : 's'} with a value`);
}
