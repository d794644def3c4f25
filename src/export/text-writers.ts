import {
  AtomicFile,
  ChunkedText,
  csvDocument,
  csvField,
  type CsvFraming,
  csvStart,
  CsvText,
  neutraliseFormula,
  sendTo,
} from '../files/index.ts';
import { commitWithDeleted } from './deleted-ids.ts';
import type { Cell } from './columns.ts';
import { type Body, type DeletedRecord, type ExportWriter } from './writer-types.ts';

function csvText(cell: Cell, raw: boolean): string {
  if (cell === null) return '';
  if (typeof cell === 'object') return 'date' in cell ? cell.date : cell.timestamp;
  if (typeof cell !== 'string') return String(cell);
  return raw ? cell : neutraliseFormula(cell);
}

/** CSV framed for Excel (files/csv.ts) unless plain. */
export class CsvWriter implements ExportWriter {
  readonly usesCells = true;
  readonly textsCut = 0;
  readonly #file: AtomicFile | null;
  readonly #text: CsvText;
  readonly #framing: CsvFraming;
  #deleted: DeletedRecord[] | null = null;

  constructor(
    private readonly target: string | null,
    header: string[],
    private readonly options: { plain: boolean; raw: boolean; stdout?: NodeJS.WritableStream | undefined },
  ) {
    this.#framing = options.plain ? 'plain' : 'excel';
    this.#file = target === null ? null : new AtomicFile(target);
    // The BOM only in a file: a pipe's reader would take it for part of the first column's name.
    this.#text = new CsvText(
      sendTo(this.#file, options.stdout),
      this.#framing,
      csvStart(header, this.#framing, this.#framing === 'excel' && target !== null),
    );
  }

  write(cells: Cell[]): Promise<void> | undefined {
    const raw = this.options.raw;
    const fields = new Array<string>(cells.length);
    for (let i = 0; i < cells.length; i += 1) fields[i] = csvField(csvText(cells[i] as Cell, raw));
    return this.#text.row(fields);
  }

  async deleted(records: DeletedRecord[]): Promise<void> {
    this.#deleted = records;
  }

  async commit(): Promise<string[]> {
    await this.#text.flush();
    // The deleted-ids file always has its BOM unless --plain, even when the export went to standard output.
    const deleted =
      this.#deleted &&
      csvDocument(
        ['id', 'deletedAt'],
        this.#deleted.map((d) => [String(d.id), d.deletedAt]),
        this.#framing,
      );
    return commitWithDeleted(this.#file, this.target, deleted, 'csv');
  }

  async abort(): Promise<void> {
    await this.#file?.abort();
  }
}

/** JSON Lines: each record as the service returned it, one per line. */
export class JsonlWriter implements ExportWriter {
  readonly usesCells = false;
  readonly textsCut = 0;
  readonly #file: AtomicFile | null;
  readonly #text: ChunkedText;
  #deleted: DeletedRecord[] | null = null;

  constructor(
    private readonly target: string | null,
    stdout: NodeJS.WritableStream | undefined,
  ) {
    this.#file = target === null ? null : new AtomicFile(target);
    this.#text = new ChunkedText(sendTo(this.#file, stdout));
  }

  write(_cells: Cell[], record: Body): Promise<void> | undefined {
    return this.#text.add(`${JSON.stringify(record)}\n`);
  }

  async deleted(records: DeletedRecord[]): Promise<void> {
    this.#deleted = records;
  }

  async commit(): Promise<string[]> {
    await this.#text.flush();
    const deleted = this.#deleted && this.#deleted.map((d) => `${JSON.stringify(d)}\n`).join('');
    return commitWithDeleted(this.#file, this.target, deleted, 'jsonl');
  }

  async abort(): Promise<void> {
    await this.#file?.abort();
  }
}
