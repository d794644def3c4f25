/**
 * The words the workbench adds to the reasons it shows. A reject's or a warning's reason itself is
 * said by reasonText (src/mapping/reasons.ts), as in every file and summary crm-ferry writes: the
 * preview, the Check view and the rejects file read the same sentence.
 */

const WARNING_WORDS: Record<string, string> = {
  VALUE_DROPPED: 'value left out',
  VALUE_KEPT: 'value kept as typed',
  LINK_UNRESOLVED: 'link not made',
  LINK_BY_NAME: 'linked by name instead',
  USER_UNKNOWN: 'owner not in the account',
  DUPLICATE_MERGED: 'rows merged',
  DUPLICATE_DROPPED: 'later rows left out',
  NOT_CARRIED: 'not carried',
};

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
