import type { ErrorCode } from '../errors/index.ts';
import { FerryError } from '../errors/index.ts';

/** One field-level problem the service reported with a 422. */
export interface FieldError {
  message: string;
  resource?: string;
  field?: string;
}

export interface ApiErrorDetails {
  method: string;
  /** Path and query of the request (no host, never a token). */
  path: string;
  /** HTTP status, when an answer came. */
  status?: number;
  /** The service's own message from the error body. */
  serviceMessage?: string;
  fieldErrors?: FieldError[];
  /** Milliseconds to wait before trying again (429), when known. */
  retryAfterMs?: number;
  cause?: unknown;
  hint?: string;
}

/**
 * An error talking to the service. It says which request failed and how, and never carries the
 * token: messages are built from the method, the path and the service's answer only.
 */
export class ApiError extends FerryError {
  readonly method: string;
  readonly path: string;
  readonly status: number | undefined;
  readonly serviceMessage: string | undefined;
  readonly fieldErrors: FieldError[];
  readonly retryAfterMs: number | undefined;

  constructor(code: ErrorCode, message: string, details: ApiErrorDetails) {
    const options: { cause?: unknown; hint?: string } = {};
    if (details.cause !== undefined) options.cause = details.cause;
    if (details.hint !== undefined) options.hint = details.hint;
    super(code, `${details.method} ${details.path}: ${message}`, options);
    this.method = details.method;
    this.path = details.path;
    this.status = details.status;
    this.serviceMessage = details.serviceMessage;
    this.fieldErrors = details.fieldErrors ?? [];
    this.retryAfterMs = details.retryAfterMs;
  }
}

/**
 * A write whose outcome is unknown: the request may have been applied before the connection broke
 * or the service failed. It must not be re-sent blindly; reconcile first (look the record up).
 */
export class AmbiguousWriteError extends ApiError {
  constructor(message: string, details: ApiErrorDetails) {
    super('API_AMBIGUOUS_WRITE', message, {
      hint: 'The service may or may not have applied this write. Check whether the record exists before sending it again.',
      ...details,
    });
  }
}

const STATUS_CODES: Record<number, ErrorCode> = {
  400: 'API_BAD_REQUEST',
  401: 'API_UNAUTHORIZED',
  403: 'API_FORBIDDEN',
  404: 'API_NOT_FOUND',
  409: 'API_CONFLICT',
  422: 'API_VALIDATION',
  429: 'API_RATE_LIMITED',
};

const HINTS: Partial<Record<ErrorCode, string>> = {
  API_UNAUTHORIZED: 'Check the token (--token or CRM_FERRY_TOKEN), or log in again with `crm-ferry auth login`.',
  API_FORBIDDEN:
    'The token lacks the scope or role for this: a read-only token cannot write, and pipelines need the Administrator role.',
  API_RATE_LIMITED: 'The hourly request limit was reached; crm-ferry waits for the reset on its own when it can.',
};

/** The error for an answer with a non-success status. */
export function errorFromStatus(
  status: number,
  body: unknown,
  request: { method: string; path: string },
  extra: { retryAfterMs?: number; note?: string; hint?: string } = {},
): ApiError {
  const { note = '', hint: ownHint, ...more } = extra;
  const parsed = body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
  const serviceMessage =
    typeof parsed.message === 'string'
      ? parsed.message
      : typeof parsed.error_description === 'string'
        ? parsed.error_description
        : typeof parsed.error === 'string'
          ? parsed.error
          : undefined;
  const fieldErrors = Array.isArray(parsed.errors)
    ? parsed.errors.flatMap((e): FieldError[] =>
        e && typeof e === 'object' && typeof (e as FieldError).message === 'string' ? [e as FieldError] : [],
      )
    : [];
  const code: ErrorCode = STATUS_CODES[status] ?? (status >= 500 ? 'API_SERVER' : 'API_BAD_REQUEST');
  const details: ApiErrorDetails = { ...request, status, fieldErrors, ...more };
  if (serviceMessage !== undefined) details.serviceMessage = serviceMessage;
  const hint = ownHint ?? HINTS[code];
  if (hint !== undefined) details.hint = hint;
  const what =
    fieldErrors.length > 0 ? fieldErrors.map((e) => `${e.field ?? '?'}: ${e.message}`).join('; ') : serviceMessage;
  return new ApiError(code, `the service answered ${status}${what ? ` (${what})` : ''}${note}`, details);
}
