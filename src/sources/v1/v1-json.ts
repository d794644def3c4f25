import { FerryError } from '../../errors/index.ts';
import { MAX_NESTING_DEPTH } from '../../util/index.ts';
import { readDecoded } from './v1-decode.ts';
import { JsonSyntaxError, JsonTokenizer } from './v1-json-tokens.ts';
import type { JsonEvent } from './v1-json-tokens.ts';
import { isRecordKind, V1_LIST_ITEMS } from './v1-flatten.ts';
import type { V1Node, V1RecordKind } from './v1-flatten.ts';
import { tooDeep, type RawReadOptions, type RawV1Record } from './v1-xml.ts';

type JsonValue = string | boolean | null | JsonValue[] | { [key: string]: JsonValue };

interface Frame {
  kind: 'object' | 'array';
  /** The property this container is the value of (for an array item: the array's own key). */
  key: string | undefined;
  path: string;
  /** Objects: the property whose value comes next. Arrays: the next item's index. */
  currentKey: string | undefined;
  index: number;
}

interface Building {
  kind: string;
  path: string;
  line: number;
  chars: number;
  /** Too large or nested too deep to keep: its content is skipped to its end. */
  refused: 'large' | 'deep' | null;
  depth: number;
  stack: Array<{ container: JsonValue[] | { [key: string]: JsonValue }; key: string | undefined }>;
  root: { [key: string]: JsonValue } | undefined;
}

/** Lists whose items are records; `parties` items say their kind in `type`. */
const RECORD_LISTS = new Set(['parties', 'opportunities', 'kases', 'tasks', 'history']);
const IDENTIFIER = /^[A-Za-z_$][\w$]*$/;

