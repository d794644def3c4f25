/**
 * How the backup room reads a record as the interface gives it: an object of unknown fields, whose
 * links are `{id, name, ...}` summaries.
 */

export type Body = Record<string, unknown>;

/** The id of a linked record as the interface gives it (`{id, ...}`), or null. */
export const idOf = (value: unknown): number | null => {
  const id = value && typeof value === 'object' ? (value as Body).id : undefined;
  return typeof id === 'number' ? id : null;
};

/** The name of a linked record as the interface gives it (`{name, ...}`), or null. */
export const nameOf = (value: unknown): string | null => {
  const name = value && typeof value === 'object' ? (value as Body).name : undefined;
  return typeof name === 'string' ? name : null;
};
