import { createWriteStream, type WriteStream } from 'node:fs';
import { chmod, open, rename, rm, writeFile } from 'node:fs/promises';
import { dirname } from 'node:path';
import { once } from 'node:events';
import { finished } from 'node:stream/promises';
import { FerryError } from '../errors/index.ts';
import { drained } from './drained.ts';
import { temporaryNameFor } from './file-name.ts';

/**
 * The one way crm-ferry replaces a file: the bytes go to a temporary file beside the target (made
 * fresh with an exclusive create, which follows no link), are synced to the disk, and the
 * temporary file is renamed over the target. A reader sees the old file or the new one, never half
 * of one, and after a power cut the new name never points at bytes that did not reach the disk.
 * The rename replaces a link at the target instead of writing through it, so nothing planted in
 * the folder redirects the write. Whole texts go through writeFileAtomic, files filled by someone
 * else (a download) through replaceFile, and files written piece by piece through AtomicFile.
 */

export interface WriteFileAtomicOptions {
  /** Mode of the file written. @default 0o600 (state, credentials and reports are the person's own) */
  mode?: number;
  /**
   * Syncs the folder after the rename too, so that the new name itself survives a power cut (the
   * sandbox's snapshot, after which its change log is emptied). Not on Windows, where a folder
   * cannot be opened to sync. @default false
   */
  syncFolder?: boolean;
}

/** Syncs a folder, so that a rename in it survives a power loss. */
async function syncFolder(folder: string): Promise<void> {
  const handle = await open(folder, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Syncs the temporary file, sets its mode (the umask may have taken bits off; a tighter mode is kept as asked) and renames it over `file`. */
async function moveIntoPlace(temp: string, file: string, mode: number): Promise<void> {
  const handle = await open(temp, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
  await chmod(temp, mode);
  await rename(temp, file);
}

/**
 * Replaces `file` with what `fill` writes at the temporary name it is given (which must be created
 * exclusively, `wx`, or by a function that does so). On failure the temporary file is removed and
 * the error thrown as it came, for the caller to say what the file was.
 */
export async function replaceFile(
  file: string,
  fill: (temp: string) => Promise<void>,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const temp = temporaryNameFor(file);
  try {
    await fill(temp);
    await moveIntoPlace(temp, file, options.mode ?? 0o600);
  } catch (error) {
    // A full disk fails the write after the exclusive create made the file: it is ours to remove
    // then too. Only a name that was there already (EEXIST) is someone else's.
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST')
      await rm(temp, { force: true, recursive: false }).catch(() => undefined);
    throw error;
  }
  if (options.syncFolder && process.platform !== 'win32') await syncFolder(dirname(file));
}

/** Writes `data` whole as `file` (replaceFile). */
export async function writeFileAtomic(
  file: string,
  data: string | Buffer,
  options: WriteFileAtomicOptions = {},
): Promise<void> {
  const mode = options.mode ?? 0o600;
  await replaceFile(file, (temp) => writeFile(temp, data, { mode, flag: 'wx' }), { mode });
}

/** `value` as the JSON files of crm-ferry are written: two-space indented, with a final newline. */
export function jsonText(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}

/**
 * How much a file stream holds before the writer waits for the disk. Node's 16 KiB made every 64 KiB
 * piece wait for its write to finish, so that building rows and writing them took turns.
 */
const FILE_BUFFER = 1 << 20;

export interface AtomicFileOptions {
  /** What the file is, for messages: `the success file` gives "cannot write the success file FILE: ...". @default '' (the path alone) */
  what?: string;
  /** What to do when the file cannot be written, for the error's hint. */
  hint?: string;
}

/**
 * A file written piece by piece under a temporary name beside its target and moved into place by
 * `commit()` (as replaceFile does). Its failures are EXPORT_WRITE errors that name the target.
 */
export class AtomicFile {
  readonly temp: string;
  readonly stream: WriteStream;
  #failed: Error | null = null;
  readonly #what: string;
  readonly #hint: string | undefined;

  constructor(
    readonly target: string,
    options: AtomicFileOptions = {},
  ) {
    this.#what = options.what ? `${options.what} ` : '';
    this.#hint = options.hint;
    this.temp = temporaryNameFor(target);
    // 0600 whatever the umask: the file holds the account's or the customer's data.
    this.stream = createWriteStream(this.temp, { flags: 'wx', mode: 0o600, highWaterMark: FILE_BUFFER });
    this.stream.on('error', (error) => (this.#failed ??= error));
  }

  /** A file whose temporary file is open: a folder that cannot be written fails here, not at the first write. */
  static async open(target: string, options: AtomicFileOptions = {}): Promise<AtomicFile> {
    const file = new AtomicFile(target, options);
    await once(file.stream, 'ready').catch((error: Error) => {
      throw file.#error(error, 'create');
    });
    return file;
  }

  #error(error: Error, doing: 'create' | 'write'): FerryError {
    if (error instanceof FerryError) return error;
    return new FerryError('EXPORT_WRITE', `cannot ${doing} ${this.#what}${this.target}: ${error.message}`, {
      location: { file: this.target },
      cause: error,
      ...(this.#hint ? { hint: this.#hint } : {}),
    });
  }

  /** Throws the failure of a write so far, if any. */
  check(): void {
    if (this.#failed) throw this.#error(this.#failed, 'write');
  }

  async write(text: string | Buffer): Promise<void> {
    this.check();
    if (!this.stream.write(text)) await drained(this.stream).catch(() => undefined);
    this.check();
  }

  /** Finishes the file and moves it onto its target; when that fails, the temporary file is removed. */
  async commit(): Promise<void> {
    try {
      this.check();
      // end()'s callback comes before the 'error' event of a write that failed (a full disk):
      // finished() waits for either.
      const closed = this.stream.closed ? Promise.resolve() : once(this.stream, 'close').catch(() => undefined);
      this.stream.end();
      await finished(this.stream).catch((error: Error) => {
        this.#failed ??= error;
      });
      await closed;
      this.check();
      await moveIntoPlace(this.temp, this.target, 0o600).catch((error: Error) => {
        throw this.#error(error, 'write');
      });
    } catch (error) {
      await this.abort();
      throw error;
    }
  }

  /** Drops the temporary file; the target (if any) stays as it was. */
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
