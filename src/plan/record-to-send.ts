/**
 * The one way from a mapped row to the record the importer sends for it: its links to other
 * steps' records (by `ref`, trying the fallback keys in order, then the fallback value, such as
 * an organisation by its plain name), its names turned into the account's ids (owners, teams,
 * milestones, custom fields of a data tag, ...), a note's type, and a note's files. The importer
 * writes with it, validate checks with it and verify compares with it, so that the three cannot
 * disagree on what a row becomes. Each caller says where links are found (LinkBook) and how the
 * files are taken.
 */
import type {
  AttachmentUse,
  Entity,
  MappedRecord,
  NameResolver,
  RecordProblem,
  RejectedRow,
  RowWarning,
} from '../mapping/index.ts';
import { resolveRecord, setAt } from '../mapping/index.ts';
import { followLink, foundRejected, type LinkBook, unresolvedLink } from './references.ts';

type Body = Record<string, unknown>;

/** A note without a type is a note: the body as it is sent. */
export function withType(entity: Entity | string, body: Body): Body {
  return entity === 'entry' && body.type === undefined ? { type: 'note', ...body } : body;
}

/** How a note's files are taken: read (the importer and verify hash them), or only looked for (validate). */
export type TakeFiles = (
  uses: readonly AttachmentUse[],
) => Promise<{ files?: readonly unknown[]; warnings: RowWarning[]; problem: string | null }>;

export interface SendContext {
  entity: Entity;
  links: LinkBook;
  resolver: NameResolver;
  files: TakeFiles;
}

/** The record a row sends, or why it sends none. */
export type SendOutcome = { kind: 'body'; body: Body } | { kind: 'problems'; problems: RecordProblem[] };

/**
 * Turns a mapped row into the body the importer sends for it: fills in its links (a link that
 * finds nothing takes its fallback value, or is left out with a LINK_UNRESOLVED warning, unless it
 * must be made), its names, a note's type and its files. `mapped.record` and `mapped.warnings`
 * are completed in place. Returns the problems instead when the row cannot be written: every link
 * and name problem (links first), or else the problem with a file.
 */
export async function recordToSend(mapped: MappedRecord, context: SendContext): Promise<SendOutcome> {
  const problems: RecordProblem[] = [];
  // Links are taken out first: an unresolved link may write its fallback in its place.
  for (const ref of [...mapped.refs]) {
    const pending = followLink(ref, context.links.find);
    const outcome = pending instanceof Promise ? await pending : pending;
    if (outcome.status === 'linked') {
      setAt(mapped.record, ref.path, outcome.id);
      continue;
    }
    if (outcome.status === 'ambiguous') {
      problems.push({
        field: ref.yamlPath,
        code: 'MAPPING_REFERENCE',
        message: context.links.ambiguous(outcome.key, outcome.steps),
        value: outcome.key,
        rule: ref.yamlPath,
        ...(ref.column === undefined ? {} : { column: ref.column }),
      });
      continue;
    }
    const problem = unresolvedLink(
      mapped,
      ref,
      context.links.unresolved(ref, outcome.tried),
      foundRejected(outcome.tried),
    );
    if (problem) problems.push(problem);
  }
  problems.push(...resolveRecord(mapped, context.resolver));
  if (problems.length > 0) return { kind: 'problems', problems };
  const body = withType(context.entity, mapped.record);
  if (mapped.attachments.length > 0) {
    const taken = await context.files(mapped.attachments);
    if (taken.problem)
      return {
        kind: 'problems',
        problems: [{ field: 'attachment', code: 'SOURCE_UNREADABLE', message: taken.problem }],
      };
    if (taken.warnings.length > 0) (mapped.warnings ??= []).push(...taken.warnings);
    if (taken.files && taken.files.length > 0) body.attachments = taken.files;
  }
  return { kind: 'body', body };
}

/**
 * One problem for a row's problems, as the rejects file has one code and one field a row: the
 * first decides them; the others go with it (`also`), each a reason of its own.
 */
export function joinProblems(problems: readonly RecordProblem[]): RecordProblem {
  const [first, ...others] = problems as [RecordProblem, ...RecordProblem[]];
  return others.length === 0 ? first : { ...first, also: others };
}

/** A mapped row refused for `problem`, as the rejects file takes it (with the service's HTTP status, when it refused). */
export function rejectedRow(mapped: MappedRecord, problem: RecordProblem, status?: number): RejectedRow {
  const rejected: RejectedRow = {
    kind: 'rejected',
    row: mapped.row,
    location: mapped.location,
    key: mapped.key,
    field: problem.field,
    code: problem.code,
    message: problem.message,
    values: mapped.valuesOf(),
  };
  if (problem.column !== undefined) rejected.column = problem.column;
  if (problem.value !== undefined) rejected.value = problem.value;
  if (problem.rule !== undefined) rejected.rule = problem.rule;
  if (problem.expected !== undefined) rejected.expected = problem.expected;
  if (problem.also !== undefined) rejected.also = problem.also.map(({ also: _nested, ...more }) => more);
  if (status !== undefined) rejected.status = status;
  return rejected;
}
