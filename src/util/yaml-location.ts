/**
 * Where a value stands in a YAML file (its line, its path as `fields[3].value`), for the plan and
 * mapping loaders' messages: one parser set-up, one path format, one line finder.
 */
import { isMap, isPair, isScalar, isSeq, LineCounter, parseDocument, type Document, type YAMLWarning } from 'yaml';
import type { z } from 'zod';
import { FerryError, type ErrorCode } from '../errors/index.ts';
import { closestName } from './suggest.ts';
import { yamlValue } from './yaml-value.ts';

/** A YAML file parsed with enough bookkeeping to say on which line a value sits. */
export interface LocatedYaml {
  file: string;
  value: unknown;
  /** Line (1-based) of the node at `path`, or of its closest existing parent. */
  lineOf(path: ReadonlyArray<PropertyKey>): number | undefined;
}

/** `steps[1].mapping` from `['steps', 1, 'mapping']`. */
export function formatYamlPath(path: ReadonlyArray<PropertyKey>): string {
  let out = '';
  for (const part of path) {
    if (typeof part === 'number') out += `[${part}]`;
    else out += out === '' ? String(part) : `.${String(part)}`;
  }
  return out;
}

/**
 * The line (1-based) of the node at `path` in a parsed document, or of its nearest existing
 * parent; `atKey` points at the key of the last part rather than its value (an unknown key).
 */
export function yamlLineOf(
  document: Document,
  counter: LineCounter,
  path: ReadonlyArray<PropertyKey>,
  atKey = false,
): number | undefined {
  let node: unknown = document.contents;
  const lineAt = (offset: number | undefined): number | undefined =>
    offset === undefined ? undefined : counter.linePos(offset).line;
  const rangeStart = (n: unknown): number | undefined =>
    n && typeof n === 'object' && 'range' in n ? (n as { range?: [number, number, number] }).range?.[0] : undefined;
  let line = lineAt(rangeStart(node));
  for (let i = 0; i < path.length; i++) {
    const part = path[i];
    if (isMap(node)) {
      const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(part));
      if (!pair) return line;
      if (atKey && i === path.length - 1) return lineAt(rangeStart(pair.key)) ?? line;
      node = pair.value;
      // A missing value (`mapping:` with nothing after it) still has a key on a line.
      line = lineAt(rangeStart(pair.value)) ?? lineAt(rangeStart(pair.key)) ?? line;
    } else if (isSeq(node) && typeof part === 'number') {
      const item = node.items[part];
      if (item === undefined) return line;
      node = item;
      line = lineAt(rangeStart(item)) ?? line;
    } else return line;
  }
  return line;
}

/**
 * The tags of a document that the YAML library does not know (`!!js/function`, `!include`): it
 * only warns, and would give the tagged text as a plain string, so that a file written for another
 * tool (one that runs code or reads a file for such a tag) would be read as if it said something
 * else. crm-ferry refuses them, with their line.
 */
export function unknownTags(document: Document.Parsed): YAMLWarning[] {
  return document.warnings.filter((warning) => warning.code === 'TAG_RESOLVE_FAILED');
}

/** What is said of an unknown tag (its line is the location's). */
export function unknownTagMessage(warning: YAMLWarning): string {
  const tag = /^Unresolved tag: (\S+)/.exec(warning.message)?.[1]?.replace(/^tag:yaml\.org,2002:/, '!!') ?? 'a tag';
  return `unknown YAML tag ${tag}: crm-ferry reads plain YAML values only (no tag runs code or reads a file); remove the tag and write the value itself`;
}

/**
 * Parses YAML text; a syntax error becomes a FerryError with `code` and the line of the error.
 * Duplicate keys are syntax errors here: in a hand-written file the second one silently winning
 * hides a mistake.
 */
export function parseLocatedYaml(text: string, file: string, code: ErrorCode): LocatedYaml {
  const lineCounter = new LineCounter();
  const document: Document.Parsed = parseDocument(text, { lineCounter, uniqueKeys: true, prettyErrors: false });
  const first = document.errors[0] ?? unknownTags(document)[0];
  if (first) {
    const line = first.pos[0] === undefined ? undefined : lineCounter.linePos(first.pos[0]).line;
    // The yaml library's messages carry a code-frame after the first line; the location says where.
    const message =
      first.code === 'TAG_RESOLVE_FAILED'
        ? unknownTagMessage(first)
        : `not valid YAML: ${first.message.split('\n')[0] ?? first.message}`;
    throw new FerryError(code, message, { location: line === undefined ? { file } : { file, line } });
  }
  const lineOf = (path: ReadonlyArray<PropertyKey>): number | undefined => yamlLineOf(document, lineCounter, path);
  return { file, value: yamlValue(document, file, code), lineOf };
}

function describeReceived(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a mapping';
  return `${typeof value} ${JSON.stringify(value)}`;
}

function valueAt(root: unknown, path: ReadonlyArray<PropertyKey>): unknown {
  let node = root;
  for (const part of path) {
    if (node === null || typeof node !== 'object') return undefined;
    node = (node as Record<PropertyKey, unknown>)[part];
  }
  return node;
}

/**
 * Turns a zod error into a FerryError located in the file. One issue is reported: later ones are
 * often consequences of the first, and a person fixes one thing at a time. An unknown key wins
 * over the rest, because a misspelt key also makes the intended one look missing.
 * `keysAt` lists the keys allowed at a path, for "did you mean".
 */
export function yamlSchemaError(
  yaml: LocatedYaml,
  error: z.ZodError,
  code: ErrorCode,
  what: string,
  keysAt: (path: ReadonlyArray<PropertyKey>) => readonly string[] = () => [],
): FerryError {
  const issue = error.issues.find((i) => i.code === 'unrecognized_keys') ?? error.issues[0];
  let path = (issue?.path ?? []) as PropertyKey[];
  let message = issue?.message ?? 'invalid';
  if (issue?.code === 'unrecognized_keys') {
    const key = issue.keys[0] ?? '';
    const known = keysAt(path);
    const suggestion = closestName(key, known);
    message = `unknown key \`${key}\`${suggestion ? `; did you mean \`${suggestion}\`?` : known.length > 0 ? `; known keys here: ${known.join(', ')}` : ''}`;
    path = [...path, key];
  } else if (issue) {
    const found = describeReceived(valueAt(yaml.value, path));
    if (issue.code === 'invalid_value')
      message = `expected ${issue.values.map((v) => JSON.stringify(v)).join(' or ')}, found ${found}`;
    else if (issue.code === 'invalid_type') {
      const key = path[path.length - 1];
      message =
        found === 'nothing'
          ? `\`${String(key ?? 'a value')}\` is required`
          : `expected ${issue.expected}, found ${found}`;
    } else message = `${message} (found ${found})`;
  }
  const yamlPath = formatYamlPath(path);
  const line = yaml.lineOf(path);
  const location: { file: string; line?: number; yamlPath?: string } = { file: yaml.file };
  if (line !== undefined) location.line = line;
  if (yamlPath !== '') location.yamlPath = yamlPath;
  // The location carries the YAML path; the message does not repeat it.
  return new FerryError(code, `${what}: ${message}`, { location });
}
