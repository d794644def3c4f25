import { createWriteStream, type WriteStream } from 'node:fs';
import { access, constants, lstat, readdir, readlink, realpath, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { FerryError } from '../errors/index.ts';
import { csvField } from '../mapping/rejects.ts';
import { processAlive } from '../util/alive.ts';
import { checkNotSpecial } from '../util/make-folders.ts';
import type { Cell } from './columns.ts';
import { drained, ZipWriter, type ZipEntrySink } from './zip.ts';

type Body = Record<string, unknown>;

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
const FORMULA_START = /^[=+\-@\t\r\uFF1D\uFF0B\uFF0D\uFF20]/;

export function looksLikeFormula(text: string): boolean {
  return FORMULA_START.test(text);
}

let sequence = 0;

/**
 * How much a file stream holds before the writer waits for the disk. Node's 16 KiB made every 64 KiB
 * piece wait for its write to finish, so that building rows and writing them took turns.
 */
const FILE_BUFFER = 1 << 20;

/** A file written under a temporary name beside its target and renamed into place when complete. */
class AtomicFile {
  readonly temp: string;
  readonly stream: WriteStream;
  #failed: Error | null = null;

  constructor(readonly target: string) {
    sequence += 1;
    this.temp = join(dirname(target), `.${basename(target)}.${process.pid}.${sequence}.tmp`);
    this.stream = createWriteStream(this.temp, { flags: 'wx', mode: 0o644, highWaterMark: FILE_BUFFER });
    this.stream.on('error', (error) => (this.#failed ??= error));
  }

  check(): void {
    if (this.#failed) throw new FerryError('EXPORT_WRITE', `cannot write ${this.target}: ${this.#failed.message}`, { location: { file: this.target }, cause: this.#failed });
  }

  async write(text: string | Buffer): Promise<void> {
    this.check();
    if (!this.stream.write(text)) await drained(this.stream).catch(() => undefined);
    this.check();
  }

  /** Finishes the file and renames it onto its target; when that fails, the temporary file is removed. */
  async commit(): Promise<void> {
    try {
      this.check();
      // end()'s callback comes before the 'error' event of a write that failed (a full disk):
      // finished() waits for either.
      this.stream.end();
      await finished(this.stream).catch((error: Error) => {
        this.#failed ??= error;
      });
      this.check();
      await rename(this.temp, this.target).catch((error: Error) => {
        throw new FerryError('EXPORT_WRITE', `cannot move the export to ${this.target}: ${error.message}`, { location: { file: this.target }, cause: error });
      });
    } catch (error) {
      await this.abort();
      throw error;
    }
  }

  async abort(): Promise<void> {
    // A stream that failed to open or write has closed already: waiting for its 'close' would wait
    // for ever (node then exits with 13 and no word).
    if (!this.stream.closed) {
      const closed = once(this.stream, 'close').catch(() => undefined);
      this.stream.destroy();
      await closed;
    }
    await rm(this.temp, { force: true });
  }
}

/** `.NAME.PID.N.tmp`, the temporary name of an AtomicFile: the process that wrote it is in it. */
const TEMP_NAME = /^\..+\.(\d+)\.\d+\.tmp$/;

/**
 * Removes the temporary files that exports into `folder` left when their process was killed
 * (`kill -9`, a power cut): whatever the file they were writing, as the next export may be of
 * another name. A file of a process still running is left alone.
 */
export async function removeStaleTemps(folder: string): Promise<void> {
  const names = await readdir(folder).catch(() => [] as string[]);
  for (const name of names) {
    const match = TEMP_NAME.exec(name);
    if (match && !processAlive(Number(match[1]))) await rm(join(folder, name), { force: true });
  }
}

/**
 * Refuses, before any request, a place the export could never put its file: a folder that does
 * not exist or cannot be written, or a target that is a folder, a device or a link into /dev,
 * /proc or /sys (the file is renamed onto its target, which would replace /dev/full or /dev/stdout with a
 * plain file). A link to a file is followed: the file it names is replaced and the link stays.
 * Returns the path to write.
 */
export async function checkTarget(target: string, what = '--out'): Promise<string> {
  const hint = `Give ${what} the path of a file in a folder you can write.`;
  const special = (): never => {
    throw new FerryError('USAGE', `cannot write ${target}: it is not a regular file (a device, a pipe, a socket or a link to one)`, {
      location: { file: target },
      hint: what === '--out' ? `${hint} For standard output, give --out -.` : hint,
    });
  };
  let path = target;
  // A file in /dev, /proc or /sys (or a link in, or into, them) is no file to replace.
  checkNotSpecial(target, what, special);
  const link = await lstat(target).catch(() => null);
  if (link?.isSymbolicLink()) {
    checkNotSpecial(resolve(dirname(target), await readlink(target)), what, special);
    path = await realpath(target).catch(() => special());
  }
  const folder = dirname(path);
  const folderStat = await stat(folder).catch(() => null);
  if (!folderStat?.isDirectory()) throw new FerryError('USAGE', `cannot write ${target}: the folder ${folder} does not exist`, { location: { file: target }, hint });
  const existing = await stat(path).catch(() => null);
  if (existing?.isDirectory()) throw new FerryError('USAGE', `cannot write ${target}: it is a folder`, { location: { file: target }, hint });
  if (existing && !existing.isFile()) special();
  try {
    await access(folder, constants.W_OK);
  } catch (error) {
    throw new FerryError('EXPORT_WRITE', `cannot write ${target}: the folder ${folder} is not writable (${(error as NodeJS.ErrnoException).code ?? (error as Error).message})`, { location: { file: target }, hint, cause: error });
  }
  return path;
}

/** `out.csv` -> `out.deleted.csv` */
export function deletedFileOf(target: string, extension: string): string {
  const base = basename(target);
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  return join(dirname(target), `${stem}.deleted.${extension}`);
}

/** Commits the export's file, then the ids deleted since the last export beside it, when there are any to say. */
async function commitWithDeleted(file: AtomicFile | null, target: string | null, deleted: string | null, extension: string): Promise<string[]> {
  const files: string[] = [];
  if (file) {
    await file.commit();
    files.push(file.target);
  }
  if (deleted !== null && target !== null) {
    const side = new AtomicFile(deletedFileOf(target, extension));
    try {
      await side.write(deleted);
      await side.commit();
    } catch (error) {
      // The export's file is in place by now; the deleted ids leave no half-written file beside it.
      await side.abort();
      throw error;
    }
    files.push(side.target);
  }
  return files;
}

function csvText(cell: Cell, raw: boolean): string {
  if (cell === null) return '';
  if (typeof cell === 'object') return 'date' in cell ? cell.date : cell.timestamp;
  if (typeof cell !== 'string') return String(cell);
  // A leading apostrophe makes a spreadsheet take the cell as text, never as a formula.
  return !raw && looksLikeFormula(cell) ? `'${cell}` : cell;
}

/** Text is handed to the file in pieces of about this many characters: a write per row costs more than the row. */
const TEXT_CHUNK = 65_536;

/** Text gathered into pieces of about TEXT_CHUNK characters before it is handed to `send`. */
class ChunkedText {
  #pending: string;

  /** `start`: the text the output begins with (a header). */
  constructor(
    private readonly send: (text: string) => Promise<void>,
    start = '',
  ) {
    this.#pending = start;
  }

  /** Adds text; a promise when a piece went out and the caller must wait for it. */
  add(text: string): Promise<void> | undefined {
    this.#pending += text;
    return this.#pending.length >= TEXT_CHUNK ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (this.#pending === '') return;
    const text = this.#pending;
    this.#pending = '';
    await this.send(text);
  }
}

/** Where the text of a CSV or JSON Lines export goes: a file written atomically, or standard output. */
function sendTo(file: AtomicFile | null, stdout: NodeJS.WritableStream): (text: string) => Promise<void> {
  if (file) return (text) => file.write(text);
  return async (text) => {
    if (!stdout.write(text)) await drained(stdout);
  };
}

/** CSV in UTF-8 with a BOM and CRLF (what Excel opens as it is) unless plain. */
class CsvWriter implements ExportWriter {
  readonly usesCells = true;
  readonly textsCut = 0;
  readonly #file: AtomicFile | null;
  readonly #text: ChunkedText;
  readonly #eol: string;
  #deleted: DeletedRecord[] | null = null;

  constructor(
    private readonly target: string | null,
    header: string[],
    private readonly options: { plain: boolean; raw: boolean; stdout: NodeJS.WritableStream },
  ) {
    this.#eol = options.plain ? '\n' : '\r\n';
    // The BOM only in a file: a pipe's reader would take it for part of the first column's name.
    const bom = !options.plain && target !== null ? '\uFEFF' : '';
    this.#file = target === null ? null : new AtomicFile(target);
    this.#text = new ChunkedText(sendTo(this.#file, options.stdout), `${bom}${header.map(csvField).join(',')}${this.#eol}`);
  }

  write(cells: Cell[]): Promise<void> | undefined {
    const raw = this.options.raw;
    let line = '';
    for (let i = 0; i < cells.length; i += 1) {
      const text = csvField(csvText(cells[i] as Cell, raw));
      line = i === 0 ? text : `${line},${text}`;
    }
    return this.#text.add(line + this.#eol);
  }

  async deleted(records: DeletedRecord[]): Promise<void> {
    this.#deleted = records;
  }

  async commit(): Promise<string[]> {
    await this.#text.flush();
    // The deleted-ids file always has its BOM unless --plain, even when the export went to standard output.
    const bom = this.options.plain ? '' : '\uFEFF';
    const eol = this.#eol;
    const deleted = this.#deleted && `${bom}id,deletedAt${eol}${this.#deleted.map((d) => `${d.id},${d.deletedAt}${eol}`).join('')}`;
    return commitWithDeleted(this.#file, this.target, deleted, 'csv');
  }

  async abort(): Promise<void> {
    await this.#file?.abort();
  }
}

/** JSON Lines: each record as the service returned it, one per line. */
class JsonlWriter implements ExportWriter {
  readonly usesCells = false;
  readonly textsCut = 0;
  readonly #file: AtomicFile | null;
  readonly #text: ChunkedText;
  #deleted: DeletedRecord[] | null = null;

  constructor(
    private readonly target: string | null,
    stdout: NodeJS.WritableStream,
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

// ---------------------------------------------------------------------------------------------
// XLSX, written as sheet XML streamed into a zip.

/**
 * What a cell's XML cannot carry as it is: characters XML 1.0 forbids (control characters, lone
 * surrogates, U+FFFE/U+FFFF), a carriage return (XML reads it as a line feed), and a literal
 * `_xHHHH_`, which Excel and our own reader take for an escaped character. Each is written as
 * Excel writes it: `_xHHHH_`, and `_x005F_` for the underscore of a literal one. Dropping them
 * lost the characters, and a text holding `_x0041_` came back as `A`.
 */
// eslint-disable-next-line no-control-regex
const OOXML_ESCAPE = /_(?=x[0-9A-Fa-f]{4}_)|[\u0000-\u0008\u000B-\u001F\uFFFE\uFFFF]|[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Anything xml() changes; most texts have none of it. Two tests, the second only for a text
 * holding `_x`: one pattern with both took 25 ns a text more, half a microsecond a row.
 */
// eslint-disable-next-line no-control-regex
const XML_SPECIAL = /[&<>"\u0000-\u0008\u000B-\u001F\uD800-\uDFFF\uFFFE\uFFFF]/;
const OOXML_LITERAL = /_x[0-9A-Fa-f]{4}_/;

function ooxmlEscape(match: string): string {
  return `_x${(match === '_' ? 0x5f : match.charCodeAt(0)).toString(16).toUpperCase().padStart(4, '0')}_`;
}

function xml(text: string): string {
  if (!XML_SPECIAL.test(text) && !(text.includes('_x') && OOXML_LITERAL.test(text))) return text;
  return text.replace(OOXML_ESCAPE, ooxmlEscape).replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
}

/** Column letters: 0 -> A, 26 -> AA. */
function letters(index: number): string {
  let n = index + 1;
  let out = '';
  while (n > 0) {
    const rem = (n - 1) % 26;
    out = String.fromCharCode(65 + rem) + out;
    n = Math.floor((n - 1) / 26);
  }
  return out;
}

const DAY_MS = 86_400_000;
/** Days between the spreadsheet epoch (1899-12-30) and 1970-01-01. */
const EPOCH_OFFSET = 25569;

function serial(ms: number): number {
  return ms / DAY_MS + EPOCH_OFFSET;
}

/** Style indexes in styles.xml below. */
const STYLE = { header: 1, date: 2, timestamp: 3, text: 4 } as const;

/**
 * The styles part as Excel writes it for a new workbook (fonts, fills, borders, the one cell style
 * "Normal" with builtinId 0 over cellStyleXfs 0, empty dxfs and tableStyles), plus the formats
 * above. Without the "Normal" cell style openpyxl warns "Workbook contains no default style" and
 * other readers guess. No theme part is written, so fonts name their family instead of a scheme.
 */
const STYLES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">
<numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/><numFmt numFmtId="165" formatCode="yyyy-mm-dd hh:mm:ss"/></numFmts>
<fonts count="2"><font><sz val="11"/><name val="Calibri"/><family val="2"/></font><font><b/><sz val="11"/><name val="Calibri"/><family val="2"/></font></fonts>
<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>
<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>
<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>
<cellXfs count="5"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" quotePrefix="1"/></cellXfs>
<cellStyles count="1"><cellStyle name="Normal" xfId="0" builtinId="0"/></cellStyles>
<dxfs count="0"/>
<tableStyles count="0" defaultTableStyle="TableStyleMedium2" defaultPivotStyle="PivotStyleLight16"/>
</styleSheet>`;

/** The workbook: its sheets, and the range of the first sheet's auto-filter. */
function workbookXml(sheets: string[], filterRange: string): string {
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets>${sheets
    .map((name, i) => `<sheet name="${xml(name)}" sheetId="${i + 1}" r:id="rId${i + 1}"/>`)
    .join('')}</sheets><definedNames><definedName name="_xlnm._FilterDatabase" localSheetId="0" hidden="1">${xml(filterRange)}</definedName></definedNames></workbook>`;
}

function workbookRels(count: number): string {
  const sheets = Array.from({ length: count }, (_, i) => `<Relationship Id="rId${i + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet${i + 1}.xml"/>`).join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">${sheets}<Relationship Id="rId${count + 1}" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/styles" Target="styles.xml"/></Relationships>`;
}

function contentTypes(count: number): string {
  const sheets = Array.from({ length: count }, (_, i) => `<Override PartName="/xl/worksheets/sheet${i + 1}.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>`).join('');
  return `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/><Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/><Override PartName="/xl/styles.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.styles+xml"/>${sheets}</Types>`;
}

const ROOT_RELS = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>`;

const SHEET_OPEN = '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships">';

/** A date cell's value: days since the spreadsheet epoch, as a number. */
function dateSerial(cell: { date: string } | { timestamp: string }): number {
  return serial('date' in cell ? Date.parse(`${cell.date}T00:00:00Z`) : Date.parse(cell.timestamp));
}

function cellXml(ref: string, cell: Cell, raw: boolean): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return Number.isFinite(cell) ? `<c r="${ref}"><v>${cell}</v></c>` : '';
  if (typeof cell === 'boolean') return `<c r="${ref}" t="b"><v>${cell ? 1 : 0}</v></c>`;
  if (typeof cell === 'object') {
    const value = dateSerial(cell);
    if (Number.isNaN(value)) return cellXml(ref, 'date' in cell ? cell.date : cell.timestamp, raw);
    return `<c r="${ref}" s="${'date' in cell ? STYLE.date : STYLE.timestamp}"><v>${value}</v></c>`;
  }
  // Inline strings are text; a text that looks like a formula also gets the quote-prefix style,
  // so that editing the cell in a spreadsheet does not turn it into one.
  const style = !raw && looksLikeFormula(cell) ? ` s="${STYLE.text}"` : '';
  return `<c r="${ref}" t="inlineStr"${style}><is><t xml:space="preserve">${xml(cell)}</t></is></c>`;
}

/**
 * The most characters a spreadsheet cell holds (Excel counts UTF-16 units). A longer text makes
 * Excel call the file damaged and offer to repair it; the writer cuts it there and counts it.
 */
export const XLSX_MAX_TEXT = 32_767;

/** A text cut to what a cell holds, never half of a surrogate pair. */
function cutText(text: string): string {
  const code = text.charCodeAt(XLSX_MAX_TEXT - 1);
  return text.slice(0, code >= 0xd800 && code <= 0xdbff ? XLSX_MAX_TEXT - 1 : XLSX_MAX_TEXT);
}

/** Rows kept before the sheet starts, to size the columns from what they hold. */
const SAMPLE_ROWS = 200;

/** The most rows a spreadsheet program shows in one sheet, the header included. */
export const XLSX_MAX_ROWS = 1_048_576;

class XlsxWriter implements ExportWriter {
  readonly usesCells = true;
  readonly #file: AtomicFile;
  readonly #zip: ZipWriter;
  /** The columns' letters, worked out once. */
  readonly #letters: string[];
  #sheet: ZipEntrySink | null = null;
  /** Sheet XML goes to the zip in pieces: one write per row costs more than the row. */
  readonly #text = new ChunkedText(async (chunk) => {
    this.#file.check();
    await this.#sheet?.write(chunk).catch((error: unknown) => this.#failed(error));
    this.#file.check();
  });
  #sample: Cell[][] | null = [];
  #rows = 1;
  #deleted: DeletedRecord[] | null = null;
  #cut = 0;

  get textsCut(): number {
    return this.#cut;
  }

  constructor(
    target: string,
    private readonly header: string[],
    private readonly raw: boolean,
    modified: Date,
    private readonly maxRows: number,
  ) {
    this.#letters = header.map((_, i) => letters(i));
    this.#file = new AtomicFile(target);
    this.#zip = new ZipWriter(this.#file.stream, modified);
  }

  /** The file's own error (a full disk) says more than the zip's "closed before it took everything". */
  #failed(error: unknown): never {
    this.#file.check();
    throw error;
  }

  #rowXml(cells: Cell[], index: number): string {
    let out = `<row r="${index}">`;
    for (let i = 0; i < cells.length; i += 1) {
      let cell = cells[i] as Cell;
      if (typeof cell === 'string' && cell.length > XLSX_MAX_TEXT) {
        cell = cutText(cell);
        this.#cut += 1;
      }
      if (cell !== null) out += cellXml(`${this.#letters[i] ?? letters(i)}${index}`, cell, this.raw);
    }
    return `${out}</row>`;
  }

  /** Widths from the header and the sampled rows, within reason. */
  async #start(): Promise<void> {
    const sample = this.#sample ?? [];
    this.#sample = null;
    const widths = this.header.map((name, i) => {
      let width = name.length + 2;
      for (const row of sample) {
        const cell = row[i];
        const length = cell === null || cell === undefined ? 0 : typeof cell === 'object' ? ('date' in cell ? 10 : 19) : String(cell).length;
        width = Math.max(width, Math.min(length, 60) + 2);
      }
      return Math.min(width, 62);
    });
    this.#sheet = await this.#zip.addStream('xl/worksheets/sheet1.xml');
    await this.#text.add(
      `${SHEET_OPEN}<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetFormatPr defaultRowHeight="15"/><cols>${widths
        .map((w, i) => `<col min="${i + 1}" max="${i + 1}" width="${w}" customWidth="1"/>`)
        .join('')}</cols><sheetData><row r="1">${this.header.map((name, i) => `<c r="${letters(i)}1" t="inlineStr" s="${STYLE.header}"><is><t xml:space="preserve">${xml(name)}</t></is></c>`).join('')}</row>`,
    );
    for (const row of sample) {
      this.#rows += 1;
      await this.#text.add(this.#rowXml(row, this.#rows));
    }
  }

  write(cells: Cell[]): Promise<void> | undefined {
    if (this.#sample) {
      this.#sample.push(cells);
      return this.#sample.length >= SAMPLE_ROWS ? this.#start() : undefined;
    }
    if (this.#rows >= this.maxRows) {
      throw new FerryError('EXPORT_WRITE', `an XLSX sheet holds at most ${this.maxRows.toLocaleString('en-GB')} rows (the header included), and this export has more records`, {
        location: { file: this.#file.target },
        hint: 'Export to CSV or JSON Lines, or narrow the export with --where.',
      });
    }
    this.#rows += 1;
    return this.#text.add(this.#rowXml(cells, this.#rows));
  }

  async deleted(records: DeletedRecord[]): Promise<void> {
    this.#deleted = records;
  }

  async commit(): Promise<string[]> {
    try {
      return await this.#commit();
    } catch (error) {
      this.#failed(error);
    }
  }

  async #commit(): Promise<string[]> {
    if (this.#sample) await this.#start();
    const last = `${letters(Math.max(0, this.header.length - 1))}${this.#rows}`;
    await this.#text.add(`</sheetData><autoFilter ref="A1:${last}"/></worksheet>`);
    await this.#text.flush();
    await this.#sheet?.end();
    const sheets = ['Export'];
    if (this.#deleted !== null) {
      sheets.push('Deleted');
      const rows = this.#deleted.map((d, i) => `<row r="${i + 2}"><c r="A${i + 2}"><v>${d.id}</v></c>${cellXml(`B${i + 2}`, { timestamp: d.deletedAt }, true)}</row>`).join('');
      await this.#zip.addBuffer(
        'xl/worksheets/sheet2.xml',
        Buffer.from(`${SHEET_OPEN}<sheetViews><sheetView workbookViewId="0"/></sheetViews><cols><col min="1" max="2" width="22" customWidth="1"/></cols><sheetData><row r="1"><c r="A1" t="inlineStr" s="${STYLE.header}"><is><t>id</t></is></c><c r="B1" t="inlineStr" s="${STYLE.header}"><is><t>deletedAt</t></is></c></row>${rows}</sheetData></worksheet>`),
      );
    }
    const filterRange = `'Export'!$A$1:$${letters(Math.max(0, this.header.length - 1))}$${this.#rows}`;
    await this.#zip.addBuffer('xl/workbook.xml', Buffer.from(workbookXml(sheets, filterRange)));
    await this.#zip.addBuffer('xl/_rels/workbook.xml.rels', Buffer.from(workbookRels(sheets.length)));
    await this.#zip.addBuffer('xl/styles.xml', Buffer.from(STYLES));
    await this.#zip.addBuffer('[Content_Types].xml', Buffer.from(contentTypes(sheets.length)));
    await this.#zip.addBuffer('_rels/.rels', Buffer.from(ROOT_RELS));
    await this.#zip.finish();
    await this.#file.commit();
    return [this.#file.target];
  }

  async abort(): Promise<void> {
    this.#sheet?.destroy();
    await this.#file.abort();
  }
}

/** The writer for a format; `target` null writes to standard output (CSV and JSON Lines only). */
export function openWriter(format: ExportFormat, target: string | null, header: string[], options: { plain: boolean; raw: boolean; stdout: NodeJS.WritableStream; now?: () => Date; /** @default XLSX_MAX_ROWS */ xlsxMaxRows?: number }): ExportWriter {
  if (format === 'jsonl') return new JsonlWriter(target, options.stdout);
  if (format === 'csv') return new CsvWriter(target, header, options);
  if (target === null) throw new FerryError('USAGE', 'XLSX cannot go to standard output; give --out FILE.xlsx');
  return new XlsxWriter(target, header, options.raw, options.now?.() ?? new Date(), options.xlsxMaxRows ?? XLSX_MAX_ROWS);
}
