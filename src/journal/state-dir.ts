import { lstat, mkdir, readdir, readFile, rename, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { checkNotSpecial, jsonText, writeFileAtomic } from '../util/index.ts';
import { type HeldLock, releaseLock, takeLock } from './lock.ts';

/** What a state belongs to. Compared as a whole: another address or another account is another account. */
export interface AccountIdentity {
  /** The service's address (origin). */
  baseUrl: string;
  /** What identifies the account behind it: the login's account name, or the address for a personal token. */
  account: string;
}

export interface OpenStateOptions {
  dir: string;
  account: AccountIdentity;
  /** Start over: the earlier state is moved aside into DIR/previous-<time>/, never deleted. @default false */
  fresh?: boolean;
  /** Only open a state a run wrote (rollback): a missing one is an error, and nothing is created. @default false */
  existing?: boolean;
  /**
   * The ids of the account's users, asked once the state is bound: every command that binds a
   * state checks them against the users its runs saw (see checkUsers), so none can act on a state
   * of another account behind the same address. An empty list checks nothing.
   */
  users: () => Promise<readonly number[]>;
  /** Remember the users seen in state.json (a dry run leaves the state as it was). @default true */
  keepUsers?: boolean;
}

const FORMAT = 1;

const STATE_FILE = 'state.json';
const LOCK_FILE = 'lock';

interface StateFile {
  format: number;
  account: AccountIdentity;
  created: string;
  /** Ids of the account's users seen by the runs: accounts share no user, so a state whose users are all unknown is another account's. */
  users?: number[];
}

function compactTime(date: Date): string {
  return date.toISOString().replace(/[-:]/g, '').replace(/\.(\d{3})Z$/, '$1Z');
}

/**
 * The folder a run keeps its state in: the journals of its steps, the result files, the account
 * it was written against, and a lock so that two runs never write one state at once. It holds no
 * token or secret; its files are readable by their owner only.
 */
export class StateDir {
  #sequence = 0;
  #closed = false;
  /** state.json as bound at open and saved since. */
  #state: StateFile | undefined;

  private constructor(
    readonly dir: string,
    private readonly lock: HeldLock,
  ) {}

  static async open(options: OpenStateOptions): Promise<StateDir> {
    const { dir } = options;
    checkNotSpecial(dir, `the state folder ${dir}`, (message) => new FerryError('USAGE', `${message}; give a folder on a disk (--state-dir)`, { location: { file: dir } }));
    const existing = await lstat(dir).catch(() => null);
    if (existing && !existing.isDirectory()) {
      throw new FerryError('USAGE', `the state folder ${dir} exists and is not a folder`, { location: { file: dir }, hint: 'Give another --state-dir.' });
    }
    if (options.existing && !(await stat(join(dir, STATE_FILE)).catch(() => null))) {
      throw new FerryError('USAGE', `there is no import state in ${dir}: no run kept one there`, {
        location: { file: dir },
        hint: 'Give the plan or mapping the run was made with (its state is .crm-ferry beside it), or the --state-dir it was given.',
      });
    }
    try {
      await mkdir(dir, { recursive: true, mode: 0o700 });
    } catch (error) {
      throw new FerryError('JOURNAL_WRITE', `cannot create the state folder ${dir}: ${(error as Error).message}`, { location: { file: dir }, cause: error });
    }
    const state = new StateDir(dir, await takeLock(join(dir, LOCK_FILE)));
    try {
      if (options.fresh) await state.#moveAside();
      await state.#bind(options.account);
      await state.#checkUsers(await options.users(), options.keepUsers ?? true);
      await mkdir(join(dir, 'journal'), { recursive: true, mode: 0o700 });
      await mkdir(join(dir, 'results'), { recursive: true, mode: 0o700 });
    } catch (error) {
      await state.close();
      throw error;
    }
    return state;
  }

  async #bind(account: AccountIdentity): Promise<void> {
    const file = join(this.dir, STATE_FILE);
    let text: string | null = null;
    try {
      text = await readFile(file, 'utf8');
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw new FerryError('JOURNAL_CORRUPT', `cannot read ${file}: ${(error as Error).message}`, { location: { file }, cause: error });
    }
    if (text === null) {
      await this.#save({ format: FORMAT, account, created: new Date().toISOString() });
      return;
    }
    let state: StateFile;
    try {
      state = JSON.parse(text) as StateFile;
      if (typeof state.format !== 'number' || typeof state.account?.baseUrl !== 'string' || typeof state.account?.account !== 'string') throw new Error('fields missing');
    } catch (error) {
      throw new FerryError('JOURNAL_CORRUPT', `${file} is damaged (${(error as Error).message})`, { location: { file }, cause: error, hint: 'Restore it from a copy, or start over with --fresh.' });
    }
    if (state.format > FORMAT) {
      throw new FerryError('JOURNAL_CORRUPT', `${file} was written by a newer crm-ferry (format ${state.format}); this one reads format ${FORMAT}`, { location: { file }, hint: 'Update crm-ferry.' });
    }
    if (state.account.baseUrl !== account.baseUrl || state.account.account !== account.account) {
      const of = (a: AccountIdentity): string => (a.account === a.baseUrl ? a.baseUrl : `${a.account} (${a.baseUrl})`);
      throw new FerryError('JOURNAL_ACCOUNT', `the state in ${this.dir} belongs to ${of(state.account)}, and this run is connected to ${of(account)}`, {
        location: { file },
        hint: 'A state is never carried over to another account. Give another --state-dir for this account, or --fresh to start over here (what was written to the other account stays there).',
      });
    }
    this.#state = state;
  }

  /** Writes state.json whole, under a temporary name renamed over it: never half a file. */
  async #save(state: StateFile): Promise<void> {
    await writeFileAtomic(join(this.dir, STATE_FILE), jsonText(state));
    this.#state = state;
  }

  async #moveAside(): Promise<void> {
    const names = (await readdir(this.dir)).filter((name) => name !== LOCK_FILE && !name.startsWith('previous-'));
    if (names.length === 0) return;
    const aside = join(this.dir, `previous-${compactTime(new Date())}`);
    await mkdir(aside, { mode: 0o700 });
    for (const name of names) await rename(join(this.dir, name), join(aside, name));
  }

  /**
   * Checks the account's users against those the state's runs saw. A personal token says only
   * the service's address, and accounts may share one: another account shows as users with none
   * in common. The users seen are kept (people join and leave an account).
   */
  async #checkUsers(ids: readonly number[], keep: boolean): Promise<void> {
    const state = this.#state;
    if (ids.length === 0 || state === undefined) return;
    const file = join(this.dir, STATE_FILE);
    const known = Array.isArray(state.users) ? state.users : [];
    if (known.length > 0 && !ids.some((id) => known.includes(id))) {
      throw new FerryError('JOURNAL_ACCOUNT', `the state in ${this.dir} belongs to another account at ${state.account.baseUrl}: none of this account's users (ids ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', ...' : ''}) is among the users of the account it was written against (ids ${known.slice(0, 5).join(', ')}${known.length > 5 ? ', ...' : ''})`, {
        location: { file },
        hint: 'A state is never carried over to another account. Give another --state-dir for this account, or --fresh to start over here (what was written to the other account stays there).',
      });
    }
    const users = [...new Set([...known, ...ids])].sort((a, b) => a - b);
    if (!keep || users.length === known.length) return;
    await this.#save({ ...state, users });
  }

  journalFile(step: string): string {
    return join(this.dir, 'journal', `${safeName(step)}.jsonl`);
  }

  /** `dry-run.rejects`: a dry run's rejects, kept apart so that the last real run's stay. */
  resultFile(step: string, kind: 'success' | 'rejects' | 'dry-run.rejects'): string {
    return join(this.dir, 'results', `${safeName(step)}.${kind}.csv`);
  }

  /** Sortable by time, unique within the folder. */
  newRunId(): string {
    this.#sequence += 1;
    return `${compactTime(new Date())}-${process.pid}-${this.#sequence}`;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await releaseLock(this.lock);
  }
}

/** A step name as a file name: letters, digits, dot, dash and underscore; anything else hex-escaped. */
function safeName(step: string): string {
  return step.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.codePointAt(0)?.toString(16)}`);
}
