export { type Clock, systemClock } from './clock.ts';
export { AmbiguousWriteError, ApiError, errorFromStatus, type ApiErrorDetails, type FieldError } from './errors.ts';
export { RateGovernor, type GovernorOptions, type GovernorState } from './governor.ts';
export { Redactor } from './redact.ts';
export { parseRetryAfter, RETRYABLE_STATUSES, retryDelay, retryOptionsSchema, type RetryOptions, type RetrySettings } from './retry.ts';
export { staticToken, Transport, transportOptionsSchema, type ApiRequest, type ApiResponse, type HttpMethod, type TokenSource, type TransportOptions } from './transport.ts';
export { CrmClient, Resource, type DeleteResult, type Embed, type Filter, type ListOptions } from './client.ts';
export { parseLinkHeader } from './pagination.ts';
export type * from './schemas.ts';
