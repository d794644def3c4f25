import { FerryError } from '../errors/index.ts';
import type { AtomicFile } from './atomic-file.ts';
import { drained } from './drained.ts';

/** Text is handed to the file in pieces of about this many characters: a write per row costs more than the row. */
export const TEXT_CHUNK = 65_536;

/** Text gathered into pieces of about TEXT_CHUNK characters before it is handed to `send`. */
export class ChunkedText {
  /**
   * The texts added since the last piece, joined when it goes out: `+=` on each made a chain of
   * joined strings that was copied into one when the piece was encoded, which cost more than
   * building the rows.
   */
  #parts: string[] = [];
  #length = 0;

  /** `start`: the text the output begins with (a header). */
  constructor(
    private readonly send: (text: string) => Promise<void>,
    start = '',
  ) {
    if (start !== '') {
      this.#parts.push(start);
      this.#length = start.length;
    }
  }

  /** Adds text; a promise when a piece went out and the caller must wait for it. */
  add(text: string): Promise<void> | undefined {
    this.#parts.push(text);
    this.#length += text.length;
    return this.#length >= TEXT_CHUNK ? this.flush() : undefined;
  }

  async flush(): Promise<void> {
    if (this.#length === 0) return;
    const text = this.#parts.join('');
    this.#parts = [];
    this.#length = 0;
    await this.send(text);
  }
}

/** Where the text of a CSV or JSON Lines export goes: a file written atomically, or standard output. */
export function sendTo(
  file: AtomicFile | null,
  stdout: NodeJS.WritableStream | undefined,
): (text: string) => Promise<void> {
  if (file) return (text) => file.write(text);
  // The library reads nothing of the process it runs in: the caller names the stream.
  if (!stdout)
    throw new FerryError('INTERNAL', 'an export to standard output (no file) needs the stream to write to (`stdout`)');
  return async (text) => {
    if (!stdout.write(text)) await drained(stdout);
  };
}
