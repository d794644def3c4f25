import { FerryError } from '../errors/index.ts';
import { conditionColumns, emitCondition } from './compile-condition.ts';
import { literal } from './codegen.ts';
import type { CodeWriter } from './codegen.ts';
import {
  filledExpression,
  isEmpty,
  isTemplate,
  parseTemplate,
  textExpression,
  trimText,
  valueText,
} from './compile-template.ts';
import type { TemplatePart } from './compile-template.ts';
import { normalizeTransform } from './compile-transforms.ts';
import type { TransformRegistry } from './compile-transforms.ts';
import type { ValueSpec } from './schema.ts';
import { TRANSFORMS } from './transforms/index.ts';
import { TransformError } from './transforms/types.ts';
import type { TransformContext, TransformEnvironment, TransformFn, Value } from './transforms/types.ts';

/**
 * Thrown while a row is mapped when that row cannot become a record; mapRow turns it into a
 * RejectedRow. A FerryError with the reject's code, although it never leaves the mapper: the
 * generated code of a mapping throws it from deep inside a field's steps, and one catch per row
 * (mapRow's) is cheaper than an outcome checked after every step.
 */
export class RowRejection extends FerryError {
  /** The column the value was read from, when one column holds it; set by the field when its rule does not know. */
  column?: string;
  /** The value refused, as the refusing step was given it. */
  value?: string;
  /** What the value should have been, in plain words (TransformError's `expected`). */
  expected?: string;
  /** Where the rule is in the mapping (`fields[3].value.transform[1]`); the field's place when nothing narrower is known. */
  rule?: string;

  constructor(
    readonly field: string,
    message: string,
    override readonly code: 'MAPPING_VALUE' | 'MAPPING_REFERENCE' = 'MAPPING_VALUE',
    /** A value the field cannot take, which the field's `onInvalid` may drop or keep; false for rules about the row (`required`). */
    readonly badValue = true,
    detail: RejectionDetail = {},
  ) {
    // A row's bad value is data, not a bug: no stack is taken (see TransformError).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(code, message);
    Error.stackTraceLimit = limit;
    if (detail.column !== undefined) this.column = detail.column;
    if (detail.value !== undefined) this.value = detail.value;
    if (detail.expected !== undefined) this.expected = detail.expected;
    if (detail.rule !== undefined) this.rule = detail.rule;
  }
}

/** What a rejection knows of the value it refused, for the sentence a person reads (reasons.ts). */
export interface RejectionDetail {
  column?: string | undefined;
  value?: string | undefined;
  expected?: string | undefined;
  rule?: string | undefined;
}

/** A value as a reason shows it: the text a person typed. */
export function shownText(value: Value | undefined): string {
  return Array.isArray(value) ? value.join('; ') : valueText(value);
}

export interface ValueCompiler {
  transforms: TransformRegistry;
  environment: TransformEnvironment;
  context: TransformContext;
  /** Every column read, collected while compiling. */
  columns: Set<string>;
  /** Numbered columns read (`phone.*.type`), collected while compiling: the row may have any number of them. */
  patterns: Set<string>;
  /**
   * While a numbered entry is written: the variable of the generated code that holds the item's
   * number, which a `*` in a column name stands for. Undefined elsewhere.
   */
  star?: string | undefined;
  /** The function being written. */
  code: CodeWriter;
  /** Names, in the generated code, of the helpers every value uses. */
  helpers: { isEmpty: string; valueText: string; trimText: string; context: string };
}

/** Starts a value compiler that writes into `code`. */
export function valueCompiler(
  code: CodeWriter,
  base: Omit<ValueCompiler, 'code' | 'helpers' | 'columns' | 'patterns' | 'star'>,
): ValueCompiler {
  return {
    ...base,
    columns: new Set(),
    patterns: new Set(),
    code,
    helpers: {
      isEmpty: code.constant(isEmpty),
      valueText: code.constant(valueText),
      trimText: code.constant(trimText),
      context: code.constant(base.context),
    },
  };
}

