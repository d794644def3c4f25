import { lstat, mkdir, open, readdir, readFile, rm, type FileHandle } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { crc32 } from 'node:zlib';
import { FerryError } from '../../errors/index.ts';
import { replaceFile } from '../../files/index.ts';
import { checkNotSpecial, makeFolders, removeStaleTemps } from '../../util/index.ts';
import { BLOB_ID, type ChangeRecord, Store } from '../store.ts';

/** Log size past which the log is folded into the snapshot in the background. */
const COMPACT_AFTER_BYTES = 64 * 1024 * 1024;
/**
 * How far the id sequence jumps after a crash: ids a crashed run gave out but never acknowledged
 * may have been seen in reads, so they are not given again.
 */
const ID_GAP_AFTER_CRASH = 10_000;
/** The files that make up a sandbox's durable state, all derived from the `--data` path. */
export interface DataPaths {
  /** The snapshot: the whole state as one JSON document, replaced by rename. */
  snapshot: string;
  /** The change log: one checksummed line per commit since the snapshot. */
  log: string;
  /** One file per upload or attachment. */
  blobs: string;
}

export function dataPaths(file: string): DataPaths {
  const snapshot = resolve(file);
  return { snapshot, log: `${snapshot}.log`, blobs: `${snapshot}.blobs` };
}

function badPath(file: string, message: string, hint: string): FerryError {
  return new FerryError('CONFIG_INVALID', message, { location: { file }, hint });
}

/**
 * Checks a `--data` path before anything is read or created, and creates its missing folders
 * (0700): special file systems, FIFOs, devices and folders are refused with a clear message
 * instead of blocking or recursing forever.
 */
export async function prepareDataPath(file: string): Promise<DataPaths> {
  const paths = dataPaths(file);
  const hint = 'Give --data a path to a regular file in an ordinary folder, e.g. ./sandbox-state.json.';
  checkNotSpecial(paths.snapshot, 'the sandbox data file', (message) => badPath(file, message, hint));
  const existing = await lstat(paths.snapshot).catch(() => null);
  if (existing && !existing.isFile()) {
    const kind = existing.isDirectory()
      ? 'a folder'
      : existing.isFIFO()
        ? 'a FIFO'
        : existing.isSymbolicLink()
          ? 'a symbolic link'
          : 'a special file';
    throw badPath(file, `the sandbox data file is ${kind}, not a regular file`, hint);
  }
  await makeFolders(dirname(paths.snapshot), { mode: 0o700, what: 'the folder of the sandbox data file', hint });
  return paths;
}

function stateError(file: string, message: string, cause?: unknown, line?: number): FerryError {
  return new FerryError('SANDBOX_STATE', message, {
    location: line === undefined ? { file } : { file, line },
    cause,
    hint: 'Restore the files from a copy, or start with --reset to begin from the seeded account.',
  });
}

/** A log line: CRC-32 of the payload in hex, a space, the JSON payload, a newline. */
function logLine(record: ChangeRecord): string {
  const payload = JSON.stringify(record);
  return `${crc32(payload).toString(16).padStart(8, '0')} ${payload}\n`;
}

/**
 * Reads the change log: every complete, intact line is a record. A torn last line (a crash in the
 * middle of an append) is dropped; damage anywhere before it is an error, since records after it
 * were acknowledged. Returns the records and the byte length of the intact part.
 */
export function parseLog(text: Buffer, file: string): { records: ChangeRecord[]; intactBytes: number } {
  const records: ChangeRecord[] = [];
  let offset = 0;
  let line = 0;
  while (offset < text.length) {
    const end = text.indexOf(0x0a, offset);
    line += 1;
    const last = end === -1 || end === text.length - 1;
    if (end === -1) break; // torn: the append never finished
    const raw = text.subarray(offset, end).toString('utf8');
    const match = /^([0-9a-f]{8}) (.*)$/s.exec(raw);
    const intact = match !== null && crc32(match[2] as string) === Number.parseInt(match[1] as string, 16);
    if (!intact) {
      if (last) break; // torn in a way that still ended in a newline: the last record, never acknowledged
      throw stateError(file, `the sandbox change log is damaged at line ${line} (checksum mismatch)`, undefined, line);
    }
    let record: ChangeRecord;
    try {
      record = JSON.parse(match[2] as string) as ChangeRecord;
    } catch (error) {
      throw stateError(file, `the sandbox change log is damaged at line ${line} (not JSON)`, error, line);
    }
    if (!record || typeof record !== 'object' || typeof record.seq !== 'number') {
      throw stateError(
        file,
        `the sandbox change log is damaged at line ${line} (not a change record)`,
        undefined,
        line,
      );
    }
    records.push(record);
    offset = end + 1;
  }
  return { records, intactBytes: offset };
}

export interface DurableOptions {
  /** Start from nothing even when files exist (they are replaced at the first save). */
  reset: boolean;
  /** Where a failure to save is reported; the sandbox says it whether or not requests are logged. */
  report: (message: string) => void;
}

