/**
 * verify's comparing: each step's rows mapped again as the run would send them, set against the
 * records read from the account, giving the differences and what the rows do not carry.
 */
import {
  type WriteSlots,
  attachmentFilesOf,
  isMadeKey,
  attachmentsLacking,
  canonicalJson,
  fromRecord,
  planUpdate,
  readAttachments,
} from '../load/index.ts';
import type { RecordService } from '../client/index.ts';
import { KeySet } from '../util/index.ts';
import {
  type CompiledMapping,
  type MappedItem,
  type MappedRecord,
  type NameResolver,
  type Reason,
  reasonText,
  type RecordProblem,
  type RejectedRow,
} from '../mapping/index.ts';
import {
  joinProblems,
  type LinkBook,
  linkKeys,
  openStepItems,
  recordToSend,
  RowChecks,
  type RowOutcome,
} from '../plan/index.ts';
import { idRow, RecordWindow, type Wanted } from './read-account.ts';
import { readable, rowNames, type RowNames } from './readable.ts';
import {
  type Body,
  type VerifyDifference,
  type VerifyNotCarried,
  type VerifyStepSummary,
  type StepCheck,
} from './types.ts';

/** What the comparison finds, over all steps. */
export interface Found {
  differences: VerifyDifference[];
  notCarried: VerifyNotCarried[];
  /** Organisations the rows link to by plain name, which the service finds or creates (nameKey). */
  namedOrganisations: Set<string>;
}

/** A name as the service finds an organisation by it: case aside. */
export function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

function stepList(steps: readonly string[]): string {
  return steps.length === 1 ? `step ${steps[0]}` : `steps ${steps.join(', ')}`;
}

/**
 * Links as the runs made them: a key finds the record the journal of its step holds for it (or
 * for the row it was folded into); a row without a record finds nothing, as it found nothing in
 * the run that left it without one.
 */
export function verifyLinks(byName: ReadonlyMap<string, StepCheck>): LinkBook {
  return {
    find: (name, key) => {
      const check = byName.get(name);
      return check ? idRow(check.journal, check.aliases.get(key) ?? key)?.id : undefined;
    },
    ambiguous: (key, steps) => `'${key}' is a key of ${stepList(steps)}: the link cannot tell which record is meant`,
    unresolved: (ref) =>
      `links to ${linkKeys(ref)
        .map((key) => `'${key}'`)
        .join(', then ')} in ${stepList(ref.steps)}, which has no record for it`,
  };
}

/** Warnings that leave something of the row out of its record: listed as not carried. */
const LEFT_OUT: ReadonlySet<string> = new Set([
  'VALUE_DROPPED',
  'LINK_UNRESOLVED',
  'USER_UNKNOWN',
  'NOT_CARRIED',
  'DUPLICATE_DROPPED',
]);

/** Rows compared while the queries of the rows after them are under way. */
const VERIFY_WINDOW = 1000;

/** A row (or a record of the journal whose row is gone) waiting in turn to be compared. */
interface Queued {
  wanted: Wanted | null;
  run(): Promise<void>;
}

