import type { CellValue } from '../sources/index.ts';
import type { CodeWriter } from './codegen.ts';
import type { Condition } from './schema.ts';
import { filledExpression, isEmpty, textExpression, valueText } from './compile-template.ts';
import { compileLinearPattern } from './linear-pattern.ts';

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

function visibleAscii(code: number): boolean {
  return code > 32 && code < 127;
}

type CellTest = (cell: CellValue | undefined) => boolean;

/**
 * The test of a column condition on its cell: it holds when every test it states holds; with no
 * test at all it holds when the value is not empty. Regular expressions were checked when the
 * mapping was loaded.
 */
function cellTest(condition: Extract<Condition, { column: string }>): CellTest {
  const tests: CellTest[] = [];
  if (condition.equals !== undefined) {
    const want = wanted(condition.equals);
    tests.push((cell) => same(cell, undefined, want));
  }
  if (condition.in !== undefined) {
    const list = condition.in.map(wanted);
    const longest = Math.max(...list.map((want) => want.text.length));
    tests.push((cell) => {
      // Text longer than every wanted one cannot match once its ends are plain (trimming keeps
      // it) and lower-casing never shortens text: no need to make the lower-cased copy.
      if (
        typeof cell === 'string' &&
        cell.length > longest &&
        visibleAscii(cell.charCodeAt(0)) &&
        visibleAscii(cell.charCodeAt(cell.length - 1))
      )
        return false;
      const text = cellText(cell);
      for (const want of list) if (same(cell, text, want)) return true;
      return false;
    });
  }
  if (condition.empty !== undefined) {
    const wantEmpty = condition.empty;
    tests.push((cell) => isEmpty(cell) === wantEmpty);
  }
  if (condition.matches !== undefined) {
    const regex = compileLinearPattern(condition.matches);
    tests.push((cell) => regex.test(valueText(cell)));
  }
  if (tests.length === 0) return (cell) => !isEmpty(cell);
  if (tests.length === 1) return tests[0] as CellTest;
  return (cell) => {
    // A loop, not tests.every(...): a callback made per row costs more than the tests themselves.
    for (const test of tests) if (!test(cell)) return false;
    return true;
  };
}

/**
 * The condition as an expression of generated code over `values` (see codegen.ts): each column's
 * cell is read at its own site, and `all`, `any` and `not` become the operators they are.
 */
export function emitCondition(
  code: CodeWriter,
  condition: Condition,
  helpers: { isEmpty: string; valueText: string },
): string {
  if ('all' in condition) return `(${condition.all.map((c) => emitCondition(code, c, helpers)).join(' && ')})`;
  if ('any' in condition) return `(${condition.any.map((c) => emitCondition(code, c, helpers)).join(' || ')})`;
  if ('not' in condition) return `!${emitCondition(code, condition.not, helpers)}`;
  const cell = code.cell(condition.column);
  const { equals, in: list, empty, matches } = condition;
  // The two commonest tests alone, written out: "has a value" and a pattern on the text.
  if (equals === undefined && list === undefined && matches === undefined) {
    const filled = filledExpression(cell, helpers.isEmpty);
    return empty === true ? `!${filled}` : filled;
  }
  if (equals === undefined && list === undefined && empty === undefined && matches !== undefined) {
    return `${code.constant(compileLinearPattern(matches))}.test(${textExpression(cell, helpers.valueText)})`;
  }
  return `${code.constant(cellTest(condition))}(${cell})`;
}