/** The expression "the variable holds a value that is not empty" (undefined, a `when` that failed, is empty too). */
export function nonEmpty(compiler: ValueCompiler, variable: string): string {
  return filledExpression(variable, compiler.helpers.isEmpty);
}

/** The target a value is for, to name it in rejects. */
export interface ValueOwner {
  field: string;
  yamlPath: string;
}

interface Step {
  fn: TransformFn;
  name: string;
  at: string;
  /** For the built-in `trim`: all it does to text, which the generated code then does itself. */
  trims?: boolean;
  /** The other columns of the row the transform reads (its definition's `columns`). */
  reads?: string[];
}

async function compileSteps(
  compiler: ValueCompiler,
  specs: Array<string | Record<string, unknown>>,
  yamlPath: string,
): Promise<Step[]> {
  const steps: Step[] = [];
  for (const [index, spec] of specs.entries()) {
    const normalized = normalizeTransform(spec, compiler.transforms);
    // parseMapping rejected these already; a caller that skipped it gets a plain error here.
    if (!normalized.ok) throw new Error(`transform ${JSON.stringify(spec)} is not valid: ${normalized.error}`);
    const options = normalized.definition.options.parse(normalized.options);
    const fn = await normalized.definition.create(options, compiler.environment);
    const step: Step = { fn, name: normalized.name, at: `${yamlPath}.transform[${index}]` };
    // Trimming text, which nearly every value is, is done inline; the transform gets the rest.
    if (normalized.definition === TRANSFORMS.trim) step.trims = true;
    const reads = normalized.definition.columns?.(options) ?? [];
    if (reads.length > 0) step.reads = reads;
    steps.push(step);
  }
  return steps;
}

/**
 * What a transform's failure becomes: a reject naming the field and the step, with the value the
 * step was given and the column it came from, or (a bug) the error itself.
 */
function rejecter(
  steps: Step[],
  owner: ValueOwner,
): (error: unknown, index: number, input: Value, column: string | undefined) => unknown {
  return (error, index, input, column) => {
    const step = steps[index] as Step;
    if (!(error instanceof TransformError)) return error;
    return new RowRejection(owner.field, `${step.at} (\`${step.name}\`): ${error.message}`, 'MAPPING_VALUE', true, {
      rule: step.at,
      expected: error.expected,
      value: shownText(input),
      column,
    });
  };
}

/** Runs the steps on a constant once, while compiling; undefined when a step refuses it (each row is then rejected as it would be). */
function fold(steps: Step[], value: Value, context: TransformContext): { value: Value } | undefined {
  // A step reading other cells of the row gives each row its own value.
  if (steps.some((step) => step.reads !== undefined)) return undefined;
  let current = value;
  try {
    for (const step of steps) current = step.fn(current, context);
  } catch (error) {
    if (error instanceof TransformError) return undefined;
    throw error;
  }
  return { value: current };
}

/**
 * Writes the calls of the steps on the variable `into`, in place, with a failing step turned into
 * a reject. `column` is the expression of the column's name the value was read from, if one.
 * A step assigns `into` only when it returns, so on a failure `into` holds what it was given.
 */
