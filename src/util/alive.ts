import { readFileSync } from 'node:fs';

/**
 * Whether a process with this id runs on this machine (one we may not signal still runs). A
 * zombie (killed, not yet reaped by its parent: in a container whose first process never reaps,
 * that can last for ever) does not run.
 */
export function processAlive(pid: number): boolean {
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
