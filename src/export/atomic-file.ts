import { createWriteStream, type WriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { FerryError } from '../errors/index.ts';
import { drained } from './zip.ts';

let sequence = 0;

/**
 * How much a file stream holds before the writer waits for the disk. Node's 16 KiB made every 64 KiB
 * piece wait for its write to finish, so that building rows and writing them took turns.
 */
const FILE_BUFFER = 1 << 20;

/** A file written under a temporary name beside its target and renamed into place when complete. */
export class AtomicFile {
  readonly temp: string;
  readonly stream: WriteStream;
  #failed: Error | null = null;

  constructor(readonly target: string) {
    sequence += 1;
    this.temp = join(dirname(target), `.${basename(target)}.${process.pid}.${sequence}.tmp`);
    // 0600 whatever the umask: an export holds the account's data.
    this.stream = createWriteStream(this.temp, { flags: 'wx', mode: 0o600, highWaterMark: FILE_BUFFER });
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

// Shared with every atomic write (util/write-file-atomic.ts): exports clear their folder with it.
export { removeStaleTemps } from '../util/index.ts';

/** `out.csv` -> `out.deleted.csv` */
export function deletedFileOf(target: string, extension: string): string {
  const base = basename(target);
  const dot = base.lastIndexOf('.');
  const stem = dot > 0 ? base.slice(0, dot) : base;
  return join(dirname(target), `${stem}.deleted.${extension}`);
}

/** Commits the export's file, then the ids deleted since the last export beside it, when there are any to say. */
export async function commitWithDeleted(file: AtomicFile | null, target: string | null, deleted: string | null, extension: string): Promise<string[]> {
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
