import { z } from 'zod';
import { ENTITIES, type Entity } from '../util/index.ts';
import { findSourceFormat, sourceFormatNames } from '../sources/index.ts';

/**
 * The mapping language, as a zod schema: the single source of truth for validation, the JSON
 * Schema that editors use (`crm-ferry mapping schema`) and the mapping reference in docs/mapping.md.
 * Runtime code never reads raw YAML: it reads what this schema parsed.
 */

/** A transform as written: a name (`trim`) or a one-key object (`{split: ';'}`, `{date: {format: 'dd.MM.yyyy'}}`). */
export const transformSpecSchema = z
  .union([z.string(), z.record(z.string(), z.unknown())])
  .describe('A transform: its name, or an object with its name as the only key and its options as the value');

/** A condition on a row's values. */
export type Condition =
  | {
      column: string;
      equals?: string | number | boolean;
      in?: Array<string | number>;
      empty?: boolean;
      matches?: string;
    }
  | { all: Condition[] }
  | { any: Condition[] }
  | { not: Condition };

export const conditionSchema: z.ZodType<Condition> = z.lazy(() =>
  z.union([
    z
      .object({
        column: z.string().min(1).describe('Source column the condition looks at'),
        equals: z
          .union([z.string(), z.number(), z.boolean()])
          .optional()
          .describe('True when the value equals this (text compared after trimming, case-insensitively)'),
        in: z
          .array(z.union([z.string(), z.number()]))
          .optional()
          .describe('True when the value is one of these'),
        empty: z.boolean().optional().describe('True when the value is empty (true) or not empty (false)'),
        matches: z.string().optional().describe('True when the value matches this regular expression'),
      })
      .strict(),
    z.object({ all: z.array(conditionSchema).min(1) }).strict(),
    z.object({ any: z.array(conditionSchema).min(1) }).strict(),
    z.object({ not: conditionSchema }).strict(),
  ]),
);

/** Where a value comes from, and what happens to it. */
export type ValueSpec =
  | string
  | number
  | boolean
  | null
  | {
      column?: string;
      const?: string | number | boolean | null;
      template?: string;
      coalesce?: ValueSpec[];
      transform?: Array<string | Record<string, unknown>>;
      when?: Condition;
    };

export const valueSpecSchema: z.ZodType<ValueSpec> = z.lazy(() =>
  z.union([
    z.string().describe('A constant, or a template when it holds {{Column}} placeholders'),
    z.number(),
    z.boolean(),
    z.null(),
    z
      .object({
        column: z.string().min(1).optional().describe('Take the value of this source column'),
        const: z.union([z.string(), z.number(), z.boolean(), z.null()]).optional().describe('A constant value'),
        template: z.string().optional().describe('Text with {{Column}} placeholders'),
        coalesce: z.array(valueSpecSchema).min(1).optional().describe('The first of these values that is not empty'),
        transform: z.array(transformSpecSchema).optional().describe('Transforms applied in order'),
        when: conditionSchema
          .optional()
          .describe('Use this value only when the condition holds; otherwise the field is left out'),
      })
      .strict(),
  ]),
);

// ---------------------------------------------------------------------------------------------
// Nothing lost (issue 15): bad values, duplicates and links that fall back.

/** What happens to a value a field cannot take. */
export const ON_INVALID = ['reject', 'drop', 'keep'] as const;
export type OnInvalid = (typeof ON_INVALID)[number];
export const onInvalidSchema = z
  .enum(ON_INVALID)
  .describe(
    'reject: the row goes to the rejects file; drop: the record is written without the value (warning VALUE_DROPPED); keep: the value is written as typed (warning VALUE_KEPT; text-like targets only)',
  );

/** What happens to rows of one file that name the same record (same key, or same `match` value). */
export const ON_DUPLICATE = ['reject', 'first', 'merge', 'separate'] as const;
export type OnDuplicate = (typeof ON_DUPLICATE)[number];
export const onDuplicateSchema = z
  .enum(ON_DUPLICATE)
  .describe(
    "reject: later rows go to the rejects file; first: the first row is written, later ones left out (warning DUPLICATE_DROPPED on it); merge: later rows fill the first row's empty fields and add their items (warning DUPLICATE_MERGED); separate (rows of one match value, never of one key): each row is a record of its own, matched to a record of the account that no earlier row took (the lowest id first) or created",
  );

/** A link's key: one template, or several tried in order. */
export const linkKeySchema = z.union([z.string().min(1), z.array(z.string().min(1)).min(1)]);

// ---------------------------------------------------------------------------------------------

