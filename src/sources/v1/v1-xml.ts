import { SaxesParser } from 'saxes';
import { FerryError } from '../../errors/index.ts';
import { MAX_NESTING_DEPTH } from '../../util/index.ts';
import { readDecoded } from './v1-decode.ts';
import { isRecordKind } from './v1-flatten.ts';
import type { V1Node } from './v1-flatten.ts';

/** A top-level record as the format readers hand it over, before flattening. */
export interface RawV1Record {
  node: V1Node;
  /** `/parties/person[12]` (XML) or `$.parties.person[11]` (JSON). */
  elementPath: string;
  /** Line the record starts on. */
  line: number;
  /** Set when the record could not be kept (too large); `node` is then empty. */
  error?: FerryError;
}

export interface RawReadOptions {
  signal: AbortSignal | undefined;
  /** Largest amount of text (in characters) one record may hold before it is refused. */
  maxRecordChars: number;
  /** Bytes to read instead of the file (a page of the live v1 interface); `file` then only names them in messages. */
  chunks?: Iterable<Buffer> | AsyncIterable<Buffer>;
}

interface OpenElement {
  name: string;
  path: string;
  childCounts: Map<string, number>;
}

/** saxes prefixes its messages with `line:column: `; the location travels separately. */
function bareMessage(error: Error): string {
  return error.message.replace(/^\d+:\d+: /, '');
}

/**
 * Streams the top-level records of a v1 XML export. Records are the person, organisation,
 * opportunity, kase, task and historyItem elements that are not inside another record, wherever
 * the list wrappers put them; everything inside a record is kept as a small tree.
 *
 * Entities: only the five XML entities and character references are read. saxes never fetches
 * external entities and does not expand entities declared in a DOCTYPE, so any other reference
 * (an XXE attempt, a billion-laughs chain, a typo) fails with SOURCE_XML_ENTITY.
 */
export async function* readV1XmlRecords(file: string, options: RawReadOptions): AsyncGenerator<RawV1Record> {
  const parser = new SaxesParser({ xmlns: false, position: true });
  const outside: OpenElement[] = [];
  let building: V1Node[] = [];
  /** `refused`: the record is too large or nested too deep to keep; its content is skipped to its end. */
  let record: { node: V1Node; path: string; line: number; chars: number; refused: 'large' | 'deep' | null } | undefined;
  let depthInRecord = 0;
  let queue: RawV1Record[] = [];
  let failure: FerryError | undefined;

  const currentPath = (): string => {
    const base = record?.path ?? outside.at(-1)?.path ?? '';
    return base === '' ? '/' : base;
  };

  parser.on('error', (error) => {
    if (failure) return;
    const message = bareMessage(error);
    const entity = /entity/i.test(message) && !/character entity/i.test(message);
    failure = new FerryError(
      entity ? 'SOURCE_XML_ENTITY' : 'SOURCE_XML_MALFORMED',
      entity
        ? `${file} refers to an entity that is not one of XML's five (${message}); entities declared in a DOCTYPE are not expanded, and external ones never fetched`
        : `${file} is not well-formed XML: ${message}`,
      {
        location: { file, line: parser.line, column: parser.column + 1, elementPath: currentPath() },
        cause: error,
        hint: entity
          ? 'Replace the entity reference with the text it stands for (or a character reference such as &#233;) and read the file again.'
          : 'The export may be truncated or edited by hand; check the file around the line given.',
      },
    );
  });

  // After the first fault nothing more is kept: the record being read holds the fault.
  parser.on('opentag', (tag) => {
    if (failure) return;
    if (record) {
      depthInRecord++;
      // The wrappers above the record, the record, and the levels inside it.
      if (record.refused === null && outside.length + 1 + depthInRecord > MAX_NESTING_DEPTH) {
        record.refused = 'deep';
        building = [];
      }
      if (record.refused) return;
      const node: V1Node = { name: tag.name, text: null, children: [] };
      building.at(-1)?.children.push(node);
      building.push(node);
      return;
    }
    const parent = outside.at(-1);
    let path: string;
    if (parent) {
      const index = (parent.childCounts.get(tag.name) ?? 0) + 1;
      parent.childCounts.set(tag.name, index);
      path = `${parent.path}/${tag.name}[${index}]`;
    } else {
      path = `/${tag.name}`;
    }
    if (outside.length + 1 > MAX_NESTING_DEPTH) {
      failure = tooDeep(file, path, parser.line);
      return;
    }
    if (isRecordKind(tag.name)) {
      const node: V1Node = { name: tag.name, text: null, children: [] };
      record = { node, path, line: parser.line, chars: 0, refused: null };
      building = [node];
      depthInRecord = 0;
      return;
    }
    outside.push({ name: tag.name, path, childCounts: new Map() });
  });

  const onText = (text: string): void => {
    if (failure || !record || record.refused) return;
    record.chars += text.length;
    if (record.chars > options.maxRecordChars) {
      record.refused = 'large';
      building = [];
      return;
    }
    const node = building.at(-1);
    if (node) node.text = (node.text ?? '') + text;
  };
  parser.on('text', onText);
  parser.on('cdata', onText);

  parser.on('closetag', () => {
    if (failure) return;
    if (!record) {
      outside.pop();
      return;
    }
    if (depthInRecord > 0) {
      depthInRecord--;
      if (!record.refused) building.pop();
      return;
    }
    const done = record;
    record = undefined;
    building = [];
    if (done.refused) {
      queue.push({
        node: { name: done.node.name, text: null, children: [] },
        elementPath: done.path,
        line: done.line,
        error:
          done.refused === 'deep'
            ? tooDeep(file, done.path, done.line, done.node.name)
            : new FerryError(
                'SOURCE_FIELD_TOO_LARGE',
                `the ${done.node.name} at ${done.path} holds more than ${options.maxRecordChars} characters of text`,
                {
                  location: { file, line: done.line, elementPath: done.path },
                  hint: 'Raise maxRecordChars if the record is genuine.',
                },
              ),
      });
      return;
    }
    queue.push({ node: normalizeTree(done.node), elementPath: done.path, line: done.line });
  });

  yield* readDecoded(file, options, (text) => parser.write(text), drain);
  parser.close();
  yield* drain();

  /** Hands on the records ready; a fault of the document comes after the records read before it. */
  function* drain(): Generator<RawV1Record> {
    const ready = queue;
    queue = [];
    yield* ready;
    if (failure) throw failure;
  }
}

/**
 * SOURCE_TOO_DEEP for the record at `path` (a row error: the record is skipped, reading goes on),
 * or, without a record kind, for the document itself (reading stops).
 */
export function tooDeep(file: string, path: string, line: number, kind?: string): FerryError {
  return new FerryError(
    'SOURCE_TOO_DEEP',
    kind
      ? `the ${kind} at ${path} nests deeper than ${MAX_NESTING_DEPTH} levels; no v1 record nests so deep`
      : `the document nests deeper than ${MAX_NESTING_DEPTH} levels; no v1 export nests so deep`,
    {
      location: { file, line, elementPath: path },
      hint: kind
        ? 'The record is left out; the rest of the file is read. Check where the file came from.'
        : 'This is no v1 export (or it is damaged): check where the file came from.',
    },
  );
}

/**
 * Text between child elements is layout (indentation), not data; a leaf keeps its text exactly,
 * and an empty element reads as ''.
 */
function normalizeTree(node: V1Node): V1Node {
  if (node.children.length === 0) return { name: node.name, text: node.text ?? '', children: [] };
  return { name: node.name, text: null, children: node.children.map(normalizeTree) };
}
