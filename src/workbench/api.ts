/**
 * What the workbench's server and its page say to each other: the one list of shapes both are
 * compiled against (the page's tsconfig includes this file). Types only, and no import: the page
 * is built for the browser and must not pull in node's or the engine's modules.
 */

/** Which account the workbench writes to, as the page may show it: never a token. */
export interface AccountView {
  /** The service's address. */
  address: string;
  /** Who is logged in, in words: the stored OAuth login (profile, account), or where the personal token came from. */
  user: string;
  /** Set when the account could not be read (a wrong token, the service out of reach). */
  problem: string | null;
}

export interface SessionView {
  /** The project folder, as given on the command line. */
  dir: string;
  account: AccountView;
  /** The plan the workbench keeps, relative to the folder. */
  plan: string;
  /** Whether the plan file exists yet. */
  planExists: boolean;
  version: string;
}

export type InputKind = 'csv' | 'xlsx' | 'v1-export';

export interface InputFile {
  /** Relative to the project folder, `/` between levels. */
  name: string;
  kind: InputKind;
  bytes: number;
  /** The plan's step that reads it, if any, and its mapping. */
  step: string | null;
  mapping: string | null;
}

export interface FilesView {
  inputs: InputFile[];
  /** Mapping files in the folder (YAML files that are not the plan). */
  mappings: string[];
}

export interface InspectColumn {
  name: string;
  fillRate: number;
  samples: string[];
}

/** `crm-ferry inspect`'s facts and warnings about one input. */
export interface InspectView {
  name: string;
  format: string;
  encoding: string | null;
  delimiter: string | null;
  sheets: string[] | null;
  rows: number;
  rowErrors: number;
  columns: InspectColumn[];
  /** What ruins an import later: repeated keys or e-mail addresses, dates that read both ways. */
  findings: Array<{ code: string; message: string }>;
  /** The reader's warnings and the first row errors, one line each. */
  notes: string[];
}

export const ON_INVALID_CHOICES = ['default', 'reject', 'drop', 'keep'] as const;
export type OnInvalidChoice = (typeof ON_INVALID_CHOICES)[number];

/**
 * How a `fields` entry reads a column: its `value` (`value: {column, transform}`; beside `ref:` the
 * name written when the link finds no record), one part of an address (`parts: {city: {column}}`),
 * the key of a link to another step (`ref:` + `key: "{{column}}"`), or otherwise (a template over
 * several columns, a condition, numbered items, a type read from the column): `other`, which the
 * table shows in words and the YAML edits.
 */
export type CellRole = 'value' | 'part' | 'key' | 'other';

/** One entry of a list the page offers; `value` is what an edit sends back. */
export interface Choice {
  value: string;
  label: string;
}

/** A target of the target list, in its group (fields, items, address parts, tags, custom fields, links). */
export interface TargetChoice extends Choice {
  group: string;
}

/** One way a `fields` entry reads a column, as the table shows it. */
export interface MapEntryView {
  /** Its place in `fields`. */
  index: number;
  to: string;
  role: CellRole;
  /** The target list's value for it (a TargetChoice's `value`); '' for `other`. */
  choice: string;
  /**
   * Phones, e-mail addresses, addresses, websites: the choices of the type list (no type, the
   * usual types, or read from a column) and the one chosen; null for other targets.
   */
  types: Choice[] | null;
  type: string;
  /** Websites: the service list and the one chosen; null for other targets. */
  services: Choice[] | null;
  service: string;
  /** The last transform of the chain, by name ('' for none), and its options as YAML flow text. */
  transform: string;
  param: string;
  /** The transforms before it (usually trim), kept when the last one is changed. */
  before: string[];
  /** The whole chain, in the order the transforms run: the table shows and edits each link. */
  chain: ChainLink[];
  required: boolean;
  onInvalid: OnInvalidChoice;
  /** The table edits this entry's reading of the column (every role but `other`). */
  editable: boolean;
  /** The entry in words: `address, city part`, `organisation: link to step companies by key`. */
  summary: string;
  /**
   * Set when the entry reads other columns too (an address's parts, a link and its name): its
   * type, Required and what a bad value does are the whole entry's, which this says.
   */
  shared: string | null;
}