function memberPath(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/**
 * Streams the records of a v1 JSON export, leniently: `{"parties": {"person": [...]}}`,
 * `{"person": {...}}`, `{"opportunities": [...]}`, or a bare array of records. A party in a
 * list that does not name its kind is told apart by its `type` field, or by having a `name`
 * (organisation) rather than names of a person. Only the record being read is held in memory.
 */
export async function* readV1JsonRecords(
  file: string,
  options: RawReadOptions & { bareKind: V1RecordKind | undefined },
): AsyncGenerator<RawV1Record> {
  const frames: Frame[] = [];
  let building: Building | undefined;
  let queue: RawV1Record[] = [];
  let pendingError: FerryError | undefined;
  const tokenizer = new JsonTokenizer(onEvent);

  function recordKindAt(): { kind: string; path: string } | undefined {
    const parent = frames.at(-1);
    if (!parent) return undefined;
    if (parent.kind === 'object') {
      const key = parent.currentKey ?? '';
      return isRecordKind(key) ? { kind: key, path: memberPath(parent.path, key) } : undefined;
    }
    const path = `${parent.path}[${parent.index}]`;
    if (parent.key === undefined) return frames.length === 1 ? { kind: '', path } : undefined;
    if (isRecordKind(parent.key)) return { kind: parent.key, path };
    if (RECORD_LISTS.has(parent.key)) return { kind: V1_LIST_ITEMS[parent.key] ?? '', path };
    return undefined;
  }

  function onEvent(event: JsonEvent): void {
    if (building) {
      buildEvent(building, event);
      return;
    }
    const parent = frames.at(-1);
    switch (event.type) {
      case 'startObject': {
        const record = recordKindAt();
        if (record) {
          const root: { [key: string]: JsonValue } = {};
          building = {
            kind: record.kind,
            path: record.path,
            line: tokenizer.position.line,
            chars: 0,
            refused: null,
            depth: 0,
            stack: [{ container: root, key: undefined }],
            root,
          };
          return;
        }
        frames.push(openFrame('object', parent));
        checkDepth();
        return;
      }
      case 'startArray':
        frames.push(openFrame('array', parent));
        checkDepth();
        return;
      case 'endObject':
      case 'endArray':
        frames.pop();
        advance(frames.at(-1));
        return;
      case 'key':
        if (parent) parent.currentKey = event.key;
        return;
      case 'value':
        advance(parent);
        return;
    }
  }

  /** Wrappers nested past the limit: no v1 document, and reading stops (the tokenizer is told by the throw). */
  function checkDepth(): void {
    if (frames.length > MAX_NESTING_DEPTH) throw tooDeep(file, frames.at(-1)?.path ?? '$', tokenizer.position.line);
  }

  function openFrame(kind: 'object' | 'array', parent: Frame | undefined): Frame {
    if (!parent) return { kind, key: undefined, path: '$', currentKey: undefined, index: 0 };
    if (parent.kind === 'object') {
      const key = parent.currentKey ?? '';
      return { kind, key, path: memberPath(parent.path, key), currentKey: undefined, index: 0 };
    }
    return { kind, key: parent.key, path: `${parent.path}[${parent.index}]`, currentKey: undefined, index: 0 };
  }

  function advance(frame: Frame | undefined): void {
    if (frame?.kind === 'array') frame.index++;
  }

  function buildEvent(record: Building, event: JsonEvent): void {
    if (event.type === 'startObject' || event.type === 'startArray') {
      record.depth++;
      // The wrappers above the record, the record, and the levels inside it.
      if (record.refused === null && frames.length + 1 + record.depth > MAX_NESTING_DEPTH) {
        record.refused = 'deep';
        record.stack = [];
        record.root = undefined;
      }
      if (record.refused) return;
      const container: JsonValue[] | { [key: string]: JsonValue } = event.type === 'startObject' ? {} : [];
      addValue(record, container);
      record.stack.push({ container, key: undefined });
      return;
    }
    if (event.type === 'endObject' || event.type === 'endArray') {
      if (record.depth > 0) {
        record.depth--;
        if (!record.refused) record.stack.pop();
        return;
      }
      finishRecord(record);
      return;
    }
    if (record.refused) return;
    if (event.type === 'key') {
      const top = record.stack.at(-1);
      if (top) top.key = event.key;
      record.chars += event.key.length;
      return;
    }
    if (typeof event.value === 'string') record.chars += event.value.length;
    if (record.chars > options.maxRecordChars) {
      record.refused = 'large';
      record.stack = [];
      record.root = undefined;
      return;
    }
    addValue(record, event.value);
  }

  function addValue(record: Building, value: JsonValue): void {
    const top = record.stack.at(-1);
    if (!top) return;
    if (Array.isArray(top.container)) top.container.push(value);
    else top.container[top.key ?? ''] = value;
  }

  function finishRecord(record: Building): void {
    building = undefined;
    advance(frames.at(-1));
    if (record.refused === 'deep') {
      queue.push({
        node: { name: record.kind || 'record', text: null, children: [] },
        elementPath: record.path,
        line: record.line,
        error: tooDeep(file, record.path, record.line, record.kind || 'record'),
      });
      return;
    }
    if (record.refused || !record.root) {
      queue.push({
        node: { name: record.kind || 'record', text: null, children: [] },
        elementPath: record.path,
        line: record.line,
        error: new FerryError(
          'SOURCE_FIELD_TOO_LARGE',
          `the record at ${record.path} holds more than ${options.maxRecordChars} characters of text`,
          {
            location: { file, line: record.line, elementPath: record.path },
            hint: 'Raise maxRecordChars if the record is genuine.',
          },
        ),
      });
      return;
    }
    const kind = resolveKind(record.kind, record.root, options.bareKind);
    if (kind === undefined) {
      queue.push({
        node: { name: 'record', text: null, children: [] },
        elementPath: record.path,
        line: record.line,
        error: new FerryError(
          'SOURCE_MALFORMED_RECORD',
          `cannot tell what kind of v1 record ${record.path} is: it sits in a bare list and has no "type"`,
          {
            location: { file, line: record.line, elementPath: record.path },
            hint: 'Name the kind with the record option (person, organisation, opportunity, kase, task, historyItem).',
          },
        ),
      });
      return;
    }
    queue.push({ node: objectToNode(kind, record.root), elementPath: record.path, line: record.line });
  }

  yield* readDecoded(file, options, writeOrFail, drain);
  try {
    tokenizer.end();
  } catch (error) {
    throw toFerryError(error);
  }
  yield* drain();

  function writeOrFail(text: string): void {
    try {
      tokenizer.write(text);
    } catch (error) {
      // Records completed before the fault are still handed over before the error.
      pendingError = toFerryError(error);
    }
  }

  function* drain(): Generator<RawV1Record> {
    const ready = queue;
    queue = [];
    yield* ready;
    if (pendingError) throw pendingError;
  }

  function toFerryError(error: unknown): FerryError {
    if (error instanceof FerryError) return error;
    if (!(error instanceof JsonSyntaxError)) {
      return new FerryError('INTERNAL', `reading ${file} failed unexpectedly: ${(error as Error).message}`, {
        cause: error,
      });
    }
    const elementPath = building?.path ?? frames.at(-1)?.path ?? '$';
    return new FerryError('SOURCE_JSON_MALFORMED', `${file} is not valid JSON: ${error.message}`, {
      location: { file, line: error.line, column: error.column, elementPath },
      cause: error,
      hint: 'The export may be truncated or edited by hand; check the file around the line given.',
    });
  }
}

function resolveKind(
  kind: string,
  root: { [key: string]: JsonValue },
  bareKind: V1RecordKind | undefined,
): V1RecordKind | undefined {
  if (kind !== '' && kind !== 'party' && isRecordKind(kind)) return kind;
  const type = root['type'];
  if (type === 'person' || type === 'organisation') return type;
  if (kind === '' && typeof type === 'string' && isRecordKind(type)) return type;
  if (kind === 'party') {
    if ('firstName' in root || 'lastName' in root) return 'person';
    if ('name' in root) return 'organisation';
    return undefined;
  }
  return bareKind;
}

/** Gives a JSON record the element shape of its XML twin, so both flatten the same way. */
export function objectToNode(name: string, value: JsonValue): V1Node {
  if (value === null) return { name, text: null, children: [] };
  if (typeof value !== 'object') return { name, text: String(value), children: [] };
  if (Array.isArray(value)) return { name, text: null, children: value.map((item) => objectToNode(name, item)) };
  const children: V1Node[] = [];
  for (const [key, child] of Object.entries(value)) {
    // `@size` and friends come from XML attributes converted to JSON; they carry no record data.
    if (key.startsWith('@')) continue;
    if (Array.isArray(child)) {
      const item = V1_LIST_ITEMS[key];
      if (item !== undefined) {
        const items = child.map((entry) => objectToNode(itemName(item, entry), entry));
        children.push({ name: key, text: null, children: items });
      } else {
        for (const entry of child) children.push(objectToNode(key, entry));
      }
      continue;
    }
    children.push(objectToNode(key, child));
  }
  return { name, text: null, children };
}

function itemName(item: string, entry: JsonValue): string {
  if (item !== 'party') return item;
  if (entry !== null && typeof entry === 'object' && !Array.isArray(entry)) {
    const type = entry['type'];
    if (type === 'person' || type === 'organisation') return type;
  }
  return 'person';
}
