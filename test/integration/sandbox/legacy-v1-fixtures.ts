/** Helpers for the v1 tests; records go straight into the sandbox store (the v1 views read the same tables). */
import { XMLParser } from 'fast-xml-parser';

export { addEntry, addKase, addOpportunity, addParty, addTask, definitionId, userId } from '../../helpers/records.ts';

const parser = new XMLParser({
  ignoreAttributes: false,
  attributeNamePrefix: '@',
  parseTagValue: false,
  isArray: (_name, path, _leaf, isAttribute) =>
    !isAttribute &&
    /^(kases|parties|opportunities|tasks|history|tags|customFields|customFieldDefinitions|deletedKases|taskCategories)\.\w+$/.test(
      String(path),
    ),
});

/** Parses an XML answer; list items are always arrays. */
export function parseXml(text: string): any {
  return parser.parse(text);
}

export const XML = { 'content-type': 'application/xml' };
export const JSON_ACCEPT = { accept: 'application/json' };

/**
 * The items of a v1 JSON list as the published clients decode it, "object or list": the service
 * gives one item as the bare object, and leaves an empty contact kind out.
 */
export function listOf(value: unknown): any[] {
  if (value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}
