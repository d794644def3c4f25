/**
 * One state kept in a PostgreSQL store (see postgres-store.ts): its run lock, its small files and
 * its journals' groups. The state folder stays the run's working copy; this is what the folder is
 * checked against and brought up to date from when a run opens it (StateDir), on this machine or
 * another, and what every durable group of the journal is committed to before the run acts on it.
 */
import { open } from 'node:fs/promises';
import { basename } from 'node:path';
import { z } from 'zod';
import { FerryError } from '../errors/index.ts';
import type { JournalSeal } from './journal.ts';
import { PostgresStore, type StoreRunLock } from './postgres-store.ts';

/**
 * Where a state is kept besides its folder, as the jobs' options take it: the store's address
 * (`postgresql://USER@HOST:PORT/DATABASE`: `--state-store`, CRM_FERRY_STATE_STORE), what the
 * state is known by there (the plan's identity and account, or `--state-key`), and the store's
 * schema (default "crm_ferry").
 */
export const stateStoreSchema = z.object({
  url: z.string().min(1),
  key: z.string().min(1),
  schema: z.string().optional(),
});

/** Where a state is kept besides its folder (see stateStoreSchema). */
export type StateStoreOptions = z.output<typeof stateStoreSchema>;

/** The end of a journal as the store holds it: lines, bytes and chained CRC-32, as a folder's seal. */
export type StoreJournalEnd = JournalSeal;

/** The size of the parts a file is kept in. */
const FILE_PART_BYTES = 4 << 20;

function compactNow(): string {
  return new Date().toISOString().replace(/[-:]/g, '');
}

export class StoreState {
  #lockLost: Error | null = null;

  private constructor(
    readonly store: PostgresStore,
    readonly key: string,
    private readonly lock: StoreRunLock,
  ) {
    void lock.lost.then((error) => {
      this.#lockLost = error;
    });
  }

  /**
   * Opens the store, takes the state's run lock (JOURNAL_LOCKED while another process anywhere
   * holds it) and makes the state's row.
   */
  static async open(options: StateStoreOptions): Promise<StoreState> {
    const store = await PostgresStore.open({ url: options.url, ...(options.schema ? { schema: options.schema } : {}) });
    let lock: StoreRunLock | undefined;
    try {
      lock = await store.lockRun(options.key);
      await store.query(`INSERT INTO ${store.table('states')} (state_key) VALUES ($1) ON CONFLICT DO NOTHING`, [
        options.key,
      ]);
      return new StoreState(store, options.key, lock);
    } catch (error) {
      await lock?.release().catch(() => undefined);
      await store.close().catch(() => undefined);
      throw error;
    }
  }

  /**
   * Starts the state over (--fresh): what the store kept under the key is set aside under a key
   * of its own (`KEY (set aside TIME)`), never deleted, and an empty state takes the key.
   */
  async setAside(): Promise<void> {
    this.#checkLock();
    await this.store.transaction(async (query) => {
      await query(`UPDATE ${this.store.table('states')} SET state_key = $2 WHERE state_key = $1`, [
        this.key,
        `${this.key} (set aside ${compactNow()})`,
      ]);
      await query(`INSERT INTO ${this.store.table('states')} (state_key) VALUES ($1)`, [this.key]);
    });
  }

  /** Where the store is, for messages. */
  get address(): string {
    return this.store.address;
  }

  /**
   * Whether the store holds a state under the key: its `state.json`, which a new state keeps before
   * its first journal line, and a folder's state moved into the store keeps last.
   */
  async holdsState(): Promise<boolean> {
    const found = await this.store.query(
      `SELECT 1 FROM ${this.store.table('state_files')} WHERE state_key = $1 AND name = 'state.json'`,
      [this.key],
    );
    return found.rows.length > 0;
  }

  /** Removes what a move of a folder's state into the store left when it was cut short (see holdsState). */
  async clearUnfinished(): Promise<void> {
    this.#checkLock();
    await this.store.transaction(async (query) => {
      await query(`DELETE FROM ${this.store.table('journal_groups')} WHERE state_key = $1`, [this.key]);
      await query(`DELETE FROM ${this.store.table('state_files')} WHERE state_key = $1`, [this.key]);
    });
  }

