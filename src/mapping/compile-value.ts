import type { CellValue } from '../sources/types.ts';
import { conditionColumns, emitCondition } from './compile-condition.ts';
import { literal } from './codegen.ts';
import type { CodeWriter } from './codegen.ts';
import { isEmpty, isTemplate, parseTemplate, renderer, valueText } from './compile-template.ts';
import type { TemplatePart } from './compile-template.ts';
import { normalizeTransform } from './compile-transforms.ts';
import type { TransformRegistry } from './compile-transforms.ts';
import type { ValueSpec } from './schema.ts';
import { TransformError } from './transforms/types.ts';
import type { TransformContext, TransformEnvironment, TransformFn, Value } from './transforms/types.ts';

/**
 * Thrown while a row is mapped when that row cannot become a record; mapRow turns it into a
 * RejectedRow. Not a FerryError: it never leaves the mapper.
 */
export class RowRejection extends Error {
  constructor(
    readonly field: string,
    message: string,
    readonly code: 'MAPPING_VALUE' | 'MAPPING_REFERENCE' = 'MAPPING_VALUE',
  ) {
    super(message);
    this.name = 'RowRejection';
  }
}

export interface ValueCompiler {
  transforms: TransformRegistry;
  environment: TransformEnvironment;
  context: TransformContext;
  /** Every column read, collected while compiling. */
  columns: Set<string>;
  /** The function being written. */
  code: CodeWriter;
  /** Names, in the generated code, of the helpers every value uses. */
  helpers: { isEmpty: string; valueText: string; context: string };
}

/** Starts a value compiler that writes into `code`. */
export function valueCompiler(code: CodeWriter, base: Omit<ValueCompiler, 'code' | 'helpers' | 'columns'>): ValueCompiler {
  return {
    ...base,
    columns: new Set(),
    code,
    helpers: { isEmpty: code.constant(isEmpty), valueText: code.constant(valueText), context: code.constant(base.context) },
  };
}

/**
 * The expression "the variable holds a value that is not empty". Text starting with a visible
 * ASCII character, what nearly every cell is, is decided inline; anything else asks isEmpty.
 */
export function nonEmpty(compiler: ValueCompiler, variable: string): string {
  const first = `${variable}.charCodeAt(0)`;
  return `${variable} !== undefined && (typeof ${variable} === 'string' && ${first} > 32 && ${first} < 127 || !${compiler.helpers.isEmpty}(${variable}))`;
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
}

async function compileSteps(compiler: ValueCompiler, specs: Array<string | Record<string, unknown>>, yamlPath: string): Promise<Step[]> {
  const steps: Step[] = [];
  for (const [index, spec] of specs.entries()) {
    const normalized = normalizeTransform(spec, compiler.transforms);
    // parseMapping rejected these already; a caller that skipped it gets a plain error here.
    if (!normalized.ok) throw new Error(`transform ${JSON.stringify(spec)} is not valid: ${normalized.error}`);
    const options = normalized.definition.options.parse(normalized.options);
    const fn = await normalized.definition.create(options, compiler.environment);
    steps.push({ fn, name: normalized.name, at: `${yamlPath}.transform[${index}]` });
  }
  return steps;
}

/** What a transform's failure becomes: a reject naming the field and the step, or (a bug) the error itself. */
function rejecter(steps: Step[], owner: ValueOwner): (error: unknown, index: number) => unknown {
  return (error, index) => {
    const step = steps[index] as Step;
    return error instanceof TransformError ? new RowRejection(owner.field, `${step.at} (\`${step.name}\`): ${error.message}`) : error;
  };
}

/** Runs the steps on a constant once, while compiling; undefined when a step refuses it (each row is then rejected as it would be). */
function fold(steps: Step[], value: Value, context: TransformContext): { value: Value } | undefined {
  let current = value;
  try {
    for (const step of steps) current = step.fn(current, context);
  } catch (error) {
    if (error instanceof TransformError) return undefined;
    throw error;
  }
  return { value: current };
}

/** Writes the calls of the steps on the variable `into`, in place, with a failing step turned into a reject. */
function emitSteps(compiler: ValueCompiler, steps: Step[], owner: ValueOwner, into: string): void {
  if (steps.length === 0) return;
  const { code, helpers } = compiler;
  const names = steps.map((step) => code.constant(step.fn));
  const reject = code.constant(rejecter(steps, owner));
  if (steps.length === 1) {
    code.line(`try { ${into} = ${names[0]}(${into}, ${helpers.context}); } catch (e) { throw ${reject}(e, 0); }`);
    return;
  }
  // The failing step's index kept in a local: the message names the step.
  const at = code.temp('at', '0');
  const calls = names.map((name, index) => `${index === 0 ? '' : `${at} = ${index}; `}${into} = ${name}(${into}, ${helpers.context});`);
  code.line(`try { ${calls.join(' ')} } catch (e) { throw ${reject}(e, ${at}); }`);
}

