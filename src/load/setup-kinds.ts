/**
 * The kinds of account configuration set-up deals with, and their words in messages. A module of
 * its own, without imports, so that the command line can word a set-up without loading the importer.
 */

/** What set-up can create through the interface, in the order it creates them (a milestone needs its pipeline). */
export const SETUP_KINDS = ['pipeline', 'milestone', 'activityType', 'trackDefinition'] as const;
export type SetupKind = (typeof SETUP_KINDS)[number];

/** What the interface cannot create: listed for a person to make by hand before the run. */
export const CHECKLIST_KINDS = ['fieldDefinition', 'taskCategory', 'user', 'team', 'stage', 'lostReason'] as const;
export type ChecklistKind = (typeof CHECKLIST_KINDS)[number];

/** How each kind is called in messages. */
export const KIND_WORDS: Record<SetupKind | ChecklistKind, string> = {
  pipeline: 'pipeline',
  milestone: 'milestone',
  activityType: 'activity type',
  trackDefinition: 'track definition',
  fieldDefinition: 'custom field',
  taskCategory: 'task category',
  user: 'user',
  team: 'team',
  stage: 'project stage',
  lostReason: 'lost reason',
};
