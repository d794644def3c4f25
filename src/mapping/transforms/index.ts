import { z } from 'zod';
import type { TransformDefinition } from './types.ts';

export { TransformError, type TransformContext, type TransformDefinition, type TransformEnvironment, type TransformFn, type Value } from './types.ts';

// Placeholder registry with one transform, so that the compiler can be built against it; the
// full set is being written.
const trim: TransformDefinition<Record<string, never>> = {
  name: 'trim',
  summary: 'Removes white space at both ends of text.',
  options: z.object({}).strict(),
  examples: [{ yaml: 'trim', input: '  Ada ', output: 'Ada' }],
  create: () => (value) => (typeof value === 'string' ? value.trim() : value),
};

/** Every transform of the mapping language, by name. */
export const TRANSFORMS: Readonly<Record<string, TransformDefinition<any>>> = { trim };
