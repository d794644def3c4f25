import { readFile, stat } from 'node:fs/promises';
import { LineCounter, parseDocument } from 'yaml';
import { z } from 'zod';
import { type ErrorLocation, FerryError } from '../errors/index.ts';
import {
  checkInputPath,
  decodeTextInput,
  MAX_MAPPING_BYTES,
  MAX_MAPPING_FIELDS,
  MAX_PROBLEMS_SHOWN,
  yamlValue,
  didYouMean,
  formatYamlPath,
  isKnownTimeZone,
  yamlLineOf,
  formatCount,
  unknownTagMessage,
  unknownTags,
} from '../util/index.ts';
import { isTemplate, parseTemplate } from './compile-template.ts';
import {
  ITEM_KINDS,
  KEEPABLE_KINDS,
  LINK_KINDS,
  NUMBERED_KINDS,
  REPEATABLE_KINDS,
  TARGET_INFO,
  TYPED_KINDS,
  WEBSITE_SERVICES,
} from './compile-targets.ts';
import { numberedColumns } from './compile-fields.ts';
import { normalizeTransform, type TransformRegistry } from './compile-transforms.ts';
import { linearPatternProblem } from './linear-pattern.ts';
import {
  addressPartsSchema,
  type Condition,
  conditionSchema,
  type FieldEntry,
  fieldEntrySchema,
  type Mapping,
  mappingSchema,
  sourceSchema,
  type ValueSpec,
} from './schema.ts';
import { TRANSFORMS } from './transforms/index.ts';
import type { TransformDefinition } from './transforms/types.ts';

/**
 * Every problem of a mapping file at once, so that a consultant fixes them in one pass instead of
 * one run per mistake. `errors` holds one MAPPING_INVALID FerryError per problem, each with file,
 * line and yamlPath; the message lists them all, one per line, in file order.
 */
export class MappingErrors extends FerryError {
  readonly errors: FerryError[];

  constructor(file: string, errors: FerryError[]) {
    const lines = errors.slice(0, MAX_PROBLEMS_SHOWN).map((e) => {
      const where = [e.location?.line === undefined ? '' : `line ${e.location.line}`, e.location?.yamlPath ?? '']
        .filter(Boolean)
        .join(', ');
      return `  ${where ? `${where}: ` : ''}${e.message}`;
    });
    const first = errors[0];
    super(
      'MAPPING_INVALID',
      errors.length === 1 && first
        ? first.message
        : `${formatCount(errors.length)} problems in the mapping${errors.length > MAX_PROBLEMS_SHOWN ? ` (the first ${MAX_PROBLEMS_SHOWN} here; fix them and validate again to see the rest)` : ''}:\n${lines.join('\n')}`,
      { location: errors.length === 1 && first?.location ? first.location : { file } },
    );
    this.errors = errors;
  }
}

/** Options of parseMapping and loadMapping. */
export interface LoadOptions {
  /** Transforms the mapping may name. @default TRANSFORMS */
  transforms?: TransformRegistry;
}

type Path = Array<string | number>;

