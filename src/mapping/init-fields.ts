import type { CatalogFieldDefinition } from '../client/index.ts';
import type { CellValue } from '../sources/index.ts';
import { normalizeWord, printable } from '../util/index.ts';
import { refusedFieldValue } from './field-rules.ts';
import { proposeBoolean, proposeDate, sampleTexts, type Proposal } from './init-values.ts';

/**
 * Where a column no standard field takes can go: a custom field of the account that has its name
 * and takes its values, or nowhere yet, with the words that make it carry. A draft that maps a
 * column to a field the account lacks stops the run before its first write ("unknown custom
 * field"); one that leaves it out, and says how to carry it, runs as drafted.
 */
export type FieldHome =
  | { kind: 'field'; definition: CatalogFieldDefinition; transform: string; why: string }
  | { kind: 'none'; why: string /** The entry to write once the field exists, as comment lines. */; entry: string[] };

const q = (text: string): string => printable(JSON.stringify(text));

/** Distinct texts of a column, in the order first seen. */
function distinct(texts: string[]): string[] {
  return [...new Set(texts)];
}

/**
 * The kind of custom field a column's values call for, in the words of the account's settings:
 * `Date`, `Boolean`, `List` (few values, each repeated: a choice), else `Text`.
 */
export function fieldTypeFor(
  samples: CellValue[],
  hint: { monthFirst?: string },
): { type: string; proposal: Proposal | undefined; choices?: string[] } {
  const texts = sampleTexts(samples);
  const date = proposeDate(samples, hint);
  if (date) return { type: 'Date', proposal: date };
  // Codes with a leading zero (postcodes, registry numbers) are text, whatever else they look like.
  if (texts.some((t) => /^0\d+$/.test(t))) return { type: 'Text', proposal: undefined };
  const boolean = proposeBoolean(samples);
  if (boolean) return { type: 'Boolean', proposal: boolean };
  const values = distinct(texts);
  if (texts.length >= 4 && values.length <= Math.min(8, texts.length / 2) && values.every((v) => v.length <= 40))
    return { type: 'List', proposal: undefined, choices: values };
  return { type: 'Text', proposal: undefined };
}

/** Why a definition cannot take the column's values, or null when it can (and then the transform). */
function fieldTakes(
  definition: CatalogFieldDefinition,
  samples: CellValue[],
  hint: { monthFirst?: string },
  partyClass: string | undefined,
): { transform: string; why: string } | { refused: string } {
  if (definition.forClass && partyClass !== undefined && definition.forClass.toLowerCase() !== partyClass) {
    return {
      refused: `the account's field ${q(definition.name)} is for ${definition.forClass === 'PERSON' ? 'people' : 'organisations'} only, and these rows are ${partyClass}s`,
    };
  }
  const texts = sampleTexts(samples);
  switch (definition.type) {
    case 'Date': {
      const date = proposeDate(samples, hint);
      return date
        ? { transform: date.transform, why: date.why }
        : { refused: `the account's field ${q(definition.name)} takes dates, and ${q(texts[0] ?? '')} is not one` };
    }
    case 'Boolean': {
      const boolean = proposeBoolean(samples);
      return boolean
        ? { transform: boolean.transform, why: boolean.why }
        : { refused: `the account's field ${q(definition.name)} takes yes or no, and ${q(texts[0] ?? '')} is neither` };
    }
    default: {
      // A List's choices and a Text field's pattern are checked on the values as the file writes them (trimmed).
      const refused = texts
        .map((t) => ({ text: t, refusal: refusedFieldValue(definition, t, undefined) }))
        .find((r) => r.refusal !== null);
      if (refused !== undefined) {
        return { refused: `${q(refused.text)} ${refused.refusal?.message}` };
      }
      return {
        transform: 'trim',
        why: `the account's ${definition.type ?? 'custom'} field ${q(definition.name)}${definition.type === 'List' ? ' offers every value of the column' : ''}`,
      };
    }
  }
}

/**
 * The home of a column no standard field takes. With the account's definitions (`fields`), the
 * field whose name is the column's (compared as column names are) and which takes its values; a
 * field of that name that does not take them is said why. Without them (a draft offline), none:
 * the words say which field to create.
 */
export function fieldHomeOf(
  column: string,
  name: string,
  samples: CellValue[],
  options: {
    fields: readonly CatalogFieldDefinition[] | undefined;
    hint: { monthFirst?: string };
    partyClass: string | undefined;
  },
): FieldHome {
  const wanted = fieldTypeFor(samples, options.hint);
  const typeWords =
    wanted.type === 'List' ? `List, with the choices ${wanted.choices?.map(q).join(', ')}` : wanted.type;
  const entry = (
    definition: string,
    tag: string | null,
    transform: string | undefined,
    why: string | undefined,
  ): string[] => [
    '  - to: custom',
    `    definition: ${q(definition)}`,
    `    tag: ${tag === null ? 'null' : q(tag)}`,
    ...(why ? [`    # ${why}`] : []),
    `    value: {column: ${q(column)}, transform: [${transform ?? 'trim'}]}`,
  ];
  const create = `create a custom field ${q(name)} (${typeWords}) in the account's settings, then map it`;
  if (options.fields === undefined) {
    return {
      kind: 'none',
      why: `no standard field takes it: ${create}`,
      entry: entry(name, null, wanted.proposal?.transform, wanted.proposal?.why),
    };
  }
  const named = options.fields.filter(
    (d) => normalizeWord(d.name) === normalizeWord(name) || normalizeWord(d.name) === normalizeWord(column),
  );
  const refusals: string[] = [];
  for (const definition of named) {
    const fits = fieldTakes(definition, samples, options.hint, options.partyClass);
    if ('refused' in fits) {
      refusals.push(fits.refused);
      continue;
    }
    return { kind: 'field', definition, transform: fits.transform, why: fits.why };
  }
  if (refusals.length > 0) {
    return {
      kind: 'none',
      why: `${refusals[0]}: change the field in the account's settings (or the values, with a lookup table), then map it`,
      entry: entry(
        (named[0] as CatalogFieldDefinition).name,
        (named[0] as CatalogFieldDefinition).tag,
        wanted.proposal?.transform,
        wanted.proposal?.why,
      ),
    };
  }
  return {
    kind: 'none',
    why: `the account has no custom field of this name: ${create}`,
    entry: entry(name, null, wanted.proposal?.transform, wanted.proposal?.why),
  };
}
