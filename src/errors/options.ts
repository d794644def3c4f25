import type { z } from 'zod';
import { FerryError } from './ferry-error.ts';

/**
 * Checks the options a library call was given against its schema and returns them with their
 * defaults. A wrong one is a FerryError (CONFIG_INVALID, of kind `input`) naming each option at
 * fault by its path (`rateLimit.limit`) and the call, never a raw ZodError.
 */
export function parseOptions<S extends z.ZodType>(schema: S, given: unknown, call: string): z.output<S> {
  const result = schema.safeParse(given ?? {});
  if (result.success) return result.data;
  const problems = result.error.issues.map((issue) => {
    const path = issue.path.map(String).join('.');
    return path === '' ? issue.message : `option \`${path}\`: ${issue.message}`;
  });
  throw new FerryError('CONFIG_INVALID', `${call}: ${problems.join('; ')}`, {
    hint: `See the options of ${call} in docs/library.md.`,
  });
}
