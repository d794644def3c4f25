/**
 * Reasons in the words of the person who owns the data: what a rejected row or a value left out
 * is about (the column and the value) and what is wrong with it, rather than the mapping's
 * internals. The place of the rule in the mapping (its YAML path) goes in a column of its own,
 * for the person who edits the mapping. Every file and page a person reads says a reason through
 * reasonText: the rejects and warnings files, the summaries of run, validate and verify, the HTML
 * report and the workbench.
 */
import type { CellValue } from '../sources/index.ts';

/** What a reason sentence is made of: a rejected row (RejectedRow) or a warning (RowWarning) fits. */
export interface Reason {
  /** The error or warning code (`MAPPING_VALUE`, `VALUE_DROPPED`). */
  code: string;
  /** The target (`email`) or the mapping's place (`fields[3]`) it is about; '' for the whole row. */
  field: string;
  /** The message as the code that found the problem wrote it. */
  message: string;
  /** The source column the value was read from, when one column holds it. */
  column?: string | undefined;
  /** The value as the source holds it. */
  value?: string | undefined;
  /** What the value should have been, in plain words (`an e-mail address`, `a date (dd/MM/yyyy)`). */
  expected?: string | undefined;
  /** Where the rule is in the mapping (`fields[3].value.transform[1]`). */
  rule?: string | undefined;
  /** The row's values by column (a rejected row has them), for the value when `value` is not given. */
  values?: Record<string, CellValue> | null | undefined;
}

/** The sentence a person reads for a reason. */
export function reasonText(reason: Reason): string {
  return reason.message;
}
