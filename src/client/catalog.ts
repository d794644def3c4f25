/**
 * The account's names a mapping may use, as plain data: the small interface between the mapping
 * and the service. mapping/ never reads the account itself; the commands hand it a catalog read
 * through the client (account-catalog.ts), tests one built by hand. The types live here, beside
 * their reader, because the live v1 source already makes mapping/ (through sources/) depend on
 * client/: a client file importing mapping/ would close a circle.
 */

/** Something of the account known by name. */
export interface NamedItem {
  id: number;
  name: string;
}

export interface CatalogUser {
  id: number;
  username: string;
  /** The user's full name, when the service says (an export of records names owners so). */
  name?: string | undefined;
  /** Only when the service lists it. */
  email: string | undefined;
}

/** The user an import writes as (the token's, `GET /users/current`, beyond the spec), as the service names users. */
export interface WritingUser {
  username: string;
  name?: string | undefined;
  email?: unknown;
}

export interface CatalogMilestone extends NamedItem {
  pipelineId: number;
  pipelineName: string;
}

export interface CatalogFieldDefinition extends NamedItem {
  /** Name of the data tag the field belongs to; null for a field without one. */
  tag: string | null;
  /** Text, List, Date, Boolean, Number, ... when the service says. */
  type?: string;
  /** A List field's choices, when the service says; a value outside them is refused. */
  options?: readonly string[];
  /** A Text field's regular expression, when it has one; a value it does not match is refused. */
  pattern?: string | null;
  /** A party field only for people or only for organisations; null or absent for both. */
  forClass?: 'PERSON' | 'ORGANISATION' | null;
}

/** A project stage, with the board it is on (two boards may each have a stage of one name). */
export interface CatalogStage extends NamedItem {
  boardName: string;
}

export type FieldEntity = 'parties' | 'kases' | 'opportunities';

/**
 * The names of one account that mappings may use, read once per run. Plain data, so tests and an
 * offline run can build one by hand.
 */
export interface AccountCatalog {
  users: CatalogUser[];
  /** null when the service does not list teams (GET /teams is a sandbox addition). */
  teams: NamedItem[] | null;
  /** Active pipelines only: an archived pipeline takes no new opportunities. */
  pipelines: NamedItem[];
  milestones: CatalogMilestone[];
  activityTypes: NamedItem[];
  taskCategories: NamedItem[];
  fieldDefinitions: Record<FieldEntity, CatalogFieldDefinition[]>;
  /** Track definitions are named by their description. */
  trackDefinitions: NamedItem[];
  /**
   * Project stages (`GET /stages`, beyond the spec). Absent or null when the account does not list
   * them: a stage is then only given by its id.
   */
  stages?: CatalogStage[] | null;
  /** The reasons an opportunity is lost (`GET /lostreasons`, beyond the spec); absent or null as for stages. */
  lostReasons?: NamedItem[] | null;
  /**
   * The user the token belongs to, whom the service makes every note's author: read when a mapping
   * names a note's `author` (or the whole catalog is read); null when the service has no
   * `GET /users/current`. Absent when not read: then every named author heads the note.
   */
  writer?: WritingUser | null;
}

/** The lists of an account's names besides its users, which every run reads (they tell one account from another). */
export type CatalogList =
  | 'teams'
  | 'pipelines'
  | 'activityTypes'
  | 'taskCategories'
  | 'trackDefinitions'
  | 'stages'
  | 'lostReasons';

/**
 * The lists a run's mappings can name, to read those alone (a pipeline's milestones come with the
 * pipelines). A list left out of an AccountCatalog read so is not empty: reading it throws.
 */
export interface CatalogWanted {
  lists: ReadonlySet<CatalogList>;
  fieldDefinitions: ReadonlySet<FieldEntity>;
  /** The users, which a run always reads (they tell one account from another); an export may not need them. @default true */
  users?: boolean;
  /** The token's user (`GET /users/current`), which a note mapping's `author` is compared with. @default false */
  writer?: boolean;
}

/**
 * Some of an account's names, for a command that needs few of them (an export): the custom field
 * definitions of some entities, and the users and teams when asked for. A list not read is absent.
 * A whole AccountCatalog is one too.
 */
export interface CatalogPart {
  fieldDefinitions: Partial<Record<FieldEntity, CatalogFieldDefinition[]>>;
  users?: CatalogUser[];
  teams?: NamedItem[] | null;
}
