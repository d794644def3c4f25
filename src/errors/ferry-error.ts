import type { ErrorCode } from './codes.ts';

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

  constructor(code: ErrorCode, message: string, options: FerryErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.location = options.location;
    this.hint = options.hint;
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

export function isFerryError(error: unknown): error is FerryError {
  return error instanceof FerryError;
}
