import { readFile } from 'node:fs/promises';
import { parse } from 'yaml';
import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { compileMapping } from './compile.ts';
import { parseMapping } from './load.ts';
import {
  EXAMPLE_MAPPING,
  mappingJsonSchema,
  REFERENCE_END,
  REFERENCE_START,
  renderMappingReference,
  withReference,
} from './reference.ts';
import { ENTITIES, TARGETS } from './schema.ts';
import { TRANSFORMS } from './transforms/index.ts';

describe('the mapping reference', () => {
  const rendered = renderMappingReference();

  it('is in docs/mapping.md exactly as rendered (run `npm run docs:mapping` after changing the schema or the transforms)', async () => {
    const page = await readFile(new URL('../../docs/mapping.md', import.meta.url), 'utf8');
    const start = page.indexOf(REFERENCE_START);
    const end = page.indexOf(REFERENCE_END);
    expect(start).toBeGreaterThan(page.indexOf('# Mapping reference'));
    expect(end).toBeLessThan(page.indexOf('### How a mapping runs'));
    expect(page.slice(start + REFERENCE_START.length, end)).toBe(`\n${rendered}\n`);
  });

  it('lists every target of every entity and every transform with its examples', () => {
    for (const entity of ENTITIES) {
      expect(rendered).toContain(`#### \`entity: ${entity}\``);
      for (const target of TARGETS[entity]) expect(rendered).toContain(`| \`${target}\` |`);
    }
    for (const definition of Object.values(TRANSFORMS)) {
      expect(rendered).toContain(`#### \`${definition.name}\``);
      for (const example of definition.examples) expect(rendered).toContain(example.yaml.replace(/\|/g, '\\|'));
    }
  });

  it('has an example mapping that loads and compiles', async () => {
    const mapping = parseMapping(EXAMPLE_MAPPING, 'example.yaml');
    const compiled = await compileMapping(mapping, { file: 'example.yaml' });
    expect(compiled.columns).toContain('Contact ID');
    expect(rendered).toContain(EXAMPLE_MAPPING.trimEnd());
  });

  it('replaces only the text between the markers', () => {
    const readme = `# A\n${REFERENCE_START}\nold\n${REFERENCE_END}\n## B\n`;
    expect(withReference(readme, 'new')).toBe(`# A\n${REFERENCE_START}\nnew\n${REFERENCE_END}\n## B\n`);
    expect(() => withReference('# no markers', 'x')).toThrow(/lacks the markers/);
  });
});

describe('the JSON Schema of mapping files', () => {
  const schema = mappingJsonSchema();
  const validator = z.fromJSONSchema(schema as Parameters<typeof z.fromJSONSchema>[0]);

  it('names its recursive parts and suggests targets', () => {
    expect(schema.title).toBe('crm-ferry mapping file');
    expect(Object.keys(schema.$defs as object).sort()).toEqual(['Condition', 'Value']);
    expect(JSON.stringify(schema)).not.toContain('__schema');
    const to = (schema.properties as any).fields.items.properties.to as { examples: string[]; description: string };
    expect(to.examples).toContain('milestone');
    expect(to.description).toMatch(/target field/);
  });

  it('accepts a valid mapping and refuses broken ones', () => {
    const example = parse(EXAMPLE_MAPPING) as Record<string, unknown>;
    expect(validator.safeParse(example).success).toBe(true);
    expect(validator.safeParse({ ...example, version: 2 }).success).toBe(false);
    expect(validator.safeParse({ ...example, fields: [{ to: 'lastName', value: { colum: 'x' } }] }).success).toBe(
      false,
    );
    expect(validator.safeParse({ ...example, skip: { any: [{ not: { column: 'x', equal: 1 } }] } }).success).toBe(
      false,
    );
    expect(validator.safeParse({ ...example, skip: { any: [{ not: { column: 'x', equals: 1 } }] } }).success).toBe(
      true,
    );
  });
});
