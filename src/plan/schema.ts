import { z } from 'zod';
import { matchSchema, onDuplicateSchema, sourceSchema } from '../mapping/index.ts';

/**
 * A migration plan as a zod schema: the steps of a whole migration, each a mapping file and the
 * input it reads. The run order is not written in the file: it follows from the references
 * between the mappings (see order.ts).
 */

/** Step names appear in `ref:` of mappings and in file names of rejects: keep them plain. */
const STEP_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

export const planStepSchema = z
  .object({
    name: z
      .string()
      .regex(STEP_NAME, 'a step name starts with a letter and holds only letters, digits, "-" and "_"')
      .describe('Name of the step; mappings refer to it with `ref:`'),
    mapping: z.string().min(1).describe('The mapping file, relative to the plan file'),
    input: z
      .string()
      .min(1)
      .optional()
      .describe(
        'The source file, relative to the plan file, or a live v1 account (v1+https://HOST[/api/LIST]); left out when the source is `format: v1-api` with a `baseUrl`',
      ),
    source: sourceSchema.optional().describe("Reader options; each one given here wins over the mapping's"),
    match: matchSchema
      .optional()
      .describe(
        "How a record the account has already is found for a row (the mapping's `match`), given for this plan: wins over the mapping's, so that a ready-made mapping is used as it is",
      ),
    onDuplicate: onDuplicateSchema
      .optional()
      .describe(
        "What rows naming one record become (the mapping's `onDuplicate`), given for this plan: wins over the mapping's",
      ),
  })
  .strict();

const setupPipelineSchema = z
  .object({
    name: z.string().min(1).describe("The pipeline's name"),
    description: z.string().optional().describe('Its description'),
  })
  .strict();

const setupMilestoneSchema = z
  .object({
    name: z.string().min(1).describe("The milestone's name"),
    pipeline: z
      .string()
      .min(1)
      .optional()
      .describe("The pipeline's name; left out, the oldest active pipeline (as the service does)"),
    probability: z.number().int().min(0).max(100).optional().describe('Percent, 0 to 100 (the service defaults to 0)'),
    complete: z.boolean().optional().describe('A closing milestone (Won, Lost)'),
    description: z.string().optional(),
  })
  .strict();

const setupActivityTypeSchema = z
  .object({
    name: z.string().min(1).describe("The activity type's name"),
    icon: z
      .string()
      .min(1)
      .optional()
      .describe('An icon id of GET /activitytypes/icons (MAIL, PHONE, ...); chosen from the name when left out'),
    updateLastContacted: z
      .boolean()
      .optional()
      .describe("Whether an entry of this type sets the record's last contacted date"),
  })
  .strict();

const setupTrackDefinitionSchema = z
  .object({
    description: z.string().min(1).describe("The track definition's name (its description)"),
    for: z
      .enum(['parties', 'opportunities', 'kases'])
      .optional()
      .describe('What it applies to; left out, what the rows that name it are'),
    tasks: z
      .array(
        z
          .object({
            description: z.string().min(1),
            daysAfter: z.number().int().min(0).default(0),
            daysAfterRule: z
              .enum(['TRACK_START', 'LAST_TASK'])
              .default('TRACK_START')
              .describe('Counted from the start of the track, or from the task before'),
          })
          .strict(),
      )
      .default([])
      .describe('Its tasks, each some days after the track starts (or after the task before)'),
  })
  .strict();

/**
 * What the account must have before the rows are written: created when missing (a name that
 * exists is left alone). `derive` adds what the mapped rows name and the account lacks.
 */
export const setupSchema = z
  .object({
    derive: z
      .boolean()
      .default(true)
      .describe(
        'Also create the pipelines, milestones, activity types and track definitions the mapped rows name and the account lacks',
      ),
    pipelines: z.array(setupPipelineSchema).default([]),
    milestones: z.array(setupMilestoneSchema).default([]),
    activityTypes: z.array(setupActivityTypeSchema).default([]),
    trackDefinitions: z.array(setupTrackDefinitionSchema).default([]),
  })
  .strict();

export const planSchema = z
  .object({
    version: z.literal(1).describe('Version of the plan format'),
    timeZone: z.string().min(1).optional().describe('Time zone for mappings of this plan that do not name one'),
    setup: z
      .union([setupSchema, z.null()])
      .optional()
      .describe(
        'Account set-up before the first row: what the interface can create (pipelines, milestones, activity types, track definitions), and a checklist of what it cannot',
      ),
    steps: z
      .array(planStepSchema)
      .min(1)
      .describe('The steps; run in the order their references need, else in this order'),
  })
  .strict();

export type PlanFile = z.output<typeof planSchema>;
export type PlanStepFile = z.output<typeof planStepSchema>;
export type SetupSpec = z.output<typeof setupSchema>;
