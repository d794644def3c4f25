import type { CatalogFieldDefinition, WritingUser } from '../client/index.ts';
import type { ErrorCode } from '../errors/index.ts';
import type { CellValue, SourceLocation } from '../sources/index.ts';
import type { Entity } from './schema.ts';

/** Kinds of names a mapping may use that only the account can turn into ids. */
export type NameKind =
  | 'user' // owner: a username, an email address or a user's name
  | 'team'
  | 'pipeline'
  | 'milestone' // scope: the pipeline's name, or null for "the only match in any active pipeline"
  | 'stage' // project stage
  | 'lostReason' // why an opportunity was lost: written as the account's name for it, not an id
  | 'activityType'
  | 'taskCategory'
  | 'fieldDefinition' // scope: `${entity}` and the data tag name or null
  | 'trackDefinition';

/** A name in a mapped record, to be replaced by the id the account has for it. */
export interface NameUse {
  /** Where in `record` the resolved id goes, as a path of keys and indexes, e.g. ['owner'] or ['fields', 2, 'definition']. */
  path: Array<string | number>;
  kind: NameKind;
  name: string;
  /** Disambiguation: a milestone's pipeline, a custom field's entity and data tag. */
  scope?: { pipeline?: string | null; entity?: 'parties' | 'kases' | 'opportunities'; tag?: string | null };
  /** The mapping entry the name came from, for messages (`fields[4]`). */
  yamlPath: string;
  /**
   * What a name the account lacks does (owner and team, `onUnknown`): `drop` writes the record
   * without the field (`path[0]`) and a warning; otherwise the row is rejected.
   */
  onUnknown?: 'reject' | 'drop';
  /**
   * A custom field's: what a value its definition refuses does (the field's `onInvalid`; `keep`
   * drops, as the service takes no value as typed). @default 'reject'
   */
  onInvalid?: 'reject' | 'drop';
  /** The column the name was read from, when one column holds it (for the reason a person reads). */
  column?: string;
  /** A custom field's: the column its value is read from, when one column holds it. */
  valueColumn?: string;
}

/**
 * A link to a record another step of the plan creates, found by that step's key. With several
 * steps the key is looked up in each, in this order; whoever fills in the id takes the first step
 * that has the key, and validation refuses a key that more than one of them has.
 */
export interface RefUse {
  path: Array<string | number>;
  /** Names of the plan steps to look in, in order; never empty. Shared between records, hence read-only. */
  steps: readonly string[];
  /** The key of the linked row in those steps. */
  key: string;
  yamlPath: string;
  /** More keys to try, in order, when no step has `key` (a `key:` list: an id, then a name). */
  alternatives?: readonly string[];
  /**
   * A link that must be made: a key no step has rejects the row. Otherwise the link is left out
   * (or `fallback` is written) and the record carries a LINK_UNRESOLVED warning.
   */
  required?: boolean;
  /** What the record's target gets when no key is found (the field's `value` beside `ref`, e.g. `{name}`). */
  fallback?: unknown;
  /** The column of the key, when one column makes it (for the reason a person reads). */
  column?: string;
}

/** A file a note carries: where it is, and its content type when the source says (else the importer goes by its extension). */
export interface AttachmentUse {
  path: string;
  contentType: string | null;
  /** The name the service keeps, when not the file's own (a name shortened to fit the file system). */
  filename?: string;
}

/** One source row turned into a record of the service, not yet linked or resolved. */
export interface MappedRecord {
  kind: 'record';
  entity: Entity;
  /** The row's key (from the mapping's `key`): identifies it across re-runs and references. */
  key: string;
  /**
   * The record's position among the source's records, from 1 (SourceRow.row): an identity while
   * the input is read, never a row number for a person. The row a person is told, in every file
   * and on every page, is `location.row`: the row as a spreadsheet shows it (the header is row 1).
   */
  row: number;
  location: SourceLocation;
  /**
   * The v2 create body's inner object (what goes under `party`, `kase`, ...), in the service's
   * shapes: `emailAddresses: [{type, address}]`, `fields: [{definition, value}]`, ... Places that
   * need an id hold null until the plan fills them from `names` and `refs`.
   */
  record: Record<string, unknown>;
  names: NameUse[];
  refs: RefUse[];
  /** Entries: files to upload and attach, as paths resolved against the input's folder. */
  attachments: AttachmentUse[];
  /**
   * A note of the writing user, whose text is sent as it was: its text headed by its author's
   * line, as earlier versions wrote every note. Verify takes a note of either text as carried.
   */
  contentAlso?: string;
  /**
   * The row as read, by column name, made when asked (a row mapped by position has no such object
   * until then): for the rejects file, when linking or the service refuses the record.
   */
  valuesOf: () => Record<string, CellValue>;
  /**
   * What the record goes without, or carries in another form, while still being written: a value
   * dropped or kept as typed by `onInvalid`, a link whose column was filled but that could not be
   * made, an owner the account does not know. The importer writes them into the success file's
   * row and counts them by code in the summary; `validate` counts them the same way.
   */
  warnings?: RowWarning[];
}