interface Problem {
  path: Path;
  message: string;
  /** Point at the key of `path` rather than its value (unknown keys). */
  atKey?: boolean;
  line?: number;
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function valueAt(data: unknown, path: Path): unknown {
  let current = data;
  for (const segment of path) {
    if (Array.isArray(current) && typeof segment === 'number') current = current[segment];
    else if (isObject(current) && typeof segment === 'string') current = current[segment];
    else return undefined;
  }
  return current;
}

function describeFound(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null (an empty value)';
  if (typeof value === 'string') return `the text ${JSON.stringify(value)}`;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (Array.isArray(value)) return 'a list';
  if (isObject(value))
    return `a map${
      Object.keys(value).length
        ? ` with ${Object.keys(value)
            .map((k) => `\`${k}\``)
            .join(', ')}`
        : ''
    }`;
  return String(value);
}

const TYPE_NAMES: Record<string, string> = {
  string: 'text',
  number: 'a number',
  int: 'a whole number',
  boolean: 'true or false',
  null: 'null',
  object: 'a map',
  array: 'a list',
  record: 'a map',
};

// Allowed keys per place, for "did you mean" on unknown keys: zod's issue does not carry them.
/** The names a row may go without (`onUnknown: drop`): who owns it, its team, a project's stage, a lost reason. */
const ON_UNKNOWN_KINDS: ReadonlySet<string> = new Set(['user', 'team', 'stage', 'lostReason']);
const MAPPING_KEYS = Object.keys(mappingSchema.shape);
const ENTITY_SCHEMA = mappingSchema.shape.entity;
const FIELD_KEYS = Object.keys(fieldEntrySchema.shape);
const SOURCE_KEYS = Object.keys(sourceSchema.shape);
const PART_KEYS = Object.keys(addressPartsSchema.shape);
const VALUE_KEYS = ['column', 'const', 'template', 'coalesce', 'transform', 'when'];
const CONDITION_KEYS = ['column', 'equals', 'in', 'empty', 'matches', 'all', 'any', 'not'];

function knownKeysAt(path: Path): string[] {
  if (path.length === 0) return MAPPING_KEYS;
  if (path.length === 1 && path[0] === 'source') return SOURCE_KEYS;
  if (path.length === 2 && path[0] === 'fields') return FIELD_KEYS;
  if (path.length === 3 && path[0] === 'fields' && path[2] === 'parts') return PART_KEYS;
  const conditional = path.findIndex((s) => s === 'when' || s === 'skip');
  if (conditional !== -1) return CONDITION_KEYS;
  return VALUE_KEYS;
}

/** Picks the union branch the author most likely meant: the one with fewest problems, missing keys weighing most. */
function pickBranch(branches: z.core.$ZodIssue[][], data: unknown, base: Path): z.core.$ZodIssue[] | undefined {
  const value = valueAt(data, base);
  const typeOnly = (issues: z.core.$ZodIssue[]): boolean =>
    issues.length === 1 && issues[0]?.code === 'invalid_type' && issues[0].path.length === 0;
  const candidates = branches.filter((b) => !typeOnly(b));
  if (candidates.length === 0) return undefined;
  const score = (issues: z.core.$ZodIssue[]): number =>
    issues.reduce((sum, issue) => {
      const missing = issue.path.length === 1 && isObject(value) && !(String(issue.path[0]) in value);
      return sum + (missing ? 10 : 1);
    }, 0);
  return [...candidates].sort((a, b) => score(a) - score(b))[0];
}

/** Turns zod issues into problems with messages that say what was expected and what was found. */
function issueProblems(
  issue: z.core.$ZodIssue,
  data: unknown,
  prefix: Path,
  out: Problem[],
  keysAt: (path: Path) => string[] = knownKeysAt,
): void {
  const path: Path = [...prefix, ...issue.path.map((s) => (typeof s === 'number' ? s : String(s)))];
  const found = valueAt(data, path);
  switch (issue.code) {
    case 'invalid_union': {
      if (found === undefined && typeof path.at(-1) === 'string') {
        out.push({ path, message: `\`${String(path.at(-1))}\` is required` });
        return;
      }
      const branch = pickBranch(issue.errors, data, path);
      if (branch) {
        for (const inner of branch) issueProblems(inner, data, path, out, keysAt);
        return;
      }
      const expected = [
        ...new Set(
          issue.errors.map((b) =>
            b[0]?.code === 'invalid_type' ? (TYPE_NAMES[b[0].expected] ?? b[0].expected) : 'something else',
          ),
        ),
      ];
      const list =
        expected.length > 1
          ? `${expected.slice(0, -1).join(', ')} or ${expected.at(-1)}`
          : (expected[0] ?? 'something else');
      out.push({ path, message: `expected ${list}, found ${describeFound(found)}` });
      return;
    }
    case 'invalid_type': {
      if (found === undefined && path.length > 0) {
        const key = path.at(-1);
        out.push({ path, message: typeof key === 'string' ? `\`${key}\` is required` : 'a value is required' });
        return;
      }
      out.push({
        path,
        message: `expected ${TYPE_NAMES[issue.expected] ?? issue.expected}, found ${describeFound(found)}`,
      });
      return;
    }
    case 'unrecognized_keys': {
      const known = keysAt(path);
      for (const key of issue.keys) {
        out.push({
          path: [...path, key],
          atKey: true,
          message: `unknown key \`${key}\`${didYouMean(key, known) || `; known keys here: ${known.join(', ')}`}`,
        });
      }
      return;
    }
    case 'invalid_value': {
      const values = issue.values.map((v) => (typeof v === 'string' ? v : JSON.stringify(v)));
      const hint = typeof found === 'string' ? didYouMean(found, values) : '';
      out.push({
        path,
        message: `expected ${values.length === 1 ? values[0] : `one of ${values.join(', ')}`}, found ${describeFound(found)}${hint}`,
      });
      return;
    }
    case 'too_small': {
      const noun =
        issue.origin === 'array' ? 'a list of at least' : issue.origin === 'string' ? 'text of at least' : 'at least';
      const unit = issue.origin === 'array' ? ' item' : issue.origin === 'string' ? ' character' : '';
      const count = Number(issue.minimum);
      out.push({
        path,
        message: `expected ${noun} ${count}${unit}${unit && count !== 1 ? 's' : ''}, found ${Array.isArray(found) ? `${found.length} items` : describeFound(found)}`,
      });
      return;
    }
    default:
      out.push({ path, message: `${issue.message}, found ${describeFound(found)}` });
  }
}

// ---------------------------------------------------------------------------------------------
// Checks zod cannot make

interface Checker {
  problems: Problem[];
  transforms: TransformRegistry;
}

function checkTemplate(checker: Checker, text: string, path: Path): void {
  const parsed = parseTemplate(text);
  if (!parsed.ok)
    checker.problems.push({
      path,
      message: `malformed template ${JSON.stringify(text)}: ${parsed.error}; write a literal {{ as \\{{`,
    });
}

function checkCondition(checker: Checker, condition: Condition, path: Path): void {
  if ('all' in condition) condition.all.forEach((c, i) => checkCondition(checker, c, [...path, 'all', i]));
  else if ('any' in condition) condition.any.forEach((c, i) => checkCondition(checker, c, [...path, 'any', i]));
  else if ('not' in condition) checkCondition(checker, condition.not, [...path, 'not']);
  else if (condition.matches !== undefined) {
    const problem = linearPatternProblem(condition.matches);
    if (problem !== undefined) checker.problems.push({ path: [...path, 'matches'], message: `the pattern ${problem}` });
  }
}

/** Option names of a transform, for "did you mean" on unknown options. */
function optionNames(definition: TransformDefinition<any>): string[] {
  try {
    const json = z.toJSONSchema(definition.options, { io: 'input', unrepresentable: 'any' }) as {
      properties?: Record<string, unknown>;
    };
    return Object.keys(json.properties ?? {});
  } catch {
    return [];
  }
}

function checkValue(checker: Checker, spec: ValueSpec, path: Path): void {
  if (typeof spec === 'string') {
    if (isTemplate(spec)) checkTemplate(checker, spec, path);
    return;
  }
  if (spec === null || typeof spec !== 'object') return;
  const sources = (['column', 'const', 'template', 'coalesce'] as const).filter(
    (k) => spec[k] !== undefined || (k === 'const' && 'const' in spec),
  );
  if (sources.length !== 1) {
    checker.problems.push({
      path,
      message:
        sources.length === 0
          ? 'a value needs one of `column`, `const`, `template` or `coalesce`'
          : `a value takes exactly one of \`column\`, \`const\`, \`template\` or \`coalesce\`, found ${sources.map((s) => `\`${s}\``).join(' and ')}`,
    });
  }
  if (spec.template !== undefined) checkTemplate(checker, spec.template, [...path, 'template']);
  spec.coalesce?.forEach((inner, i) => checkValue(checker, inner, [...path, 'coalesce', i]));
  if (spec.when) checkCondition(checker, spec.when, [...path, 'when']);
  spec.transform?.forEach((t, i) => {
    const at = [...path, 'transform', i];
    const normalized = normalizeTransform(t, checker.transforms);
    if (!normalized.ok) {
      if (normalized.error === 'unknown') {
        const name = normalized.name ?? '';
        const hint = didYouMean(name, Object.keys(checker.transforms));
        checker.problems.push({
          path: at,
          message: `unknown transform \`${name}\`${hint || `; known transforms: ${Object.keys(checker.transforms).sort().join(', ')}`}`,
        });
      } else checker.problems.push({ path: at, message: normalized.error });
      return;
    }
    const result = normalized.definition.options.safeParse(normalized.options);
    if (!result.success) {
      const inner: Problem[] = [];
      const optionKeys = optionNames(normalized.definition);
      for (const issue of result.error.issues) issueProblems(issue, normalized.options, [], inner, () => optionKeys);
      for (const p of inner) {
        const optionPath = formatYamlPath(p.path);
        checker.problems.push({
          path: normalized.shorthand || typeof t === 'string' ? at : [...at, normalized.name, ...p.path],
          message: `transform \`${normalized.name}\`${optionPath && !p.atKey ? ` option \`${optionPath}\`` : ''}: ${p.message}`,
        });
      }
    }
  });
}

function checkField(
  checker: Checker,
  mapping: Mapping,
  field: FieldEntry,
  index: number,
  seen: Map<string, number>,
): void {
  const path: Path = ['fields', index];
  const targets = TARGET_INFO[mapping.entity];
  const info = Object.hasOwn(targets, field.to) ? targets[field.to] : undefined;
  const problem = (key: string | null, message: string): void => {
    checker.problems.push({ path: key === null ? path : [...path, key], message });
  };
  if (!info) {
    const hint = didYouMean(field.to, Object.keys(targets));
    problem(
      'to',
      `unknown target \`${field.to}\` for entity ${mapping.entity}${hint || `; targets: ${Object.keys(targets).join(', ')}`}`,
    );
  } else {
    if (!REPEATABLE_KINDS.has(info.kind)) {
      const before = seen.get(field.to);
      if (before !== undefined)
        problem(
          'to',
          `\`${field.to}\` is already written by fields[${before}]; only tags, custom, address, phone, email, website, tracks, attachment and additionalContact may repeat`,
        );
      else seen.set(field.to, index);
    }
    const hasRef = field.ref !== undefined;
    const hasKey = field.key !== undefined;
    if ((hasRef || hasKey) && !LINK_KINDS.has(info.kind))
      problem(
        hasRef ? 'ref' : 'key',
        `\`ref\` and \`key\` link records, so they only go with organisation, party, kase, opportunity or additionalContact, not \`${field.to}\``,
      );
    else if (info.kind === 'links' && field.items !== undefined && field.items !== 'numbered') {
      // Each item of the JSON list is a key in the `ref` steps.
      if (!hasRef) problem('items', '`items` of a link needs `ref`: the steps whose keys the list holds');
      if (hasKey) problem('key', "`items` gives each linked record's key itself: leave `key` out");
    } else if (hasRef !== hasKey)
      problem(
        hasRef ? 'ref' : 'key',
        hasRef
          ? '`ref` needs a `key`: the linked record\'s key in that step, e.g. "{{Company ID}}"'
          : '`key` needs a `ref`: the name of the step that creates the linked record',
      );
    if (field.onInvalid === 'keep' && !KEEPABLE_KINDS.has(info.kind)) {
      problem(
        'onInvalid',
        `\`${field.to}\` cannot hold a value as typed; use \`drop\` (write the record without it) or \`reject\``,
      );
    }
    const usesParts = info.kind === 'address' && field.parts !== undefined;
    const usesItems = field.items !== undefined && field.items !== 'numbered';
    if (field.items === 'numbered') {
      if (!NUMBERED_KINDS.has(info.kind))
        problem(
          'items',
          `\`items: numbered\` goes with email, phone, website, address, attachment, tracks and additionalContact, not \`${field.to}\``,
        );
      else if (numberedColumns(field).length === 0)
        problem(
          'items',
          "`items: numbered` needs a `*` in a column name of `value`, `type`, `service`, `parts` or `key`, which stands for the item's number (`phone.*.phoneNumber`)",
        );
    }
    if (usesItems) {
      if (!ITEM_KINDS.has(info.kind))
        problem(
          'items',
          `\`items\` (a JSON list in one column) goes with email, phone, website, address, custom, attachment and additionalContact, not \`${field.to}\``,
        );
      for (const key of ['value', 'type', 'service', 'parts', 'definition', 'tag'] as const) {
        if (field[key] !== undefined)
          problem(
            key,
            `\`items\` gives each item's ${key === 'value' || key === 'parts' ? 'value' : key} itself: leave \`${key}\` out`,
          );
      }
    } else if (field.value === undefined && !hasRef && !hasKey && !usesParts)
      problem(
        null,
        info.kind === 'address'
          ? 'an address needs `parts` (or a `value` for the street)'
          : `\`${field.to}\` needs a \`value\`${LINK_KINDS.has(info.kind) ? ' or `ref` + `key`' : ''}${ITEM_KINDS.has(info.kind) ? ' or `items`' : ''}`,
      );
    if (field.parts !== undefined && info.kind !== 'address')
      problem('parts', `\`parts\` only go with an address, not \`${field.to}\``);
    if (field.type !== undefined && !TYPED_KINDS.has(info.kind))
      problem(
        'type',
        `\`type\` only goes with address, phone, email, website and attachment (its content type), not \`${field.to}\``,
      );
    if (field.service !== undefined) {
      const service = typeof field.service === 'string' && !isTemplate(field.service) ? field.service : undefined;
      if (info.kind !== 'website') problem('service', `\`service\` only goes with website, not \`${field.to}\``);
      else if (service !== undefined && !(WEBSITE_SERVICES as readonly string[]).includes(service)) {
        problem(
          'service',
          `expected one of ${WEBSITE_SERVICES.join(', ')}, found ${JSON.stringify(service)}${didYouMean(service, WEBSITE_SERVICES)}`,
        );
      }
    }
    if (field.ifEmpty !== undefined && field.to !== 'team')
      problem('ifEmpty', `\`ifEmpty\` goes with team, not \`${field.to}\``);
    else if (field.ifEmpty === 'clear' && field.required)
      problem(
        'ifEmpty',
        '`ifEmpty: clear` writes no team for an empty value, and `required` rejects the row: choose one',
      );
    if (field.onUnknown !== undefined && !(info.kind === 'name' && ON_UNKNOWN_KINDS.has(info.nameKind ?? 'user')))
      problem('onUnknown', `\`onUnknown\` goes with owner, team, stage and lostReason, not \`${field.to}\``);
    if (info.kind === 'custom' && !usesItems) {
      if (field.definition === undefined)
        problem(null, 'a custom field needs `definition`: the name of its custom field definition');
      if (field.tag === undefined)
        problem(null, 'a custom field needs `tag`: the name of its data tag, or null for a field outside data tags');
    } else if (info.kind !== 'custom') {
      if (field.definition !== undefined)
        problem('definition', `\`definition\` only goes with custom, not \`${field.to}\``);
      if (field.tag !== undefined) problem('tag', `\`tag\` only goes with custom, not \`${field.to}\``);
    }
  }
  if (Array.isArray(field.ref)) checkRefSteps(checker, field.ref, [...path, 'ref']);
  if (typeof field.key === 'string') checkTemplateOrColumn(checker, field.key, [...path, 'key']);
  else field.key?.forEach((key, i) => checkTemplateOrColumn(checker, key, [...path, 'key', i]));
  if (field.value !== undefined) checkValue(checker, field.value, [...path, 'value']);
  if (field.type !== undefined) checkValue(checker, field.type, [...path, 'type']);
  if (field.service !== undefined) checkValue(checker, field.service, [...path, 'service']);
  for (const part of ['street', 'city', 'state', 'zip', 'country'] as const) {
    const spec = field.parts?.[part];
    if (spec !== undefined) checkValue(checker, spec, [...path, 'parts', part]);
  }
}

