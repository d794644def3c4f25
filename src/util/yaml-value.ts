import type { Document } from 'yaml';
import { FerryError, type ErrorCode } from '../errors/index.ts';

/**
 * How many aliases (`*name`) a mapping or plan may use. Hand-written files use a few; a file that
 * repeats aliases of aliases expands into billions of values (an "alias bomb") and would take the
 * memory of the machine.
 */
export const MAX_YAML_ALIASES = 100;

/** The plain value of a parsed YAML document; a file over the alias limit is refused before it expands. */
export function yamlValue(document: Document.Parsed, file: string, code: ErrorCode): unknown {
  try {
    return document.toJS({ maxAliasCount: MAX_YAML_ALIASES });
  } catch (error) {
    if (error instanceof ReferenceError && /alias/i.test(error.message)) {
      throw new FerryError(
        code,
        `the file uses its YAML aliases (*name) more than ${MAX_YAML_ALIASES} times over; such a file is refused because it can expand into billions of values`,
        {
          location: { file },
          hint: 'Write the repeated parts out, or use fewer aliases.',
        },
      );
    }
    throw error;
  }
}