/** Why a row's record is written with something left out or changed. */
export type WarningCode =
  | 'VALUE_DROPPED' // onInvalid: drop: the value could not be read and the field is left out
  | 'VALUE_KEPT' // onInvalid: keep: the value could not be read and is written as it was typed
  | 'LINK_UNRESOLVED' // a link column held a value but no linked record was found
  | 'LINK_BY_NAME' // the linked row was rejected: the link falls back to its value (an organisation by name, made when the account has none)
  | 'USER_UNKNOWN' // an owner the account does not know; the record goes to the token's user
  | 'DUPLICATE_MERGED' // onDuplicate: merge folded this row into an earlier row of the same key
  | 'DUPLICATE_DROPPED' // onDuplicate: first: a later row of the same key was left out
  | 'NOT_CARRIED'; // a source value the interface cannot hold (said with the reason)

export interface RowWarning {
  code: WarningCode;
  /** The target or mapping place (`email`, `fields[3]`). */
  field: string;
  /** What happened and why, in one line. */
  message: string;
  /** The value as it was in the source, when there was one. */
  value?: string;
  /** The column the value was read from, when one column holds it (for the sentence a person reads: reasonText). */
  column?: string;
  /** What the value should have been, in plain words (`an e-mail address`). */
  expected?: string;
  /** Where the rule is in the mapping (`fields[3].value.transform[1]`). */
  rule?: string;
}

/** A row that cannot become a record; it goes to the rejects file with this reason. */
export interface RejectedRow {
  kind: 'rejected';
  /** The record's position (see MappedRecord.row); a person is told `location.row`. */
  row: number;
  location: SourceLocation;
  /** The row's key when it could be made. */
  key: string | null;
  /** The target or mapping place the problem is about (`lastName`, `fields[3]`), or '' for the whole row. */
  field: string;
  code: ErrorCode;
  message: string;
  /** The row as read, for the rejects file; null when the record itself could not be read. */
  values: Record<string, CellValue> | null;
  /** The raw text of an unreadable record, when the reader had it. */
  raw?: string;
  /** The HTTP status the service refused the row with (importer only). */
  status?: number;
  /** The column the refused value was read from, when one column holds it (for reasonText). */
  column?: string;
  /** The refused value, as the transform that refused it was given it; else the column's cell is shown. */
  value?: string;
  /** What the value should have been, in plain words (`a date (dd/MM/yyyy)`). */
  expected?: string;
  /** Where the rule is in the mapping (`fields[3].value.transform[1]`), or the link's or name's entry (`fields[7]`). */
  rule?: string;
  /** The row's other problems, each a reason of its own: a person reads them one per line. */
  also?: RejectedReason[];
}

/** One more reason a row was rejected for (RejectedRow.also). */
export interface RejectedReason {
  field: string;
  code: ErrorCode;
  message: string;
  column?: string;
  value?: string;
  expected?: string;
  rule?: string;
}

/** A row the mapping's `skip` condition left out on purpose. */
export interface SkippedRow {
  kind: 'skipped';
  /** The record's position (see MappedRecord.row); a person is told `location.row`. */
  row: number;
  location: SourceLocation;
  /**
   * onDuplicate first or merge: the row was folded into an earlier row of its record (counted as
   * repeated, not skipped). Its key links to that row's record.
   */
  folded?: { key: string; into: string };
}

export type MappedItem = MappedRecord | RejectedRow | SkippedRow;

/**
 * Turns names into ids for one account. Built once per run (the account's users, pipelines,
 * milestones, ... are read once and cached); offline validation uses one that knows nothing.
 */
export interface NameResolver {
  /** The id for a name, or undefined when the account has none. */
  resolve(kind: NameKind, name: string, scope?: NameUse['scope']): number | undefined;
  /** Up to three known names closest to `name`, for "did you mean" messages. */
  suggest(kind: NameKind, name: string, scope?: NameUse['scope']): string[];
  /** The account's spelling of a name-valued item (a lost reason) by its id; without it the name is written as mapped. */
  nameOf?(kind: NameKind, id: number): string | undefined;
  /** The custom field of `entity` with this id and what it takes; without it custom field values are left to the service. */
  fieldDefinition?(entity: 'parties' | 'kases' | 'opportunities', id: number): CatalogFieldDefinition | undefined;
  /** The user the import writes as (a note's `author` is compared with it); without it every named author heads the note. */
  writer?(): WritingUser | null | undefined;
}
