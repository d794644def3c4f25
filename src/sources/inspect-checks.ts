import { createHash } from 'node:crypto';
import { isEmailColumn, isIdColumn } from './column-kinds.ts';
import { formatCount } from '../util/index.ts';

/** Something in a column that ruins an import later, found while inspecting the file. */
export interface ColumnFinding {
  column: string;
  /**
   * DUPLICATE_KEYS: the key-like column (the first id column, as `mapping init` takes it) holds a
   * value on more than one row. DUPLICATE_EMAILS: an e-mail column does. DATE_ORDER_MIXED: some
   * dates read only day first, others only month first. DATE_ORDER_AMBIGUOUS: dates that read
   * either way (03/04/2024).
   */
  code: 'DUPLICATE_KEYS' | 'DUPLICATE_EMAILS' | 'DATE_ORDER_MIXED' | 'DATE_ORDER_AMBIGUOUS';
  message: string;
}

const q = (text: string): string => JSON.stringify(text);

/** How many repeated values a finding shows. */
const EXAMPLES = 3;

/**
 * Values of one column seen before. Kept as 72-bit digests rather than the texts, so that a file
 * of millions of rows costs a few tens of bytes a row for each column checked, whatever the texts.
 */
class RepeatTally {
  readonly #first = new Map<string, number>();
  readonly #repeated = new Set<string>();
  rows = 0;
  examples: Array<{ value: string; first: number; again: number }> = [];
  filled = 0;
  /** Values with an @: whether an "email" column holds addresses (not "Email opt-out: yes"). */
  addresses = 0;

  constructor(private readonly fold: (text: string) => string) {}

  add(text: string, row: number): void {
    this.filled += 1;
    if (text.includes('@')) this.addresses += 1;
    const value = this.fold(text);
    const digest = createHash('sha1').update(value).digest('base64').slice(0, 12);
    const first = this.#first.get(digest);
    if (first === undefined) {
      this.#first.set(digest, row);
      return;
    }
    this.rows += 1;
    if (this.#repeated.has(digest)) return;
    this.#repeated.add(digest);
    if (this.examples.length < EXAMPLES) this.examples.push({ value: text, first, again: row });
  }

  get values(): number {
    return this.#repeated.size;
  }

  describe(): string {
    const shown = this.examples.map((e) => `${q(e.value)} on rows ${e.first} and ${e.again}`).join('; ');
    const values = this.values === 1 ? '1 value occurs' : `${formatCount(this.values)} values occur`;
    return `${values} on more than one row (${formatCount(this.rows)} repeat${this.rows === 1 ? '' : 's'}), e.g. ${shown}`;
  }
}

const NUMERIC_DATE = /^(\d{1,2})([./-])(\d{1,2})\2(\d{4}|\d{2})$/;
const MONTHS = [
  'January',
  'February',
  'March',
  'April',
  'May',
  'June',
  'July',
  'August',
  'September',
  'October',
  'November',
  'December',
];

interface Seen {
  text: string;
  row: number;
}

/** The orders the numeric dates of a column can be read in. */
class DateOrderTally {
  filled = 0;
  dates = 0;
  dayFirst: Seen | null = null;
  monthFirst: Seen | null = null;
  ambiguous = 0;
  example: Seen | null = null;

