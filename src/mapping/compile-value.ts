import type { CellValue } from '../sources/types.ts';
import { compileCondition } from './compile-condition.ts';
import { conditionColumns } from './compile-condition.ts';
import { isEmpty, isTemplate, parseTemplate, renderer } from './compile-template.ts';
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

/** A compiled value: what it gives for a row, or undefined when its `when` does not hold. */
export type ValueFn = (values: Record<string, CellValue>) => Value | undefined;

export interface ValueCompiler {
  transforms: TransformRegistry;
  environment: TransformEnvironment;
  context: TransformContext;
  /** Every column read, collected while compiling. */
  columns: Set<string>;
}

/** The target a value is for, to name it in rejects. */
export interface ValueOwner {
  field: string;
  yamlPath: string;
}

async function compileTransforms(compiler: ValueCompiler, specs: Array<string | Record<string, unknown>>, owner: ValueOwner, yamlPath: string): Promise<((value: Value) => Value) | undefined> {
  if (specs.length === 0) return undefined;
  const fns: Array<{ fn: TransformFn; name: string; at: string }> = [];
  for (const [index, spec] of specs.entries()) {
    const normalized = normalizeTransform(spec, compiler.transforms);
    // parseMapping rejected these already; a caller that skipped it gets a plain error here.
    if (!normalized.ok) throw new Error(`transform ${JSON.stringify(spec)} is not valid: ${normalized.error}`);
    const options = normalized.definition.options.parse(normalized.options);
    const fn = await normalized.definition.create(options, compiler.environment);
    fns.push({ fn, name: normalized.name, at: `${yamlPath}.transform[${index}]` });
  }
  const { context } = compiler;
  return (value: Value): Value => {
    let current = value;
    for (const step of fns) {
      try {
        current = step.fn(current, context);
      } catch (error) {
        if (error instanceof TransformError) throw new RowRejection(owner.field, `${step.at} (\`${step.name}\`): ${error.message}`);
        throw error;
      }
    }
    return current;
  };
}

/** Compiles a value spec into a function over a row; columns it reads are added to compiler.columns. */
export async function compileValue(compiler: ValueCompiler, spec: ValueSpec, owner: ValueOwner, yamlPath: string): Promise<ValueFn> {
  if (spec === null || typeof spec === 'number' || typeof spec === 'boolean') return () => spec;
  if (typeof spec === 'string') return compileText(compiler, spec);
  let base: ValueFn;
  if (spec.column !== undefined) {
    const column = spec.column;
    compiler.columns.add(column);
    base = (values) => values[column] ?? null;
  } else if (spec.template !== undefined) {
    base = compileText(compiler, spec.template, true);
  } else if (spec.coalesce !== undefined) {
    const options: ValueFn[] = [];
    for (const [index, inner] of spec.coalesce.entries()) options.push(await compileValue(compiler, inner, owner, `${yamlPath}.coalesce[${index}]`));
    base = (values) => {
      for (const option of options) {
        const value = option(values);
        if (!isEmpty(value)) return value;
      }
      return null;
    };
  } else {
    const constant = spec.const ?? null;
    base = () => constant;
  }
  const transform = await compileTransforms(compiler, spec.transform ?? [], owner, yamlPath);
  const withTransforms: ValueFn = transform ? (values) => transform(base(values) ?? null) : base;
  if (!spec.when) return withTransforms;
  for (const column of conditionColumns(spec.when)) compiler.columns.add(column);
  const test = compileCondition(spec.when);
  return (values) => (test(values) ? withTransforms(values) : undefined);
}

/** A plain string: a template when it has placeholders, else a constant. */
function compileText(compiler: ValueCompiler, text: string, alwaysTemplate = false): ValueFn {
  if (!alwaysTemplate && !isTemplate(text)) return () => text;
  const parsed = parseTemplate(text);
  if (!parsed.ok) throw new Error(`template ${JSON.stringify(text)} is not valid: ${parsed.error}`);
  for (const column of parsed.columns) compiler.columns.add(column);
  return renderer(parsed.parts);
}

/**
 * A key or link key: a template, or (without placeholders) the name of one column, so that
 * `key: Contact ID` and `key: "{{Contact ID}}"` mean the same.
 */
export function compileKeyTemplate(compiler: ValueCompiler, text: string): (values: Record<string, CellValue>) => string {
  const template = isTemplate(text) ? text : `{{${text}}}`;
  const parsed = parseTemplate(template);
  if (!parsed.ok) throw new Error(`key ${JSON.stringify(text)} is not valid: ${parsed.error}`);
  for (const column of parsed.columns) compiler.columns.add(column);
  const render = renderer(parsed.parts);
  return (values) => render(values).trim();
}
