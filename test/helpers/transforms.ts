import { TransformError } from '../../src/mapping/transforms/types.ts';
import type {
  TransformContext,
  TransformDefinition,
  TransformEnvironment,
  TransformFn,
  Value,
} from '../../src/mapping/transforms/types.ts';

/** A context for tests that do not care about time zones. */
export const UTC: TransformContext = { timeZone: 'UTC' };

/** An environment whose files are an in-memory map; reading a missing one fails like the disk would. */
export function memoryEnvironment(
  files: Record<string, string> = {},
  baseDir = '/maps',
): TransformEnvironment & { reads: string[] } {
  const reads: string[] = [];
  return {
    baseDir,
    reads,
    readTextFile(path: string): Promise<string> {
      reads.push(path);
      const text = files[path];
      return text === undefined
        ? Promise.reject(new Error(`ENOENT: no such file, open '${path}'`))
        : Promise.resolve(text);
    },
  };
}

/**
 * Expands a transform as written in a mapping (`trim`, `{split: ';'}`, `{date: {format: ...}}`)
 * the way the compiler does: a scalar stands for the definition's shorthand option.
 */
export function expandSpec(
  spec: unknown,
  definitions: Readonly<Record<string, TransformDefinition<any>>>,
): { definition: TransformDefinition<any>; options: unknown } {
  if (typeof spec === 'string') {
    const definition = definitions[spec];
    if (definition === undefined) throw new Error(`no transform ${spec}`);
    return { definition, options: {} };
  }
  if (spec === null || typeof spec !== 'object' || Array.isArray(spec))
    throw new Error('a transform is a name or a one-key object');
  const entries = Object.entries(spec);
  const [entry] = entries;
  if (entry === undefined || entries.length !== 1) throw new Error('a transform object has one key');
  const [name, raw] = entry;
  const definition = definitions[name];
  if (definition === undefined) throw new Error(`no transform ${name}`);
  if (raw === null || raw === undefined) return { definition, options: {} };
  if (typeof raw === 'object' && !Array.isArray(raw)) return { definition, options: raw };
  if (definition.shorthand === undefined) throw new Error(`${name} has no shorthand`);
  return { definition, options: { [definition.shorthand]: raw } };
}

/** Validates options like the compiler and builds the function. */
export async function build<O>(
  definition: TransformDefinition<O>,
  options: unknown = {},
  environment: TransformEnvironment = memoryEnvironment(),
): Promise<TransformFn> {
  return definition.create(definition.options.parse(options), environment);
}

/** The message of the options error, or undefined when the options are valid. */
export function optionsError(definition: TransformDefinition<any>, options: unknown): string | undefined {
  const result = definition.options.safeParse(options);
  return result.success ? undefined : result.error.issues.map((issue) => issue.message).join('; ');
}

/** Runs a transform and returns the TransformError it throws; fails the test when it does not throw one. */
export function transformErrorOf(fn: TransformFn, value: Value, context: TransformContext = UTC): TransformError {
  try {
    fn(value, context);
  } catch (error) {
    if (error instanceof TransformError) return error;
    throw error;
  }
  throw new Error(`expected a TransformError for ${JSON.stringify(value)}`);
}
