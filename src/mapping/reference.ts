import { z } from 'zod';
import { TARGET_INFO } from './compile-targets.ts';
import type { TransformRegistry } from './compile-transforms.ts';
import { conditionSchema, ENTITIES, fieldEntrySchema, mappingSchema, TARGETS } from './schema.ts';
import { TRANSFORMS } from './transforms/index.ts';
import type { Value } from './transforms/types.ts';

type Json = Record<string, unknown>;

function isJson(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

// ---------------------------------------------------------------------------------------------
// JSON Schema

function renameRefs(node: unknown, names: Map<string, string>): unknown {
  if (Array.isArray(node)) return node.map((n) => renameRefs(n, names));
  if (!isJson(node)) return node;
  const out: Json = {};
  for (const [key, value] of Object.entries(node)) {
    if (key === '$ref' && typeof value === 'string') {
      const name = value.replace('#/$defs/', '');
      out[key] = `#/$defs/${names.get(name) ?? name}`;
    } else out[key] = renameRefs(value, names);
  }
  return out;
}

/**
 * The JSON Schema of mapping files, for editors (YAML language servers read a
 * `# yaml-language-server: $schema=...` comment). Written from the zod schema (input side, so
 * defaults are optional): it accepts the same shapes as parseMapping. Checks that need code
 * (targets per entity, known transforms and their options) are offered as suggestions only.
 */
export function mappingJsonSchema(): Json {
  const raw = z.toJSONSchema(mappingSchema, {
    io: 'input',
    target: 'draft-2020-12',
    unrepresentable: 'any',
    cycles: 'ref',
    reused: 'inline',
  }) as Json;
  // zod names recursive definitions __schema0, __schema1 ...: give them names people can read.
  const names = new Map<string, string>();
  for (const [name, def] of Object.entries(isJson(raw.$defs) ? raw.$defs : {})) {
    const text = JSON.stringify(def);
    if (text.includes('"matches"')) names.set(name, 'Condition');
    else if (text.includes('"coalesce"')) names.set(name, 'Value');
  }
  const schema = renameRefs(raw, names) as Json;
  if (isJson(schema.$defs)) {
    const renamed: Json = {};
    for (const [name, def] of Object.entries(schema.$defs)) {
      const title = names.get(name) ?? name;
      renamed[title] = isJson(def) ? { title, ...def } : def;
    }
    schema.$defs = renamed;
  }
  const fields = (schema.properties as Json | undefined)?.fields as Json | undefined;
  const to = ((fields?.items as Json | undefined)?.properties as Json | undefined)?.to as Json | undefined;
  if (to) to.examples = [...new Set(ENTITIES.flatMap((e) => TARGETS[e]))];
  return {
    $schema: schema.$schema,
    $id: 'https://crm-ferry.dev/schemas/mapping-v1.json',
    title: 'crm-ferry mapping file',
    description: 'How rows of a source file become records of the CRM service. See docs/mapping.md.',
    ...schema,
  };
}

// ---------------------------------------------------------------------------------------------
// Markdown reference

export const REFERENCE_START = '<!-- mapping-reference:start -->';
export const REFERENCE_END = '<!-- mapping-reference:end -->';

function cell(text: string): string {
  return text.replace(/\|/g, '\\|').replace(/\n/g, ' ');
}

function shownValue(value: Value): string {
  return `\`${JSON.stringify(value instanceof Date ? value.toISOString() : value)}\``;
}

function typeOfJson(schema: unknown): string {
  if (!isJson(schema)) return 'any';
  if (Array.isArray(schema.enum)) return schema.enum.map((v) => `\`${String(v)}\``).join(', ');
  if (schema.const !== undefined) return `\`${String(schema.const)}\``;
  if (Array.isArray(schema.anyOf)) return schema.anyOf.map(typeOfJson).join(' or ');
  if (schema.type === 'array') return `list of ${typeOfJson(schema.items)}`;
  if (schema.type === 'object') return 'map';
  if (typeof schema.type === 'string') return schema.type === 'string' ? 'text' : schema.type;
  return 'any';
}

function describedKeys(shape: Record<string, z.ZodType>): string[] {
  const lines = ['| Key | What it holds |', '|---|---|'];
  for (const [key, schema] of Object.entries(shape)) lines.push(`| \`${key}\` | ${cell(schema.description ?? '')} |`);
  return lines;
}

function transformSection(registry: TransformRegistry): string[] {
  const lines: string[] = ['### Transforms', ''];
  lines.push(
    'Transforms run in the order listed, on the value a column, template or constant gave. A transform is written as its name (`trim`), as `{name: option}` for its shorthand option (`{split: ";"}`), or as `{name: {option: value, ...}}`. A value a transform cannot handle rejects the row (code `MAPPING_VALUE`, naming the entry and the transform); the run goes on.',
    '',
  );
  lines.push('| Transform | What it does | Shorthand for |', '|---|---|---|');
  for (const definition of Object.values(registry))
    lines.push(
      `| [\`${definition.name}\`](#transform-${definition.name}) | ${cell(definition.summary)} | ${definition.shorthand ? `\`${definition.shorthand}\`` : ''} |`,
    );
  lines.push('');
  for (const definition of Object.values(registry)) {
    lines.push(`<a id="transform-${definition.name}"></a>`, `#### \`${definition.name}\``, '', definition.summary, '');
    const json = z.toJSONSchema(definition.options, { io: 'input', unrepresentable: 'any' }) as Json;
    const properties = isJson(json.properties) ? json.properties : {};
    const required = Array.isArray(json.required) ? (json.required as string[]) : [];
    if (Object.keys(properties).length > 0) {
      lines.push('| Option | Type | Meaning |', '|---|---|---|');
      for (const [name, schema] of Object.entries(properties)) {
        const description = isJson(schema) && typeof schema.description === 'string' ? schema.description : '';
        lines.push(
          `| \`${name}\`${required.includes(name) ? ' (required)' : ''} | ${cell(typeOfJson(schema))} | ${cell(description)} |`,
        );
      }
      lines.push('');
    } else lines.push('No options.', '');
    if (definition.examples.length > 0) {
      lines.push('| Written | Input | Output |', '|---|---|---|');
      for (const example of definition.examples)
        lines.push(
          `| \`${cell(example.yaml)}\` | ${cell(shownValue(example.input))} | ${cell(shownValue(example.output))} |`,
        );
      lines.push('');
    }
  }
  return lines;
}

