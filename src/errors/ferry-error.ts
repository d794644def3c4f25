import type { ErrorCode } from './codes.ts';

/**
 * Whose the problem is, for a program deciding what to do: `input` (the options, files, mapping,
 * plan, state folder or credentials given: fix them and run again), `service` (the service refused
 * or could not be reached) or `internal` (a bug in crm-ferry).
 */
export type ErrorKind = 'input' | 'service' | 'internal';

/** Codes where running the same call again later may succeed without changing anything. */
const RETRYABLE: ReadonlySet<ErrorCode> = new Set<ErrorCode>([
  'API_RATE_LIMITED',
  'API_NETWORK',
  'API_TIMEOUT',
  'API_SERVER',
  'API_AMBIGUOUS_WRITE',
  'JOURNAL_LOCKED',
  // The state store's server gone for a while, or another process's run on the state ended.
  'JOURNAL_STORE',
]);

/** The kind of an error code (see ErrorKind): the same split as the exit codes. */
export function kindOfCode(code: ErrorCode): ErrorKind {
  if (code === 'INTERNAL') return 'internal';
  return code.startsWith('API_') ? 'service' : 'input';
}

/** Where in the input an error was found. Every field is optional; set what is known. */
export interface ErrorLocation {
  file?: string;
  sheet?: string;
  /** Row or line number as a person counts them: the first line of a file is 1. */
  row?: number;
  line?: number;
  column?: string | number;
  /** Path of the element in an XML document, e.g. `/parties/person[12]/contacts`. */
  elementPath?: string;
  /** Path in a mapping or plan file, e.g. `fields[3].value.transform[1]`. */
  yamlPath?: string;
}

export interface FerryErrorOptions {
  location?: ErrorLocation;
  cause?: unknown;
  /** What the user can do about it; printed after the message by the CLI. */
  hint?: string;
}

/** The base of every error crm-ferry raises on purpose. Anything else reaching the CLI is a bug. */
export class FerryError extends Error {
  readonly code: ErrorCode;
  readonly location: ErrorLocation | undefined;
  readonly hint: string | undefined;
  /**
   * What a summary of the work done before the error says, when the call that threw had one
   * (an export's or a backup's records so far). Undefined otherwise.
   */
  partial: unknown;

  constructor(code: ErrorCode, message: string, options: FerryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.location = options.location;
    this.hint = options.hint;
    this.partial = undefined;
  }

  /** Whose the problem is: `input`, `service` or `internal` (see ErrorKind). */
  get kind(): ErrorKind {
    return kindOfCode(this.code);
  }

  /**
   * Whether the same call may succeed if made again later, unchanged: the service was busy, slow
   * or unreachable, a write's outcome was unknown (a resumed run settles it), or another run held
   * the state folder's lock.
   */
  get retryable(): boolean {
    return RETRYABLE.has(this.code);
  }
}

/** Formats a location as `file:row` style text, for messages and logs. */
export function formatLocation(location: ErrorLocation | undefined): string {
  if (!location) return '';
  const parts: string[] = [];
  if (location.file) parts.push(location.file);
  if (location.sheet) parts.push(`sheet ${JSON.stringify(location.sheet)}`);
  if (location.line !== undefined) parts.push(`line ${location.line}`);
  if (location.row !== undefined) parts.push(`row ${location.row}`);
  if (location.column !== undefined) parts.push(`column ${JSON.stringify(String(location.column))}`);
  if (location.elementPath) parts.push(location.elementPath);
  if (location.yamlPath) parts.push(location.yamlPath);
  return parts.join(', ');
}

/**
 * `error` as a FerryError: itself when it is one, else an INTERNAL one (a bug in crm-ferry)
 * naming the call and keeping the error as its cause. A library call ends with this, so that a
 * program catches one class.
 */
export function asFerryError(error: unknown, call: string): FerryError {
  if (error instanceof FerryError) return error;
  const message = error instanceof Error ? error.message : String(error);
  return new FerryError('INTERNAL', `${call} failed unexpectedly: ${message}`, {
    cause: error,
    hint: 'This is a bug in crm-ferry; please report it with the message.',
  });
}

/** Runs a library call's work, giving any error it ends with as a FerryError (asFerryError). */
export async function guarded<T>(call: string, work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    throw asFerryError(error, call);
  }
}

/** `work` as a library call named `call`: the same call, whatever it ends with a FerryError (guarded). */
export function guard<A extends unknown[], R>(
  call: string,
  work: (...args: A) => Promise<R>,
): (...args: A) => Promise<R> {
  return (...args) => guarded(call, () => work(...args));
}

export function isFerryError(error: unknown): error is FerryError {
  return error instanceof FerryError;
}
