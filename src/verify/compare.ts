/**
 * verify's comparing: each step's rows mapped again as the run would send them, set against the
 * records read from the account, giving the differences and what the rows do not carry.
 */
import { attachmentFilesOf, isMadeKey, attachmentsLacking, canonicalJson, fromRecord, planUpdate, readAttachments } from '../load/index.ts';
import { type CompiledMapping, type MappedRecord, type NameResolver, type Reason, reasonText, type RecordProblem, type RejectedRow } from '../mapping/index.ts';
import { joinProblems, type LinkBook, linkKeys, openStepItems, recordToSend, RowChecks } from '../plan/index.ts';
import { readable, rowNames, type RowNames } from './readable.ts';
import { type Body, type VerifyDifference, type VerifyNotCarried, type VerifyStepSummary, type StepCheck } from './types.ts';

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
      return check?.ids.get(check.aliases.get(key) ?? key)?.id;
    },
    ambiguous: (key, steps) => `'${key}' is a key of ${stepList(steps)}: the link cannot tell which record is meant`,
    unresolved: (ref) =>
      `links to ${linkKeys(ref)
        .map((key) => `'${key}'`)
        .join(', then ')} in ${stepList(ref.steps)}, which has no record for it`,
  };
}

/** Warnings that leave something of the row out of its record: listed as not carried. */
const LEFT_OUT: ReadonlySet<string> = new Set(['VALUE_DROPPED', 'LINK_UNRESOLVED', 'USER_UNKNOWN', 'NOT_CARRIED', 'DUPLICATE_DROPPED']);