  /** The names of the state's files, as in the folder (`state.json`, `results/people.success.csv`). */
  async fileNames(): Promise<string[]> {
    const found = await this.store.query<{ name: string }>(
      `SELECT DISTINCT name FROM ${this.store.table('state_files')} WHERE state_key = $1 ORDER BY name`,
      [this.key],
    );
    return found.rows.map((row) => row.name);
  }

  /** A small file of the state whole (state.json, an export's state); null when the store has none. */
  async readFile(name: string): Promise<Buffer | null> {
    const parts: Buffer[] = [];
    for await (const part of this.fileParts(name)) parts.push(part);
    return parts.length === 0 ? null : Buffer.concat(parts);
  }

  /** A file of the state, a part (a few megabytes) at a time, in order. */
  async *fileParts(name: string): AsyncGenerator<Buffer> {
    for (let part = 0; ; part += 1) {
      const found = await this.store.query<{ content: Buffer }>(
        `SELECT content FROM ${this.store.table('state_files')} WHERE state_key = $1 AND name = $2 AND part = $3`,
        [this.key, name, part],
      );
      const row = found.rows[0];
      if (row === undefined) return;
      yield row.content;
    }
  }

  /** Keeps a small file of the state, whole (replacing the one of that name). */
  async putFile(name: string, content: Buffer | string): Promise<void> {
    this.#checkLock();
    await this.store.transaction(async (query) => {
      await query(`DELETE FROM ${this.store.table('state_files')} WHERE state_key = $1 AND name = $2`, [
        this.key,
        name,
      ]);
      await query(
        `INSERT INTO ${this.store.table('state_files')} (state_key, name, part, content) VALUES ($1, $2, 0, $3)`,
        [this.key, name, typeof content === 'string' ? Buffer.from(content, 'utf8') : content],
      );
    });
  }

  /**
   * Keeps the files whose names start with `prefix` as `files` says (their names in the store and
   * where they are on disk), and no others: each read from disk and kept a part at a time, so that
   * a large result file is never held whole. All or none.
   */
  async putFolder(prefix: string, files: ReadonlyMap<string, string>): Promise<void> {
    this.#checkLock();
    await this.store.transaction(async (query) => {
      await query(`DELETE FROM ${this.store.table('state_files')} WHERE state_key = $1 AND starts_with(name, $2)`, [
        this.key,
        prefix,
      ]);
      for (const [name, path] of files) {
        const handle = await open(path, 'r');
        try {
          const buffer = Buffer.alloc(FILE_PART_BYTES);
          for (let part = 0; ; part += 1) {
            const { bytesRead } = await handle.read(buffer, 0, FILE_PART_BYTES, null);
            // An empty file is one empty part: it is there, and empty.
            if (bytesRead === 0 && part > 0) break;
            await query(
              `INSERT INTO ${this.store.table('state_files')} (state_key, name, part, content) VALUES ($1, $2, $3, $4)`,
              [this.key, name, part, buffer.subarray(0, bytesRead)],
            );
            if (bytesRead < FILE_PART_BYTES) break;
          }
        } finally {
          await handle.close();
        }
      }
    });
  }

  /** Where each journal ends in the store, by its file name in the folder. */
  async journalEnds(): Promise<Map<string, StoreJournalEnd>> {
    const found = await this.store.query<{ journal: string; end_line: string; end_bytes: string; end_crc: string }>(
      `SELECT DISTINCT ON (journal) journal, end_line, end_bytes, end_crc FROM ${this.store.table('journal_groups')}
        WHERE state_key = $1 ORDER BY journal, end_line DESC`,
      [this.key],
    );
    return new Map(
      found.rows.map((row) => [
        row.journal,
        { lines: Number(row.end_line), bytes: Number(row.end_bytes), crc: row.end_crc },
      ]),
    );
  }