  add(text: string, row: number): void {
    this.filled += 1;
    const match = NUMERIC_DATE.exec(text);
    if (!match) return;
    const a = Number(match[1]);
    const b = Number(match[3]);
    if (a < 1 || b < 1 || a > 31 || b > 31 || (a > 12 && b > 12)) return;
    this.dates += 1;
    if (a > 12) this.dayFirst ??= { text, row };
    else if (b > 12) this.monthFirst ??= { text, row };
    else if (a !== b) {
      this.ambiguous += 1;
      this.example ??= { text, row };
    }
  }
}

/** The format a date like `text` is written in, the day first or the month. */
function formatOf(text: string, dayFirst: boolean): string {
  const match = NUMERIC_DATE.exec(text) as RegExpExecArray;
  const sep = match[2] as string;
  const two = (match[1] as string).length === 2 && (match[3] as string).length === 2;
  const [d, m] = two ? ['dd', 'MM'] : ['d', 'M'];
  const y = (match[4] as string).length === 4 ? 'yyyy' : 'yy';
  return dayFirst ? `${d}${sep}${m}${sep}${y}` : `${m}${sep}${d}${sep}${y}`;
}

/** `03/04/2024` read both ways: "3 April or 4 March". */
function readings(text: string): string {
  const match = NUMERIC_DATE.exec(text) as RegExpExecArray;
  const a = Number(match[1]);
  const b = Number(match[3]);
  return `${a} ${MONTHS[b - 1]} or ${b} ${MONTHS[a - 1]}`;
}

/**
 * The checks `inspect` makes on the columns as it reads the rows: repeated values in the key-like
 * column and in e-mail columns, and dates whose order the file does not make clear. Columns are
 * announced in their order (the header's for CSV), so that the key-like column is the first id
 * column, as `mapping init` takes it; later id columns are links to other files, where repeats
 * are expected.
 */
export class ColumnChecks {
  #key: string | null = null;
  readonly #repeats = new Map<string, RepeatTally>();
  readonly #dates = new Map<string, DateOrderTally>();

  addColumn(name: string): void {
    this.#dates.set(name, new DateOrderTally());
    if (this.#key === null && isIdColumn(name)) {
      this.#key = name;
      this.#repeats.set(name, new RepeatTally((text) => text));
    } else if (isEmailColumn(name)) {
      this.#repeats.set(name, new RepeatTally((text) => text.toLowerCase()));
    }
  }

  /** A non-empty, trimmed value of a column (announced first), as text. */
  add(name: string, text: string, row: number, isText: boolean): void {
    this.#repeats.get(name)?.add(text, row);
    if (isText) this.#dates.get(name)?.add(text, row);
  }

  findings(): ColumnFinding[] {
    const found: ColumnFinding[] = [];
    for (const [column, tally] of this.#repeats) {
      if (tally.values === 0) continue;
      if (column === this.#key) {
        found.push({
          column,
          code: 'DUPLICATE_KEYS',
          message: `${q(column)} looks like the key (an id for each row), but ${tally.describe()}: rows of one key are one record: the first is written and later rows that differ from it are refused. Merge or fix them, or choose another key.`,
        });
      } else if (tally.addresses * 2 >= tally.filled) {
        found.push({
          column,
          code: 'DUPLICATE_EMAILS',
          message: `${q(column)} holds e-mail addresses, and ${tally.describe()} (case ignored): as a key, or with \`match: {by: email}\`, those rows become one record. Merge them, or key the rows on something else.`,
        });
      }
    }
    for (const [column, t] of this.#dates) {
      // A column of dates, not a text that holds one now and then.
      if (t.dates === 0 || t.dates * 2 < t.filled) continue;
      if (t.dayFirst && t.monthFirst) {
        found.push({
          column,
          code: 'DATE_ORDER_MIXED',
          message: `${q(column)} has dates that read only day first (${q(t.dayFirst.text)}, row ${t.dayFirst.row}) and dates that read only month first (${q(t.monthFirst.text)}, row ${t.monthFirst.row}): no one format reads them all. Fix the file.`,
        });
        continue;
      }
      if (t.ambiguous === 0 || !t.example) continue;
      const either = `${formatCount(t.ambiguous)} date${t.ambiguous === 1 ? '' : 's'} in ${q(column)} read${t.ambiguous === 1 ? 's' : ''} either way (${q(t.example.text)}, row ${t.example.row}: ${readings(t.example.text)})`;
      const decided = t.dayFirst ?? t.monthFirst;
      const message = decided
        ? `${either}; ${q(decided.text)} (row ${decided.row}) has a number over 12 ${t.dayFirst ? 'first: the day comes first' : 'second: the month comes first'}. Give the mapping {date: ${q(formatOf(decided.text, t.dayFirst !== null))}}, and check with whoever made the file.`
        : `${either}, and no date has a number over 12 to tell the order. Ask whoever made the file, then give the mapping the format ({date: ${q(formatOf(t.example.text, true))}} or {date: ${q(formatOf(t.example.text, false))}}).`;
      found.push({ column, code: 'DATE_ORDER_AMBIGUOUS', message });
    }
    return found;
  }
}
