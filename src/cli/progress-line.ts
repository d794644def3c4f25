import type { TransportWait } from '../client/index.ts';
import { formatDuration } from '../util/index.ts';

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

/** A wait of a command's requests, and whose: the account it works on, or a live v1 source's old account. */
export type ShownWait = TransportWait & { of: 'account' | 'old account' };

/**
 * What the longest wait under way is for, as the progress line says it: `waiting 50 min for the
 * rate limit (Retry-After)`, `waiting 30 s for the old account to answer again (failing for 3 min)`.
 * Empty when nothing waits.
 */
export function describeWaits(waits: readonly ShownWait[], now: number): string {
  const longest = waits.reduce<ShownWait | null>(
    (best, wait) => (wait.until > now && (best === null || wait.until > best.until) ? wait : best),
    null,
  );
  if (longest === null) return '';
  const left = formatDuration(Math.max(1000, longest.until - now));
  const whose = longest.of === 'old account' ? "the old account's" : 'the';
  if (longest.reason === 'rate-limit')
    return longest.detail === 'Retry-After'
      ? `waiting ${left} for ${whose} rate limit (Retry-After)`
      : `waiting ${left} for ${whose} rate limit to reset`;
  return `waiting ${left} for ${longest.of === 'old account' ? 'the old account' : 'the service'} to answer again (${longest.detail})`;
}