/** One transform of a column's chain, and its options as YAML flow text ('' for none). */
export interface ChainLink {
  transform: string;
  param: string;
}

export interface MapColumnView {
  name: string;
  samples: string[];
  entries: MapEntryView[];
  /** Why the mapping leaves the column out on purpose (its `leaveOut`), as it says it: what would carry it. */
  leftOut?: string;
}

export interface CellMark {
  kind: 'rejected' | 'warning';
  /** The reason, in plain words. */
  text: string;
}

export interface PreviewRow {
  /** The row as a spreadsheet numbers it (the header is row 1). */
  row: number;
  status: 'ok' | 'rejected' | 'skipped';
  key: string | null;
  /** The row's values by column, as text. */
  cells: Record<string, string>;
  /** Marks by column; `''` holds those that belong to no column (the key, a link). */
  marks: Record<string, CellMark[]>;
  /** What the row becomes, in short: `firstName Ada; email ada@example.com (Work); organisation: row 7 of step companies`. */
  record: string;
}

export interface YamlProblem {
  message: string;
  /** The line of the mapping file, 1 first, when known. */
  line: number | null;
}

/** The Map view of one input: its mapping as a table, the YAML, and the first rows mapped. */
export interface MapView {
  input: string;
  /** Where the mapping is (or will be) saved, relative to the folder. */
  mappingFile: string;
  /** The plan's step for this input (named after the file when new). */
  step: string;
  yaml: string;
  /** Where the YAML came from: the saved file, a ready-made mapping, or `mapping init`'s draft. */
  origin: 'saved' | 'ready-made' | 'draft' | 'edited';
  originNote: string;
  /** Whether the text differs from the file saved. */
  unsaved: boolean;
  /** The YAML's problems; the table and preview are of the last YAML without any. */
  problems: YamlProblem[];
  entity: string;
  key: string;
  onDuplicate: string;
  /** What the account's records are found by (`match`): the choices for the entity, and the one chosen ('' without `match`). */
  matches: Choice[];
  match: string;
  /**
   * The target list: the entity's fields, items, address parts, tags, the account's custom
   * fields by name, and links to the plan's other steps (and whatever the mapping names besides).
   */
  targets: TargetChoice[];
  /** Transform names, for the transform list. */
  transforms: string[];
  /** The plan's other steps, which a link (`ref:`) can name. */
  steps: string[];
  columns: MapColumnView[];
  /** Entries that read no single column (constants, templates over several columns). */
  otherEntries: Array<{ index: number; summary: string }>;
  preview: PreviewRow[];
}

/**
 * One change the table makes to a mapping; the server applies it to the YAML (comments kept). A
 * column's edits are made to the first entry that reads it in a way the table edits.
 */
export type MapEdit =
  /** `target`: a TargetChoice's value, or '' to leave the column out. */
  | { kind: 'target'; column: string; target: string }
  /** `type`, `service`: a value of the entry's `types` or `services`. */
  | { kind: 'type'; column: string; type: string }
  | { kind: 'service'; column: string; service: string }
  | { kind: 'transform'; column: string; transform: string; param: string }
  /** `chain`: the column's transforms, whole, in order (an empty chain: none). */
  | { kind: 'chain'; column: string; chain: ChainLink[] }
  | { kind: 'required'; column: string; required: boolean }
  | { kind: 'onInvalid'; column: string; onInvalid: OnInvalidChoice }
  | { kind: 'onDuplicate'; onDuplicate: string }
  /** `match`: a value of the view's `matches`. */
  | { kind: 'match'; match: string };

export interface MapRequest {
  input: string;
  /** The mapping as the page holds it; without it, the saved mapping (or the suggested one). */
  yaml?: string;
  /** One change the table made, applied to `yaml`; the server checks it before using it. */
  edit?: MapEdit;
}

export interface SaveRequest {
  input: string;
  yaml: string;
}

export interface SaveResult {
  mappingFile: string;
  plan: string;
  step: string;
}

/** What `validate --online` and a dry run found, for the Check view. */
export interface CheckStepView {
  step: string;
  input: string;
  mapping: string;
  rowsRead: number;
  ok: number;
  skipped: number;
  rejected: number;
  /** Rejected rows, the first of them, each with its reason in plain words. */
  rejects: RejectView[];
  /** The rejects file, relative to the folder, when one was written. */
  rejectsFile: string | null;
  warnings: Array<{ kind: string; count: number }>;
  /** Columns with values that no field reads. */
  notCarried: Array<{ column: string; rows: number }>;
}

