import type { Entity } from './schema.ts';
import type { NameKind } from './types.ts';

/** How a target turns a mapped value into the create body; decides checks, shapes and the reference. */
export type TargetKind =
  | 'text'
  | 'partyType'
  | 'date'
  | 'timestamp'
  | 'time'
  | 'integer'
  | 'amount'
  | 'currency'
  | 'choice'
  | 'organisation'
  | 'link'
  | 'links'
  | 'name'
  | 'names'
  | 'pipeline'
  | 'tags'
  | 'custom'
  | 'address'
  | 'phone'
  | 'email'
  | 'website'
  | 'attachment';

export interface TargetInfo {
  kind: TargetKind;
  /** What the target takes, one short phrase for the reference. */
  takes: string;
  /** The name kind for `name` and `names` targets. */
  nameKind?: NameKind;
  /** Allowed values of `choice` targets, upper case as the service spells them. */
  choices?: readonly string[];
  /** Integer bounds. */
  min?: number;
  max?: number;
}

/** Targets that may appear in several entries of one mapping; every other target at most once. */
export const REPEATABLE_KINDS: ReadonlySet<TargetKind> = new Set([
  'tags',
  'custom',
  'address',
  'phone',
  'email',
  'website',
  'attachment',
  'names',
  'links',
]);

/** Targets that take `ref` + `key` (a link to a record of another plan step). */
export const LINK_KINDS: ReadonlySet<TargetKind> = new Set(['organisation', 'link', 'links']);

/** Targets that can hold a value as typed, which `onInvalid: keep` writes when a transform refuses it. */
export const KEEPABLE_KINDS: ReadonlySet<TargetKind> = new Set(['text', 'custom', 'phone', 'email', 'website', 'tags']);

/** Targets that take `type` (Home, Work, ...; an attachment's content type). */
export const TYPED_KINDS: ReadonlySet<TargetKind> = new Set(['address', 'phone', 'email', 'website', 'attachment']);

/**
 * Targets that take `items`: a JSON list of whole items in one column (a project's additional
 * contacts: the keys of the linked records; attachments: each file with its content type).
 */
export const ITEM_KINDS: ReadonlySet<TargetKind> = new Set([
  'address',
  'phone',
  'email',
  'website',
  'custom',
  'attachment',
  'links',
]);

/** Targets whose columns may be numbered (`phone.*.phoneNumber`): one item per number. */
export const NUMBERED_KINDS: ReadonlySet<TargetKind> = new Set([
  'address',
  'phone',
  'email',
  'website',
  'attachment',
  'names',
  'links',
]);

/** Website services the service knows; `URL` when left out. */
export const WEBSITE_SERVICES = [
  'URL',
  'FEED',
  'SKYPE',
  'TWITTER',
  'LINKED_IN',
  'FACEBOOK',
  'XING',
  'GOOGLE_PLUS',
  'FLICKR',
  'GITHUB',
  'YOUTUBE',
  'INSTAGRAM',
  'PINTEREST',
] as const;

export const DURATION_BASES = ['FIXED', 'HOUR', 'DAY', 'WEEK', 'MONTH', 'QUARTER', 'YEAR'] as const;

const owner: TargetInfo = {
  kind: 'name',
  nameKind: 'user',
  takes: 'a user of the account: username, email address or full name (see `onUnknown`)',
};
const team: TargetInfo = { kind: 'name', nameKind: 'team', takes: 'a team name (see `onUnknown`)' };
const tags: TargetInfo = {
  kind: 'tags',
  takes: 'a tag name, or a list of them (after `split`); empty names are dropped, duplicates merged',
};
const custom: TargetInfo = {
  kind: 'custom',
  takes:
    'a custom field value (text; `true`/`false` for Boolean fields; a date as YYYY-MM-DD); needs `definition` and `tag`',
};
const tracks: TargetInfo = {
  kind: 'names',
  nameKind: 'trackDefinition',
  takes: 'a track definition name, or a list of them, applied on create',
};
const date = (what: string): TargetInfo => ({
  kind: 'date',
  takes: `${what} as YYYY-MM-DD (use the \`date\` transform for other formats)`,
});
const text = (what: string): TargetInfo => ({ kind: 'text', takes: what });
const link = (what: string): TargetInfo => ({
  kind: 'link',
  takes: `the ${what}: \`ref\` + \`key\` to a record of another step, or an id (a number)`,
});

