import { parse as parseYaml } from 'yaml';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { type TransformDefinition, TransformError, TRANSFORMS, type Value } from './index.ts';
import { build, expandSpec, UTC } from '../../../test/helpers/transforms.ts';

const definitions = Object.entries(TRANSFORMS);

/** The options object of a definition, refinements included (zod keeps them on the same schema). */
function shapeOf(definition: TransformDefinition<any>): Record<string, z.ZodType> {
  const schema = definition.options as unknown as { shape?: Record<string, z.ZodType> };
  if (schema.shape === undefined) throw new Error(`${definition.name}: options are not an object`);
  return schema.shape;
}

async function buildFirstExample(definition: TransformDefinition<any>) {
  const [example] = definition.examples;
  if (example === undefined) throw new Error(`${definition.name} has no example`);
  const spec = expandSpec(parseYaml(example.yaml), TRANSFORMS);
  return build(spec.definition, spec.options);
}

describe('the transform registry', () => {
  it('holds the transforms of the mapping language under their own names', () => {
    expect(Object.keys(TRANSFORMS).sort()).toEqual(
      [
        'boolean',
        'collapse',
        'date',
        'default',
        'email',
        'extract',
        'first',
        'integer',
        'join',
        'lookup',
        'lowercase',
        'nth',
        'number',
        'phone',
        'prefix',
        'replace',
        'split',
        'suffix',
        'time',
        'timestamp',
        'titlecase',
        'trim',
        'truncate',
        'uppercase',
      ].sort(),
    );
    for (const [name, definition] of definitions) {
      expect(definition.name).toBe(name);
      expect(name).toMatch(/^[a-z]+$/);
    }
  });

  it.each(definitions)(
    '%s documents itself: a one-line summary, 1-3 examples, every option described',
    (name, definition) => {
      expect(definition.summary).toMatch(/^[A-Z].*\.$/);
      expect(definition.summary).not.toContain('\n');
      expect(definition.examples.length).toBeGreaterThanOrEqual(1);
      expect(definition.examples.length).toBeLessThanOrEqual(3);
      const shape = shapeOf(definition);
      for (const [option, schema] of Object.entries(shape)) {
        expect(schema.description, `${name}.${option}`).toMatch(/\S/);
      }
      if (definition.shorthand !== undefined) expect(Object.keys(shape)).toContain(definition.shorthand);
    },
  );

  it.each(definitions)('%s refuses unknown options', (_name, definition) => {
    const result = definition.options.safeParse({ notAnOption: 1 });
    expect(result.success).toBe(false);
    expect(result.error?.issues.some((issue) => issue.code === 'unrecognized_keys')).toBe(true);
  });
});

describe('the examples of the reference', () => {
  const examples = definitions.flatMap(([name, definition]) =>
    definition.examples.map(
      (example) => [name, example.yaml, example.input, example.output] as [string, string, Value, Value],
    ),
  );

  it.each(examples)('%s: %s turns %j into %j', async (name, yaml, input, output) => {
    const spec = expandSpec(parseYaml(yaml), TRANSFORMS);
    expect(spec.definition.name).toBe(name);
    const fn = await build(spec.definition, spec.options);
    expect(fn(input, { timeZone: 'Europe/Berlin' })).toEqual(output);
  });
});

describe('values every transform meets', () => {
  it.each(definitions)('%s passes nothing through (default and boolean decide it)', async (name, definition) => {
    const fn = await buildFirstExample(definition);
    const expected = name === 'default' ? definition.examples[0]?.output : name === 'boolean' ? false : null;
    expect(fn(null, UTC)).toEqual(expected);
  });

  it.each(definitions)(
    '%s handles a list element by element or refuses it with a TransformError',
    async (name, definition) => {
      const fn = await buildFirstExample(definition);
      let result: Value | TransformError;
      try {
        result = fn(['2024-03-31', '7'], UTC);
      } catch (error) {
        result = error as TransformError;
      }
      if (result instanceof Error) {
        expect(result).toBeInstanceOf(TransformError);
        expect((result as TransformError).transform).toBe(name);
      } else {
        expect(result === null || typeof result === 'string' || Array.isArray(result)).toBe(true);
      }
    },
  );

  it.each(definitions)(
    '%s keeps no state between rows: the same input twice gives the same output',
    async (_name, definition) => {
      const [example] = definition.examples;
      const fn = await buildFirstExample(definition);
      const context = { timeZone: 'Europe/Berlin' };
      expect([fn(example?.input ?? null, context), fn(example?.input ?? null, context)]).toEqual([
        example?.output,
        example?.output,
      ]);
    },
  );
});
