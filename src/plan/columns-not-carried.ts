import { isEmpty } from '../mapping/index.ts';
import type { CellValue } from '../sources/index.ts';

/** A source column no field reads that holds values: what the run leaves behind, said in its summary. */
export interface NotCarried {
  column: string;
  /** Rows with a value in it. */
  rows: number;
  /** Why the mapping leaves it out (its `leaveOut`), when it says so. */
  reason?: string;
}

/** What the census needs of a compiled mapping: which columns it reads, and which it leaves out on purpose. */
export interface ColumnUse {
  readsColumn(column: string): boolean;
  leftOutBecause(column: string): string | undefined;
}

/**
 * Counts, per column the mapping does not read, the rows that hold a value there, so that a
 * column left out is a decision the summary shows ("not carried: column X, 42 rows with a
 * value") rather than an accident. v1 exports name each item kind and position as a column
 * (`phone.3`, `address.2`): an item no field reads is counted the same way.
 */
export class ColumnCensus {
  readonly #counts = new Map<string, number>();
  /** Whether each column seen is read: decided once per name (numbered columns take a pattern test). */
  readonly #reads = new Map<string, boolean>();
  /** Positions of the unread columns, per header (CSV rows share one header object). */
  #positions: { header: readonly string[]; unread: number[] } | null = null;

  constructor(private readonly use: ColumnUse) {}

  #isRead(column: string): boolean {
    let read = this.#reads.get(column);
    if (read === undefined) {
      read = column === '' || this.use.readsColumn(column);
      this.#reads.set(column, read);
    }
    return read;
  }

  #add(column: string): void {
    this.#counts.set(column, (this.#counts.get(column) ?? 0) + 1);
  }

  /** A row given as fields in header order. */
  countFields(fields: readonly CellValue[], header: readonly string[]): void {
    if (this.#positions?.header !== header) {
      const unread: number[] = [];
      header.forEach((column, i) => {
        if (!this.#isRead(column)) unread.push(i);
      });
      this.#positions = { header, unread };
    }
    for (const i of this.#positions.unread) if (!isEmpty(fields[i])) this.#add(header[i] as string);
  }

  /** A row given by name. */
  countValues(values: Readonly<Record<string, CellValue>>): void {
    for (const column in values) if (!isEmpty(values[column]) && !this.#isRead(column)) this.#add(column);
  }

  /** The unread columns that held a value, most rows first. */
  result(): NotCarried[] {
    return [...this.#counts]
      .map(([column, rows]): NotCarried => {
        const reason = this.use.leftOutBecause(column);
        return reason === undefined ? { column, rows } : { column, rows, reason };
      })
      .sort(
        (a, b) =>
          Number(a.reason !== undefined) - Number(b.reason !== undefined) ||
          b.rows - a.rows ||
          a.column.localeCompare(b.column),
      );
  }
}

/** A step of a plan as the census of the whole plan sees it. */
export interface CensusStep {
  inputFile: string;
  notCarried: readonly NotCarried[];
  use: ColumnUse;
}

/**
 * The not-carried columns of each step of a plan, in the plan's terms: a column is not carried
 * only when no step reading the same input reads it (the organisations step of a contacts sheet
 * leaves out the people's columns, which the people step of the same sheet reads). Columns of
 * another input are another file's, whatever their names.
 */
export function notCarriedInPlan(steps: readonly CensusStep[]): NotCarried[][] {
  return steps.map((step) => {
    const readers = steps.filter((other) => other !== step && other.inputFile === step.inputFile);
    return step.notCarried.filter((n) => !readers.some((other) => other.use.readsColumn(n.column)));
  });
}

/**
 * Narrows the not-carried lists of a plan's step results (a run's summary, validate's report) to
 * the plan's terms (notCarriedInPlan); `uses[i]` is the compiled mapping of `results[i]`.
 */
export function narrowNotCarried(
  results: ReadonlyArray<{ inputFile: string; notCarried: NotCarried[] }>,
  uses: readonly ColumnUse[],
): void {
  const lists = notCarriedInPlan(
    results.map((result, i) => ({
      inputFile: result.inputFile,
      notCarried: result.notCarried,
      use: uses[i] as ColumnUse,
    })),
  );
  results.forEach((result, i) => (result.notCarried = lists[i] ?? []));
}

/** One line of a summary for a step's not-carried columns, or none. */
export function notCarriedLines(list: readonly NotCarried[], indent: string): string[] {
  const lines = list
    .filter((n) => n.reason === undefined)
    .map(
      (n) =>
        `${indent}not carried: column ${JSON.stringify(n.column)}, ${n.rows} row${n.rows === 1 ? '' : 's'} with a value`,
    );
  // Columns left out on purpose, one line per reason: the mapping already says why.
  const byReason = new Map<string, string[]>();
  for (const n of list)
    if (n.reason !== undefined) byReason.set(n.reason, [...(byReason.get(n.reason) ?? []), n.column]);
  for (const [reason, columns] of byReason)
    lines.push(`${indent}left out: ${columns.map((c) => JSON.stringify(c)).join(', ')}: ${reason}`);
  return lines;
}