/**
 * Writes the code of a value spec: statements that leave in the variable `into` what the value
 * gives for the row in `values`, or undefined when its `when` does not hold. Columns it reads are
 * added to compiler.columns.
 */
export async function emitValue(compiler: ValueCompiler, spec: ValueSpec, into: string, owner: ValueOwner, yamlPath: string): Promise<void> {
  const { code, helpers } = compiler;
  if (spec === null || typeof spec === 'number' || typeof spec === 'boolean') {
    code.line(`${into} = ${code.constant(spec)};`);
    return;
  }
  if (typeof spec === 'string') {
    emitText(compiler, spec, into);
    return;
  }
  const steps = await compileSteps(compiler, spec.transform ?? [], yamlPath);
  const body = async (): Promise<void> => {
    if (spec.column !== undefined) {
      compiler.columns.add(spec.column);
      code.line(`${into} = values[${literal(spec.column)}];`);
      code.line(`if (${into} === undefined) ${into} = null;`);
    } else if (spec.template !== undefined) {
      emitText(compiler, spec.template, into, true);
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
      const constant = spec.const ?? null;
      // A constant goes through its transforms once, here, rather than once per row.
      const folded = fold(steps, constant, compiler.context);
      if (folded !== undefined) {
        code.line(`${into} = ${code.constant(folded.value)};`);
        return;
      }
      code.line(`${into} = ${code.constant(constant)};`);
    }
    emitSteps(compiler, steps, owner, into);
  };
  if (!spec.when) {
    await body();
    return;
  }
  for (const column of conditionColumns(spec.when)) compiler.columns.add(column);
  await code.blockAsync(`if (${emitCondition(code, spec.when)})`, body, `} else ${into} = undefined;`);
}

/** The expression of a parsed template over `values`. */
function templateExpression(compiler: ValueCompiler, parts: TemplatePart[]): string {
  const { helpers } = compiler;
  if (parts.length === 0) return '""';
  const pieces = parts.map((part) => (typeof part === 'string' ? literal(part) : `${helpers.valueText}(values[${literal(part.column)}])`));
  // A lone placeholder is still text: valueText of the cell.
  return pieces.join(' + ');
}

/** A plain string: a template when it has placeholders, else a constant. */
function emitText(compiler: ValueCompiler, text: string, into: string, alwaysTemplate = false): void {
  if (!alwaysTemplate && !isTemplate(text)) {
    compiler.code.line(`${into} = ${literal(text)};`);
    return;
  }
  const parsed = parseTemplate(text);
  if (!parsed.ok) throw new Error(`template ${JSON.stringify(text)} is not valid: ${parsed.error}`);
  for (const column of parsed.columns) compiler.columns.add(column);
  compiler.code.line(`${into} = ${templateExpression(compiler, parsed.parts)};`);
}

/** Writes a key or link key (see compileKeyTemplate) into `into`, as trimmed text. */
export function emitKeyTemplate(compiler: ValueCompiler, text: string, into: string): void {
  const parsed = parseKeyTemplate(text);
  for (const column of parsed.columns) compiler.columns.add(column);
  compiler.code.line(`${into} = (${templateExpression(compiler, parsed.parts)}).trim();`);
}

function parseKeyTemplate(text: string): { parts: TemplatePart[]; columns: string[] } {
  const template = isTemplate(text) ? text : `{{${text}}}`;
  const parsed = parseTemplate(template);
  if (!parsed.ok) throw new Error(`key ${JSON.stringify(text)} is not valid: ${parsed.error}`);
  return parsed;
}

/**
 * A key or link key: a template, or (without placeholders) the name of one column, so that
 * `key: Contact ID` and `key: "{{Contact ID}}"` mean the same.
 */
export function compileKeyTemplate(compiler: ValueCompiler, text: string): (values: Record<string, CellValue>) => string {
  const parsed = parseKeyTemplate(text);
  for (const column of parsed.columns) compiler.columns.add(column);
  const render = renderer(parsed.parts);
  return (values) => render(values).trim();
}
