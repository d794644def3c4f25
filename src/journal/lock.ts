import { randomBytes } from 'node:crypto';
import { link, lstat, readFile, rm, stat, unlink, writeFile } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { FerryError } from '../errors/index.ts';
import { bootId, printable, processAlive, processStartTime } from '../util/index.ts';

/**
 * Tokens of the locks this process holds. A lock naming this process's id without one of them
 * was left by an earlier process that had the same id (in a container, a restart hands out the
 * same small ids again): stale, not ours. The token also tells apart two opens in this process.
 */
const held = new Set<string>();

/** A claim on a stale lock older than this was left by a process that died while taking it over. */
const ABANDONED_CLAIM_MS = 10_000;
/** How long to wait for another process that is taking a stale lock over, between looks. */
const CLAIM_WAIT_MS = 20;
const MAX_ATTEMPTS = 500;

export interface HeldLock {
  file: string;
  token: string;
  /** The lock file's inode: release removes the lock only while it is still this file. */
  ino: number;
}

interface Holder {
  pid?: unknown;
  host?: unknown;
  since?: unknown;
  token?: unknown;
  /** processStartTime of the holder (Linux; absent in locks of earlier versions). */
  start?: unknown;
  /** bootId of the machine when the lock was taken (Linux; absent in locks of earlier versions). */
  boot?: unknown;
}

/**
 * Whether the holder of a lock on this machine still runs: its id is a process's now, and that
 * process is the one that took the lock (the same boot, the same start time, where both are
 * known). An id of 0 or below names no process: such a lock is stale.
 */
function holderRuns(holder: Holder, pid: number): boolean {
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  if (pid === process.pid) return typeof holder.token === 'string' && held.has(holder.token);
  if (!processAlive(pid)) return false;
  const boot = bootId();
  if (typeof holder.boot === 'string' && boot !== null && holder.boot !== boot) return false;
  const start = processStartTime(pid);
  if (typeof holder.start === 'string' && start !== null && holder.start !== start) return false;
  return true;
}

/** What is at `file` now: its inode and its text, or null when there is no lock. */
async function look(file: string): Promise<{ ino: number; text: string } | null> {
  let info;
  try {
    info = await lstat(file);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw lockError(file, error);
  }
  // A lock is a file crm-ferry links into place: a link or anything else there was planted.
  if (!info.isFile()) {
    throw new FerryError(
      'PATH_UNSAFE',
      `the lock ${file} is ${info.isSymbolicLink() ? 'a link' : 'not a plain file'}, which crm-ferry did not make`,
      {
        location: { file },
        hint: `Remove ${file}: no crm-ferry run holds it.`,
      },
    );
  }
  try {
    const text = await readFile(file, 'utf8');
    return { ino: info.ino, text };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw lockError(file, error);
  }
}

function lockError(file: string, error: unknown): FerryError {
  return new FerryError('JOURNAL_WRITE', `cannot take the lock ${file}: ${(error as Error).message}`, {
    location: { file },
    cause: error,
  });
}

/**
 * Takes the lock `file` for this process, or throws JOURNAL_LOCKED naming the run that holds it.
 *
 * A lock is made whole under a temporary name and linked to `file` (link fails when `file`
 * exists), so no one ever reads a lock half-written. A lock whose process is gone is taken over
 * without ever removing a file by name alone: the process that takes it over first links it to a
 * claim named after its inode (only one process can make that link), checks that the claim is the
 * very lock it found stale (inode and text), and only then removes it. Another process that found
 * the same stale lock at the same instant finds the claim taken, waits, and then meets the new
 * holder's lock: two runs starting together over a stale lock never both take it.
 */
