import type { CellValue } from '../types.ts';

/**
 * One element of a v1 record, the same whether it came from XML or JSON: a leaf has `text`
 * (null for a JSON null), a container has children.
 */
export interface V1Node {
  name: string;
  text: string | null;
  children: V1Node[];
}

/** The record elements of v1 exports. */
export const V1_RECORD_KINDS = ['person', 'organisation', 'opportunity', 'kase', 'task', 'historyItem'] as const;
export type V1RecordKind = (typeof V1_RECORD_KINDS)[number];

export function isRecordKind(name: string): name is V1RecordKind {
  return (V1_RECORD_KINDS as readonly string[]).includes(name);
}

/** List wrappers and the item element each holds; parties hold both kinds of party. */
export const V1_LIST_ITEMS: Readonly<Record<string, string>> = {
  parties: 'party',
  opportunities: 'opportunity',
  kases: 'kase',
  tasks: 'task',
  history: 'historyItem',
  customFields: 'customField',
  tags: 'tag',
  attachments: 'attachment',
};

/**
 * Columns every row of a kind carries, null when the record lacks them, so that inspecting a file
 * shows the same columns whichever record comes first.
 */
const BASE_COLUMNS: Readonly<Record<V1RecordKind, readonly string[]>> = {
  person: [
    'id',
    'type',
    'title',
    'firstName',
    'lastName',
    'jobTitle',
    'organisationId',
    'organisationName',
    'about',
    'createdOn',
    'updatedOn',
    'pictureURL',
    'tags',
  ],
  organisation: ['id', 'type', 'name', 'about', 'createdOn', 'updatedOn', 'pictureURL', 'tags'],
  opportunity: [
    'id',
    'name',
    'description',
    'partyId',
    'currency',
    'value',
    'durationBasis',
    'duration',
    'milestoneId',
    'milestone',
    'probability',
    'expectedCloseDate',
    'actualCloseDate',
    'owner',
    'createdOn',
    'updatedOn',
    'tags',
  ],
  kase: ['id', 'status', 'name', 'description', 'partyId', 'owner', 'closeDate', 'createdOn', 'updatedOn', 'tags'],
  task: [
    'id',
    'description',
    'detail',
    'category',
    'owner',
    'dueDate',
    'dueDateTime',
    'partyId',
    'partyName',
    'opportunityId',
    'opportunityName',
    'caseId',
    'caseName',
  ],
  historyItem: ['id', 'type', 'entryDate', 'creator', 'creatorName', 'subject', 'note'],
};

export function baseColumns(kind: V1RecordKind): readonly string[] {
  return BASE_COLUMNS[kind];
}

function isWrapperName(name: string): boolean {
  return name === 'contacts' || V1_LIST_ITEMS[name] !== undefined;
}

function isLeaf(node: V1Node): boolean {
  return node.children.length === 0;
}

function childText(node: V1Node, name: string): string | null {
  const child = node.children.find((candidate) => candidate.name === name && isLeaf(candidate));
  return child ? child.text : null;
}

/** A nested list of records (a person's `history`) is counted, not spread into columns. */
function nestedRecordList(node: V1Node): boolean {
  if (isRecordKind(node.name)) return true;
  const item = V1_LIST_ITEMS[node.name];
  return item !== undefined && item !== 'customField' && item !== 'tag' && item !== 'attachment';
}

/**
 * Flattens one record to named columns. The rules are documented on `readV1Export`; in short,
 * leaves keep their element name, lists of sub-objects are numbered from 1 under the item's
 * name (the `contacts` and `attachments` wrappers vanish), custom fields are keyed by label,
 * tags are joined with `;`, nested record lists give a count.
 */
export function flattenRecord(node: V1Node, kind: V1RecordKind): Record<string, CellValue> {
  const out: Record<string, CellValue> = {};
  for (const column of BASE_COLUMNS[kind]) out[column] = null;
  if (kind === 'person' || kind === 'organisation') out['type'] = kind;
  walk(out, '', node, true);
  return out;
}

