/**
 * The CSV state machine. It works on decoded text fed in chunks and hands out whole records with
 * the physical lines they span, so that the reader above it can number rows, check column counts
 * and turn problems into row errors.
 *
 * csv-parse 6 is not used for this stage because its record-skipping mode loses data: a record over
 * `max_record_size` makes it drop the rest of the chunk (and replay stale input), a bad closing quote
 * leaves it inside the quoted field so the following rows are swallowed into the error, and CRLF
 * inside a quoted field is counted as two lines. The tests in csv-parse-behaviour.test.ts pin that
 * down; this tokenizer recovers at record boundaries instead.
 */

const QUOTE = 34;
const LF = 10;
const CR = 13;

const FIELD_START = 0;
const UNQUOTED = 1;
const QUOTED = 2;
/** Just read a quote inside a quoted field: it is either an escaped quote or the closing one. */
const QUOTE_IN_QUOTED = 3;
/** Just ended a record on CR: a following LF belongs to the same line break. */
const AFTER_CR = 4;

export type RecordProblemCode = 'SOURCE_MALFORMED_RECORD' | 'SOURCE_FIELD_TOO_LARGE';

export interface RecordProblem {
  code: RecordProblemCode;
  message: string;
  /** Physical line where the problem was seen. */
  line: number;
  /** 1-based position of the field the problem is in. */
  field: number;
}

export interface TokenizedRecord {
  fields: string[];
  /** Physical line the record starts on (1-based). */
  startLine: number;
  /** Physical line the record ends on; larger than startLine when a quoted field holds line breaks. */
  endLine: number;
  /** The record's text without its line break; cut short when the record was too large to keep. */
  raw: string;
  /** True when the record is an empty line (no delimiter, no quotes). */
  blank: boolean;
  problem?: RecordProblem;
}

export interface TokenizerOptions {
  /** One character. */
  delimiter: string;
  /** Largest field, in characters, kept in memory. */
  maxFieldSize: number;
  /** Largest record, in characters; guards memory on files with no line breaks at all. */
  maxRecordSize: number;
}

export type RecordSink = (record: TokenizedRecord) => void;

/**
 * Incremental CSV tokenizer (RFC 4180 quoting, any of CRLF, LF or CR as line break). Quotes that
 * appear inside an unquoted field are kept as text, like spreadsheet programs do.
 */
export class CsvTokenizer {
  private readonly delimiter: number;
  private readonly maxFieldSize: number;
  private readonly maxRecordSize: number;

  private state = FIELD_START;
  private line = 1;
  private fields: string[] = [];
  private field = '';
  private recordStartLine = 1;
  private recordLength = 0;
  /** Raw text of the current record from earlier chunks. */
  private rawHead = '';
  private rawStart = 0;
  private quotedSeen = false;
  /** Set once the record is too large: its text is no longer kept, only its structure followed. */
  private dropping = false;
  private problem: RecordProblem | undefined;
  /** Inside a quoted field, whether the last character counted was CR (so an LF after it is the same break). */
  private lastWasCr = false;
  /** Where the quote that is still open was opened, for the unclosed-quote error and its recovery. */
  private quoteOpenLine = 0;
  private quoteOpenRawOffset = 0;

  constructor(options: TokenizerOptions) {
    if (options.delimiter.length !== 1) throw new Error('CsvTokenizer: the delimiter must be one character');
    this.delimiter = options.delimiter.charCodeAt(0);
    this.maxFieldSize = options.maxFieldSize;
    this.maxRecordSize = options.maxRecordSize;
  }

  /** The physical line reading has reached. */
  get currentLine(): number {
    return this.line;
  }

  /** Feeds the next piece of text; complete records go to `sink` in order. */
  push(text: string, sink: RecordSink): void {
    // A recovery hands back text to read again; a loop, not recursion, so many stray quotes cannot overflow the stack.
    let pending: string | undefined = text;
    while (pending !== undefined) pending = this.scan(pending, sink);
  }