export async function compareStep(
  check: StepCheck,
  compiled: CompiledMapping,
  context: {
    links: LinkBook;
    linked: ReadonlySet<string>;
    resolver: NameResolver;
    found: Found;
    signal: AbortSignal | undefined;
    service: RecordService;
    limit: WriteSlots;
  },
): Promise<VerifyStepSummary> {
  const step = check.prepared;
  const { found, signal } = context;
  const counts: VerifyStepSummary = {
    step: step.name,
    entity: check.entity,
    inputFile: step.inputFile,
    mappingFile: step.mappingFile,
    rows: 0,
    skipped: 0,
    carried: 0,
    found: 0,
    missing: 0,
    extra: 0,
    differing: 0,
    unresolved: 0,
    notCompared: 0,
    rejected: 0,
    dropped: 0,
  };
  const add = (difference: Omit<VerifyDifference, 'step'>): void => {
    found.differences.push({ step: step.name, ...difference });
  };
  const notCarried = (item: Omit<VerifyNotCarried, 'step' | 'reason'>, reason: Reason): void => {
    found.notCarried.push({ step: step.name, ...item, reason: reasonText(reason) });
  };
  // The run's row checks: a row verify reads is what the run made of it.
  const checks = new RowChecks(step.name, step.mapping, context.linked.has(step.name));
  const seen = checks.seen;
  // The account's records are read as the rows come, 100 ids a query, and each row compared once
  // its query is answered: a window of rows and their records is held, never the whole account.
  // Each id of the journal is asked for once (the input's rows first, then the rows gone from it),
  // so the queries are the ones the plan announced.
  const records = new RecordWindow(context.service, check.entity, context.limit);
  const asked = new KeySet();
  const queue: Queued[] = [];
  const drain = async (all: boolean): Promise<void> => {
    while (queue.length > 0) {
      const head = queue[0] as Queued;
      if (head.wanted) {
        // Rows behind it keep the next queries under way while this one's is awaited.
        if (!all && queue.length <= VERIFY_WINDOW) return;
        if (!head.wanted.sent) {
          // Its query waits for more ids; past many rows without them it goes as it is.
          if (!all && queue.length <= VERIFY_WINDOW * 8) return;
          records.flush();
        }
      }
      queue.shift();
      await head.run();
    }
  };
  const compareRow = async (read: MappedItem, outcome: RowOutcome, wanted: Wanted | null): Promise<void> => {
    const recordOf = (id: number): Promise<Body | undefined> =>
      wanted && wanted.id === id ? wanted.record : records.wantNow(id);
    const row = read.location.row;
    if (outcome.kind === 'skipped') {
      counts.skipped += 1;
      return;
    }
    if (outcome.kind === 'folded' || outcome.kind === 'repeated') {
      // Folded into an earlier row of its record (onDuplicate), or that record named again:
      // carried with that row's record.
      if (outcome.kind === 'folded' && outcome.key !== outcome.into) check.aliases.set(outcome.key, outcome.into);
      counts.carried += 1;
      return;
    }
    if (outcome.kind === 'rejected' && read.kind === 'record') {
      // A key or match value an earlier row has: the run refused this row too.
      const refusal = outcome.rejected;
      counts.rejected += 1;
      notCarried(
        {
          kind: 'rejected',
          row,
          key: read.key,
          field: refusal.field,
          column: refusal.column ?? '',
          value: valueOf(refusal),
          code: refusal.code,
          rule: refusal.rule ?? '',
          id: null,
        },
        refusal,
      );
      return;
    }
    const item = read as MappedRecord | RejectedRow;
    const key: string | null = item.key;
    const known = key !== null ? idRow(check.journal, key) : undefined;
    if (item.kind === 'rejected') {
      if (known) {
        // The run wrote it; the row as it is now does not map: it changed in the source since.
        counts.differing += 1;
        add({
          kind: 'differs',
          changedIn: 'source',
          row,
          key: key ?? '',
          field: item.field,
          inFile: `the row does not map now: ${reasonText(item)}`,
          inAccount: `record ${known.id}, written by an earlier run`,
          id: known.id,
        });
        return;
      }
      if (key !== null && !check.journal.rows.get(key)?.rejected) {
        // No run saw it: a row added to the source since.
        counts.missing += 1;
        add({
          kind: 'missing',
          changedIn: 'source',
          row,
          key,
          field: item.field,
          inFile: `a row that does not map: ${reasonText(item)}`,
          inAccount: 'never written: no run read this row',
          id: null,
        });
        return;
      }
      counts.rejected += 1;
      notCarried(
        {
          kind: 'rejected',
          row,
          key: key ?? '',
          field: item.field,
          column: item.column ?? '',
          value: valueOf(item),
          code: item.code,
          rule: item.rule ?? '',
          id: null,
        },
        item,
      );
      return;
    }
    if (typeof item.record.type === 'string') check.types.add(item.record.type);
    if (!known) {
      const refused = check.journal.rows.get(item.key)?.rejected;
      if (!refused) {
        counts.missing += 1;
        add({
          kind: 'missing',
          changedIn: 'source',
          row,
          key: item.key,
          field: '',
          inFile: 'a record',
          inAccount: 'never written: no run wrote this row',
          id: null,
        });
        return;
      }
      // Refused by the run: its reason as the row gives it now, or as the run was told it (the service's refusal).
      const now = await recordToSend(item, {
        entity: check.entity,
        links: context.links,
        resolver: context.resolver,
        files: readAttachments,
      });
      const reason: RecordProblem =
        now.kind === 'problems'
          ? joinProblems(now.problems)
          : { field: '', code: refused.code as RecordProblem['code'], message: refused.message };
      counts.rejected += 1;
      notCarried(
        {
          kind: 'rejected',
          row,
          key: item.key,
          field: reason.field,
          column: '',
          value: '',
          code: reason.code,
          rule: now.kind === 'problems' ? reason.field : '',
          id: null,
        },
        reason,
      );
      return;
    }
    const record = await recordOf(known.id);
    if (!record) {
      counts.missing += 1;
      add({
        kind: 'missing',
        changedIn: 'account',
        row,
        key: item.key,
        field: '',
        inFile: 'a record',
        inAccount: `record ${known.id} is no longer in the account`,
        id: known.id,
      });
      return;
    }
    counts.found += 1;
    if (known.origin === 'matched' && step.mapping.match?.onMatch === 'skip') {
      counts.notCompared += 1;
      return;
    }
    const sent = await recordToSend(item, {
      entity: check.entity,
      links: context.links,
      resolver: context.resolver,
      files: readAttachments,
    });
    if (sent.kind === 'problems') {
      counts.unresolved += 1;
      for (const problem of sent.problems) {
        add({
          kind: 'unresolved',
          changedIn: problem.code === 'MAPPING_UNKNOWN_NAME' ? 'account' : 'source',
          row,
          key: item.key,
          field: problem.field,
          inFile: problem.message,
          inAccount: '',
          id: known.id,
        });
      }
      return;
    }
    const body = sent.body;
    const organisation = body.organisation as Body | undefined;
    if (organisation && typeof organisation.name === 'string' && organisation.id === undefined)
      found.namedOrganisations.add(nameKey(organisation.name));
    // A note of the writing user that an earlier version headed with its author is as carried.
    const held =
      item.contentAlso !== undefined && record.content === item.contentAlso
        ? { ...record, content: body.content }
        : record;
    const differing = compareRecord(body, held, known.body, rowNames(item, body, held));
    if (differing.length > 0) counts.differing += 1;
    else counts.carried += 1;
    for (const difference of differing) add({ ...difference, row, key: item.key, id: known.id });
    for (const warning of item.warnings ?? []) {
      if (!LEFT_OUT.has(warning.code)) return;
      counts.dropped += 1;
      notCarried(
        {
          kind: 'dropped',
          row,
          key: item.key,
          field: warning.field,
          column: warning.column ?? '',
          value: warning.value ?? '',
          code: warning.code,
          rule: warning.rule ?? '',
          id: known.id,
        },
        warning,
      );
    }
  };
  const opened = await openStepItems(step, compiled, signal);
  if (opened) {
    for await (const read of opened.items) {
      // Nothing was written: an interrupted verify is simply run again.
      signal?.throwIfAborted();
      counts.rows += 1;
      const outcome = checks.check(read);
      let wanted: Wanted | null = null;
      if (outcome.kind === 'ready' && !asked.has(outcome.mapped.key)) {
        const id = idRow(check.journal, outcome.mapped.key)?.id;
        if (id !== undefined) {
          asked.add(outcome.mapped.key);
          wanted = records.want(id);
        }
      }
      queue.push({ wanted, run: () => compareRow(read, outcome, wanted) });
      await drain(false);
    }
  }
  for (const row of check.journal.rows.values()) {
    if (row.id === null || asked.has(row.key)) continue;
    // Read though it may not be compared, as the plan counted it.
    const wanted = records.want(row.id);
    const { key, id, run } = { key: row.key, id: row.id, run: row.run };
    // An organisation made for a link by name is the run's, and no row of the input.
    const extra = !seen.has(key) && row.origin === 'created' && !isMadeKey(key);
    queue.push({
      wanted,
      run: async () => {
        const record = await wanted.record;
        if (!extra || !record) return;
        counts.extra += 1;
        add({
          kind: 'extra',
          changedIn: 'source',
          row: null,
          key,
          field: '',
          inFile: 'no row with this key',
          inAccount: `record ${id}, created by run ${run ?? '?'}`,
          id,
        });
      },
    });
    await drain(false);
  }
  records.flush();
  await drain(true);
  return counts;
}

