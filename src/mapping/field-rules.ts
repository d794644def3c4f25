/**
 * What a custom field of the account takes, as its definition says: a Boolean true or false, a
 * Date as YYYY-MM-DD, one of a List's choices, a Text matching the field's pattern, and a party
 * field limited to people or to organisations only on those. The service refuses anything else
 * with a 422; checked here, a refused value is found by validate and the run alike, before any
 * request, and follows its field's `onInvalid` as any value a transform refuses.
 */
import type { CatalogFieldDefinition } from '../client/index.ts';
import { isCalendarDate } from './field-values.ts';
import { compileLinearPattern, type LinearPattern } from './linear-pattern.ts';

/** Why a value does not fit its field, in words. */
export interface FieldRefusal {
  /** What the field takes (`one of the choices of Industry: Agriculture, Finance`), when a value is what is wrong. */
  expected?: string;
  /** The sentence a message gives: `is not one of the choices of Industry: …`. */
  message: string;
}

/**
 * Compiled once per pattern: the account's patterns are few, its rows many. A pattern comes from
 * the account, so it runs on the linear-time engine the mapping's own patterns run on: one that
 * would backtrack for ever cannot stall a run.
 */
const PATTERNS = new Map<string, LinearPattern | null>();

function patternOf(source: string): LinearPattern | null {
  let pattern = PATTERNS.get(source);
  if (pattern === undefined) {
    try {
      pattern = compileLinearPattern(source);
    } catch {
      // A pattern this engine cannot run (a lookaround, a backreference) is left to the service to apply.
      pattern = null;
    }
    PATTERNS.set(source, pattern);
  }
  return pattern;
}

const CLASS_WORDS = { PERSON: 'people', ORGANISATION: 'organisations' } as const;

/**
 * Why `value` cannot go into the custom field `definition` of a record of class `partyClass`
 * (`person`, `organisation`, or undefined for a project or opportunity), or null when it fits or
 * the definition does not say enough to tell.
 */
export function refusedFieldValue(
  definition: CatalogFieldDefinition,
  value: unknown,
  partyClass: string | undefined,
): FieldRefusal | null {
  const name = definition.name;
  const forClass = definition.forClass;
  if (forClass && partyClass !== undefined && partyClass.toUpperCase() !== forClass) {
    return { message: `${name} is a field of ${CLASS_WORDS[forClass]} only, and this record is an ${partyClass}` };
  }
  const refuse = (expected: string): FieldRefusal => ({ expected, message: `is not ${expected}` });
  switch (definition.type) {
    case 'Boolean':
      return typeof value === 'boolean' ? null : refuse(`yes or no (true or false) for the Boolean field ${name}`);
    case 'Date':
      return typeof value === 'string' && isCalendarDate(value)
        ? null
        : refuse(`a date (YYYY-MM-DD) for the Date field ${name}`);
    case 'List': {
      const options = definition.options;
      if (options === undefined) return null;
      if (typeof value === 'string' && options.includes(value)) return null;
      return refuse(
        options.length === 0
          ? `a choice of ${name}, which offers none`
          : `one of the choices of ${name}: ${options.join(', ')}`,
      );
    }
    case 'Text': {
      if (typeof value !== 'string') return refuse(`text for the Text field ${name}`);
      const source = definition.pattern;
      if (source === undefined || source === null) return null;
      const pattern = patternOf(source);
      if (pattern === null || pattern.test(value)) return null;
      return refuse(`text matching the pattern of ${name} (${source})`);
    }
    default:
      return null;
  }
}
