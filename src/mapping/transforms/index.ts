import type { TransformDefinition } from './types.ts';
import { boolean } from './boolean.ts';
import { email, phone } from './contact.ts';
import { date, time, timestamp } from './dates.ts';
import { defaultTransform, first, join, nth, split } from './list.ts';
import { lookup } from './lookup.ts';
import { integer, number } from './number.ts';
import { collapse, extract, lowercase, prefix, replace, suffix, titlecase, trim, truncate, uppercase } from './text.ts';

export {
  TransformError,
  type TransformContext,
  type TransformDefinition,
  type TransformEnvironment,
  type TransformFn,
  type Value,
} from './types.ts';

const DEFINITIONS: ReadonlyArray<TransformDefinition<any>> = [
  trim,
  collapse,
  lowercase,
  uppercase,
  titlecase,
  replace,
  extract,
  truncate,
  prefix,
  suffix,
  split,
  join,
  first,
  nth,
  defaultTransform,
  lookup,
  number,
  integer,
  boolean,
  date,
  timestamp,
  time,
  phone,
  email,
];

/**
 * Every transform of the mapping language, by the name mapping files use. Listed in the order the
 * mapping reference shows them: text, lists, tables, then typed values.
 */
export const TRANSFORMS: Readonly<Record<string, TransformDefinition<unknown>>> = Object.freeze(
  Object.fromEntries(DEFINITIONS.map((definition) => [definition.name, definition])),
);
