import { FerryError } from '../errors/index.ts';
import { TRANSFORMS } from './transforms/index.ts';
import type { TransformDefinition } from './transforms/types.ts';

/** A registry of transforms by name; TRANSFORMS unless a caller brings its own (transformRegistry). */
export type TransformRegistry = Readonly<Record<string, TransformDefinition<unknown>>>;

/**
 * A transform of one's own: a TransformDefinition whose one-line summary and examples (for the
 * mapping reference) may be left out.
 */
export type CustomTransform<Options = unknown> = Omit<TransformDefinition<Options>, 'summary' | 'examples'> &
  Partial<Pick<TransformDefinition<Options>, 'summary' | 'examples'>>;

/** A transform's name as a mapping writes it: a plain word (`trim`, `vatNumber`, `iso-week`). */
const TRANSFORM_NAME = /^[A-Za-z][A-Za-z0-9_-]*$/;

/**
 * The registry of the built-in transforms plus `custom` ones, to hand to compileMapping,
 * loadMapping and the commands that load mappings (runImport, runVerify, validate, the set-up:
 * their `transforms`). A custom transform cannot take the name of one the registry has: `trim`
 * means the same in every mapping. A definition that is not one (no name, no options schema, no
 * `create`) is refused here, not when a row meets it.
 */
export function transformRegistry(
  custom: ReadonlyArray<CustomTransform<unknown>>,
  base: TransformRegistry = TRANSFORMS,
): TransformRegistry {
  const registry: Record<string, TransformDefinition<any>> = { ...base };
  for (const [index, definition] of custom.entries()) {
    const name: unknown = (definition as { name?: unknown } | null)?.name;
    const what = typeof name === 'string' ? `custom transform \`${name}\`` : `custom transform number ${index + 1}`;
    const refuse = (problem: string, hint: string): FerryError =>
      new FerryError('CONFIG_INVALID', `${what} ${problem}`, { hint });
    if (typeof name !== 'string' || !TRANSFORM_NAME.test(name)) {
      throw refuse(
        `has no usable name (${JSON.stringify(name)})`,
        'Name it with a plain word that starts with a letter (letters, digits, - and _), as mappings will write it.',
      );
    }
    if (Object.hasOwn(registry, name)) {
      throw refuse(
        Object.hasOwn(base, name) ? 'takes the name of a transform the registry already has' : 'is given twice',
        'Give it a name of its own (crm-ferry mapping reference lists the built-in transforms).',
      );
    }
    if (
      typeof definition.create !== 'function' ||
      typeof (definition.options as { safeParse?: unknown } | undefined)?.safeParse !== 'function'
    ) {
      throw refuse(
        'needs `options` (a zod schema of its options, z.object({}) for none) and `create` (options -> function of a value)',
        'See docs/library.md, "A transform of your own".',
      );
    }
    registry[name] = { ...definition, summary: definition.summary ?? '', examples: definition.examples ?? [] };
  }
  return Object.freeze(registry);
}

export type TransformSpec = string | Record<string, unknown>;

export type NormalizedTransform =
  | { ok: true; name: string; options: unknown; definition: TransformDefinition<any>; shorthand: boolean }
  | { ok: false; error: string /** The transform's name, when the problem is only with it. */; name?: string };

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value) && !(value instanceof Date);
}

/**
 * Turns a transform as written into its name and raw options: `trim`, `{trim: null}`,
 * `{split: ';'}` (the shorthand option) or `{date: {format: ...}}`. Options are not checked here.
 */
export function normalizeTransform(spec: TransformSpec, registry: TransformRegistry): NormalizedTransform {
  let name: string;
  let raw: unknown;
  if (typeof spec === 'string') {
    name = spec;
    raw = undefined;
  } else {
    const keys = Object.keys(spec);
    if (keys.length !== 1) {
      return {
        ok: false,
        error: `a transform is written as its name or as an object with its name as the only key, found keys ${keys.map((k) => `\`${k}\``).join(', ') || 'none'}`,
      };
    }
    name = keys[0] as string;
    raw = spec[name];
  }
  if (!Object.hasOwn(registry, name)) return { ok: false, error: 'unknown', name };
  const definition = registry[name] as TransformDefinition<any>;
  if (raw === undefined || raw === null) return { ok: true, name, options: {}, definition, shorthand: false };
  if (isPlainObject(raw)) return { ok: true, name, options: raw, definition, shorthand: false };
  if (definition.shorthand === undefined) {
    return {
      ok: false,
      error: `transform \`${name}\` takes its options as an object, found ${JSON.stringify(raw)}`,
      name,
    };
  }
  return { ok: true, name, options: { [definition.shorthand]: raw }, definition, shorthand: true };
}
