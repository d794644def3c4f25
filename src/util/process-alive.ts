import { readFileSync } from 'node:fs';

/**
 * Whether a process with this id runs on this machine (one we may not signal still runs). A
 * zombie (killed, not yet reaped by its parent: in a container whose first process never reaps,
 * that can last for ever) does not run.
 */
export function processAlive(pid: number): boolean {
  // 0 and negative ids name process groups (kill(0) and kill(-1) reach this process itself).
  if (!Number.isSafeInteger(pid) || pid <= 0) return false;
  try {
    process.kill(pid, 0);
  } catch (error) {
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
  return !zombie(pid);
}

/** Linux says a process's state in /proc/PID/stat, after its name in parentheses; elsewhere: not known, so no. */
function zombie(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) === 'Z';
  } catch {
    return false;
  }
}

/**
 * When a process started, in clock ticks since the machine booted (Linux: field 22 of
 * /proc/PID/stat), or null where that cannot be read. With the id it names one process: an id
 * given again to another program after a restart comes with another start time.
 */
export function processStartTime(pid: number): string | null {
  if (!Number.isSafeInteger(pid) || pid <= 0) return null;
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    // The fields after the name (which may hold spaces and parentheses) start at field 3.
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19] ?? null;
  } catch {
    return null;
  }
}

/** This boot of the machine (Linux: /proc/sys/kernel/random/boot_id), or null where it is not known. */
export function bootId(): string | null {
  try {
    return readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim() || null;
  } catch {
    return null;
  }
}
