import { z } from 'zod';

/**
 * What the client relies on in the service's answers. Objects are loose: the service may add
 * properties at any time and the client must pass them through untouched.
 */
const id = z.number().int();
const summary = z.looseObject({ id, name: z.string().optional() });
const userSummary = z.looseObject({ id, username: z.string().optional(), name: z.string().optional() });

export const tagSchema = z.looseObject({ id, name: z.string(), dataTag: z.boolean().optional() });
export const fieldValueSchema = z.looseObject({
  id: id.optional(),
  definition: z.looseObject({ id, name: z.string().optional() }),
  value: z.union([z.string(), z.boolean(), z.number(), z.null()]),
  tagId: id.nullable().optional(),
});

export const partySchema = z.looseObject({
  id,
  type: z.enum(['person', 'organisation']),
  firstName: z.string().nullable().optional(),
  lastName: z.string().nullable().optional(),
  name: z.string().nullable().optional(),
  organisation: summary.nullable().optional(),
  owner: userSummary.nullable().optional(),
  createdAt: z.string().optional(),
  updatedAt: z.string().optional(),
  tags: z.array(tagSchema).optional(),
  fields: z.array(fieldValueSchema).optional(),
});

export const kaseSchema = z.looseObject({
  id,
  name: z.string(),
  status: z.string().optional(),
  party: summary.nullable().optional(),
  owner: userSummary.nullable().optional(),
  updatedAt: z.string().optional(),
  tags: z.array(tagSchema).optional(),
  fields: z.array(fieldValueSchema).optional(),
});

export const opportunitySchema = z.looseObject({
  id,
  name: z.string(),
  party: summary.nullable().optional(),
  milestone: summary.nullable().optional(),
  value: z.looseObject({ amount: z.number(), currency: z.string() }).nullable().optional(),
  owner: userSummary.nullable().optional(),
  updatedAt: z.string().optional(),
  tags: z.array(tagSchema).optional(),
  fields: z.array(fieldValueSchema).optional(),
});

export const entrySchema = z.looseObject({
  id,
  type: z.string(),
  content: z.string().nullable().optional(),
  entryAt: z.string().optional(),
  attachments: z.array(z.looseObject({ id, filename: z.string() })).optional(),
});

export const taskSchema = z.looseObject({
  id,
  description: z.string(),
  dueOn: z.string().nullable().optional(),
  status: z.string().optional(),
});

export const milestoneSchema = z.looseObject({ id, name: z.string(), probability: z.number().optional() });
export const pipelineSchema = z.looseObject({ id, name: z.string() });
export const trackSchema = z.looseObject({ id, description: z.string().optional() });
export const trackDefinitionSchema = z.looseObject({ id, description: z.string() });
export const activityTypeSchema = z.looseObject({ id, name: z.string() });
export const userSchema = z.looseObject({ id, username: z.string(), name: z.string().optional() });
export const countrySchema = z.looseObject({ alpha2Code: z.string(), alpha3Code: z.string(), name: z.string() });
export const currencySchema = z.looseObject({ code: z.string(), symbol: z.string().optional() });
export const deletedSchema = z.looseObject({ id, deletedAt: z.string() });
export const jobSchema = z.looseObject({ id: z.string(), status: z.string(), progress: z.number().optional() });
export const fieldDefinitionSchema = z.looseObject({ id, name: z.string(), type: z.string().optional() });
export const categorySchema = z.looseObject({ id, name: z.string() });
export const activityTypeIconSchema = z.looseObject({ id: z.string(), order: z.number().int(), iconName: z.string() });

export type Party = z.infer<typeof partySchema>;
export type Kase = z.infer<typeof kaseSchema>;
export type Opportunity = z.infer<typeof opportunitySchema>;
export type Entry = z.infer<typeof entrySchema>;
export type Task = z.infer<typeof taskSchema>;
export type Milestone = z.infer<typeof milestoneSchema>;
export type Pipeline = z.infer<typeof pipelineSchema>;
export type Track = z.infer<typeof trackSchema>;
export type TrackDefinition = z.infer<typeof trackDefinitionSchema>;
export type ActivityType = z.infer<typeof activityTypeSchema>;
export type User = z.infer<typeof userSchema>;
export type Country = z.infer<typeof countrySchema>;
export type Currency = z.infer<typeof currencySchema>;
export type DeletedRecord = z.infer<typeof deletedSchema>;
export type Job = z.infer<typeof jobSchema>;
export type FieldDefinition = z.infer<typeof fieldDefinitionSchema>;
export type Tag = z.infer<typeof tagSchema>;
export type TaskCategory = z.infer<typeof categorySchema>;
export type ActivityTypeIcon = z.infer<typeof activityTypeIconSchema>;