  /** Reads `text` to its end, or up to a recovery, and then returns the text to read again. */
  private scan(text: string, sink: RecordSink): string | undefined {
    const n = text.length;
    const delimiter = this.delimiter;
    let i = 0;
    this.rawStart = 0;
    while (i < n) {
      switch (this.state) {
        case AFTER_CR: {
          if (text.charCodeAt(i) === LF) i++;
          this.state = FIELD_START;
          this.rawStart = i;
          break;
        }
        case FIELD_START: {
          if (text.charCodeAt(i) === QUOTE) {
            this.state = QUOTED;
            this.quotedSeen = true;
            this.lastWasCr = false;
            this.quoteOpenLine = this.line;
            this.quoteOpenRawOffset = this.rawHead.length + (i + 1 - this.rawStart);
            i++;
          } else {
            this.state = UNQUOTED;
          }
          break;
        }
        case UNQUOTED: {
          let j = i;
          let c = 0;
          // The hot loop: most fields are short and unquoted.
          while (j < n) {
            c = text.charCodeAt(j);
            if (c === delimiter || c === LF || c === CR) break;
            j++;
          }
          if (j > i) this.append(text, i, j);
          i = j;
          if (j === n) break;
          i++;
          if (c === delimiter) {
            this.endField();
            this.state = FIELD_START;
          } else {
            this.endRecord(text, j, sink);
            this.line++;
            this.state = c === CR ? AFTER_CR : FIELD_START;
            this.rawStart = i;
          }
          break;
        }
        case QUOTED: {
          const j = text.indexOf('"', i);
          const end = j === -1 ? n : j;
          if (end > i) {
            this.countLines(text, i, end);
            this.append(text, i, end);
          }
          if (j === -1) {
            i = n;
          } else {
            i = j + 1;
            this.state = QUOTE_IN_QUOTED;
          }
          break;
        }
        case QUOTE_IN_QUOTED: {
          const c = text.charCodeAt(i);
          this.lastWasCr = false;
          if (c === QUOTE) {
            this.append(text, i, i + 1);
            this.state = QUOTED;
            i++;
          } else if (c === delimiter) {
            i++;
            this.endField();
            this.state = FIELD_START;
          } else if (c === LF || c === CR) {
            this.endRecord(text, i, sink);
            i++;
            this.line++;
            this.state = c === CR ? AFTER_CR : FIELD_START;
            this.rawStart = i;
          } else {
            if (!this.dropping && this.quoteOpenLine < this.line) {
              // The quoted field ran over line breaks before this bad closing quote: most likely a
              // stray opening quote. Reject the line it opened on and read the lines after it again.
              const headLength = this.rawHead.length;
              const rawStart = this.rawStart;
              const raw = this.rawHead + text.slice(rawStart, i);
              const breakAt = findLineBreak(raw, this.quoteOpenRawOffset);
              if (breakAt !== -1) {
                const field = this.fields.length + 1;
                const restAt = this.rejectFirstLine(
                  raw,
                  breakAt,
                  `a quote opened in field ${field} on line ${this.quoteOpenLine} is not closed before line ${this.line}; the record is rejected and the lines after it are read again without that quote`,
                  sink,
                );
                // A slice of the chunk costs nothing; gluing strings would make a run of stray quotes quadratic.
                return restAt >= headLength
                  ? text.slice(rawStart + restAt - headLength)
                  : raw.slice(restAt) + text.slice(i);
              }
            }
            // `"abc"def`: keep the text as it stands and report the record, but stay outside the
            // quotes, so the next line break still ends the record and later rows are not swallowed.
            this.setProblem({
              code: 'SOURCE_MALFORMED_RECORD',
              message: `a closing quote in field ${this.fields.length + 1} is followed by ${JSON.stringify(text[i])} instead of a delimiter or a line break`,
              line: this.line,
              field: this.fields.length + 1,
            });
            if (!this.dropping) this.field += '"';
            this.state = UNQUOTED;
          }
          break;
        }
      }
    }
    if (!this.dropping && this.rawStart < n) this.rawHead += text.slice(this.rawStart, n);
    return undefined;
  }

  /**
   * Ends the current record as an error covering only its text up to `breakAt` (the end of the line
   * the open quote is on) and resets. Returns where in `raw` the text to read again starts.
   */
  private rejectFirstLine(raw: string, breakAt: number, message: string, sink: RecordSink): number {
    const openLine = this.quoteOpenLine;
    this.setProblem({ code: 'SOURCE_MALFORMED_RECORD', message, line: openLine, field: this.fields.length + 1 });
    const breakLength = raw.charCodeAt(breakAt) === CR && raw.charCodeAt(breakAt + 1) === LF ? 2 : 1;
    this.rawHead = raw.slice(0, breakAt);
    this.line = openLine;
    this.endRecord('', 0, sink);
    this.reset(openLine + 1);
    return breakAt + breakLength;
  }

