import { constants } from 'node:fs';
import { lstat, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { basename, join, resolve } from 'node:path';
import { FerryError } from '../errors/index.ts';
import {
  checkNotSpecial,
  ENTITIES,
  type Entity,
  fileNameFor,
  jsonText,
  makePrivateFolder,
  removeStaleTemps,
  writeFileAtomic,
} from '../util/index.ts';
import {
  type JournalEntry,
  JournalWriter,
  type JournalSeal,
  type LoadedJournal,
  loadJournal,
  openStateFile,
  readJournal,
} from './journal.ts';
import { type HeldLock, releaseLock, takeLock } from './lock.ts';
import { type StateStoreOptions, StoreState } from './store-state.ts';
import { pullFile, pullJournal, pushJournal } from './store-sync.ts';

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
  /**
   * Keep the state in a PostgreSQL store too (`--state-store`): the folder is then the run's
   * working copy, brought up to what the store holds when the state is opened (on any machine),
   * and every durable journal group, file and result is committed there. @default the folder alone
   */
  store?: StateStoreOptions | undefined;
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
  /** What each journal held when its runs last said so, by the journal's file name (see JournalSeal). */
  journals?: Record<string, JournalSeal>;
  /** The store this folder is the working copy of, and the state's key there (see OpenStateOptions.store). */
  store?: { at: string; key: string };
}

/**
 * The names crm-ferry gives inside a state folder. None may be a link: one planted there would
 * carry the run's files (customer data) to a folder elsewhere, or read another file as the state.
 */
const OWN_NAMES = [
  STATE_FILE,
  LOCK_FILE,
  'journal',
  'results',
  'spool',
  join('spool', 'dry-run'),
  'steps.json',
  'rollbacks.json',
];

const LINK_HINT =
  'Something replaced part of the state folder with a link. Remove the link and put back what was there (the state folder is written by crm-ferry only), or give another --state-dir.';

/** Refuses a state folder in which one of crm-ferry's own names is a link. */
async function refuseLinks(dir: string): Promise<void> {
  for (const name of OWN_NAMES) {
    const info = await lstat(join(dir, name)).catch(() => null);
    if (info?.isSymbolicLink()) {
      throw new FerryError(
        'PATH_UNSAFE',
        `the state folder ${dir}: ${name} is a link, which crm-ferry does not follow`,
        { location: { file: join(dir, name) }, hint: LINK_HINT },
      );
    }
  }
}

/**
 * The text of a file of the state folder, read without following a link (PATH_UNSAFE) and only
 * when it is a plain file; null when it does not exist.
 */
export async function readStateText(file: string): Promise<string | null> {
  let handle;
  try {
    handle = await openStateFile(file, constants.O_RDONLY | constants.O_NONBLOCK, basename(file));
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw error;
  }
  try {
    if (!(await handle.stat()).isFile())
      throw new FerryError('PATH_UNSAFE', `${file} is not a plain file`, { location: { file }, hint: LINK_HINT });
    return await handle.readFile('utf8');
  } finally {
    await handle.close();
  }
}

/** The state's name for a step's file: hex-escaped, and shortened with a hash when too long for the file system. */
function stepFileName(step: string, suffix: string): string {
  return fileNameFor(`${safeName(step)}${suffix}`);
}

/** Said by every command that binds a state (setup, rollback, verify and restore have no --fresh). */
const OTHER_ACCOUNT_HINT =
  'A state is never carried over to another account. Give another --state-dir for this account; `run` and `import` also take --fresh, to start over here (what was written to the other account stays there).';