/**
 * A step named twice in one `ref` list is a slip (usually a copied line meant to name another
 * step); without this check the second mention would silently change nothing.
 */
function checkRefSteps(checker: Checker, steps: readonly string[], path: Path): void {
  const firstAt = new Map<string, number>();
  steps.forEach((step, index) => {
    const before = firstAt.get(step);
    if (before === undefined) firstAt.set(step, index);
    else
      checker.problems.push({
        path: [...path, index],
        message: `step \`${step}\` is already named at ref[${before}]; name each step once`,
      });
  });
}

/** A key written without placeholders is one column's name: `key: Contact ID` means `{{Contact ID}}`. */
function checkTemplateOrColumn(checker: Checker, text: string, path: Path): void {
  if (isTemplate(text)) checkTemplate(checker, text, path);
}

function semanticProblems(mapping: Mapping, transforms: TransformRegistry): Problem[] {
  const checker: Checker = { problems: [], transforms };
  if (typeof mapping.key === 'string') checkTemplateOrColumn(checker, mapping.key, ['key']);
  if (!isKnownTimeZone(mapping.timeZone)) {
    checker.problems.push({
      path: ['timeZone'],
      message: `unknown time zone ${JSON.stringify(mapping.timeZone)}; expected an IANA name such as Europe/Berlin or UTC`,
    });
  }
  if (mapping.skip) checkCondition(checker, mapping.skip, ['skip']);
  const seen = new Map<string, number>();
  mapping.fields.forEach((field, index) => checkField(checker, mapping, field, index, seen));
  return checker.problems;
}

