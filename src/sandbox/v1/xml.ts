/**
 * The v1 document model: one tree that is written either as XML or as JSON, so both formats always
 * carry the same data. Also the parser for XML request bodies.
 *
 * JSON convention (the same for every v1 answer): the root element becomes the single key of the
 * answer object; every leaf is a string, as in the XML; an attribute becomes a key prefixed with `@`
 * (`"@size": "2"`); a list element holds one key per item name: an array of two or more items,
 * the bare object of a single one (`{"kases": {"@size": "1", "kase": {...}}}`), as the service
 * answers (clients decode "object or list"); a kind without items is `[]` in a list with a size
 * (`{"kases": {"@size": "0", "kase": []}}`) and left out inside a record (an empty contact kind);
 * an absent value is left out in both formats.
 */
import { XMLParser, XMLValidator } from 'fast-xml-parser';
import { badRequest } from '../http.ts';

export type Leaf = string | number | boolean | null | undefined;

/** An element with text content. */
export interface TextNode {
  kind: 'text';
  name: string;
  text: string;
}

/** An element whose children have distinct names (a record). */
export interface RecordNode {
  kind: 'record';
  name: string;
  children: V1Node[];
}

/** An element holding repeated items of the named kinds (a list), with optional attributes. */
export interface ListNode {
  kind: 'list';
  name: string;
  itemNames: readonly string[];
  attributes: Record<string, string>;
  items: V1Node[];
}

export type V1Node = TextNode | RecordNode | ListNode;

function leafText(value: Exclude<Leaf, null | undefined>): string {
  return typeof value === 'string' ? value : String(value);
}

/**
 * A record element from an ordered list of `[name, value]` pairs; null, undefined and empty values
 * are dropped so that absent data is absent in both formats.
 */
export function recordNode(name: string, fields: ReadonlyArray<readonly [string, Leaf | V1Node]>): RecordNode {
  const children: V1Node[] = [];
  for (const [key, value] of fields) {
    if (value === null || value === undefined || value === '') continue;
    if (typeof value === 'object') children.push(value);
    else children.push({ kind: 'text', name: key, text: leafText(value) });
  }
  return { kind: 'record', name, children };
}

/** An element holding only text, e.g. a `<taskCategory>` name. */
export function textNode(name: string, text: string): TextNode {
  return { kind: 'text', name, text };
}

/** A list element; `size` (the item count) is set unless `withSize` is false. */
export function listNode(name: string, itemNames: readonly string[], items: V1Node[], withSize = true): ListNode {
  return { kind: 'list', name, itemNames, attributes: withSize ? { size: String(items.length) } : {}, items };
}

/** Escapes text for element content and attribute values. */
export function escapeXml(text: string): string {
  // Control characters cannot appear in XML 1.0 even as references; text stored through the JSON
  // interface may hold them, and one would make the whole answer unreadable.
  const clean = text.replace(/[\u0000-\u0008\u000B\u000C\u000E-\u001F\uFFFE\uFFFF]/g, '');
  return clean.replace(
    /[&<>"']/g,
    (c) => `&${{ '&': 'amp', '<': 'lt', '>': 'gt', '"': 'quot', "'": 'apos' }[c] as string};`,
  );
}

function writeXml(node: V1Node, out: string[]): void {
  if (node.kind === 'text') {
    out.push(`<${node.name}>${escapeXml(node.text)}</${node.name}>`);
    return;
  }
  const attributes =
    node.kind === 'list'
      ? Object.entries(node.attributes)
          .map(([k, v]) => ` ${k}="${escapeXml(v)}"`)
          .join('')
      : '';
  const children = node.kind === 'list' ? node.items : node.children;
  if (children.length === 0) {
    out.push(`<${node.name}${attributes}/>`);
    return;
  }
  out.push(`<${node.name}${attributes}>`);
  for (const child of children) writeXml(child, out);
  out.push(`</${node.name}>`);
}

/** The node as an XML document with declaration. */
export function toXml(node: V1Node): string {
  const out: string[] = ['<?xml version="1.0" encoding="UTF-8"?>\n'];
  writeXml(node, out);
  return out.join('');
}

function jsonValue(node: V1Node): unknown {
  if (node.kind === 'text') return node.text;
  if (node.kind === 'record') {
    const object: Record<string, unknown> = {};
    for (const child of node.children) object[child.name] = jsonValue(child);
    return object;
  }
  const object: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node.attributes)) object[`@${key}`] = value;
  const groups: Record<string, unknown[]> = {};
  // A list with a size (the answer's own list) names every kind, `[]` when empty; a list inside a
  // record (contacts, attachments) leaves a kind without items out.
  if (node.attributes.size !== undefined) for (const name of node.itemNames) groups[name] = [];
  for (const item of node.items) (groups[item.name] ??= []).push(jsonValue(item));
  // As the service answers: one item is the object itself.
  for (const [name, items] of Object.entries(groups)) object[name] = items.length === 1 ? items[0] : items;
  return object;
}

/** The node as a JSON object `{rootName: ...}`. */
export function toJson(node: V1Node): Record<string, unknown> {
  return { [node.name]: jsonValue(node) };
}

const parser = new XMLParser({
  ignoreAttributes: true,
  parseTagValue: false,
  trimValues: true,
  // Entities are decoded below, after the DOCTYPE check, so no declared entity can ever expand.
  processEntities: false,
  ignoreDeclaration: true,
  ignorePiTags: true,
});

const PREDEFINED: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function decodeEntities(text: string): string {
  return text.replace(/&(#x[0-9a-fA-F]{1,6}|#\d{1,7}|amp|lt|gt|quot|apos);/g, (whole, ref: string) => {
    if (!ref.startsWith('#')) return PREDEFINED[ref] ?? whole;
    const code = ref[1] === 'x' ? Number.parseInt(ref.slice(2), 16) : Number.parseInt(ref.slice(1), 10);
    return code > 0 && code <= 0x10ffff ? String.fromCodePoint(code) : whole;
  });
}

function decodeTree(value: unknown): unknown {
  if (typeof value === 'string') return decodeEntities(value);
  if (Array.isArray(value)) return value.map(decodeTree);
  if (value && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [key, inner] of Object.entries(value)) out[key] = decodeTree(inner);
    return out;
  }
  return value;
}

/**
 * Parses an XML request body into plain objects with string leaves (`<kase><name>x</name></kase>`
 * -> `{kase: {name: 'x'}}`; repeated elements become arrays). Malformed XML and any DOCTYPE
 * (the door to entity expansion attacks) are a 400.
 */
export function parseXmlBody(raw: Buffer | string): Record<string, unknown> {
  let text = typeof raw === 'string' ? raw : raw.toString('utf8');
  if (text.charCodeAt(0) === 0xfeff) text = text.slice(1);
  if (text.trim() === '') throw badRequest('the request body is empty; expected an XML document');
  if (/<!DOCTYPE/i.test(text)) throw badRequest('XML bodies with a DOCTYPE declaration are not accepted');
  const valid = XMLValidator.validate(text);
  if (valid !== true) {
    throw badRequest(`the XML body is malformed at line ${valid.err.line}, column ${valid.err.col}: ${valid.err.msg}`);
  }
  let parsed: unknown;
  try {
    parsed = parser.parse(text);
  } catch (error) {
    throw badRequest(`the XML body could not be read: ${(error as Error).message}`);
  }
  if (!parsed || typeof parsed !== 'object') throw badRequest('the XML body holds no element');
  return decodeTree(parsed) as Record<string, unknown>;
}
