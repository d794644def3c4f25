/**
 * Why a row was rejected or warned about, in the words the page shows. The one place the
 * workbench turns a reject's or a warning's code and message into text: the rejects and warnings
 * code of the engine (src/mapping) says it now, and the plain wording of the reasons, when the
 * engine has it, comes in here alone.
 */

export interface Reason {
  code: string;
  /** The target or mapping place it is about (`lastName`, `fields[3]`), or ''. */
  field: string;
  message: string;
}

const WARNING_WORDS: Record<string, string> = {
  VALUE_DROPPED: 'value left out',
  VALUE_KEPT: 'value kept as typed',
  LINK_UNRESOLVED: 'link not made',
  USER_UNKNOWN: 'owner not in the account',
  DUPLICATE_MERGED: 'rows merged',
  DUPLICATE_DROPPED: 'later rows left out',
  NOT_CARRIED: 'not carried',
};

/** A reject's or a warning's reason as one line of plain text. */
export function reasonText(reason: Reason): string {
  return reason.field === '' ? reason.message : `${reason.field}: ${reason.message}`;
}

/** A warning code as the page names its kind. */
export function warningKind(code: string): string {
  return WARNING_WORDS[code] ?? code;
}

/** A row folded into an earlier row of its record (`onDuplicate: first` or `merge`). */
export function foldedText(into: string): string {
  return `the same record as the row with key '${into}': folded into it`;
}

/** A link the preview could not check: the step it names is not at hand. */
export function uncheckedLinkText(step: string, why: string): string {
  return `link to step ${step} not checked: ${why}`;
}