function emitSteps(
  compiler: ValueCompiler,
  steps: Step[],
  owner: ValueOwner,
  into: string,
  column = 'undefined',
): void {
  if (steps.length === 0) return;
  const { code, helpers } = compiler;
  const reject = code.constant(rejecter(steps, owner));
  const cellOf = (column: string): string =>
    compiler.star !== undefined && column.includes('*')
      ? `(${code.dynamicCell(numberedColumn(column, compiler.star))} ?? null)`
      : `(${code.cell(column)} ?? null)`;
  for (const step of steps) {
    for (const column of step.reads ?? []) {
      if (compiler.star !== undefined && column.includes('*')) compiler.patterns.add(column);
      else compiler.columns.add(column);
    }
  }
  const call = (step: Step): string => {
    const cells = step.reads === undefined ? '' : `, [${step.reads.map(cellOf).join(', ')}]`;
    const general = `${code.constant(step.fn)}(${into}, ${helpers.context}${cells})`;
    return step.trims ? `typeof ${into} === 'string' ? ${helpers.trimText}(${into}) : ${general}` : general;
  };
  if (steps.length === 1) {
    code.line(`try { ${into} = ${call(steps[0] as Step)}; } catch (e) { throw ${reject}(e, 0, ${into}, ${column}); }`);
    return;
  }
  // The failing step's index kept in a local: the message names the step.
  const at = code.temp('at', '0');
  const calls = steps.map((step, index) => `${index === 0 ? '' : `${at} = ${index}; `}${into} = ${call(step)};`);
  code.line(`try { ${calls.join(' ')} } catch (e) { throw ${reject}(e, ${at}, ${into}, ${column}); }`);
}

/** A value that is the same for every row, known while compiling. */
export interface KnownValue {
  value: Value;
}

/**
 * Writes the code of a value spec: statements that leave in the variable `into` what the value
 * gives for the row in `values`, or undefined when its `when` does not hold. Columns it reads are
 * added to compiler.columns. Returns the value when it is the same for every row (a constant
 * without `when`, after its transforms), so the caller can decide now what rows would decide.
 */
export async function emitValue(
  compiler: ValueCompiler,
  spec: ValueSpec,
  into: string,
  owner: ValueOwner,
  yamlPath: string,
  raw?: string,
): Promise<KnownValue | undefined> {
  const { code } = compiler;
  // `raw`: a variable that gets the value as read, before its transforms (what onInvalid keeps).
  const keepRaw = (): void => {
    if (raw !== undefined) code.line(`${raw} = ${into};`);
  };
  const constant = (value: Value): KnownValue => {
    code.line(`${into} = ${typeof value === 'string' ? literal(value) : code.constant(value)};`);
    return { value };
  };
  if (spec === null || typeof spec === 'number' || typeof spec === 'boolean') return constant(spec);
  if (typeof spec === 'string') {
    if (!isTemplate(spec)) return constant(spec);
    emitTemplate(compiler, spec, into);
    keepRaw();
    return undefined;
  }
  const steps = await compileSteps(compiler, spec.transform ?? [], yamlPath);
  if (spec.column === undefined && spec.template === undefined && spec.coalesce === undefined && !spec.when) {
    // A constant goes through its transforms once, here, rather than once per row; one they
    // refuse is left to the rows, each of which is rejected with the step's message.
    const folded = fold(steps, spec.const ?? null, compiler.context);
    if (folded !== undefined) return constant(folded.value);
  }
  const body = async (): Promise<void> => {
    if (spec.column !== undefined && compiler.star !== undefined && spec.column.includes('*')) {
      compiler.patterns.add(spec.column);
      code.line(`${into} = ${code.dynamicCell(numberedColumn(spec.column, compiler.star))};`);
      code.line(`if (${into} === undefined) ${into} = null;`);
    } else if (spec.column !== undefined) {
      compiler.columns.add(spec.column);
      code.line(`${into} = ${code.cell(spec.column)};`);
      code.line(`if (${into} === undefined) ${into} = null;`);
    } else if (spec.template !== undefined) {
      emitTemplate(compiler, spec.template, into);
    } else if (spec.coalesce !== undefined) {
      const label = code.name('coalesce');
      await code.blockAsync(`${label}:`, async () => {
        for (const [index, inner] of spec.coalesce?.entries() ?? []) {
          const option = code.temp('option');
          await emitValue(compiler, inner, option, owner, `${yamlPath}.coalesce[${index}]`);
          code.line(`if (${nonEmpty(compiler, option)}) { ${into} = ${option}; break ${label}; }`);
        }
        code.line(`${into} = null;`);
      });
    } else {
      code.line(`${into} = ${code.constant(spec.const ?? null)};`);
    }
    keepRaw();
    emitSteps(compiler, steps, owner, into, columnExpression(compiler, spec));
  };
  if (!spec.when) {
    await body();
    return undefined;
  }
  for (const column of conditionColumns(spec.when)) compiler.columns.add(column);
  await code.blockAsync(
    `if (${emitCondition(code, spec.when, compiler.helpers)})`,
    body,
    `} else ${into} = undefined;`,
  );
  return undefined;
}