/**
 * The checks of semanticProblems on the parts of a file that passed the schema, so that a file
 * with a schema problem still gets its other problems reported in the same run.
 */
function partialSemanticProblems(data: unknown, transforms: TransformRegistry): Problem[] {
  if (!isObject(data)) return [];
  const entity = ENTITY_SCHEMA.safeParse(data.entity);
  if (!entity.success) return [];
  const checker: Checker = { problems: [], transforms };
  const partial = { entity: entity.data } as Mapping;
  const seen = new Map<string, number>();
  if (Array.isArray(data.fields)) {
    data.fields.forEach((raw: unknown, index: number) => {
      const field = fieldEntrySchema.safeParse(raw);
      if (field.success) checkField(checker, partial, field.data, index, seen);
      else if (isObject(raw) && typeof raw.to === 'string' && !Object.hasOwn(TARGET_INFO[entity.data], raw.to)) {
        const hint = didYouMean(raw.to, Object.keys(TARGET_INFO[entity.data]));
        checker.problems.push({
          path: ['fields', index, 'to'],
          message: `unknown target \`${raw.to}\` for entity ${entity.data}${hint || `; targets: ${Object.keys(TARGET_INFO[entity.data]).join(', ')}`}`,
        });
      }
    });
  }
  if (typeof data.key === 'string' && data.key !== '') checkTemplateOrColumn(checker, data.key, ['key']);
  if (data.skip !== undefined) {
    const skip = conditionSchema.safeParse(data.skip);
    if (skip.success) checkCondition(checker, skip.data, ['skip']);
  }
  return checker.problems;
}