/** The complete example in the reference; a test loads and compiles it. */
export const EXAMPLE_MAPPING = `version: 1
name: people
entity: party
source:
  format: csv
  delimiter: ";"
key: "{{Contact ID}}"
timeZone: Europe/Berlin
skip:
  any:
    - {column: Status, equals: deleted}
    - {column: Email, matches: "@example\\\\.invalid$"}
fields:
  - to: firstName
    value: {column: First Name, transform: [trim, titlecase]}
  - to: lastName
    value: {column: Last Name, transform: [trim]}
    required: true
  - to: title
    value: {column: Salutation, transform: [{lookup: {table: {Herr: Mr, Frau: Ms, Dr.: Dr}, otherwise: keep}}]}
  - to: jobTitle
    value: {coalesce: [{column: Position}, {column: Role}]}
  - to: organisation
    ref: organisations
    key: "{{Company ID}}"
  - to: email
    type: Work
    value: {column: Email, transform: [trim, lowercase, email]}
  - to: phone
    type: {column: Phone Type}
    value: {column: Phone, transform: [{phone: DE}]}
  - to: website
    service: LINKED_IN
    value: {column: LinkedIn, when: {column: LinkedIn, empty: false}}
  - to: address
    type: Office
    parts:
      street: "{{Street}} {{House No}}"
      city: {column: City}
      zip: {column: Postcode}
      country: {const: Germany}
  - to: tags
    value: {column: Tags, transform: [{split: ","}]}
  - to: tags
    value: imported-2024
  - to: custom
    definition: Customer since
    tag: null
    value: {column: Since, transform: [{date: dd.MM.yyyy}]}
  - to: custom
    definition: Newsletter
    tag: Marketing
    value: {column: Newsletter, transform: [boolean]}
  - to: owner
    value: {column: Account Manager, transform: [{default: ada@example.com}]}
  - to: about
    value: "Imported from the old CRM (id {{Contact ID}}); literal braces: \\\\{{not a column}}"
`;

/**
 * The mapping reference of the README, rendered from the schema, the targets and the transform
 * registry, so that the README cannot drift from the code (a test compares them).
 */
