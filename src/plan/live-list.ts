/**
 * Whether a step that reads a live v1 account reads the list its mapping needs, checked when the
 * step is prepared, before a request is sent or a row of any step is written. A mismatch would
 * otherwise read records of the wrong kind (every one skipped) or history items without the
 * column their link reads (every one rejected), one step at a time, after earlier steps wrote.
 */
import { basename } from 'node:path';
import { FerryError, type ErrorCode, type ErrorLocation } from '../errors/index.ts';
import { compileMapping, type Mapping, type SourceOptions, type TransformRegistry } from '../mapping/index.ts';
import { parseV1LiveInput, V1_LIST_OF_RECORD, V1_LIVE_PREFIX, type V1List } from '../util/index.ts';

/** Columns by which a history list saved on its own (history.xml) names each item's record; a record's own history has none. */
const HISTORY_LIST_COLUMNS = ['partyId', 'opportunityId', 'caseId'] as const;

/** The link targets of a note, and the list whose records' history holds the notes of that kind of record. */
const PARENT_LIST: Readonly<Record<string, V1List>> = { party: 'party', opportunity: 'opportunity', kase: 'kase' };

/** The step as the check needs it, with how to name it and where to point when refusing it. */
export interface LiveListStep {
  /** The live input, `v1+https://HOST[/api/LIST]` (a source's baseUrl already made one). */
  inputFile: string;
  mappingFile: string;
  mapping: Mapping;
  /** The transforms the mapping may name. @default TRANSFORMS */
  transforms?: TransformRegistry | undefined;
  /** The v1 records the step reads (the mapping's `source.record`, or the plan step's). */
  record: SourceOptions['record'];
  /** `step history`, or `this import` for a one-mapping import. */
  label: string;
  /** PLAN_INVALID at the plan's step, or CONFIG_INVALID at the mapping's `source.record` for a one-mapping import. */
  code: ErrorCode;
  location: ErrorLocation;
}

/** The `to` of every link field whose key reads `{{parent.id}}`: the kinds of record the history items are nested in. */
function parentKinds(mapping: Mapping): string[] {
  const kinds: string[] = [];
  for (const field of mapping.fields) {
    const keys = field.key === undefined ? [] : Array.isArray(field.key) ? field.key : [field.key];
    if (PARENT_LIST[field.to] !== undefined && keys.some((key) => /\{\{\s*parent\.id\s*\}\}/.test(key)))
      kinds.push(field.to);
  }
  return kinds;
}

/**
 * Refuses a live step whose list cannot give what its mapping reads: records of another kind
 * (`record: opportunity` given /api/party), history from the task list, a mapping of the history
 * list saved on its own (it links by `partyId`, `opportunityId`, `caseId`; the v1 interface has no
 * list of all history), or history whose `parent.id` links to another kind of record than the
 * list's (`v1-kase-notes.yaml` given /api/party).
 */
export async function checkLiveList(step: LiveListStep): Promise<void> {
  const { baseUrl, list: named } = parseV1LiveInput(step.inputFile);
  const record = step.record;
  const list = named ?? V1_LIST_OF_RECORD[record ?? 'party'];
  const reads =
    named === undefined
      ? `${V1_LIVE_PREFIX}${baseUrl} (its list /api/${list}, picked by the mapping's record)`
      : `${V1_LIVE_PREFIX}${baseUrl}/api/${list}`;
  const refuse = (problem: string, hint: string): FerryError =>
    new FerryError(step.code, `${step.label} reads the live account ${reads}, but ${problem}`, {
      location: step.location,
      hint,
    });
  const input = (want: V1List): string => `${V1_LIVE_PREFIX}${baseUrl}/api/${want}`;
  const itsMapping = `its mapping ${basename(step.mappingFile)}`;
  if (record === undefined) return;
  if (record !== 'historyItem') {
    const want = V1_LIST_OF_RECORD[record];
    if (want === list) return;
    throw refuse(
      `${itsMapping} reads ${record} records (source.record), which the v1 interface lists at /api/${want}`,
      `Give the input as ${input(want)}, or ${V1_LIVE_PREFIX}${baseUrl} alone (the mapping's record then picks the list).`,
    );
  }
  if (list === 'tasks') {
    throw refuse(
      `${itsMapping} reads history items, and tasks have no history in the v1 interface`,
      `Give the input as ${input('party')}, ${input('opportunity')} or ${input('kase')}: the list whose records' history the step carries.`,
    );
  }
  const compiled = await compileMapping(step.mapping, { file: step.mappingFile, transforms: step.transforms });
  const byList = HISTORY_LIST_COLUMNS.filter((column) => compiled.readsColumn(column));
  if (byList.length > 0) {
    throw refuse(
      `${itsMapping} maps history saved as a list of its own (history.xml), linking each item by ${byList.join(', ')}; the v1 interface has no list of all history, and the items in each record's history have no such column`,
      `Leave this step out when reading a live account: the history of each record is read where it sits, by the notes steps (v1-notes.yaml from ${V1_LIVE_PREFIX}${baseUrl}, v1-kase-notes.yaml from ${input('kase')}, v1-opportunity-notes.yaml from ${input('opportunity')}), which link each item by parent.id; see docs/sources.md, "A live legacy v1 account".`,
    );
  }
  const kinds = parentKinds(step.mapping);
  const wanted = [...new Set(kinds.map((kind) => PARENT_LIST[kind] as V1List))];
  const first = wanted[0];
  if (first !== undefined && !wanted.includes(list)) {
    throw refuse(
      `${itsMapping} links each history item to the ${kinds.join(' or ')} it sits in (key {{parent.id}}), and the history of /api/${list} sits in ${list === 'party' ? 'parties' : list === 'kase' ? 'cases' : 'opportunities'}`,
      `Give the input as ${input(first)}: the list whose records' history it carries.`,
    );
  }
}