/** Every target of every entity. The keys are the same as in schema.ts's target lists. */
export const TARGET_INFO: Record<Entity, Record<string, TargetInfo>> = {
  party: {
    type: {
      kind: 'partyType',
      takes:
        '`person` or `organisation`; when left out: organisation if the mapping writes `name` and no `firstName`/`lastName`, else person',
    },
    title: text("a person's title (Mr, Ms, Dr, ...)"),
    firstName: text("a person's first name"),
    lastName: text("a person's last name"),
    jobTitle: text("a person's job title"),
    name: text("an organisation's name"),
    about: text('free text about the party'),
    organisation: {
      kind: 'organisation',
      takes:
        "a person's organisation: its name (created when missing), an id (a number), or `ref` + `key` to an organisation of another step",
    },
    owner,
    team,
    address: {
      kind: 'address',
      takes: '`parts` (street, city, state, zip, country) and an optional `type`; a plain `value` is the street',
    },
    phone: { kind: 'phone', takes: 'a phone number, with an optional `type`' },
    email: { kind: 'email', takes: 'an email address, with an optional `type`' },
    website: { kind: 'website', takes: 'a web address or handle, with `service` (default URL) and an optional `type`' },
    tags,
    custom,
  },
  kase: {
    name: text("the project's name (required)"),
    description: text("the project's description"),
    party: link('party the project is about (required)'),
    opportunity: link('opportunity of the project'),
    owner,
    team,
    status: { kind: 'choice', choices: ['OPEN', 'CLOSED'], takes: '`OPEN` or `CLOSED` (any case)' },
    stage: {
      kind: 'name',
      nameKind: 'stage',
      takes: "a project stage name (or its id), looked up in the account's stages (see `onUnknown`)",
    },
    startOn: date('the start date'),
    expectedCloseOn: date('the expected close date'),
    closedOn: date('the close date'),
    tags,
    custom,
    tracks,
    additionalContact: {
      kind: 'links',
      takes:
        'a further party of the project (an additional contact): `ref` + `key` to a party of another step, or its id; one per entry (`items: {column}` with `ref`: a JSON list of keys)',
    },
  },
  opportunity: {
    name: text("the opportunity's name (required)"),
    description: text("the opportunity's description"),
    party: link('party of the opportunity (required)'),
    owner,
    team,
    pipeline: {
      kind: 'pipeline',
      takes: 'the pipeline name the milestone is looked up in (not written to the record)',
    },
    milestone: {
      kind: 'name',
      nameKind: 'milestone',
      takes: 'a milestone name (required), looked up in `pipeline` when given',
    },
    amount: {
      kind: 'amount',
      takes: "the value's amount, a number of at least 0 (use the `number` transform for `1.234,56`); needs `currency`",
    },
    currency: { kind: 'currency', takes: "the value's ISO 4217 currency code (EUR, GBP, ...)" },
    probability: { kind: 'integer', min: 0, max: 100, takes: 'an integer percentage, 0 to 100' },
    durationBasis: { kind: 'choice', choices: DURATION_BASES, takes: `one of ${DURATION_BASES.join(', ')}` },
    duration: {
      kind: 'integer',
      min: 1,
      max: 1_000_000,
      takes: 'a whole number of durationBasis units (not with FIXED)',
    },
    expectedCloseOn: date('the expected close date'),
    closedOn: date('the close date (only on a complete milestone)'),
    lostReason: {
      kind: 'name',
      nameKind: 'lostReason',
      takes: "why it was lost: one of the account's lost reasons, by name (see `onUnknown`)",
    },
    tags,
    custom,
    tracks,
  },
  entry: {
    party: link('party the note is on'),
    kase: link('project the note is on'),
    opportunity: link('opportunity the note is on'),
    content: text("the note's text (required unless there is an attachment)"),
    author: text(
      "who wrote the note: their full name, or e-mail address. Compared with the token's user, whom the service makes every note's author: the text stays as it is when it is that user (or empty); any other author's heads it (`authorLine`)",
    ),
    authorLine: text(
      'the line that heads a note of an author other than the writing user (default `Originally by AUTHOR`); needs `author`',
    ),
    activityType: {
      kind: 'name',
      nameKind: 'activityType',
      takes: 'an activity type name (Note, Meeting, Call, ...) or its id',
    },
    entryAt: {
      kind: 'timestamp',
      takes: 'when it happened, an ISO 8601 timestamp (use the `timestamp` transform for other formats)',
    },
    attachment: {
      kind: 'attachment',
      takes:
        "a file path (or a list of them), relative to the input file's folder; `type` gives its content type (default: from the file name's extension); `items: {column}`: a JSON list of `{file, contentType}`",
    },
  },
  task: {
    description: text("the task's description (required)"),
    detail: text('more text about the task'),
    party: link('party the task is on'),
    kase: link('project the task is on'),
    opportunity: link('opportunity the task is on'),
    owner,
    category: { kind: 'name', nameKind: 'taskCategory', takes: 'a task category name' },
    dueOn: date('the due date (required)'),
    dueTime: { kind: 'time', takes: 'a time of day, hh:mm or hh:mm:ss' },
    status: { kind: 'choice', choices: ['OPEN', 'COMPLETED'], takes: '`OPEN` or `COMPLETED` (any case)' },
  },
};

/** The plural the service uses in paths and custom field scopes. */
export const ENTITY_PLURAL = { party: 'parties', kase: 'kases', opportunity: 'opportunities' } as const;