export async function takeLock(
  file: string,
  options: {
    /**
     * The caller holds a lock every process working on this state takes first (a state store's
     * run lock, which a dead process gives back): a lock another machine left is then stale, as a
     * pod's that died on a shared volume. @default false
     */
    otherHostsGone?: boolean;
  } = {},
): Promise<HeldLock> {
  const token = randomBytes(12).toString('hex');
  const mine = JSON.stringify({
    pid: process.pid,
    host: hostname(),
    since: new Date().toISOString(),
    token,
    start: processStartTime(process.pid),
    boot: bootId(),
  });
  const temp = `${dirname(file)}/.${basename(file)}.${process.pid}.${token}.tmp`;
  try {
    await writeFile(temp, mine, { mode: 0o600, flag: 'wx' });
  } catch (error) {
    throw lockError(file, error);
  }
  try {
    for (let attempt = 0; attempt < MAX_ATTEMPTS; attempt += 1) {
      held.add(token);
      try {
        await link(temp, file);
        return { file, token, ino: (await stat(temp)).ino };
      } catch (error) {
        held.delete(token);
        if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw lockError(file, error);
      }
      const found = await look(file);
      if (found === null) continue;
      let holder: Holder = {};
      try {
        holder = JSON.parse(found.text) as Holder;
      } catch {
        // Written by an older crm-ferry killed between creating and filling it: as good as stale.
      }
      const pid =
        typeof holder.pid === 'number' && Number.isSafeInteger(holder.pid) && holder.pid > 0 ? holder.pid : null;
      const sameHost = holder.host === hostname();
      // A lock without a valid id (none, 0, -1, not a number) names no process: stale.
      if (pid !== null && (sameHost ? holderRuns(holder, pid) : !options.otherHostsGone)) {
        const host = printable(String(holder.host));
        throw new FerryError(
          'JOURNAL_LOCKED',
          `another crm-ferry run (process ${pid}${sameHost ? '' : ` on ${host}`}, since ${printable(String(holder.since))}) is using the state in ${dirname(file)}`,
          {
            location: { file },
            hint: sameHost
              ? `Wait for it to finish, or stop it; the next run goes on from where it got. If no crm-ferry runs as process ${pid} (\`ps -p ${pid}\`), remove ${file} and run again.`
              : `A lock taken on another machine (${host}) cannot be checked from here: if no crm-ferry runs there on this state any more, remove ${file} and run again.`,
          },
        );
      }
      await takeOver(file, found);
    }
    throw new FerryError('JOURNAL_LOCKED', `cannot take the lock ${file}: it keeps being taken`, {
      location: { file },
    });
  } finally {
    await rm(temp, { force: true });
  }
}

/** Removes the stale lock `found` from `file`, unless another process does so first (then it waits for it). */
async function takeOver(file: string, found: { ino: number; text: string }): Promise<void> {
  const claim = `${file}.${found.ino}.stale`;
  try {
    await link(file, claim);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'ENOENT') return;
    if (code !== 'EEXIST') throw lockError(file, error);
    // Another process is taking it over; a claim's ctime is when it was linked.
    const since = (await lstat(claim).catch(() => null))?.ctimeMs;
    if (since !== undefined && Date.now() - since > ABANDONED_CLAIM_MS) {
      throw new FerryError('JOURNAL_LOCKED', `a crm-ferry run stopped while taking over the stale lock ${file}`, {
        location: { file },
        hint: `No run holds it: remove ${file} and ${claim}, then run again.`,
      });
    }
    await sleep(CLAIM_WAIT_MS);
    return;
  }
  try {
    const claimed = await look(claim);
    // The lock may have been replaced between the look and the link: only the stale one goes.
    if (claimed !== null && claimed.ino === found.ino && claimed.text === found.text)
      await unlink(file).catch(() => undefined);
  } finally {
    await rm(claim, { force: true });
  }
}

/** Gives the lock up: removes its file while it is still this lock (an inode is soon used again: the token says). */
export async function releaseLock(lock: HeldLock): Promise<void> {
  held.delete(lock.token);
  const now = await look(lock.file).catch(() => null);
  if (now?.ino === lock.ino && now.text.includes(lock.token)) await rm(lock.file, { force: true });
}