export interface CheckView {
  steps: CheckStepView[];
  /** The set-up: what the run will create, and what only a person can create. */
  create: string[];
  personMust: string[];
  /** The dry run: requests the run needs, and how long at the account's rate. */
  requests: number;
  limitPerHour: number | null;
  estimatedSeconds: number | null;
}

export interface StepProgress {
  step: string;
  total: number | null;
  rowsRead: number;
  created: number;
  updated: number;
  unchanged: number;
  rejected: number;
  skipped: number;
  repeated: number;
}

/** A point of the run's small chart. */
export interface ProgressPoint {
  /** Seconds since the run started. */
  at: number;
  rows: number;
  requests: number;
}

export interface RunProgress {
  steps: StepProgress[];
  requests: number;
  elapsedMs: number;
  /** Requests left in the account's hour, and its limit, when the service said. */
  quotaRemaining: number | null;
  quotaLimit: number | null;
  /** Seconds left at the pace so far, when the totals are known. */
  secondsLeft: number | null;
  points: ProgressPoint[];
}

export interface RunOutcome {
  /** The run's id in the state folder: the page matches it with the latest run's, never shows it. */
  id: string;
  /** The run's closing line, in the page's words. */
  text: string;
  status: 'done' | 'rejects' | 'interrupted' | 'stopped';
  steps: StepProgress[];
  requests: number;
  elapsedMs: number;
}

/** A rejected row as the page lists it: its row number, the column or field, the reason in words. */
export interface RejectView {
  row: number;
  field: string;
  reason: string;
}

/**
 * The latest run of the folder's state, whoever started it (this page, an earlier workbench, or
 * `crm-ferry run` in the folder), read from the state folder's journals.
 */
export interface LatestRunView {
  /** The run's id (matched with a job's, never shown); null when no run wrote to the account yet. */
  id: string | null;
  /** `going`: started and not ended: under way, or stopped before its end (Run everything goes on). */
  state: 'none' | 'finished' | 'interrupted' | 'going' | 'undone';
  /** Whether this workbench started it. */
  fromPage: boolean;
  startedAt: string | null;
  endedAt: string | null;
  steps: Array<{
    step: string;
    created: number;
    updated: number;
    rejected: number;
    /** The run's rejected rows, the first of them, each with its reason. */
    rejects: RejectView[];
    /** The rejects file, relative to the folder (the page links it), when the run wrote one. */
    rejectsFile: string | null;
  }>;
}

export interface VerifyView {
  matches: boolean;
  text: string;
  steps: Array<{ step: string; found: number; missing: number; extra: number; differing: number; unresolved: number }>;
  differences: number;
  /** The HTML page, the same as `verify --report`. */
  reportUrl: string;
}

export interface UndoPreview {
  /** What the rollback deletes and sets back, per step, in words for the confirmation. */
  lines: string[];
  deleted: number;
  restored: number;
  runs: number;
}

export interface UndoResult {
  text: string;
  deleted: number;
  restored: number;
}

export type JobKind = 'check' | 'run' | 'verify' | 'undo';

/** The one job the workbench runs at a time, as the page sees it. */
export interface JobView {
  id: number;
  kind: JobKind;
  /** `run`: the sample size given, or null for the whole run. */
  limit: number | null;
  state: 'running' | 'stopping' | 'finished' | 'failed';
  startedAt: string;
  progress: RunProgress | null;
  /** Set once it ended. */
  error: { code: string; message: string } | null;
  check: CheckView | null;
  run: RunOutcome | null;
  verify: VerifyView | null;
  undo: UndoResult | null;
}

/** The last job of each kind (the page shows each view's own), and which is under way. */
export interface JobsView {
  current: JobView | null;
  last: Partial<Record<JobKind, JobView>>;
}

/** A file of the state's results, for download. */
export interface ResultFile {
  /** Relative to the folder. */
  name: string;
  bytes: number;
}

export interface ErrorBody {
  error: { code: string; message: string; line?: number | null };
}