export async function compareStep(check: StepCheck, compiled: CompiledMapping, context: { links: LinkBook; linked: ReadonlySet<string>; resolver: NameResolver; found: Found; signal: AbortSignal | undefined }): Promise<VerifyStepSummary> {
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
  const opened = await openStepItems(step, compiled, signal);
  if (opened) {
    for await (const read of opened.items) {
      // Nothing was written: an interrupted verify is simply run again.
      signal?.throwIfAborted();
      counts.rows += 1;
      const row = read.location.row;
      const outcome = checks.check(read);
      if (outcome.kind === 'skipped') {
        counts.skipped += 1;
        continue;
      }
      if (outcome.kind === 'folded' || outcome.kind === 'repeated') {
        // Folded into an earlier row of its record (onDuplicate), or that record named again:
        // carried with that row's record.
        if (outcome.kind === 'folded' && outcome.key !== outcome.into) check.aliases.set(outcome.key, outcome.into);
        counts.carried += 1;
        continue;
      }
      if (outcome.kind === 'rejected' && read.kind === 'record') {
        // A key or match value an earlier row has: the run refused this row too.
        const refusal = outcome.rejected;
        counts.rejected += 1;
        notCarried({ kind: 'rejected', row, key: read.key, field: refusal.field, column: refusal.column ?? '', value: valueOf(refusal), code: refusal.code, rule: refusal.rule ?? '', id: null }, refusal);
        continue;
      }
      const item = read as MappedRecord | RejectedRow;
      const key: string | null = item.key;
      const known = key !== null ? check.ids.get(key) : undefined;
      if (item.kind === 'rejected') {
        if (known) {
          // The run wrote it; the row as it is now does not map: it changed in the source since.
          counts.differing += 1;
          add({ kind: 'differs', changedIn: 'source', row, key: key ?? '', field: item.field, inFile: `the row does not map now: ${reasonText(item)}`, inAccount: `record ${known.id}, written by an earlier run`, id: known.id });
          continue;
        }
        if (key !== null && !check.journal.rows.get(key)?.rejected) {
          // No run saw it: a row added to the source since.
          counts.missing += 1;
          add({ kind: 'missing', changedIn: 'source', row, key, field: item.field, inFile: `a row that does not map: ${reasonText(item)}`, inAccount: 'never written: no run read this row', id: null });
          continue;
        }
        counts.rejected += 1;
        notCarried({ kind: 'rejected', row, key: key ?? '', field: item.field, column: item.column ?? '', value: valueOf(item), code: item.code, rule: item.rule ?? '', id: null }, item);
        continue;
      }
      if (typeof item.record.type === 'string') check.types.add(item.record.type);
      if (!known) {
        const refused = check.journal.rows.get(item.key)?.rejected;
        if (!refused) {
          counts.missing += 1;
          add({ kind: 'missing', changedIn: 'source', row, key: item.key, field: '', inFile: 'a record', inAccount: 'never written: no run wrote this row', id: null });
          continue;
        }
        // Refused by the run: its reason as the row gives it now, or as the run was told it (the service's refusal).
        const now = await recordToSend(item, { entity: check.entity, links: context.links, resolver: context.resolver, files: readAttachments });
        const reason: RecordProblem = now.kind === 'problems' ? joinProblems(now.problems) : { field: '', code: refused.code as RecordProblem['code'], message: refused.message };
        counts.rejected += 1;
        notCarried({ kind: 'rejected', row, key: item.key, field: reason.field, column: '', value: '', code: reason.code, rule: now.kind === 'problems' ? reason.field : '', id: null }, reason);
        continue;
      }
      const record = check.records.get(known.id);
      if (!record) {
        counts.missing += 1;
        add({ kind: 'missing', changedIn: 'account', row, key: item.key, field: '', inFile: 'a record', inAccount: `record ${known.id} is no longer in the account`, id: known.id });
        continue;
      }
      counts.found += 1;
      if (known.origin === 'matched' && step.mapping.match?.onMatch === 'skip') {
        counts.notCompared += 1;
        continue;
      }
      const sent = await recordToSend(item, { entity: check.entity, links: context.links, resolver: context.resolver, files: readAttachments });
      if (sent.kind === 'problems') {
        counts.unresolved += 1;
        for (const problem of sent.problems) {
          add({ kind: 'unresolved', changedIn: problem.code === 'MAPPING_UNKNOWN_NAME' ? 'account' : 'source', row, key: item.key, field: problem.field, inFile: problem.message, inAccount: '', id: known.id });
        }
        continue;
      }
      const body = sent.body;
      const organisation = body.organisation as Body | undefined;
      if (organisation && typeof organisation.name === 'string' && organisation.id === undefined) found.namedOrganisations.add(nameKey(organisation.name));
      // A note of the writing user that an earlier version headed with its author is as carried.
      const held = item.contentAlso !== undefined && record.content === item.contentAlso ? { ...record, content: body.content } : record;
      const differing = compareRecord(body, held, known.body, rowNames(item, body, held));
      if (differing.length > 0) counts.differing += 1;
      else counts.carried += 1;
      for (const difference of differing) add({ ...difference, row, key: item.key, id: known.id });
      for (const warning of item.warnings ?? []) {
        if (!LEFT_OUT.has(warning.code)) continue;
        counts.dropped += 1;
        notCarried({ kind: 'dropped', row, key: item.key, field: warning.field, column: warning.column ?? '', value: warning.value ?? '', code: warning.code, rule: warning.rule ?? '', id: known.id }, warning);
      }
    }
  }
  for (const [key, row] of check.ids) {
    // An organisation made for a link by name is the run's, and no row of the input.
    if (seen.has(key) || row.origin !== 'created' || isMadeKey(key)) continue;
    const record = check.records.get(row.id);
    if (!record) continue;
    counts.extra += 1;
    add({ kind: 'extra', changedIn: 'source', row: null, key, field: '', inFile: 'no row with this key', inAccount: `record ${row.id}, created by run ${row.run ?? '?'}`, id: row.id });
  }
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
function compareRecord(body: Body, record: Body, written: Body | null, names: RowNames): Array<Pick<VerifyDifference, 'kind' | 'changedIn' | 'field' | 'inFile' | 'inAccount'>> {
  const account = planUpdate(fromRecord(record, body), body, record).changes;
  // What a run of the row as it is now would send after the last one: values the row dropped since.
  const since = written ? planUpdate(written, body, record).changes : {};
  const out: Array<Pick<VerifyDifference, 'kind' | 'changedIn' | 'field' | 'inFile' | 'inAccount'>> = [];
  const changedInSource = (field: string): boolean => written !== null && canonicalJson(written[field]) !== canonicalJson(body[field]);
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
    out.push({ kind: 'differs', changedIn: changedInSource(field) ? 'source' : 'account', field, inFile: readable(field, list ? account[field] : body[field], names), inAccount });
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
