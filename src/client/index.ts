export { type Clock, systemClock } from './clock.ts';
export { AmbiguousWriteError, ApiError, type ApiErrorDetails, type FieldError } from './errors.ts';
export type { GovernorOptions, GovernorState, HeaderValue, RateGovernor } from './governor.ts';
export type { RetryOptions } from './retry.ts';
export type { SharedBudget, SharedWindow, SlotClaim, SlotGrant } from './shared-budget.ts';
export {
  Transport,
  type ApiRequest,
  type ApiResponse,
  type HttpMethod,
  type TokenSource,
  type TransportOptions,
  type TransportWait,
} from './transport.ts';
export { CrmClient, EVERY_TASK_STATUS, type Embed, type Filter, type PageOptions } from './client.ts';
export type { Redactor } from './redact.ts';
export { ENTITY_API, RecordService } from './records.ts';
export { parseLinkHeader } from './pagination.ts';
export type * from './schemas.ts';
export {
  v1LiveConnection,
  V1Reader,
  type V1Body,
  type V1LiveConnection,
  type V1Page,
  type V1ReadLimits,
  type V1ReaderOptions,
  type V1WireFormat,
} from './v1-reader.ts';
export { catalogWithOnly, readAccountCatalog, readCatalogPart } from './account-catalog.ts';
export { accountOf, connect, type ConnectOptions } from './connect.ts';
export { CredentialStore, defaultCredentialsPath } from './credentials.ts';
export { loginWithBrowser, profileFromAnswer, revokeToken, type OAuthSession } from './oauth.ts';
export type {
  AccountCatalog,
  CatalogFieldDefinition,
  CatalogList,
  CatalogPart,
  CatalogMilestone,
  CatalogStage,
  CatalogUser,
  CatalogWanted,
  FieldEntity,
  NamedItem,
  WritingUser,
} from './catalog.ts';
