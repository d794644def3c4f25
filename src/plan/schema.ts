import { z } from 'zod';
import { sourceSchema } from '../mapping/schema.ts';

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
    input: z.string().min(1).optional().describe('The source file, relative to the plan file, or a live v1 account (v1+https://HOST[/api/LIST]); left out when the source is `format: v1-api` with a `baseUrl`'),
    source: sourceSchema.optional().describe("Reader options; each one given here wins over the mapping's"),
  })
  .strict();

export const planSchema = z
  .object({
    version: z.literal(1).describe('Version of the plan format'),
    timeZone: z.string().min(1).optional().describe('Time zone for mappings of this plan that do not name one'),
    steps: z.array(planStepSchema).min(1).describe('The steps; run in the order their references need, else in this order'),
  })
  .strict();

export type PlanFile = z.output<typeof planSchema>;
export type PlanStepFile = z.output<typeof planStepSchema>;
