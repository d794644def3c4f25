import type { TransformDefinition } from './transforms/types.ts';

/** A registry of transforms by name; TRANSFORMS unless a caller (a test) brings its own. */
export type TransformRegistry = Readonly<Record<string, TransformDefinition<any>>>;

export type TransformSpec = string | Record<string, unknown>;

export type NormalizedTransform =
  | { ok: true; name: string; options: unknown; definition: TransformDefinition<any>; shorthand: boolean }
  | { ok: false; error: string; /** The transform's name, when the problem is only with it. */ name?: string };

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
      return { ok: false, error: `a transform is written as its name or as an object with its name as the only key, found keys ${keys.map((k) => `\`${k}\``).join(', ') || 'none'}` };
    }
    name = keys[0] as string;
    raw = spec[name];
  }
  if (!Object.hasOwn(registry, name)) return { ok: false, error: 'unknown', name };
  const definition = registry[name] as TransformDefinition<any>;
  if (raw === undefined || raw === null) return { ok: true, name, options: {}, definition, shorthand: false };
  if (isPlainObject(raw)) return { ok: true, name, options: raw, definition, shorthand: false };
  if (definition.shorthand === undefined) {
    return { ok: false, error: `transform \`${name}\` takes its options as an object, found ${JSON.stringify(raw)}`, name };
  }
  return { ok: true, name, options: { [definition.shorthand]: raw }, definition, shorthand: true };
}