/**
 * The durable state of a sandbox with a data file: a snapshot, a change log appended (and synced)
 * before each write is answered, with concurrent writes sharing one sync (group commit), and the
 * blob folder. The log is folded into a new snapshot at start, at close, and in the background
 * once it grows past 64 MiB.
 */
export class DurableState {
  private log: FileHandle | null = null;
  private logBytes = 0;
  private readonly queue: string[] = [];
  private waiters: { resolve: () => void; reject: (error: Error) => void }[] = [];
  private running: Promise<void> | null = null;
  private compactWanted = false;
  private closed = false;
  /** The failure that stopped saving; writes are refused once it is set. */
  failed: Error | null = null;
  /** Commits and syncs so far, for the benchmark and the docs. */
  readonly stats = { commits: 0, syncs: 0 };

  private constructor(
    private readonly store: Store,
    readonly paths: DataPaths,
    private readonly options: DurableOptions,
  ) {}

  /** Prepares the files and loads the state they hold into `store`; `loaded` is false for a fresh start. */
  static async open(
    store: Store,
    file: string,
    options: DurableOptions,
  ): Promise<{ durable: DurableState; loaded: boolean }> {
    const paths = await prepareDataPath(file);
    const durable = new DurableState(store, paths, options);
    await durable.removeTemporaryFiles();
    // A reset must not replay the old log onto the new account, even after a crash mid-start.
    if (options.reset) await rm(paths.log, { force: true });
    const loaded = options.reset ? false : await durable.load();
    await mkdir(paths.blobs, { mode: 0o700 }).catch((error: NodeJS.ErrnoException) => {
      if (error.code !== 'EEXIST')
        throw stateError(paths.blobs, `cannot create the blob folder: ${error.message}`, error);
    });
    store.blobs.folder = paths.blobs;
    try {
      durable.log = await open(paths.log, 'a', 0o600);
      await durable.log.chmod(0o600);
      durable.logBytes = (await durable.log.stat()).size;
    } catch (error) {
      throw stateError(paths.log, `cannot open the sandbox change log: ${(error as Error).message}`, error);
    }
    store.forgetChanges();
    store.tracker.enabled = true;
    return { durable, loaded };
  }

  private async removeTemporaryFiles(): Promise<void> {
    const folder = dirname(this.paths.snapshot);
    await removeStaleTemps(folder);
    // `SNAPSHOT.UUID.tmp`: the temporary snapshots of versions before the one atomic writer (files/).
    const prefix = `${basename(this.paths.snapshot)}.`;
    for (const name of await readdir(folder).catch(() => [] as string[])) {
      if (name.startsWith(prefix) && name.endsWith('.tmp')) await rm(join(folder, name), { force: true });
    }
  }

  private async load(): Promise<boolean> {
    const { snapshot, log, blobs } = this.paths;
    let text: string | null = null;
    try {
      text = await readFile(snapshot, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') {
        throw stateError(snapshot, `cannot read the sandbox data file: ${(error as Error).message}`, error);
      }
    }
    if (text !== null) {
      let data: unknown;
      try {
        data = JSON.parse(text);
      } catch (error) {
        throw stateError(snapshot, 'the sandbox data file is not valid JSON', error);
      }
      this.store.load(data, snapshot);
    }
    let records: ChangeRecord[] = [];
    const logText = await readFile(log).catch((error: NodeJS.ErrnoException) => {
      if (error.code === 'ENOENT') return null;
      throw stateError(log, `cannot read the sandbox change log: ${error.message}`, error);
    });
    if (logText !== null) {
      const parsed = parseLog(logText, log);
      records = parsed.records;
      if (text === null && records.length > 0)
        throw stateError(snapshot, 'the sandbox change log exists but its data file is missing');
      records.forEach((record, i) => {
        try {
          this.store.apply(record);
        } catch (error) {
          throw stateError(
            log,
            `the sandbox change log is damaged at line ${i + 1}: ${(error as Error).message}`,
            error,
            i + 1,
          );
        }
      });
      if (parsed.intactBytes < logText.length) {
        // Cut the torn tail off, so that new records do not follow garbage.
        const handle = await open(log, 'r+');
        try {
          await handle.truncate(parsed.intactBytes);
          await handle.sync();
        } finally {
          await handle.close();
        }
      }
    }
    if (text === null) return false;
    if (records.length > 0) this.store.skipIds(this.store.lastId + ID_GAP_AFTER_CRASH);
    // Every blob the state names must be on disk; files it does not name are leftovers of a crash.
    const onDisk = new Set(await readdir(blobs).catch(() => [] as string[]));
    for (const id of this.store.blobs.ids()) {
      if (!BLOB_ID.test(id))
        throw stateError(snapshot, `the sandbox state names a blob with a bad id ${JSON.stringify(id)}`);
      if (!onDisk.has(id) && !this.store.blobs.get(id))
        throw stateError(join(blobs, id), `the sandbox state names blob ${id} but its file is missing`);
    }
    const known = new Set(this.store.blobs.ids());
    for (const name of onDisk) if (!known.has(name)) await rm(join(blobs, name), { force: true });
    return true;
  }

