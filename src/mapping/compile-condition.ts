import type { CellValue } from '../sources/types.ts';
import type { Condition } from './schema.ts';
import { isEmpty, valueText } from './compile-template.ts';

export type RowTest = (values: Record<string, CellValue>) => boolean;

/** Every column a condition reads. */
export function conditionColumns(condition: Condition, into: Set<string> = new Set()): Set<string> {
  if ('column' in condition) into.add(condition.column);
  else if ('all' in condition) for (const c of condition.all) conditionColumns(c, into);
  else if ('any' in condition) for (const c of condition.any) conditionColumns(c, into);
  else conditionColumns(condition.not, into);
  return into;
}

type Wanted = { value: string | number | boolean; text: string };

function wanted(value: string | number | boolean): Wanted {
  return { value, text: String(value).trim().toLowerCase() };
}

function cellText(cell: CellValue | undefined): string {
  return valueText(cell).trim().toLowerCase();
}

/** Numbers and booleans compare as such when the cell has that type; everything else as trimmed, lower-cased text. */
function same(cell: CellValue | undefined, text: string | undefined, want: Wanted): boolean {
  if (typeof want.value === 'number' && typeof cell === 'number') return cell === want.value;
  if (typeof want.value === 'boolean' && typeof cell === 'boolean') return cell === want.value;
  return (text ?? cellText(cell)) === want.text;
}

/**
 * Compiles a condition once, so that rows only pay for comparisons. A column condition holds when
 * every test it states holds; with no test at all it holds when the value is not empty. Regular
 * expressions were checked when the mapping was loaded.
 */
export function compileCondition(condition: Condition): RowTest {
  if ('all' in condition) {
    const tests = condition.all.map(compileCondition);
    return (values) => every(tests, values);
  }
  if ('any' in condition) {
    const tests = condition.any.map(compileCondition);
    return (values) => {
      for (const test of tests) if (test(values)) return true;
      return false;
    };
  }
  if ('not' in condition) {
    const test = compileCondition(condition.not);
    return (values) => !test(values);
  }
  const { column } = condition;
  const tests: RowTest[] = [];
  if (condition.equals !== undefined) {
    const want = wanted(condition.equals);
    tests.push((values) => same(values[column], undefined, want));
  }
  if (condition.in !== undefined) {
    const list = condition.in.map(wanted);
    tests.push((values) => {
      const cell = values[column];
      const text = cellText(cell);
      for (const want of list) if (same(cell, text, want)) return true;
      return false;
    });
  }
  if (condition.empty !== undefined) {
    const wanted = condition.empty;
    tests.push((values) => isEmpty(values[column]) === wanted);
  }
  if (condition.matches !== undefined) {
    const regex = new RegExp(condition.matches);
    tests.push((values) => regex.test(valueText(values[column])));
  }
  if (tests.length === 0) return (values) => !isEmpty(values[column]);
  if (tests.length === 1) return tests[0] as RowTest;
  return (values) => every(tests, values);
}

// A loop, not tests.every(...): a callback made per row costs more than the tests themselves.
function every(tests: RowTest[], values: Record<string, CellValue>): boolean {
  for (const test of tests) if (!test(values)) return false;
  return true;
}
