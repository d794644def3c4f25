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
  const rejection = (error: unknown, index: number): unknown => {
    const step = fns[index] as (typeof fns)[number];
    return error instanceof TransformError ? new RowRejection(owner.field, `${step.at} (\`${step.name}\`): ${error.message}`) : error;
  };
  // One, two and three steps cover nearly every field: direct calls, with the failing step's
  // index kept in a local, cost less per row than a loop over step objects.
  const f0 = (fns[0] as (typeof fns)[number]).fn;
  if (fns.length === 1) {
    return (value) => {
      try {
        return f0(value, context);
      } catch (error) {
        throw rejection(error, 0);
      }
    };
  }
  const f1 = (fns[1] as (typeof fns)[number]).fn;
  if (fns.length === 2) {
    return (value) => {
      let at = 0;
      try {
        const first = f0(value, context);
        at = 1;
        return f1(first, context);
      } catch (error) {
        throw rejection(error, at);
      }
    };
  }
  if (fns.length === 3) {
    const f2 = (fns[2] as (typeof fns)[number]).fn;
    return (value) => {
      let at = 0;
      try {
        const first = f0(value, context);
        at = 1;
        const second = f1(first, context);
        at = 2;
        return f2(second, context);
      } catch (error) {
        throw rejection(error, at);
      }
    };
  }
  return (value: Value): Value => {
    let current = value;
    let at = 0;
    try {
      for (; at < fns.length; at++) current = (fns[at] as (typeof fns)[number]).fn(current, context);
    } catch (error) {
      throw rejection(error, at);
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
  let withTransforms: ValueFn;
  if (!transform) withTransforms = base;
  else if (spec.column !== undefined) {
    // The usual case, a column through transforms: one call less per row.
    const column = spec.column;
    withTransforms = (values) => transform(values[column] ?? null);
  } else withTransforms = (values) => transform(base(values) ?? null);
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
