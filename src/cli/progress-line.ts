/**
 * The progress line of a long command (import, export): on a terminal one line rewritten in
 * place; in a log (cron) a dated line, at most one per `everyMs`.
 */
export class ProgressLine {
  #last = '';
  #lastWritten: number;

  constructor(
    private readonly out: NodeJS.WritableStream,
    private readonly mode: 'tty' | 'lines',
    /** Least time between two dated lines, counted from the start. @default 0 (every line) */
    private readonly everyMs = 0,
  ) {
    this.#lastWritten = Date.now();
  }

  show(line: string): void {
    if (this.mode === 'tty') {
      this.out.write(`\r${line.padEnd(this.#last.length)}`);
      this.#last = line;
    } else if (Date.now() - this.#lastWritten >= this.everyMs) {
      this.out.write(`${new Date().toISOString()} ${line}\n`);
      this.#lastWritten = Date.now();
    }
  }

  /** Ends the line rewritten in place, before the summary. */
  finish(): void {
    if (this.mode === 'tty' && this.#last !== '') this.out.write('\n');
    this.#last = '';
  }
}