  /** Where the journal ended after its group ending at line `lines`; null when no group ends there. */
  async endAt(journal: string, lines: number): Promise<StoreJournalEnd | null> {
    const found = await this.store.query<{ end_bytes: string; end_crc: string }>(
      `SELECT end_bytes, end_crc FROM ${this.store.table('journal_groups')}
        WHERE state_key = $1 AND journal = $2 AND end_line = $3`,
      [this.key, journal, lines],
    );
    const row = found.rows[0];
    return row ? { lines, bytes: Number(row.end_bytes), crc: row.end_crc } : null;
  }

  /** The journal after line `after`, a few groups at a time, in order. */
  async *groupsAfter(journal: string, after: number, pageSize = 64): AsyncGenerator<Buffer> {
    let from = after;
    for (;;) {
      const page = await this.store.query<{ end_line: string; content: Buffer }>(
        `SELECT end_line, content FROM ${this.store.table('journal_groups')}
          WHERE state_key = $1 AND journal = $2 AND end_line > $3 ORDER BY end_line LIMIT $4`,
        [this.key, journal, from, pageSize],
      );
      for (const row of page.rows) yield row.content;
      if (page.rows.length < pageSize) return;
      from = Number((page.rows.at(-1) as { end_line: string }).end_line);
    }
  }

  /**
   * Commits a group of a journal (named as its file in the folder), which begins where the store's journal ends (`before`)
   * and ends at `after`. Refused (JOURNAL_STORE) when the store's journal does not end at `before`:
   * another process wrote this state since this one took it, or this one's lock was lost; the run
   * must stop, and nothing it has not committed is acted on.
   */
  async appendGroup(journal: string, group: Buffer, before: JournalSeal, after: JournalSeal): Promise<void> {
    this.#checkLock();
    let added: number | null;
    try {
      const result = await this.store.query(
        `INSERT INTO ${this.store.table('journal_groups')} (state_key, journal, start_line, end_line, end_bytes, end_crc, content)
         SELECT $1, $2, $3, $4, $5, $6, $7
          WHERE COALESCE((SELECT max(end_line) FROM ${this.store.table('journal_groups')}
                           WHERE state_key = $1 AND journal = $2), 0) = $3`,
        [this.key, journal, before.lines, after.lines, after.bytes, after.crc, group],
      );
      added = result.rowCount;
    } catch (error) {
      // Two processes appending at one place: the second meets the first's row (unique start).
      if ((error as { cause?: { code?: string } }).cause?.code === '23505') added = 0;
      else throw error;
    }
    if (added !== 1) {
      throw new FerryError(
        'JOURNAL_STORE',
        `the journal ${journal} in the state store at ${this.address} (state ${JSON.stringify(this.key)}) no longer ends where this run left it: another process wrote to the state`,
        {
          hint: 'Nothing more is sent to the service. Let the other run end, then run the same command again: it goes on from what the store holds.',
        },
      );
    }
  }

  #checkLock(): void {
    if (this.#lockLost === null) return;
    throw new FerryError(
      'JOURNAL_STORE',
      `the connection holding the run lock of state ${JSON.stringify(this.key)} in the state store at ${this.address} was lost (${this.#lockLost.message})`,
      {
        hint: 'Nothing more is sent to the service: another process may have taken the run. Run the same command again once the store answers.',
      },
    );
  }

  /** Gives the run lock back and closes the store's connections. */
  async close(): Promise<void> {
    try {
      await this.lock.release();
    } finally {
      await this.store.close();
    }
  }
}

/**
 * What a state is known by in a store when no --state-key is given: the plan's (or mapping's)
 * file name without its extension, and the account. Renaming the file starts a new state there;
 * a --state-key keeps one name whatever the file is called.
 */
export function defaultStateKey(file: string, account: { baseUrl: string; account: string }): string {
  const name = basename(file).replace(/\.[^.]+$/, '');
  const of = account.account === account.baseUrl ? account.baseUrl : `${account.account} (${account.baseUrl})`;
  return `${name} @ ${of}`;
}
