import type { z } from 'zod';
import type { CellValue } from '../../sources/index.ts';
import { FerryError } from '../../errors/index.ts';

/**
 * A value on its way through a field's transforms: what a reader gave (text, number, boolean,
 * date, null), or a list after `split`.
 */
export type Value = CellValue | string[];

/** What a transform may know about where it runs; used for messages and time zones. */
export interface TransformContext {
  /** IANA time zone for dates and timestamps without one (the mapping's `timeZone`). */
  timeZone: string;
}

/** What a transform may use while it is being built (lookup tables from files). */
export interface TransformEnvironment {
  /** Folder of the mapping file: relative paths in options are resolved against it. */
  baseDir: string;
  /** Reads a whole text file (UTF-8); only used at compile time, never per row. */
  readTextFile(path: string): Promise<string>;
}

/**
 * Applies one configured transform to a value. Throws TransformError for a value it cannot handle.
 * `cells` holds the row's cells of the columns the definition's `columns` names, in that order.
 */
export type TransformFn = (value: Value, context: TransformContext, cells?: readonly Value[]) => Value;

/** One transform of the mapping language: its name, its options, and how it is built. */
export interface TransformDefinition<Options = unknown> {
  name: string;
  /** One line for the mapping reference. */
  summary: string;
  /** Options, validated once when the mapping is compiled. */
  options: z.ZodType<Options>;
  /**
   * When the transform is written as `{name: scalar}`, the option the scalar stands for, e.g.
   * `{split: ';'}` means `{split: {separator: ';'}}`.
   */
  shorthand?: string;
  /** YAML examples for the reference, each with an input and the output. */
  examples: Array<{ yaml: string; input: Value; output: Value }>;
  /**
   * Other columns of the row the transform reads, as its options name them (`{phone: {countryColumn:
   * Land}}` reads each row's country): the mapping reads them too, and hands their cells to the
   * function as `cells`, in this order. A transform without it sees only its value.
   */
  columns?(options: Options): string[];
  create(options: Options, environment: TransformEnvironment): TransformFn | Promise<TransformFn>;
}

/**
 * A value a transform cannot handle ("31.02.2024" as a date): a FerryError with the code
 * MAPPING_VALUE. The row goes to the rejects file with this message; the run goes on.
 */
export class TransformError extends FerryError {
  constructor(
    message: string,
    readonly transform: string,
    /**
     * What the value should have been, in the words of the person who owns the data (`an e-mail
     * address`, `a date (dd/MM/yyyy)`): the reject's sentence says the value "is not" this.
     */
    readonly expected?: string,
  ) {
    // A value a transform refuses is data, not a bug: its stack would never be read, and taking it
    // cost more than the transform itself (a file of mostly bad phone numbers mapped at a quarter
    // of the speed once `onInvalid` turned each into an error to catch).
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super('MAPPING_VALUE', message);
    Error.stackTraceLimit = limit;
  }
}