/**
 * The step or steps of a plan a link looks in. A list serves sources whose links may point at
 * records of several kinds (a legacy `partyId` names a person or an organisation): each step is
 * searched in the order given, and a key found in two of them is refused as ambiguous.
 */
export const refStepsSchema = z
  .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
  .describe(
    'The plan step that creates the linked record, or a list of steps searched in order (a key found in two of them is ambiguous and rejects the row)',
  );

/** A link to a record made by another step of the plan, found by that step's key. */
export const refSchema = z
  .object({
    ref: refStepsSchema,
    key: linkKeySchema.describe(
      'That step\'s key for the linked record, as a template over this row, e.g. "{{Contact ID}}"; a list is tried in order',
    ),
  })
  .strict();

/** Targets a field entry can write, per entity. */
export const PARTY_TARGETS = [
  'type',
  'title',
  'firstName',
  'lastName',
  'jobTitle',
  'name',
  'about',
  'organisation',
  'owner',
  'team',
  'address',
  'phone',
  'email',
  'website',
  'tags',
  'custom',
] as const;
export const KASE_TARGETS = [
  'name',
  'description',
  'party',
  'opportunity',
  'owner',
  'team',
  'status',
  'stage',
  'startOn',
  'expectedCloseOn',
  'closedOn',
  'tags',
  'custom',
  'tracks',
  'additionalContact',
] as const;
export const OPPORTUNITY_TARGETS = [
  'name',
  'description',
  'party',
  'owner',
  'team',
  'pipeline',
  'milestone',
  'amount',
  'currency',
  'probability',
  'durationBasis',
  'duration',
  'expectedCloseOn',
  'closedOn',
  'lostReason',
  'tags',
  'custom',
  'tracks',
] as const;
export const ENTRY_TARGETS = [
  'party',
  'kase',
  'opportunity',
  'content',
  'activityType',
  'entryAt',
  'attachment',
] as const;
export const TASK_TARGETS = [
  'description',
  'detail',
  'party',
  'kase',
  'opportunity',
  'owner',
  'category',
  'dueOn',
  'dueTime',
  'status',
] as const;

export { ENTITIES, type Entity };

export const TARGETS: Record<Entity, readonly string[]> = {
  party: PARTY_TARGETS,
  kase: KASE_TARGETS,
  opportunity: OPPORTUNITY_TARGETS,
  entry: ENTRY_TARGETS,
  task: TASK_TARGETS,
};

/** Sub-values of an address. */
export const addressPartsSchema = z
  .object({
    street: valueSpecSchema.optional(),
    city: valueSpecSchema.optional(),
    state: valueSpecSchema.optional(),
    zip: valueSpecSchema.optional(),
    country: valueSpecSchema.optional(),
  })
  .strict();

/**
 * Several items from one entry. `numbered`: columns numbered per item, as legacy exports flatten
 * their lists (`email.1.type`, `email.2.type`, ...); `{column}`: a list of whole items in one
 * cell, as JSON, which an export through a mapping writes, so that every item comes back with
 * its type, not only the first.
 */
export const itemsSchema = z.union([
  z
    .literal('numbered')
    .describe(
      "The entry's column names hold a `*`, which stands for 1, 2, 3, ...: one item per number the row has (`phone.*.phoneNumber`, `phone.*.type`)",
    ),
  z
    .object({
      column: z
        .string()
        .min(1)
        .describe('The column whose cell holds the JSON list, e.g. [{"type": "Work", "address": "a@example.com"}]'),
    })
    .strict(),
]);

/**
 * One entry of `fields`: which target it writes, and the value. Some targets take more:
 * `type` for address, phone, email and website; `service` for website; `definition` and `tag`
 * for custom fields; `parts` for an address; `ref` and `key` (instead of `value`) for links;
 * `items` for several items (numbered columns, or a JSON list instead of `value`); `onUnknown`
 * for owner, team, stage and lostReason.
 */
