import { AtomicFile, type AtomicFileOptions } from './atomic-file.ts';
import { ChunkedText } from './chunked-text.ts';
import { neutraliseFormula } from './formula.ts';

const QUOTES = /"/g;

/**
 * RFC 4180: a field is quoted when it holds the delimiter, a quote or a line break; quotes double.
 * The same output as csv-stringify 6 with its defaults (`src/files/csv-stringify-behaviour.test.ts`
 * holds the two together), at a tenth of its cost per field: the export writes every cell with it.
 */
export function csvField(text: string): string {
  // A loop over the characters: a regular expression's test cost a third of a short field's time.
  for (let i = 0; i < text.length; i += 1) {
    const code = text.charCodeAt(i);
    if (code === 0x22 || code === 0x2c || code === 0x0d || code === 0x0a) return `"${text.replace(QUOTES, '""')}"`;
  }
  return text;
}

/**
 * A field of a CSV made for people to open (results, verify's differences, warnings): a text a
 * spreadsheet would run as a formula is made text first, as exports do. The rejects file uses
 * csvField alone: it is fixed and read back, and must hold what the input held.
 */
export function csvFieldForPeople(text: string): string {
  return csvField(neutraliseFormula(text));
}

/**
 * How the lines of a CSV are framed. `excel`: UTF-8 with a byte-order mark (so that Excel does not
 * read it as the local code page) and CRLF line ends, what Excel opens as it is; `plain`: no mark,
 * LF (for programs, and for a pipe, whose reader would take the mark for part of the first name).
 */
export type CsvFraming = 'excel' | 'plain';

/** The line end of a framing. */
export function csvLineEnd(framing: CsvFraming): string {
  return framing === 'excel' ? '\r\n' : '\n';
}

/**
 * The text a CSV begins with: the byte-order mark (excel framing, unless `bom` says otherwise) and
 * the header line, its names quoted as fields.
 */
export function csvStart(header: readonly string[], framing: CsvFraming, bom = framing === 'excel'): string {
  return `${bom ? '\uFEFF' : ''}${header.map(csvField).join(',')}${csvLineEnd(framing)}`;
}

/** A whole CSV in one text: `rows` are fields already quoted (csvField or csvFieldForPeople). */
export function csvDocument(header: readonly string[], rows: Iterable<readonly string[]>, framing: CsvFraming): string {
  const eol = csvLineEnd(framing);
  const lines = [csvStart(header, framing)];
  for (const fields of rows) lines.push(`${fields.join(',')}${eol}`);
  return lines.join('');
}

/**
 * The one CSV writer: lines gathered into pieces and handed to `send` (an AtomicFile, standard
 * output). Each row's fields come quoted already, because what is neutralised differs by file: a
 * rejects file keeps formulas as they were, an export leaves numbers alone.
 */
export class CsvText {
  readonly #text: ChunkedText;
  readonly #eol: string;

  /** `start`: what the text begins with, csvStart's header line unless it is made elsewhere (a pipe's). */
  constructor(send: (text: string) => Promise<void>, framing: CsvFraming, start: string) {
    this.#eol = csvLineEnd(framing);
    this.#text = new ChunkedText(send, start);
  }

  /** Adds a line of quoted fields; a promise when a piece went out and the caller must wait for it. */
  row(fields: readonly string[]): Promise<void> | undefined {
    return this.#text.add(fields.join(',') + this.#eol);
  }

  flush(): Promise<void> {
    return this.#text.flush();
  }
}

/**
 * A CSV file for Excel (excel framing) written atomically: nothing under the real name until
 * `commit()`, no temporary file after `abort()`.
 */
export class CsvFile {
  #count = 0;

  private constructor(
    private readonly file: AtomicFile,
    private readonly text: CsvText,
  ) {}

  /** Opens the temporary file (an unwritable folder fails here, as an EXPORT_WRITE naming `target`). */
  static async open(target: string, header: readonly string[], options: AtomicFileOptions = {}): Promise<CsvFile> {
    const file = await AtomicFile.open(target, options);
    return new CsvFile(file, new CsvText((text) => file.write(text), 'excel', csvStart(header, 'excel')));
  }

  /** Rows added so far. */
  get count(): number {
    return this.#count;
  }

  /** Adds a row of quoted fields. */
  async add(fields: readonly string[]): Promise<void> {
    this.#count += 1;
    await this.text.row(fields);
  }

  /** Writes what is buffered, syncs, and moves the file to its name (replacing a file of an earlier run). */
  async commit(): Promise<void> {
    try {
      await this.text.flush();
    } catch (error) {
      await this.file.abort();
      throw error;
    }
    await this.file.commit();
  }

  /** Drops the temporary file; the target (if any) stays as it was. */
  abort(): Promise<void> {
    return this.file.abort();
  }
}