/** The value a reason is about: the one given, else the cell of its column. */
function valueOf(reason: Partial<Pick<RejectedRow, 'value' | 'column' | 'values'>>): string {
  if (reason.value !== undefined) return reason.value;
  const cell = reason.column === undefined ? undefined : reason.values?.[reason.column];
  return cell === undefined || cell === null ? '' : cell instanceof Date ? cell.toISOString() : String(cell);
}

/**
 * The fields in which the account's record is not what the row sends: what `--full` would write
 * back (every field the row maps to, lists item by item), and what a run would clear or remove
 * because the row no longer has it (a field or item the last run wrote that the row lacks now).
 * A field the mapping does not write is never looked at. Each says whether the source changed
 * it since the run (the last written body differs there) or the account did.
 */
function compareRecord(
  body: Body,
  record: Body,
  written: Body | null,
  names: RowNames,
): Array<Pick<VerifyDifference, 'kind' | 'changedIn' | 'field' | 'inFile' | 'inAccount'>> {
  const account = planUpdate(fromRecord(record, body), body, record).changes;
  // What a run of the row as it is now would send after the last one: values the row dropped since.
  const since = written ? planUpdate(written, body, record).changes : {};
  const out: Array<Pick<VerifyDifference, 'kind' | 'changedIn' | 'field' | 'inFile' | 'inAccount'>> = [];
  const changedInSource = (field: string): boolean =>
    written !== null && canonicalJson(written[field]) !== canonicalJson(body[field]);
  for (const field of new Set([...Object.keys(account), ...Object.keys(since)])) {
    const list = Array.isArray(account[field] ?? since[field]);
    const inAccount = readable(field, record[field], names);
    if (!(field in account)) {
      // Only in what a run would send: the row no longer has what the account holds there.
      if (!list && isBlank(record[field])) continue;
      out.push({ kind: 'differs', changedIn: 'source', field, inFile: readable(field, body[field], names), inAccount });
      continue;
    }
    // A list differs by the row's items the account lacks: those are shown.
    out.push({
      kind: 'differs',
      changedIn: changedInSource(field) ? 'source' : 'account',
      field,
      inFile: readable(field, list ? account[field] : body[field], names),
      inAccount,
    });
  }
  // A note's files, by name and size: a file of the row the note lacks.
  const lacking = attachmentsLacking(attachmentFilesOf(body), record);
  if (lacking.length > 0) {
    out.push({
      kind: 'differs',
      changedIn: changedInSource('attachments') ? 'source' : 'account',
      field: 'attachments',
      inFile: lacking.map((file) => file.filename).join('; '),
      inAccount: readable('attachments', record.attachments, names),
    });
  }
  return out.sort((a, b) => a.field.localeCompare(b.field));
}

function isBlank(value: unknown): boolean {
  return value === undefined || value === null || value === '' || (Array.isArray(value) && value.length === 0);
}