/**
 * Parses and checks a mapping file's text. Throws MappingErrors holding every problem found: YAML
 * syntax (with its line), duplicate keys, schema violations, unknown targets and transforms (with
 * did-you-mean), bad transform options, misplaced `ref`/`parts`/`definition`, malformed
 * templates and regular expressions that do not compile.
 */
export function parseMapping(text: string, file: string, options: LoadOptions = {}): Mapping {
  if (text.length > MAX_MAPPING_BYTES) throw mappingTooLarge(file, text.length);
  const counter = new LineCounter();
  const doc = parseDocument(text, { lineCounter: counter, uniqueKeys: true, prettyErrors: false });
  const located = (line: number | undefined, path: Path | undefined, message: string): FerryError => {
    const location: ErrorLocation = { file };
    if (line !== undefined) location.line = line;
    if (path && path.length > 0) location.yamlPath = formatYamlPath(path);
    return new FerryError('MAPPING_INVALID', message, { location });
  };
  const tags = unknownTags(doc);
  if (doc.errors.length > 0 || tags.length > 0) {
    const errors = [...doc.errors, ...tags].map((e) => {
      const line = counter.linePos(e.pos[0]).line;
      const key = /^[^:\n]*/.exec(text.slice(e.pos[0]))?.[0].trim() ?? '';
      const message =
        e.code === 'DUPLICATE_KEY'
          ? `duplicate key \`${key}\`: each key may appear once in a map`
          : e.code === 'TAG_RESOLVE_FAILED'
            ? unknownTagMessage(e)
            : `YAML syntax error: ${e.message.split('\n')[0]}`;
      return located(line, undefined, message);
    });
    throw new MappingErrors(file, errors);
  }
  const data: unknown = yamlValue(doc, file, 'MAPPING_INVALID');
  const fields = (data as { fields?: unknown } | null)?.fields;
  if (Array.isArray(fields) && fields.length > MAX_MAPPING_FIELDS) {
    throw new FerryError(
      'MAPPING_INVALID',
      `the mapping has ${formatCount(fields.length)} field entries; a mapping takes at most ${formatCount(MAX_MAPPING_FIELDS)}`,
      {
        location: { file, yamlPath: 'fields' },
        hint: 'Split it into several mappings (steps of a plan), or leave out the columns nobody needs.',
      },
    );
  }
  const parsed = mappingSchema.safeParse(data);
  const transforms = options.transforms ?? TRANSFORMS;
  const problems: Problem[] = [];
  if (!parsed.success) {
    for (const issue of parsed.error.issues) issueProblems(issue, data, [], problems);
    problems.push(...partialSemanticProblems(data, transforms));
  } else problems.push(...semanticProblems(parsed.data, transforms));
  if (problems.length > 0) {
    const errors = problems
      .map((p) => ({ p, line: p.line ?? yamlLineOf(doc, counter, p.path, p.atKey === true) }))
      .sort((a, b) => (a.line ?? 0) - (b.line ?? 0))
      .map(({ p, line }) => located(line, p.path, p.message));
    throw new MappingErrors(file, errors);
  }
  return parsed.data as Mapping;
}

