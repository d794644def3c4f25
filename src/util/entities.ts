/**
 * The kinds of record a row can become (a mapping's `entity`), in the mapping language's words.
 * Below the mapping room so that the journal, which names a step's entity in its state file, need
 * not import the mapping.
 */
export const ENTITIES = ['party', 'kase', 'opportunity', 'entry', 'task'] as const;
export type Entity = (typeof ENTITIES)[number];