export const fieldEntrySchema = z
  .object({
    to: z.string().min(1).describe('The target field; see the reference for the targets of each entity'),
    value: valueSpecSchema.optional().describe('Where the value comes from'),
    ref: refStepsSchema
      .optional()
      .describe(
        "Link to a record of another plan step (with key): the step's name, or a list of steps searched in order (a key found in two of them rejects the row as ambiguous)",
      ),
    key: linkKeySchema
      .optional()
      .describe(
        'Key of the linked record in that step, as a template; a list of templates is tried in order (the first key the step has wins)',
      ),
    type: valueSpecSchema
      .optional()
      .describe(
        'Address, phone, email and website: the type (Home, Work, Mobile, ...), a constant or read from a column; attachment: its content type (application/pdf, ...)',
      ),
    service: valueSpecSchema
      .optional()
      .describe('Website: URL, TWITTER, LINKED_IN, FACEBOOK, ... (default URL), a constant or read from a column'),
    items: itemsSchema
      .optional()
      .describe(
        "Several items from one entry. `numbered` (email, phone, website, address, attachment, tracks, additionalContact): a `*` in the column names (and template placeholders, and a link's `key`) stands for 1, 2, 3, ... and each number the row has is one item. `{column}` (email, phone, website, address, custom, attachment, additionalContact): one column holding the whole list as JSON, each item with its type (an attachment: `file` and `contentType`; an additional contact: the keys of the linked records, with `ref` and no `key`), what `export --mapping` writes, instead of `value`",
      ),
    ifEmpty: z
      .enum(['leave', 'clear'])
      .optional()
      .describe(
        'Team: what an empty value does. leave (default): the field is not written, and the service gives a new record the owner\'s default team; clear: the record is written with no team (an export says "no team" with an empty cell)',
      ),
    onUnknown: z
      .enum(['reject', 'drop'])
      .optional()
      .describe(
        "Owner, team, stage and lostReason: what a name the account does not know does. reject (default): the row goes to the rejects file; drop: the record is written without it (an owner then is the token's user) and the row gets a warning",
      ),
    definition: z.string().min(1).optional().describe('Custom field: the definition name'),
    tag: z
      .union([z.string(), z.null()])
      .optional()
      .describe('Custom field: its data tag name, or null for a field without one'),
    parts: addressPartsSchema.optional().describe('Address: street, city, state, zip, country'),
    required: z
      .boolean()
      .optional()
      .describe('Reject the row when this field ends up empty (for a link: when a filled key finds no record)'),
    onInvalid: onInvalidSchema
      .optional()
      .describe(
        "A value this field cannot take (a transform or the target refuses it): reject the row, drop the value, or keep it as typed; default the mapping's `onInvalid`",
      ),
  })
  .strict();

export const sourceSchema = z
  .object({
    format: z
      .string()
      .refine((name) => findSourceFormat(name) !== undefined, {
        error: (issue) =>
          `expected one of ${sourceFormatNames()
            .map((name) => JSON.stringify(name))
            .join(' or ')}, found ${JSON.stringify(issue.input)}`,
      })
      .optional()
      .describe(
        'Format (csv, xlsx, v1-xml, v1-json, v1-api, or one a program registered); inferred from the file when left out; v1-api is a live legacy account (input v1+https://HOST, or baseUrl)',
      ),
    encoding: z.string().optional().describe('CSV: text encoding (default detected)'),
    delimiter: z.string().optional().describe('CSV: delimiter (default sniffed)'),
    headerRow: z
      .union([z.number().int().positive(), z.literal('none')])
      .optional()
      .describe('Header row number, or none'),
    sheet: z.union([z.string(), z.number().int().positive()]).optional().describe('XLSX: sheet name or 1-based index'),
    record: z
      .enum(['person', 'organisation', 'party', 'opportunity', 'kase', 'task', 'historyItem'])
      .optional()
      .describe('v1 exports: which records to read'),
    baseUrl: z
      .string()
      .url()
      .optional()
      .describe(
        "v1-api: the old account's address (https://HOST, or /api/kase at the end to pick a list), when the input does not give it",
      ),
    wireFormat: z
      .enum(['xml', 'json'])
      .optional()
      .describe('v1-api: the format to ask the legacy interface for (default xml)'),
    pageSize: z.number().int().positive().max(1000).optional().describe('v1-api: records per page (default 100)'),
  })
  .strict();

/** What a row and a record are matched by. */
export const MATCH_CRITERIA = ['email', 'name', 'custom'] as const;
export type MatchCriterion = (typeof MATCH_CRITERIA)[number];
const matchCriterionSchema = z.enum(MATCH_CRITERIA);