  /**
   * Puts what changed since the last commit in the log and resolves once it is on disk (with the
   * commits of every request in the same batch). `onlyIfChanged`: resolve at once when nothing did.
   */
  commit(onlyIfChanged = false): Promise<void> {
    // After a failure, reads are still answered (they acknowledge nothing); writes are not.
    if (this.failed) return onlyIfChanged ? Promise.resolve() : Promise.reject(this.failed);
    const record = this.store.takeChanges();
    if (record) this.queue.push(logLine(record));
    else if (onlyIfChanged) return Promise.resolve();
    this.stats.commits += 1;
    return new Promise((resolve, reject) => {
      this.waiters.push({ resolve, reject });
      this.kick();
    });
  }

  /** Folds the log into a new snapshot (in the writer's turn, so no batch is half-written). */
  compact(): Promise<void> {
    this.compactWanted = true;
    return this.commit();
  }

  /** Writes the final snapshot and closes the log. Rejects with the failure when saving had failed. */
  async close(): Promise<void> {
    if (this.closed) return;
    if (!this.failed) await this.compact().catch(() => undefined);
    await this.running;
    this.closed = true;
    await this.log?.close().catch(() => undefined);
    this.log = null;
    if (this.failed) throw this.failureError();
  }

  failureError(): FerryError {
    return stateError(
      this.paths.snapshot,
      `the sandbox could not save its state: ${this.failed?.message ?? 'unknown failure'}`,
      this.failed,
    );
  }

  private kick(): void {
    if (this.running) return;
    this.running = this.drain().finally(() => {
      this.running = null;
      if (this.waiters.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    while (this.waiters.length > 0) {
      const waiters = this.waiters;
      this.waiters = [];
      const lines = this.queue.splice(0);
      try {
        if (this.closed || !this.log) throw new Error('the sandbox is closed');
        await this.store.blobs.writePending();
        if (lines.length > 0) {
          const data = lines.join('');
          await this.log.write(data);
          await this.log.datasync();
          this.logBytes += Buffer.byteLength(data);
          this.stats.syncs += 1;
        }
        if (this.compactWanted || this.logBytes > COMPACT_AFTER_BYTES) {
          this.compactWanted = false;
          await this.writeSnapshot();
        }
        for (const waiter of waiters) waiter.resolve();
      } catch (error) {
        this.fail(error as Error);
        for (const waiter of [...waiters, ...this.waiters.splice(0)]) waiter.reject(this.failed as Error);
        return;
      }
    }
  }

  private fail(error: Error): void {
    if (this.failed) return;
    this.failed = error;
    this.options.report(
      `crm-ferry sandbox: cannot save the state to ${this.paths.snapshot}: ${error.message}. ` +
        'Writes are refused (503) from now on; the files hold every write acknowledged before this.',
    );
  }

  /** Writes the whole state to a temporary file, syncs it, renames it over the snapshot, then empties the log. */
  private async writeSnapshot(): Promise<void> {
    const { snapshot } = this.paths;
    await replaceFile(
      snapshot,
      async (temp) => {
        const handle = await open(temp, 'wx', 0o600);
        try {
          let buffer: string[] = [];
          let size = 0;
          for (const chunk of this.store.snapshotChunks()) {
            buffer.push(chunk);
            size += chunk.length;
            if (size > 1 << 20) {
              await handle.write(buffer.join(''));
              buffer = [];
              size = 0;
            }
          }
          await handle.write(buffer.join(''));
        } finally {
          await handle.close();
        }
        // Blobs still in memory (a state loaded from the older format) must be on disk before a
        // snapshot that only names them replaces the old one.
        await this.store.blobs.writePending();
      },
      { syncFolder: true },
    );
    if (!this.log) throw new Error('the change log is closed');
    await this.log.truncate(0);
    await this.log.sync();
    this.logBytes = 0;
    const known = new Set(this.store.blobs.ids());
    for (const name of await readdir(this.paths.blobs))
      if (!known.has(name)) await rm(join(this.paths.blobs, name), { force: true });
  }
}

/**
 * The state the files of `file` hold right now (snapshot plus change log), read without changing
 * anything: what a restart would load. For tests and inspection; blob contents stay on disk.
 */
export async function readSavedState(file: string): Promise<Store> {
  const store = new Store();
  const paths = dataPaths(file);
  const text = await readFile(paths.snapshot, 'utf8');
  store.load(JSON.parse(text), paths.snapshot);
  const log = await readFile(paths.log).catch(() => null);
  if (log) for (const record of parseLog(log, paths.log).records) store.apply(record);
  store.blobs.folder = paths.blobs;
  return store;
}
