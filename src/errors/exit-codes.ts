import type { ErrorCode } from './codes.ts';
import { FerryError } from './ferry-error.ts';

/** Process exit codes, decided here and nowhere else. */
export const EXIT = {
  OK: 0,
  /** An unexpected error: a bug in crm-ferry. */
  BUG: 1,
  /** Bad usage, configuration, mapping or unreadable input: nothing was done. */
  INVALID_INPUT: 2,
  /** The run finished but some rows were rejected (see the rejects file). */
  ROWS_REJECTED: 3,
  /** The service refused or could not be reached. */
  SERVICE: 4,
  /** Interrupted by Ctrl-C (SIGINT); the run can be resumed. */
  INTERRUPTED: 130,
  /** Stopped by SIGTERM (a service manager, `kill`), 128 + 15; the run can be resumed. */
  TERMINATED: 143,
} as const;

export function exitCodeFor(error: unknown): number {
  if (!(error instanceof FerryError)) return EXIT.BUG;
  return exitCodeForCode(error.code);
}

export function exitCodeForCode(code: ErrorCode): number {
  if (code === 'INTERNAL') return EXIT.BUG;
  if (code.startsWith('API_')) return EXIT.SERVICE;
  return EXIT.INVALID_INPUT;
}