/** How the importer finds a record the account already has for a row, and what it does then. */
export const matchSchema = z
  .object({
    by: z
      .union([matchCriterionSchema, z.array(matchCriterionSchema).min(1)])
      .describe(
        "What a row and a record must share: the first e-mail address (parties), the name (a person's first and last name, an organisation's, project's or opportunity's name), or a custom field's value. A list is a fallback: the first of them the row has a value for is looked up (`[email, name]`: a person without an e-mail address by name)",
      ),
    definition: z.string().min(1).optional().describe("With `by: custom`: the custom field's name"),
    within: z
      .enum(['party', 'organisation'])
      .optional()
      .describe(
        'Only a record linked to the same record as the row counts: `party` (projects, opportunities: one of the same name on another party is another), `organisation` (people: the same name at another organisation is another person); a row without the link matches only records without it',
      ),
    onMatch: z
      .enum(['update', 'skip', 'reject'])
      .default('update')
      .describe(
        "update: write the row's fields into the record found; skip: leave it as it is (rows that link to the row still link to it); reject: the row goes to the rejects file",
      ),
  })
  .strict();

export const mappingSchema = z
  .object({
    version: z.literal(1).describe('Version of the mapping language'),
    name: z.string().optional().describe('A name for messages and plans'),
    entity: z.enum(ENTITIES).describe('What each row becomes'),
    source: sourceSchema.optional(),
    key: z
      .union([z.string().min(1), z.array(z.string().min(1)).min(1)])
      .describe(
        'What identifies a row: a template ("{{Contact ID}}") or a list of columns. Used for checkpoints, references and re-runs',
      ),
    timeZone: z.string().default('UTC').describe('IANA time zone of dates and times without one'),
    skip: conditionSchema.optional().describe('Rows for which this holds are skipped (counted, not rejected)'),
    fields: z.array(fieldEntrySchema).min(1).describe('The target fields and where their values come from'),
    match: matchSchema
      .optional()
      .describe(
        'Importing: find a record the account already has for a row (parties, projects, opportunities) instead of creating one. Without it every new row is created',
      ),
    onInvalid: onInvalidSchema
      .default('reject')
      .describe("The default of every field's `onInvalid`; `keep` applies to text-like targets, others drop"),
    onDuplicate: onDuplicateSchema
      .default('reject')
      .describe('Rows of the input with the same key (or, with `match`, the same match value) as an earlier row'),
    leaveOut: z
      .record(z.string().min(1), z.string().min(1))
      .optional()
      .describe(
        'Columns the mapping leaves out on purpose, each with the reason (`createdOn: "the service sets it"`); a `*` stands for a number (`email.*.id`). The summary lists them by reason, apart from the columns left out by accident (`--json` and the report count their rows)',
      ),
  })
  .strict()
  .superRefine((mapping, context) => {
    if (!mapping.match) return;
    for (const problem of matchProblems(mapping.entity, mapping.match))
      context.addIssue({ code: 'custom', path: ['match', ...problem.path], message: problem.message });
  });

/**
 * What is wrong with a `match:` for records of `entity` (a mapping's, or a plan step's that wins
 * over it), each with its place under `match`; none when it is right.
 */
export function matchProblems(
  entity: Entity,
  match: z.output<typeof matchSchema>,
): Array<{ path: string[]; message: string }> {
  const problems: Array<{ path: string[]; message: string }> = [];
  if (entity === 'entry' || entity === 'task')
    problems.push({
      path: [],
      message: `\`match\` works for parties, projects and opportunities, not for entity ${entity}`,
    });
  const criteria = matchCriteria(match);
  if (new Set(criteria).size !== criteria.length)
    problems.push({ path: ['by'], message: 'each criterion once: a fallback list names different ones' });
  if (match.within !== undefined && match.within !== (entity === 'party' ? 'organisation' : 'party')) {
    problems.push({
      path: ['within'],
      message:
        entity === 'party'
          ? 'a party is matched within its organisation: `within: organisation`'
          : 'a project or opportunity is matched within its party: `within: party`',
    });
  }
  if (criteria.includes('email') && entity !== 'party')
    problems.push({
      path: ['by'],
      message: 'only parties have e-mail addresses; match projects and opportunities by name or custom',
    });
  if (criteria.includes('custom') !== (match.definition !== undefined)) {
    problems.push({
      path: ['definition'],
      message: criteria.includes('custom')
        ? "`by: custom` needs `definition`: the custom field's name"
        : '`definition` goes with `by: custom` only',
    });
  }
  return problems;
}

export type MatchSpec = z.output<typeof matchSchema>;

/** The criteria of a `match:`, in the order they are tried (one, or a fallback list). */
export function matchCriteria(spec: Pick<MatchSpec, 'by'>): MatchCriterion[] {
  return Array.isArray(spec.by) ? spec.by : [spec.by];
}
export type Mapping = z.output<typeof mappingSchema>;
export type FieldEntry = z.output<typeof fieldEntrySchema>;
export type SourceOptions = z.output<typeof sourceSchema>;