function setValue(out: Record<string, CellValue>, key: string, value: CellValue, seen: Map<string, number>): void {
  const times = (seen.get(key) ?? 0) + 1;
  seen.set(key, times);
  out[times === 1 ? key : `${key}.${times}`] = value;
}

function walk(out: Record<string, CellValue>, prefix: string, node: V1Node, top: boolean): void {
  const seen = new Map<string, number>();
  const itemCounts = new Map<string, number>();
  for (const child of node.children) {
    if (top && child.name === 'customFields') {
      readCustomFields(out, child);
      continue;
    }
    if (top && child.name === 'tags') {
      const names = readTags(child);
      if (names.length === 0) continue;
      const previous = out['tags'];
      out['tags'] = typeof previous === 'string' && previous !== '' ? [previous, ...names].join(';') : names.join(';');
      continue;
    }
    if (top && child.name === 'type' && (node.name === 'person' || node.name === 'organisation')) {
      // A JSON party may carry its kind as a field; the element name already set it.
      continue;
    }
    if (isLeaf(child) && isWrapperName(child.name) && (child.text ?? '').trim() === '') {
      // An empty wrapper (`<contacts/>`, `"history": []`) holds no data, but a count of zero is still news.
      if (nestedRecordList(child)) out[`${prefix}${child.name}.count`] ??= 0;
      continue;
    }
    if (isLeaf(child)) {
      setValue(out, `${prefix}${child.name}`, child.text, seen);
      continue;
    }
    if (top && node.name === 'kase' && child.name === 'parties') readAdditionalContacts(out, child);
    if (nestedRecordList(child)) {
      const key = `${prefix}${child.name}.count`;
      const count = isRecordKind(child.name) ? 1 : child.children.filter((item) => !isLeaf(item)).length;
      const previous = out[key];
      out[key] = (typeof previous === 'number' ? previous : 0) + count;
      continue;
    }
    if (child.children.every((grandchild) => !isLeaf(grandchild))) {
      for (const item of child.children) {
        const n = (itemCounts.get(item.name) ?? 0) + 1;
        itemCounts.set(item.name, n);
        walk(out, `${prefix}${item.name}.${n}.`, item, false);
      }
      continue;
    }
    const n = (seen.get(`${prefix}${child.name}.`) ?? 0) + 1;
    seen.set(`${prefix}${child.name}.`, n);
    walk(out, n === 1 ? `${prefix}${child.name}.` : `${prefix}${child.name}.${n}.`, child, false);
  }
}

/**
 * A case's additional contacts (GET /api/kase/:id/party, nested in the case by the script that
 * saved it) are whole parties; the case needs only which ones: `party.<n>.id` (v1 ids are unique
 * across people and organisations).
 */
function readAdditionalContacts(out: Record<string, CellValue>, node: V1Node): void {
  let n = 0;
  for (const party of node.children) {
    if (isLeaf(party)) continue;
    n += 1;
    out[`party.${n}.id`] = childText(party, 'id');
  }
}

function readTags(node: V1Node): string[] {
  if (isLeaf(node)) return node.text === null || node.text === '' ? [] : [node.text];
  const names: string[] = [];
  for (const tag of node.children) {
    const name = isLeaf(tag) ? tag.text : childText(tag, 'name');
    if (name !== null && name !== '') names.push(name);
  }
  return names;
}

function readCustomFields(out: Record<string, CellValue>, node: V1Node): void {
  let unnamed = 0;
  for (const field of node.children) {
    if (isLeaf(field)) continue;
    const label = childText(field, 'label');
    const tag = childText(field, 'tag');
    const value =
      childText(field, 'text') ?? childText(field, 'date') ?? childText(field, 'boolean') ?? childText(field, 'value');
    let key: string;
    if (label === null || label === '') {
      unnamed++;
      key = `customField.#${childText(field, 'id') ?? unnamed}`;
    } else {
      key = tag !== null && tag !== '' ? `customField.${tag}.${label}` : `customField.${label}`;
    }
    const previous = out[key];
    // A label can repeat for multi-value fields; keep every value rather than the last.
    out[key] = typeof previous === 'string' && value !== null ? `${previous};${value}` : value;
  }
}