function compactTime(date: Date): string {
  return date
    .toISOString()
    .replace(/[-:]/g, '')
    .replace(/\.(\d{3})Z$/, '$1Z');
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
  /** Saves of state.json, one after the other. */
  #saving: Promise<void> = Promise.resolve();

  /** The state's copy in a PostgreSQL store, when it is kept there too. */
  #stored: StoreState | null = null;

  private constructor(
    readonly dir: string,
    private readonly lock: HeldLock,
  ) {}

  static async open(options: OpenStateOptions): Promise<StateDir> {
    const { dir } = options;
    checkNotSpecial(
      dir,
      `the state folder ${dir}`,
      (message) =>
        new FerryError('USAGE', `${message}; give a folder on a disk (--state-dir)`, { location: { file: dir } }),
    );
    const existing = await lstat(dir).catch(() => null);
    if (existing && !existing.isDirectory()) {
      throw new FerryError('USAGE', `the state folder ${dir} exists and is not a folder`, {
        location: { file: dir },
        hint: 'Give another --state-dir.',
      });
    }
    if (existing) await refuseLinks(dir);
    if (options.existing && !options.store && !(await lstat(join(dir, STATE_FILE)).catch(() => null)))
      throw noState(dir);
    try {
      // 0700 whatever the umask: the state holds the rows as they were written.
      if (!existing) await makePrivateFolder(dir, { what: 'the state folder' });
    } catch (error) {
      throw new FerryError('JOURNAL_WRITE', `cannot create the state folder ${dir}: ${(error as Error).message}`, {
        location: { file: dir },
        cause: error,
      });
    }
    // The store's lock first: a run refused there leaves the folder as it was, even with --fresh;
    // held, it vouches that a folder lock another machine left (a shared volume) is stale.
    const stored = options.store ? await StoreState.open(options.store) : null;
    let lock: HeldLock;
    try {
      lock = await takeLock(join(dir, LOCK_FILE), { otherHostsGone: stored !== null });
    } catch (error) {
      await stored?.close().catch(() => undefined);
      throw error;
    }
    const state = new StateDir(dir, lock);
    state.#stored = stored;
    try {
      // What an earlier run could not remove (killed in an atomic write): `.state.json.PID.N.tmp`.
      for (const folder of [dir, join(dir, 'results'), join(dir, 'journal')]) await removeStaleTemps(folder);
      if (options.fresh) {
        await stored?.setAside();
        await state.#moveAside();
      }
      if (state.#stored) {
        await state.#syncStore();
        if (options.existing && !(await lstat(join(dir, STATE_FILE)).catch(() => null)))
          throw noState(dir, state.#stored);
      }
      await state.#bind(options.account);
      await state.#checkUsers(await options.users(), options.keepUsers ?? true);
      for (const folder of ['journal', 'results'])
        await makePrivateFolder(join(dir, folder), { what: 'the state folder', hint: LINK_HINT }, { tighten: true });
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
      text = await readStateText(file);
    } catch (error) {
      if (error instanceof FerryError) throw error;
      throw new FerryError('JOURNAL_CORRUPT', `cannot read ${file}: ${(error as Error).message}`, {
        location: { file },
        cause: error,
      });
    }
    if (text === null) {
      await this.#save({ format: FORMAT, account, created: new Date().toISOString(), ...this.#storeMark() });
      return;
    }
    let state: StateFile;
    try {
      state = JSON.parse(text) as StateFile;
      if (
        typeof state.format !== 'number' ||
        typeof state.account?.baseUrl !== 'string' ||
        typeof state.account?.account !== 'string'
      )
        throw new Error('fields missing');
    } catch (error) {
      throw new FerryError('JOURNAL_CORRUPT', `${file} is damaged (${(error as Error).message})`, {
        location: { file },
        cause: error,
        hint: 'Restore it from a copy, or start over with --fresh.',
      });
    }
    if (state.format > FORMAT) {
      throw new FerryError(
        'JOURNAL_CORRUPT',
        `${file} was written by a newer crm-ferry (format ${state.format}); this one reads format ${FORMAT}`,
        { location: { file }, hint: 'Update crm-ferry.' },
      );
    }
    if (state.account.baseUrl !== account.baseUrl || state.account.account !== account.account) {
      const of = (a: AccountIdentity): string => (a.account === a.baseUrl ? a.baseUrl : `${a.account} (${a.baseUrl})`);
      throw new FerryError(
        'JOURNAL_ACCOUNT',
        `the state in ${this.dir} belongs to ${of(state.account)}, and this run is connected to ${of(account)}`,
        {
          location: { file },
          hint: OTHER_ACCOUNT_HINT,
        },
      );
    }
    this.#state = state;
    if (this.#stored && !this.#mirrors(state)) await this.#save({ ...state, ...this.#storeMark() });
  }

  #storeMark(): Pick<StateFile, 'store'> {
    return this.#stored ? { store: { at: this.#stored.address, key: this.#stored.key } } : {};
  }

  /** Whether the folder's state says it is the working copy of the store's state under this key. */
  #mirrors(state: StateFile | null): boolean {
    return state?.store?.key === this.#stored?.key && state?.store?.at === this.#stored?.address;
  }

  /**
   * Brings the folder to the state the store keeps under the key, before anything in it is read.
   * A store without the state takes the folder's (a state kept in a folder, now moved into the
   * store); a folder that is not the working copy of this state (another key or store, or none)
   * is first set aside into previous-<time>/, never deleted.
   */
  async #syncStore(): Promise<void> {
    const stored = this.#stored as StoreState;
    let folder: StateFile | null = null;
    try {
      folder = JSON.parse((await readStateText(join(this.dir, STATE_FILE))) ?? 'null') as StateFile | null;
    } catch {
      folder = null;
    }
    if (!(await stored.holdsState())) {
      await stored.clearUnfinished();
      if (folder !== null && folder.store === undefined) await this.#pushToStore(folder);
      else if (folder !== null) await this.#moveAside();
      return;
    }
    if (folder !== null && !this.#mirrors(folder)) {
      await this.#moveAside();
      folder = null;
    }
    for (const name of ['journal', 'results'])
      await makePrivateFolder(join(this.dir, name), { what: 'the state folder', hint: LINK_HINT }, { tighten: true });
    const files = new Set(await stored.fileNames());
    for (const name of files) {
      if (name === STATE_FILE) continue;
      // Only the names crm-ferry gives: a row of the store never writes outside the folder.
      if (!/^(steps\.json|rollbacks\.json|results\/[^/\\]+)$/.test(name) || name.endsWith('/..') || name.endsWith('/.'))
        throw new FerryError(
          'JOURNAL_STORE',
          `the state ${JSON.stringify(stored.key)} in the state store at ${stored.address} holds a file named ${JSON.stringify(name)}, which crm-ferry does not write`,
          { hint: 'The store is written by crm-ferry only: remove that row, or give another --state-key.' },
        );
      await pullFile(join(this.dir, name), stored.fileParts(name));
    }
    const results = await readdir(join(this.dir, 'results'));
    for (const name of results)
      if (!files.has(`results/${name}`)) await rm(join(this.dir, 'results', name), { force: true });
    for (const name of [STEPS_FILE, ROLLBACKS_FILE])
      if (!files.has(name)) await rm(join(this.dir, name), { force: true });
    const ends = await stored.journalEnds();
    for (const [name, end] of ends)
      await pullJournal(stored, name, join(this.dir, 'journal', name), folder?.journals?.[name] ?? null, end);
    for (const name of await readdir(join(this.dir, 'journal')))
      if (!ends.has(name)) await rm(join(this.dir, 'journal', name), { force: true });
    const kept = JSON.parse(((await stored.readFile(STATE_FILE)) as Buffer).toString('utf8')) as StateFile;
    await writeFileAtomic(
      join(this.dir, STATE_FILE),
      jsonText({ ...kept, journals: Object.fromEntries(ends), ...this.#storeMark() }),
    );
  }

  /** Moves a state kept in the folder alone into the store: its journals first, its state.json last. */
  async #pushToStore(folder: StateFile): Promise<void> {
    const stored = this.#stored as StoreState;
    const journals = await readdir(join(this.dir, 'journal')).catch(() => [] as string[]);
    for (const name of journals.filter((n) => n.endsWith('.jsonl')))
      await pushJournal(stored, name, join(this.dir, 'journal', name), folder.journals?.[name] ?? null);
    await this.#pushFiles([STEPS_FILE, ROLLBACKS_FILE]);
    await this.#pushResults();
    await stored.putFile(STATE_FILE, jsonText({ ...folder, ...this.#storeMark() }));
  }

  /** Keeps the folder's files of these names in the store (those that exist). */
  async #pushFiles(names: string[]): Promise<void> {
    for (const name of names) {
      const text = await readStateText(join(this.dir, name));
      if (text !== null) await this.#stored?.putFile(name, text);
    }
  }

  /** Keeps the folder's results in the store: those files, and no others. */
  async #pushResults(): Promise<void> {
    if (!this.#stored) return;
    const files = new Map<string, string>();
    for (const name of await readdir(join(this.dir, 'results')).catch(() => [] as string[])) {
      if (name.includes('.tmp')) continue;
      files.set(`results/${name}`, join(this.dir, 'results', name));
    }
    await this.#stored.putFolder('results/', files);
  }

  /** Writes state.json whole, under a temporary name renamed over it: never half a file; saves go one after the other. */
  async #save(state: StateFile): Promise<void> {
    this.#state = state;
    const saved = this.#saving.then(async () => {
      const text = jsonText(this.#state);
      await writeFileAtomic(join(this.dir, STATE_FILE), text);
      await this.#stored?.putFile(STATE_FILE, text);
    });
    this.#saving = saved.catch(() => undefined);
    await saved;
  }

  /** When the state was first written (a state from before this was kept: the Unix epoch). */
  get created(): Date {
    const created = Date.parse(this.#state?.created ?? '');
    return new Date(Number.isNaN(created) ? 0 : created);
  }

  /** What the step's journal held when its runs last said so; null for a journal kept before seals were. */
  sealOf(step: string): JournalSeal | null {
    const seal = this.#state?.journals?.[stepFileName(step, '.jsonl')];
    return seal && typeof seal.lines === 'number' && typeof seal.bytes === 'number' && typeof seal.crc === 'string'
      ? seal
      : null;
  }

  async #saveSeal(step: string, seal: JournalSeal): Promise<void> {
    const state = this.#state;
    if (state === undefined) return;
    await this.#save({ ...state, journals: { ...state.journals, [stepFileName(step, '.jsonl')]: seal } });
  }

  /**
   * Loads a step's journal, refusing one that does not start with what its runs wrote
   * (JOURNAL_CORRUPT), unless `trustAsItIs` (--reconcile: the run then looks rows up in the
   * account instead of trusting the journal to know them all).
   */
  loadJournal(step: string, options: { trustAsItIs?: boolean } = {}): Promise<LoadedJournal> {
    return loadJournal(this.journalFile(step), { seal: options.trustAsItIs ? null : this.sealOf(step) });
  }

  /** The entries of a step's journal in order, with the same check as loadJournal. */
  readJournal(step: string): AsyncGenerator<JournalEntry> {
    return readJournal(this.journalFile(step), { seal: this.sealOf(step) });
  }

  /** A writer for a step's journal loaded by loadJournal; what it makes durable is sealed in state.json as it goes. */
  openJournal(step: string, loaded: LoadedJournal): Promise<JournalWriter> {
    const stored = this.#stored;
    const name = stepFileName(step, '.jsonl');
    return JournalWriter.open(this.journalFile(step), {
      seal: loaded.seal,
      // Kept in a store too: a group is durable once the store has committed it as well.
      ...(stored ? { onGroup: (group, before, after) => stored.appendGroup(name, group, before, after) } : {}),
      onSeal: (seal) => this.#saveSeal(step, seal),
      // The rows find the bodies the run folds in on the lines it wrote them on.
      onBody: (key, at, length, body) => loaded.rows.wrote(key, at, length, body),
    });
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
      throw new FerryError(
        'JOURNAL_ACCOUNT',
        `the state in ${this.dir} belongs to another account at ${state.account.baseUrl}: none of this account's users (ids ${ids.slice(0, 5).join(', ')}${ids.length > 5 ? ', ...' : ''}) is among the users of the account it was written against (ids ${known.slice(0, 5).join(', ')}${known.length > 5 ? ', ...' : ''})`,
        {
          location: { file },
          hint: OTHER_ACCOUNT_HINT,
        },
      );
    }
    const users = [...new Set([...known, ...ids])].sort((a, b) => a - b);
    if (!keep || users.length === known.length) return;
    await this.#save({ ...state, users });
  }

  journalFile(step: string): string {
    return join(this.dir, 'journal', stepFileName(step, '.jsonl'));
  }

  /** `dry-run.rejects`: a dry run's rejects, kept apart so that the last real run's stay. */
  resultFile(step: string, kind: 'success' | 'rejects' | 'dry-run.rejects'): string {
    return join(this.dir, 'results', stepFileName(step, `.${kind}.csv`));
  }

  /**
   * Where the reads of live steps spool what they fetched (src/sources/v1-spool.ts: a spool per
   * list read, shared by the steps reading it), under the state's lock like the rest. A dry run's
   * spools are its own, kept apart so that a real run's stay.
   */
  spoolDir(dryRun: boolean): string {
    return join(this.dir, 'spool', ...(dryRun ? ['dry-run'] : []));
  }

  /** Sortable by time, unique within the folder. */
  newRunId(): string {
    this.#sequence += 1;
    return `${compactTime(new Date())}-${process.pid}-${this.#sequence}`;
  }

  /** Records the steps of a run (bindStateSteps), in the store too when the state is kept there. */
  async bindSteps(steps: StateStep[], write: boolean): Promise<void> {
    await bindStateSteps(this.dir, steps, write, this.#stored !== null);
    if (write) await this.#pushFiles([STEPS_FILE]);
  }

  /** Records which steps the state holds (writeStateSteps), in the store too when the state is kept there. */
  async writeSteps(steps: StateStep[]): Promise<void> {
    await writeStateSteps(this.dir, steps);
    await this.#pushFiles([STEPS_FILE]);
  }

  /** Records the rollbacks done and under way (writeRollbacks), in the store too when the state is kept there. */
  async writeRollbacks(rollbacks: Rollbacks): Promise<void> {
    await writeRollbacks(this.dir, rollbacks);
    await this.#pushFiles([ROLLBACKS_FILE]);
  }

  /** Where the state is kept besides the folder, for messages: null for the folder alone. */
  get storedIn(): { at: string; key: string } | null {
    return this.#stored ? { at: this.#stored.address, key: this.#stored.key } : null;
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    try {
      await this.#saving;
      // The results of the run, kept with the state: the next run on any machine finds them.
      if (this.#stored) await this.#pushResults();
    } finally {
      await this.#stored?.close().catch(() => undefined);
      await releaseLock(this.lock);
    }
  }
}

/** No state to act on (rollback, verify): none in the folder, nor in the store when one is given. */
function noState(dir: string, stored?: StoreState): FerryError {
  return new FerryError(
    'USAGE',
    stored
      ? `there is no import state ${JSON.stringify(stored.key)} in the state store at ${stored.address}: no run kept one there`
      : `there is no import state in ${dir}: no run kept one there`,
    {
      location: { file: dir },
      hint: stored
        ? 'Give the --state-key the runs were given, or the plan or mapping they ran (its file name is the key by default), with the same --state-store.'
        : 'Give the plan or mapping the run was made with (its state is .crm-ferry beside it; for a ready-made one, .crm-ferry/NAME in the folder it was run from), or the --state-dir it was given.',
    },
  );
}

/** A step name as a file name: letters, digits, dot, dash and underscore; anything else hex-escaped. */
function safeName(step: string): string {
  return step.replace(/[^A-Za-z0-9._-]/g, (c) => `%${c.codePointAt(0)?.toString(16)}`);
}

// The steps a state holds and the rollbacks done in it: the importer and rollback both bind to
// the state folder through these, not to each other.

/** The file beside the journals that says which steps a state holds, in run order, and their kinds. */
const STEPS_FILE = 'steps.json';

export interface StateStep {
  name: string;
  entity: Entity;
  /** The plan, or the mapping of a one-file import, whose runs write the step's journal (absolute). */
  source?: string;
}

export interface StateSteps {
  steps: StateStep[];
}

/** Records which steps (and of what kind) a state holds, in the order a run writes them. */
export async function writeStateSteps(dir: string, steps: StateStep[]): Promise<void> {
  const known = await readStateSteps(dir).catch(() => ({ steps: [] }) as StateSteps);
  const merged = [...steps, ...known.steps.filter((old) => !steps.some((s) => s.name === old.name))];
  await writeFileAtomic(join(dir, STEPS_FILE), jsonText({ steps: merged }));
}

export async function readStateSteps(dir: string): Promise<StateSteps> {
  let parsed: unknown;
  try {
    const text = await readStateText(join(dir, STEPS_FILE));
    if (text === null) throw new Error('missing');
    parsed = JSON.parse(text);
  } catch (error) {
    if (error instanceof FerryError) throw error;
    throw new FerryError(
      'JOURNAL_CORRUPT',
      `${join(dir, STEPS_FILE)} is missing or unreadable: is ${dir} a state folder an import wrote?`,
      { location: { file: join(dir, STEPS_FILE) }, cause: error },
    );
  }
  const steps = (parsed as StateSteps | null)?.steps;
  if (
    !Array.isArray(steps) ||
    !steps.every(
      (s) =>
        typeof s?.name === 'string' &&
        (ENTITIES as readonly string[]).includes(s.entity) &&
        (s.source === undefined || typeof s.source === 'string'),
    )
  ) {
    throw new FerryError('JOURNAL_CORRUPT', `${join(dir, STEPS_FILE)} does not list the steps as expected`, {
      location: { file: join(dir, STEPS_FILE) },
    });
  }
  return { steps };
}

/** Runs that a rollback undid, so that the next rollback goes one further back. */
const ROLLBACKS_FILE = 'rollbacks.json';

/**
 * Binds a run's steps to the state: refuses a state whose rollback was interrupted (see
 * refusePendingRollback) and a step whose journal another plan or mapping wrote, then (unless
 * `write` is false: a dry run) records the steps. A journal is named after its step,
 * and a one-file import's step after the mapping's `name:`: two mappings of one name in one folder
 * (or two plans there with a step of one name) would share the folder's state, each run taking the
 * other's records for its own rows (updating them, or deleting them as missing). Refused rather
 * than keyed by the mapping's path: a journal keyed by path would be lost, silently, when the file
 * is renamed, and every row created again. A state written before sources were kept takes the
 * run's.
 */
export async function bindStateSteps(
  dir: string,
  steps: StateStep[],
  write: boolean,
  anyFolder = false,
): Promise<void> {
  await refusePendingRollback(dir);
  const known = await readStateSteps(dir).catch(() => ({ steps: [] }) as StateSteps);
  for (const step of steps) {
    const other = known.steps.find((s) => s.name === step.name)?.source;
    if (other === undefined || step.source === undefined || resolve(other) === resolve(step.source)) continue;
    // A state kept in a store is run from any folder or machine: the same file name is the same plan.
    if (anyFolder && basename(other) === basename(step.source)) continue;
    throw new FerryError(
      'USAGE',
      `step \`${step.name}\` of the state in ${dir} was written by runs of ${other}; ${step.source} has a step of the same name, and the two would share its journal, each taking the other's records for its own rows`,
      {
        location: { file: step.source },
        hint: `Give one of them another name (\`name:\` in a mapping, the step's name in a plan) or its own --state-dir. If ${basename(step.source)} is ${basename(other)} renamed or moved, give it its old name back, or start over with --fresh.`,
      },
    );
  }
  if (write) await writeStateSteps(dir, steps);
}

/** A rollback that started writing and has not finished: what it undoes, under which run id. */
export interface PendingRollback {
  run: string;
  targets: string[];
  started: string;
}

export interface Rollbacks {
  undone: string[];
  pending?: PendingRollback;
}

export async function readRollbacks(dir: string): Promise<Rollbacks> {
  let parsed: Partial<Rollbacks>;
  // A link is refused (PATH_UNSAFE); a missing or damaged file says no rollback was done.
  const text = await readStateText(join(dir, ROLLBACKS_FILE));
  try {
    parsed = JSON.parse(text ?? '') as Partial<Rollbacks>;
  } catch {
    return { undone: [] };
  }
  const strings = (list: unknown): string[] =>
    Array.isArray(list) ? list.filter((r): r is string => typeof r === 'string') : [];
  const pending = parsed.pending;
  const rollbacks: Rollbacks = { undone: strings(parsed.undone) };
  if (pending && typeof pending.run === 'string' && typeof pending.started === 'string')
    rollbacks.pending = { run: pending.run, targets: strings(pending.targets), started: pending.started };
  return rollbacks;
}

export async function writeRollbacks(dir: string, rollbacks: Rollbacks): Promise<void> {
  await writeFileAtomic(join(dir, ROLLBACKS_FILE), jsonText(rollbacks));
}

/**
 * Refuses to write into a state whose rollback was interrupted. Part of its records are deleted or
 * set back and part are not, and a record whose update was under way may be set back or not: the
 * journal cannot tell. A run now would take that mix for what its last run wrote (a row left
 * unchanged in the input sends nothing, so a record set back stays set back), and the rollback
 * could then no longer finish as asked. Refused rather than finished by the run: the run is not
 * the command that decides to delete records.
 */
export async function refusePendingRollback(dir: string): Promise<void> {
  const { pending } = await readRollbacks(dir);
  if (!pending) return;
  const runs = pending.targets.length === 1 ? `run ${pending.targets[0]}` : `runs ${pending.targets.join(', ')}`;
  throw new FerryError(
    'USAGE',
    `a rollback of ${runs} in ${dir}, started ${pending.started}, did not finish: some of their records are deleted or set back and others not, so a run now would take that mix for what was written and the rollback could no longer finish`,
    {
      location: { file: join(dir, ROLLBACKS_FILE) },
      hint: 'Finish the rollback first (`crm-ferry rollback` with the same plan, mapping or --state-dir goes on where it stopped), then run again.',
    },
  );
}