/** A mapping file past MAX_MAPPING_BYTES, refused before it is read. */
function mappingTooLarge(file: string, bytes: number): FerryError {
  return new FerryError(
    'MAPPING_INVALID',
    `the mapping file is ${(bytes / 1024 / 1024).toFixed(1)} MB; a mapping file is at most ${MAX_MAPPING_BYTES / 1024 / 1024} MB`,
    {
      location: { file },
      hint: 'Split it into several mappings (steps of a plan), or leave out the columns nobody needs.',
    },
  );
}

/** Reads and checks a mapping file; see parseMapping. A file that cannot be read is MAPPING_NOT_FOUND. */
export async function loadMapping(file: string, options: LoadOptions = {}): Promise<Mapping> {
  let text: string;
  try {
    const refuse = (message: string): FerryError => new FerryError('MAPPING_INVALID', message, { location: { file } });
    await checkInputPath(file, 'the mapping file', refuse);
    const { size } = await stat(file);
    if (size > MAX_MAPPING_BYTES) throw mappingTooLarge(file, size);
    text = decodeTextInput(await readFile(file), 'the mapping file', refuse);
  } catch (error) {
    if (error instanceof FerryError) throw error;
    const missing = (error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new FerryError(
      'MAPPING_NOT_FOUND',
      missing
        ? 'the mapping file does not exist'
        : `cannot read the mapping file: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      {
        location: { file },
        cause: error,
        hint: 'Check the path (relative paths start from the current folder, or from the plan file in a plan).',
      },
    );
  }
  return parseMapping(text, file, options);
}
