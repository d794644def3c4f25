/**
 * Input handling shared by the party, project and opportunity routes, one concern a file:
 * request-body.ts (reading and checking body properties), record-owner.ts (owner and team
 * defaults), record-tags-fields.ts (tags, custom fields), record-collections.ts (nested collections
 * with the add / update / `_delete` convention), record-visibility.ts (restricted records, the
 * deleted lists) and record-search.ts. The routes import them through this file.
 *
 * Checks collect every problem of a request before answering, so that one 422 names all of them;
 * nothing is written to the store until the whole body has been checked.
 */
export {
  Problems,
  type Body,
  isObject,
  checkKeys,
  readString,
  isDate,
  readDate,
  readInteger,
  readIdRef,
  today,
} from './request-body.ts';
export { resolveOwnerTeam } from './record-owner.ts';
export {
  type TagPlan,
  planTags,
  applyTags,
  checkFieldValue,
  planFields,
  dropFieldsOfRemovedTags,
  missingImportantFields,
} from './record-tags-fields.ts';
export { applyCollection } from './record-collections.ts';
export { visibleTo, mustFind, mustFindAll, changedSince, deletedList } from './record-visibility.ts';
export { partyName, partyMatches, nameOrPartyMatches } from './record-search.ts';