  /**
   * Ends the input. A quote still open at the end is reported as an error for the record it opened
   * in; the lines after that one are read again as records, so one stray quote costs one row.
   */
  finish(sink: RecordSink): void {
    for (;;) {
      if (this.state === QUOTE_IN_QUOTED) {
        // A closing quote as the very last character.
        this.endRecord('', 0, sink);
        return;
      }
      if (this.state !== QUOTED) {
        if (this.state === UNQUOTED || this.fields.length > 0) this.endRecord('', 0, sink);
        return;
      }
      const raw = this.rawHead;
      const openLine = this.quoteOpenLine;
      const lastLine = this.line;
      const breakAt = this.dropping ? -1 : findLineBreak(raw, this.quoteOpenRawOffset);
      const field = this.fields.length + 1;
      if (breakAt === -1) {
        const span = openLine === lastLine ? `line ${openLine}` : `lines ${openLine}-${lastLine}`;
        this.setProblem({
          code: 'SOURCE_MALFORMED_RECORD',
          message: `a quote opened in field ${field} on line ${openLine} is never closed; ${span} could not be read`,
          line: openLine,
          field,
        });
        this.endRecord('', 0, sink);
        return;
      }
      const restAt = this.rejectFirstLine(
        raw,
        breakAt,
        `a quote opened in field ${field} on line ${openLine} is never closed; the record is rejected and the lines after it are read again without that quote`,
        sink,
      );
      this.push(raw.slice(restAt), sink);
    }
  }

  private reset(line: number): void {
    this.state = FIELD_START;
    this.line = line;
    this.recordStartLine = line;
    this.fields = [];
    this.field = '';
    this.recordLength = 0;
    this.rawHead = '';
    this.quotedSeen = false;
    this.dropping = false;
    this.problem = undefined;
    this.lastWasCr = false;
  }

  private append(text: string, from: number, to: number): void {
    if (this.dropping) return;
    this.field = this.field.length === 0 ? text.slice(from, to) : this.field + text.slice(from, to);
    if (this.field.length > this.maxFieldSize) {
      this.tooLarge(`field ${this.fields.length + 1} is longer than the limit of ${this.maxFieldSize} characters`);
    } else if (this.recordLength + this.field.length > this.maxRecordSize) {
      this.tooLarge(`the record is longer than the limit of ${this.maxRecordSize} characters`);
    }
  }

  private tooLarge(message: string): void {
    this.setProblem({ code: 'SOURCE_FIELD_TOO_LARGE', message, line: this.line, field: this.fields.length + 1 });
    this.dropping = true;
    this.field = '';
    this.fields = [];
    this.rawHead = this.rawHead.slice(0, 200);
  }

  private setProblem(problem: RecordProblem): void {
    // The first problem of a record is the one worth reporting; later ones are usually its echo.
    if (!this.problem) this.problem = problem;
  }

  private endField(): void {
    if (!this.dropping) {
      this.fields.push(this.field);
      this.recordLength += this.field.length;
    }
    this.field = '';
  }

  /** `text` and `end` locate the record's last character in the current chunk, for its raw text. */
  private endRecord(text: string, end: number, sink: RecordSink): void {
    this.endField();
    let raw = this.rawHead;
    if (!this.dropping && end > this.rawStart) raw += text.slice(this.rawStart, end);
    const fields = this.fields;
    const record: TokenizedRecord = {
      fields,
      startLine: this.recordStartLine,
      endLine: this.line,
      raw: this.dropping ? `${raw}...` : raw,
      blank: !this.dropping && !this.quotedSeen && fields.length === 1 && fields[0] === '',
    };
    if (this.problem) record.problem = this.problem;
    sink(record);
    this.fields = [];
    this.recordLength = 0;
    this.rawHead = '';
    this.quotedSeen = false;
    this.dropping = false;
    this.problem = undefined;
    this.recordStartLine = this.line + 1;
  }

  /** Counts line breaks inside quoted text: CRLF, LF and CR each count once. */
  private countLines(text: string, from: number, to: number): void {
    let lastWasCr = this.lastWasCr;
    let line = this.line;
    for (let k = from; k < to; k++) {
      const c = text.charCodeAt(k);
      if (c === LF) {
        if (!lastWasCr) line++;
        lastWasCr = false;
      } else if (c === CR) {
        line++;
        lastWasCr = true;
      } else {
        lastWasCr = false;
      }
    }
    this.line = line;
    this.lastWasCr = lastWasCr;
  }
}

function findLineBreak(text: string, from: number): number {
  for (let k = from; k < text.length; k++) {
    const c = text.charCodeAt(k);
    if (c === LF || c === CR) return k;
  }
  return -1;
}