/** The expression of the name of the one column a value reads (a numbered one for its item), or `undefined`. */
function columnExpression(compiler: ValueCompiler, spec: Exclude<ValueSpec, string | number | boolean | null>): string {
  let column = spec.column;
  if (column === undefined && spec.template !== undefined) {
    const parsed = parseTemplate(spec.template);
    if (parsed.ok && parsed.columns.length === 1) column = parsed.columns[0];
  }
  if (column === undefined) return 'undefined';
  return compiler.star !== undefined && column.includes('*') ? numberedColumn(column, compiler.star) : literal(column);
}

/**
 * The expression of a numbered column's name for the item number in the variable `star`:
 * `phone.*.type` becomes `"phone." + n + ".type"`. Every `*` stands for the number.
 */
export function numberedColumn(pattern: string, star: string): string {
  return pattern
    .split('*')
    .map((piece) => literal(piece))
    .join(` + ${star} + `);
}

/** The expression "the value in `variable` as text" (valueText), with text itself inline. */
export function textOf(compiler: ValueCompiler, variable: string): string {
  return textExpression(variable, compiler.helpers.valueText);
}

/** The expression of a parsed template over `values`. */
function templateExpression(compiler: ValueCompiler, parts: TemplatePart[]): string {
  const { code, helpers } = compiler;
  if (parts.length === 0) return '""';
  const pieces = parts.map((part) => {
    if (typeof part === 'string') return literal(part);
    // In an `items: numbered` entry a `*` in a placeholder is the item's number, as in a column.
    if (compiler.star !== undefined && part.column.includes('*'))
      return `${helpers.valueText}(${code.dynamicCell(numberedColumn(part.column, compiler.star))} ?? null)`;
    return `${helpers.valueText}(${code.cell(part.column)})`;
  });
  // A lone placeholder is still text: valueText of the cell.
  return pieces.join(' + ');
}

/** A template (`{{Column}}` placeholders) rendered over the row into `into`. */
function emitTemplate(compiler: ValueCompiler, text: string, into: string): void {
  const parsed = parseTemplate(text);
  if (!parsed.ok) throw new Error(`template ${JSON.stringify(text)} is not valid: ${parsed.error}`);
  for (const column of parsed.columns) {
    if (compiler.star !== undefined && column.includes('*')) compiler.patterns.add(column);
    else compiler.columns.add(column);
  }
  compiler.code.line(`${into} = ${templateExpression(compiler, parsed.parts)};`);
}

/**
 * Writes a key or link key into `into`, as trimmed text. A key is a template, or (without
 * placeholders) the name of one column, so that `key: Contact ID` and `key: "{{Contact ID}}"`
 * mean the same.
 */
export function emitKeyTemplate(compiler: ValueCompiler, text: string, into: string): void {
  const parsed = parseKeyTemplate(text);
  for (const column of parsed.columns) {
    if (compiler.star !== undefined && column.includes('*')) compiler.patterns.add(column);
    else compiler.columns.add(column);
  }
  compiler.code.line(`${into} = ${compiler.helpers.trimText}(${templateExpression(compiler, parsed.parts)});`);
}

function parseKeyTemplate(text: string): { parts: TemplatePart[]; columns: string[] } {
  const template = isTemplate(text) ? text : `{{${text}}}`;
  const parsed = parseTemplate(template);
  if (!parsed.ok) throw new Error(`key ${JSON.stringify(text)} is not valid: ${parsed.error}`);
  return parsed;
}
