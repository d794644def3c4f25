import { createWriteStream, type WriteStream } from 'node:fs';
import { readdir, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { stringify as stringifySync } from 'csv-stringify/sync';
import yazl from 'yazl';
import { FerryError } from '../errors/index.ts';
import { processAlive } from '../util/alive.ts';
import type { Cell } from './columns.ts';

type Body = Record<string, unknown>;

export type ExportFormat = 'csv' | 'xlsx' | 'jsonl';

/** A record deleted in the account since the last export. */
export interface DeletedRecord {
  id: number;
  deletedAt: string;
}

/** Takes the rows of one export and, at the end, commits them to the target or leaves no trace. */
export interface ExportWriter {
  /** `cells` in the chosen columns; `record` as the service returned it (JSON Lines). */
  write(cells: Cell[], record: Body): Promise<void>;
  /** Records deleted since the last export (incremental exports). */
  deleted(records: DeletedRecord[]): Promise<void>;
  /** Finishes the file and moves it to its name. */
  commit(): Promise<string[]>;
  /** Removes what was written; the target, if it exists, stays as it was. */
  abort(): Promise<void>;
}

/** Texts a spreadsheet would take for a formula (OWASP "CSV injection"). */
const FORMULA_START = /^[=+\-@\t\r]/;

export function looksLikeFormula(text: string): boolean {
  return FORMULA_START.test(text);
}

let sequence = 0;

/** Waits until a stream takes more, or fails; no listener is left behind either way. */
function drained(stream: NodeJS.WritableStream): Promise<void> {
  return new Promise((resolve, reject) => {
    const done = (error?: Error): void => {
      stream.off('drain', onDrain);
      stream.off('error', done);
      if (error) reject(error);
      else resolve();
    };
    const onDrain = (): void => done();
    stream.on('drain', onDrain);
    stream.on('error', done);
  });
}

/** A file written under a temporary name beside its target and renamed into place when complete. */
class AtomicFile {
  readonly temp: string;
  readonly stream: WriteStream;
  #failed: Error | null = null;

  constructor(readonly target: string) {
    sequence += 1;
    this.temp = join(dirname(target), `.${basename(target)}.${process.pid}.${sequence}.tmp`);
    this.stream = createWriteStream(this.temp, { flags: 'wx', mode: 0o644 });
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

  async commit(): Promise<void> {
    this.check();
    await new Promise<void>((resolve, reject) => {
      this.stream.once('error', reject);
      this.stream.end(() => resolve());
    }).catch((error: Error) => {
      this.#failed ??= error;
    });
    this.check();
    try {
      await rename(this.temp, this.target);
    } catch (error) {
      await rm(this.temp, { force: true });
      throw new FerryError('EXPORT_WRITE', `cannot move the export to ${this.target}: ${(error as Error).message}`, { location: { file: this.target }, cause: error });
    }
  }

  async abort(): Promise<void> {
    this.stream.destroy();
    await once(this.stream, 'close').catch(() => undefined);
    await rm(this.temp, { force: true });
  }
}

/**
 * Removes the temporary files an export of `target` left when its process was killed (they are
 * named after the target and the process; a live process's file is left alone).
 */
export async function removeStaleTemps(target: string): Promise<void> {
  const prefix = `.${basename(target)}.`;
  const names = await readdir(dirname(target)).catch(() => [] as string[]);
  for (const name of names) {
    const match = name.startsWith(prefix) ? /^(\d+)\.\d+\.tmp$/.exec(name.slice(prefix.length)) : null;
    if (match && !processAlive(Number(match[1]))) await rm(join(dirname(target), name), { force: true });
  }
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
    await side.write(deleted);
    await side.commit();
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

/** Rows turned into CSV text at once: one stringify call and one write per batch, not per row. */
const CSV_BATCH = 500;

/** CSV through csv-stringify: UTF-8 with a BOM and CRLF (what Excel opens as it is) unless plain. */
class CsvWriter implements ExportWriter {
  readonly #file: AtomicFile | null;
  readonly #out: NodeJS.WritableStream;
  #rows: string[][] = [];
  /** The first batch (with the header) starts with the BOM, unless plain or on standard output. */
  #bom: boolean;
  #deleted: DeletedRecord[] | null = null;

  constructor(
    private readonly target: string | null,
    header: string[],
    private readonly options: { plain: boolean; raw: boolean; stdout: NodeJS.WritableStream },
  ) {
    this.#file = target === null ? null : new AtomicFile(target);
    this.#out = this.#file ? this.#file.stream : options.stdout;
    this.#bom = !options.plain && target !== null;
    this.#rows.push(header);
  }

  async #flush(): Promise<void> {
    if (this.#rows.length === 0) return;
    const text = stringifySync(this.#rows, { bom: this.#bom, record_delimiter: this.options.plain ? 'unix' : 'windows' });
    this.#bom = false;
    this.#rows = [];
    if (this.#file) await this.#file.write(text);
    else if (!this.#out.write(text)) await drained(this.#out);
  }

  async write(cells: Cell[]): Promise<void> {
    this.#rows.push(cells.map((c) => csvText(c, this.options.raw)));
    if (this.#rows.length >= CSV_BATCH) await this.#flush();
  }

  async deleted(records: DeletedRecord[]): Promise<void> {
    this.#deleted = records;
  }

  async commit(): Promise<string[]> {
    await this.#flush();
    const bom = this.options.plain ? '' : '\uFEFF';
    const eol = this.options.plain ? '\n' : '\r\n';
    const deleted = this.#deleted && `${bom}id,deletedAt${eol}${this.#deleted.map((d) => `${d.id},${d.deletedAt}${eol}`).join('')}`;
    return commitWithDeleted(this.#file, this.target, deleted, 'csv');
  }

  async abort(): Promise<void> {
    await this.#file?.abort();
  }
}

/** JSON Lines: each record as the service returned it, one per line. */
class JsonlWriter implements ExportWriter {
  readonly #file: AtomicFile | null;
  #deleted: DeletedRecord[] | null = null;

  constructor(
    private readonly target: string | null,
    private readonly stdout: NodeJS.WritableStream,
  ) {
    this.#file = target === null ? null : new AtomicFile(target);
  }

  async write(_cells: Cell[], record: Body): Promise<void> {
    const line = `${JSON.stringify(record)}\n`;
    if (this.#file) await this.#file.write(line);
    else if (!this.stdout.write(line)) await drained(this.stdout);
  }

  async deleted(records: DeletedRecord[]): Promise<void> {
    this.#deleted = records;
  }

  async commit(): Promise<string[]> {
    const deleted = this.#deleted && this.#deleted.map((d) => `${JSON.stringify(d)}\n`).join('');
    return commitWithDeleted(this.#file, this.target, deleted, 'jsonl');
  }

  async abort(): Promise<void> {
    await this.#file?.abort();
  }
}

// ---------------------------------------------------------------------------------------------
// XLSX, written as sheet XML streamed into a zip.

/** Characters XML 1.0 cannot hold at all. */
// eslint-disable-next-line no-control-regex
const NOT_XML = /[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g;

/** Anything xml() changes; most texts have none of it. */
// eslint-disable-next-line no-control-regex
const XML_SPECIAL = /[&<>"\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/;

function xml(text: string): string {
  if (!XML_SPECIAL.test(text)) return text;
  return text.replace(NOT_XML, '').replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;');
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

const STYLES = `<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<styleSheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">
<numFmts count="2"><numFmt numFmtId="164" formatCode="yyyy-mm-dd"/><numFmt numFmtId="165" formatCode="yyyy-mm-dd hh:mm:ss"/></numFmts>
<fonts count="2"><font><sz val="11"/><name val="Calibri"/></font><font><b/><sz val="11"/><name val="Calibri"/></font></fonts>
<fills count="2"><fill><patternFill patternType="none"/></fill><fill><patternFill patternType="gray125"/></fill></fills>
<borders count="1"><border><left/><right/><top/><bottom/><diagonal/></border></borders>
<cellStyleXfs count="1"><xf numFmtId="0" fontId="0" fillId="0" borderId="0"/></cellStyleXfs>
<cellXfs count="5"><xf numFmtId="0" fontId="0" fillId="0" borderId="0" xfId="0"/><xf numFmtId="0" fontId="1" fillId="0" borderId="0" xfId="0" applyFont="1"/><xf numFmtId="164" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="165" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1"/><xf numFmtId="49" fontId="0" fillId="0" borderId="0" xfId="0" applyNumberFormat="1" quotePrefix="1"/></cellXfs>
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

function cellXml(ref: string, cell: Cell, raw: boolean): string {
  if (cell === null) return '';
  if (typeof cell === 'number') return Number.isFinite(cell) ? `<c r="${ref}"><v>${cell}</v></c>` : '';
  if (typeof cell === 'boolean') return `<c r="${ref}" t="b"><v>${cell ? 1 : 0}</v></c>`;
  if (typeof cell === 'object') {
    const ms = 'date' in cell ? Date.parse(`${cell.date}T00:00:00Z`) : Date.parse(cell.timestamp);
    if (Number.isNaN(ms)) return cellXml(ref, 'date' in cell ? cell.date : cell.timestamp, raw);
    return `<c r="${ref}" s="${'date' in cell ? STYLE.date : STYLE.timestamp}"><v>${serial(ms)}</v></c>`;
  }
  // Inline strings are text; a text that looks like a formula also gets the quote-prefix style,
  // so that editing the cell in a spreadsheet does not turn it into one.
  const style = !raw && looksLikeFormula(cell) ? ` s="${STYLE.text}"` : '';
  return `<c r="${ref}" t="inlineStr"${style}><is><t xml:space="preserve">${xml(cell)}</t></is></c>`;
}

/** Rows kept before the sheet starts, to size the columns from what they hold. */
const SAMPLE_ROWS = 200;

class XlsxWriter implements ExportWriter {
  readonly #zip = new yazl.ZipFile();
  readonly #file: AtomicFile;
  readonly #sheet = new PassThrough();
  #sample: Cell[][] | null = [];
  #rows = 1;
  #deleted: DeletedRecord[] | null = null;
  readonly #piped: Promise<void>;

  constructor(
    target: string,
    private readonly header: string[],
    private readonly raw: boolean,
  ) {
    this.#file = new AtomicFile(target);
    this.#zip.outputStream.pipe(this.#file.stream);
    this.#piped = new Promise((resolve, reject) => {
      this.#file.stream.on('close', () => resolve());
      this.#file.stream.on('error', reject);
    });
    this.#zip.addReadStream(this.#sheet, 'xl/worksheets/sheet1.xml');
  }

  #pending = '';

  /** Sheet XML goes to the zip in pieces of about 64 KiB: one stream write per row costs more than the row. */
  async #emit(text: string, flush = false): Promise<void> {
    this.#pending += text;
    if (this.#pending.length < 65_536 && !flush) return;
    this.#file.check();
    const chunk = this.#pending;
    this.#pending = '';
    if (!this.#sheet.write(chunk)) await drained(this.#sheet);
  }

  #rowXml(cells: Cell[], index: number): string {
    return `<row r="${index}">${cells.map((cell, i) => cellXml(`${letters(i)}${index}`, cell, this.raw)).join('')}</row>`;
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
    await this.#emit(
      `${SHEET_OPEN}<sheetViews><sheetView workbookViewId="0"><pane ySplit="1" topLeftCell="A2" activePane="bottomLeft" state="frozen"/></sheetView></sheetViews><sheetFormatPr defaultRowHeight="15"/><cols>${widths
        .map((w, i) => `<col min="${i + 1}" max="${i + 1}" width="${w}" customWidth="1"/>`)
        .join('')}</cols><sheetData><row r="1">${this.header.map((name, i) => `<c r="${letters(i)}1" t="inlineStr" s="${STYLE.header}"><is><t xml:space="preserve">${xml(name)}</t></is></c>`).join('')}</row>`,
    );
    for (const row of sample) {
      this.#rows += 1;
      await this.#emit(this.#rowXml(row, this.#rows));
    }
  }

  async write(cells: Cell[]): Promise<void> {
    if (this.#sample) {
      this.#sample.push(cells);
      if (this.#sample.length >= SAMPLE_ROWS) await this.#start();
      return;
    }
    this.#rows += 1;
    await this.#emit(this.#rowXml(cells, this.#rows));
  }

  async deleted(records: DeletedRecord[]): Promise<void> {
    this.#deleted = records;
  }

  async commit(): Promise<string[]> {
    if (this.#sample) await this.#start();
    const last = `${letters(Math.max(0, this.header.length - 1))}${this.#rows}`;
    await this.#emit(`</sheetData><autoFilter ref="A1:${last}"/></worksheet>`, true);
    this.#sheet.end();
    const sheets = ['Export'];
    if (this.#deleted !== null) {
      sheets.push('Deleted');
      const rows = this.#deleted.map((d, i) => `<row r="${i + 2}"><c r="A${i + 2}"><v>${d.id}</v></c>${cellXml(`B${i + 2}`, { timestamp: d.deletedAt }, true)}</row>`).join('');
      this.#zip.addBuffer(
        Buffer.from(`${SHEET_OPEN}<sheetViews><sheetView workbookViewId="0"/></sheetViews><cols><col min="1" max="2" width="22" customWidth="1"/></cols><sheetData><row r="1"><c r="A1" t="inlineStr" s="${STYLE.header}"><is><t>id</t></is></c><c r="B1" t="inlineStr" s="${STYLE.header}"><is><t>deletedAt</t></is></c></row>${rows}</sheetData></worksheet>`),
        'xl/worksheets/sheet2.xml',
      );
    }
    const filterRange = `'Export'!$A$1:$${letters(Math.max(0, this.header.length - 1))}$${this.#rows}`;
    this.#zip.addBuffer(Buffer.from(workbookXml(sheets, filterRange)), 'xl/workbook.xml');
    this.#zip.addBuffer(Buffer.from(workbookRels(sheets.length)), 'xl/_rels/workbook.xml.rels');
    this.#zip.addBuffer(Buffer.from(STYLES), 'xl/styles.xml');
    this.#zip.addBuffer(Buffer.from(contentTypes(sheets.length)), '[Content_Types].xml');
    this.#zip.addBuffer(Buffer.from(ROOT_RELS), '_rels/.rels');
    this.#zip.end();
    await this.#piped;
    // The stream has closed: AtomicFile.commit only renames.
    this.#file.check();
    await rename(this.#file.temp, this.#file.target).catch(async (error: Error) => {
      await rm(this.#file.temp, { force: true });
      throw new FerryError('EXPORT_WRITE', `cannot move the export to ${this.#file.target}: ${error.message}`, { location: { file: this.#file.target }, cause: error });
    });
    return [this.#file.target];
  }

  async abort(): Promise<void> {
    this.#sheet.destroy();
    await this.#file.abort();
  }
}

/** The writer for a format; `target` null writes to standard output (CSV and JSON Lines only). */
export function openWriter(format: ExportFormat, target: string | null, header: string[], options: { plain: boolean; raw: boolean; stdout: NodeJS.WritableStream }): ExportWriter {
  if (format === 'jsonl') return new JsonlWriter(target, options.stdout);
  if (format === 'csv') return new CsvWriter(target, header, options);
  if (target === null) throw new FerryError('USAGE', 'XLSX cannot go to standard output; give --out FILE.xlsx');
  return new XlsxWriter(target, header, options.raw);
}