export function renderMappingReference(registry: TransformRegistry = TRANSFORMS): string {
  const lines: string[] = [];
  lines.push(
    'A mapping file (YAML) says how each row of a source becomes one record of the service. `crm-ferry mapping init FILE` drafts one from a file\'s columns; `crm-ferry mapping schema --out mapping.schema.json` writes its JSON Schema, so that editors complete and check mapping files (add `# yaml-language-server: $schema=./mapping.schema.json` at the top). Every problem of a file is reported at once, each with its line and YAML path (`fields[3].value.transform[1]`), and unknown names get a suggestion ("unknown transform `dat`, did you mean `date`?").',
    '',
    '### A complete example',
    '',
    '```yaml',
    EXAMPLE_MAPPING.trimEnd(),
    '```',
    '',
    '### Top level',
    '',
    ...describedKeys(mappingSchema.shape as unknown as Record<string, z.ZodType>),
    '',
    'The `key` is a template (`"{{Contact ID}}"`), a single column name (`Contact ID`, the same as `"{{Contact ID}}"`) or a list of columns (joined with `|`). A row whose key is empty is rejected. Keys identify rows across re-runs and are what `ref` + `key` links point at.',
    '',
    '### Field entries',
    '',
    ...describedKeys(fieldEntrySchema.shape as unknown as Record<string, z.ZodType>),
    '',
    'A target is written at most once per mapping, except `tags`, `custom`, `address`, `phone`, `email`, `website`, `tracks`, `attachment` and `additionalContact`, which add one element per entry (a list value, after `split`, adds one per item). An empty value leaves its target out: an empty email makes no email address. `required: true` rejects a row whose value is empty.',
    '',
    '### Values',
    '',
    '| Form | Example | Gives |',
    '|---|---|---|',
    '| constant | `value: Work`, `value: 42`, `value: true`, `{const: "x"}` | the constant |',
    '| template | `value: "{{First Name}} {{Last Name}}"`, `{template: "..."}` | the text with each placeholder replaced by the column\'s value (`{{ Name }}` with spaces is the same column; `\\{{` writes a literal `{{`) |',
    '| column | `{column: E-mail}` | the cell as read: text from CSV, typed values from XLSX |',
    '| first non-empty | `{coalesce: [{column: Mobile}, {column: Phone}]}` | the first of the values that is not empty (blank text counts as empty) |',
    '| with transforms | `{column: Phone, transform: [trim, {phone: GB}]}` | the value after each transform in turn |',
    '| conditional | `{column: VAT, when: {column: Country, in: [DE, AT]}}` | the value when the condition holds; otherwise the target is left out |',
    '',
    '### Conditions (`skip` and `when`)',
    '',
    '| Form | Holds when |',
    '|---|---|',
    ...Object.entries(
      (
        conditionSchema as unknown as {
          def: { getter: () => { options: Array<{ shape?: Record<string, z.ZodType> }> } };
        }
      ).def.getter().options[0]?.shape ?? {},
    )
      .filter(([key]) => key !== 'column')
      .map(([key, schema]) => `| \`{column: C, ${key}: ...}\` | ${cell(schema.description ?? '')} |`),
    '| `{column: C}` | the value is not empty |',
    '| `{all: [...]}`, `{any: [...]}`, `{not: {...}}` | all, any, or not the inner conditions |',
    '',
    'Several tests in one column condition must all hold. Rows a `skip` condition selects are counted as skipped, not rejected.',
    '',
    '### Targets',
    '',
    "Links (`organisation`, `party`, `kase`, `opportunity`) take `ref` (the step of a plan that creates the linked record, or a list of steps such as `ref: [people, organisations]` when it may be either: the key is looked up in each, and a key found in more than one rejects the row) and `key` (that record's key, as a template over this row), or a value: an id, or for `organisation` also a name. Names of users, teams, milestones, project stages, lost reasons, activity types, task categories, track definitions and custom field definitions are looked up in the account once per run; an unknown name stops the run before anything is written, with the closest names as a suggestion. Dates must be YYYY-MM-DD after the transforms, or the row is rejected with a hint to add a `date` transform.",
    '',
  );
  for (const entity of ENTITIES) {
    lines.push(`#### \`entity: ${entity}\``, '', '| Target | Takes |', '|---|---|');
    for (const [target, info] of Object.entries(TARGET_INFO[entity]))
      lines.push(`| \`${target}\` | ${cell(info.takes)} |`);
    lines.push('');
  }
  lines.push(
    'A row is rejected (code `MAPPING_VALUE`) when it cannot make a record the service accepts: a person without first and last name, an organisation without name, a project or opportunity without name or party, an opportunity without milestone, a note on no record or on several, or without content and attachment, a task without description or due date, or on several records.',
    '',
  );
  lines.push(...transformSection(registry));
  return lines.join('\n').trimEnd();
}

/** The page's text with the rendered reference put between the markers. */
export function withReference(page: string, reference: string): string {
  const start = page.indexOf(REFERENCE_START);
  const end = page.indexOf(REFERENCE_END);
  if (start === -1 || end === -1 || end < start)
    throw new Error(`docs/mapping.md lacks the markers ${REFERENCE_START} ... ${REFERENCE_END}`);
  return `${page.slice(0, start + REFERENCE_START.length)}\n${reference}\n${page.slice(end)}`;
}
