/**
 * The closed set of error codes crm-ferry reports. Each code names one kind of failure so that
 * scripts and the rejects file can sort errors without parsing messages.
 */
export const ERROR_CODES = [
  // Configuration and command line
  'CONFIG_INVALID',
  'CONFIG_MISSING',
  'CONFIG_INSECURE_TRANSPORT',
  'USAGE',
  // A path from outside (a backup, a journal, an attachment list) that leads out of its folder
  'PATH_UNSAFE',
  // Sources
  'SOURCE_NOT_FOUND',
  'SOURCE_UNREADABLE',
  'SOURCE_FORMAT_UNKNOWN',
  'SOURCE_ENCODING',
  'SOURCE_MALFORMED_RECORD',
  'SOURCE_COLUMN_COUNT',
  'SOURCE_FIELD_TOO_LARGE',
  'SOURCE_SHEET_NOT_FOUND',
  'SOURCE_HEADER',
  'SOURCE_XLSX_CORRUPT',
  'SOURCE_XLSX_ENCRYPTED',
  'SOURCE_XLSX_TOO_LARGE',
  'SOURCE_XML_MALFORMED',
  'SOURCE_XML_ENTITY',
  'SOURCE_JSON_MALFORMED',
  'SOURCE_TOO_DEEP',
  // Mapping
  'MAPPING_INVALID',
  'MAPPING_NOT_FOUND',
  'MAPPING_UNKNOWN_NAME',
  'MAPPING_VALUE',
  'MAPPING_REFERENCE',
  // Plans
  'PLAN_INVALID',
  'PLAN_CYCLE',
  // The service interface
  'API_UNAUTHORIZED',
  'API_FORBIDDEN',
  'API_NOT_FOUND',
  'API_VALIDATION',
  'API_BAD_REQUEST',
  'API_CONFLICT',
  'API_RATE_LIMITED',
  'API_AMBIGUOUS_WRITE',
  'API_NETWORK',
  'API_TIMEOUT',
  'API_SERVER',
  'API_RESPONSE_INVALID',
  'API_OAUTH',
  // Journal and export
  'JOURNAL_CORRUPT',
  'JOURNAL_LOCKED',
  'JOURNAL_ACCOUNT',
  'JOURNAL_WRITE',
  'JOURNAL_STORE',
  'EXPORT_WRITE',
  // Sandbox
  'SANDBOX_STATE',
  'SANDBOX_REQUEST',
  // A bug in crm-ferry itself
  'INTERNAL',
] as const;

export type ErrorCode = (typeof ERROR_CODES)[number];
