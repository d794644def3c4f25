/**
 * Reasons in the words of the person who owns the data: what a rejected row or a value left out
 * is about (the column and the value) and what is wrong with it, rather than the mapping's
 * internals. The place of the rule in the mapping (its YAML path) goes in a column of its own,
 * for the person who edits the mapping. Every file and page a person reads says a reason through
 * reasonText: the rejects and warnings files, the success file's warnings, the summaries of run,
 * validate and verify, the HTML report and the workbench.
 */
import type { CellValue } from '../sources/index.ts';
import { quote } from './transforms/values.ts';

/** What a reason sentence is made of: a rejected row (RejectedRow), a warning (RowWarning) or a record problem fits. */
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
  /** More reasons of the same row (two problems are two reasons), said one per line after this one. */
  also?: ReadonlyArray<Omit<Reason, 'values' | 'also'>> | undefined;
}

/** What a warning did with the value, said after its reason. */
const OUTCOME: Readonly<Record<string, string>> = {
  VALUE_DROPPED: 'left out of the record',
  VALUE_KEPT: 'written as typed',
};

/** The cell of `column` in `values`, as text. */
function cellOf(values: Reason['values'], column: string | undefined): string | undefined {
  if (column === undefined || values === null || values === undefined || !(column in values)) return undefined;
  const cell = values[column];
  if (cell === null || cell === undefined) return '';
  if (cell instanceof Date)
    return Number.isNaN(cell.getTime()) ? '' : cell.toISOString().replace(/T00:00:00\.000Z$/, '');
  return String(cell);
}

/**
 * The message without the mapping's vocabulary: its place in the mapping (kept in the rule column),
 * the code's own prefixes, backticks; `expected X, got Y` said as `Y is not X`.
 */
export function plainMessage(message: string): string {
  let text = message
    .replace(/^(?:left out|kept as typed): /, '')
    // `fields[3].value.transform[1] (`email`): ...`
    .replace(/^(?:fields|key|match|skip)(?:\[\d+\]|\.[\w*]+)*(?: \(`[^`]*`\))?: /, '')
    .replace(/ \((?:fields|key)(?:\[\d+\]|\.[\w*]+)*\)/g, '')
    .replace(/ \(onUnknown: \w+\)/g, '')
    .replace(/`([^`]*)`/g, '$1');
  const expected = /^(?:.*?: )?expected (.+?), got (.+)$/.exec(text);
  if (expected) text = `${expected[2]} is not ${expected[1]}`;
  return text.charAt(0).toUpperCase() + text.slice(1);
}

/**
 * The sentence a person reads for a reason: the column, the value and what is wrong with it
 * (`E-mail "anne@@example" is not an e-mail address`; `Date de naissance "31/02/1980" is not a
 * date (dd/MM/yyyy)`), and for a warning what became of the value (`: left out of the record`).
 * Without a column (the service refused the record, a rule about the whole row) the message is
 * said without the mapping's places and backticks. The rule's place is not in it: files carry it
 * in a column of their own (`_rule`, `rule`).
 */
export function reasonText(reason: Reason): string {
  if (reason.also !== undefined && reason.also.length > 0) {
    const { also, ...first } = reason;
    return [first, ...also.map((more) => ({ ...more, values: reason.values }))].map(reasonText).join('\n');
  }
  const column = reason.column === undefined || reason.column === '' ? undefined : reason.column;
  const value = reason.value ?? cellOf(reason.values, column);
  const outcome = OUTCOME[reason.code];
  const after = outcome === undefined ? '' : `: ${outcome}`;
  if (column !== undefined && value !== undefined) {
    if (value.trim() === '') {
      if (reason.field === 'key') return `${column} is empty, and the row needs it as its key`;
      if (reason.expected === undefined) return `${column} is empty, and the mapping needs a value there`;
      return `${column} is empty; it must be ${reason.expected}${after}`;
    }
    if (reason.expected !== undefined) return `${column} ${quote(value)} is not ${reason.expected}${after}`;
    // The message names the value again (`no row with key 'C-9' in step orgs`): said once is enough.
    const named = value.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    const unknown = new RegExp(`^unknown (.+?) \`${named}\`(.*)$`).exec(reason.message);
    if (unknown)
      return `${column} ${quote(value)} is not a ${unknown[1]} in the account${unknown[2]?.replace(/`([^`]*)`/g, '$1') ?? ''}${after}`;
    const message = reason.message
      .replace(/^left without (\w+): (.*)$/, '$2; the record is written without $1')
      .replace(new RegExp(`(?:the )?key '${named}'`, 'g'), 'this key')
      .replace(new RegExp(`'${named}'`, 'g'), 'it');
    const plain = plainMessage(message);
    return `${column} ${quote(value)}: ${plain.charAt(0).toLowerCase()}${plain.slice(1)}${after}`;
  }
  if (reason.expected !== undefined && value !== undefined && value.trim() !== '')
    return `${quote(value)} is not ${reason.expected}${after}`;
  return `${plainMessage(reason.message)}${after}`;
}
