import { resolve } from 'node:path';
import { distance } from 'fastest-levenshtein';
import { z } from 'zod';
import { FerryError } from '../../errors/index.ts';
import { readCsvText } from '../../sources/index.ts';
import { TransformError } from './types.ts';
import type { TransformDefinition, TransformEnvironment, TransformFn, Value } from './types.ts';
import { FewSpellings, quote, scalarToText } from './values.ts';

const tableValue = z.union([z.string(), z.number(), z.boolean(), z.null()]);
type TableValue = z.output<typeof tableValue>;

/** Distinct spellings a lookup remembers the answer for; bounded so a column of unique values cannot grow it without end. */
const ANSWER_CACHE_SIZE = 10_000;
/** A remembered answer: the value as written is kept (`otherwise: keep`, or a blank cell). */
const KEEP = Symbol('keep');
/** A remembered answer: nothing (`otherwise: empty`). */
const EMPTY = Symbol('empty');
/** Table keys answered before the first row: each gives two spellings (as written and normalised). */
const PRELOADED = 16;

type Answer = TableValue | typeof KEEP | typeof EMPTY;

/** Answers per spelling: the first few in a FewSpellings, later ones in a Map emptied when full. */
class SpellingMemo {
  private readonly few = new FewSpellings<Answer>();
  private readonly others = new Map<string, Answer>();

  get(text: string): Answer | undefined {
    // Not `??`: null is an answer (a table value of null).
    const found = this.few.get(text);
    if (found !== undefined || this.others.size === 0) return found;
    return this.others.get(text);
  }

  set(text: string, answer: Answer): void {
    if (this.few.set(text, answer) || this.get(text) !== undefined) return;
    if (this.others.size >= ANSWER_CACHE_SIZE) this.others.clear();
    this.others.set(text, answer);
  }
}

/** How many near misses an unknown-key message lists. */
const SUGGESTIONS = 3;

function normalizeKey(key: string, caseInsensitive: boolean): string {
  const trimmed = key.trim();
  return caseInsensitive ? trimmed.toLowerCase() : trimmed;
}

/**
 * Keys that become the same after trimming (and lowering) but point at different values: the
 * table would silently depend on its order, so it is refused instead.
 */
function findConflict(entries: Iterable<[string, TableValue]>, caseInsensitive: boolean): [string, string] | undefined {
  const seen = new Map<string, { key: string; value: TableValue }>();
  for (const [key, value] of entries) {
    const normal = normalizeKey(key, caseInsensitive);
    const before = seen.get(normal);
    if (before !== undefined && before.value !== value) return [before.key, key];
    if (before === undefined) seen.set(normal, { key, value });
  }
  return undefined;
}

const lookupOptions = z
  .object({
    table: z
      .record(z.string(), tableValue)
      .optional()
      .describe('The table inline: each key is a value as found, each value what it becomes'),
    file: z
      .string()
      .min(1)
      .optional()
      .describe(
        'A CSV file with a header row and two columns (from, to), relative to the mapping file; read once when the mapping is compiled',
      ),
    caseInsensitive: z.boolean().default(true).describe('Match keys regardless of case.'),
    otherwise: z
      .enum(['error', 'keep', 'empty'])
      .default('error')
      .describe(
        'For a value not in the table: reject the row naming the closest keys, keep the value, or give nothing (dropped from a list).',
      ),
  })
  .strict()
  .superRefine((options, context) => {
    if ((options.table === undefined) === (options.file === undefined)) {
      context.addIssue({ code: 'custom', message: 'give exactly one of `table` and `file`', path: [] });
      return;
    }
    if (options.table !== undefined) {
      const conflict = findConflict(Object.entries(options.table), options.caseInsensitive);
      if (conflict !== undefined) {
        context.addIssue({
          code: 'custom',
          message: `keys ${quote(conflict[0])} and ${quote(conflict[1])} are the same key${options.caseInsensitive ? ' ignoring case' : ''} but give different values`,
          path: ['table', conflict[1]],
        });
      }
    }
  });

type LookupOptions = z.output<typeof lookupOptions>;

async function readTableFile(
  file: string,
  caseInsensitive: boolean,
  environment: TransformEnvironment,
): Promise<Array<[string, TableValue]>> {
  const path = resolve(environment.baseDir, file);
  let text: string;
  try {
    text = await environment.readTextFile(path);
  } catch (error) {
    throw new FerryError('MAPPING_INVALID', `cannot read the lookup file ${path}: ${(error as Error).message}`, {
      location: { file: path },
      cause: error,
    });
  }
  let records: string[][];
  try {
    // The source reader's tokenizer and delimiter guess (spreadsheets in many locales save CSV with `;`).
    records = readCsvText(text, path);
  } catch (error) {
    throw new FerryError('MAPPING_INVALID', `the lookup file ${path} is not valid CSV: ${(error as Error).message}`, {
      location: { file: path },
      cause: error,
    });
  }
  const entries: Array<[string, TableValue]> = [];
  // Record 0 is the header row; its names do not matter.
  for (let index = 1; index < records.length; index += 1) {
    const record = records[index] ?? [];
    if (record.length !== 2) {
      throw new FerryError(
        'MAPPING_INVALID',
        `the lookup file ${path} needs two columns (from, to) on every record, record ${index + 1} has ${record.length}`,
        { location: { file: path, row: index + 1 } },
      );
    }
    entries.push([record[0] ?? '', record[1] ?? '']);
  }
  const conflict = findConflict(entries, caseInsensitive);
  if (conflict !== undefined) {
    throw new FerryError(
      'MAPPING_INVALID',
      `the lookup file ${path} has keys ${quote(conflict[0])} and ${quote(conflict[1])} that are the same key${caseInsensitive ? ' ignoring case' : ''} but give different values`,
      {
        location: { file: path },
      },
    );
  }
  return entries;
}

/** Up to three keys nearest to `wanted` by edit distance, nearest first, ties in table order. */
function closestKeys(wanted: string, keys: ReadonlyArray<{ original: string; normal: string }>): string[] {
  return keys
    .map((key, order) => ({ key: key.original, score: distance(wanted, key.normal), order }))
    .sort((a, b) => a.score - b.score || a.order - b.order)
    .slice(0, SUGGESTIONS)
    .map((entry) => entry.key);
}

async function createLookup(options: LookupOptions, environment: TransformEnvironment): Promise<TransformFn> {
  const { caseInsensitive, otherwise } = options;
  const entries =
    options.table !== undefined
      ? Object.entries(options.table)
      : await readTableFile(options.file ?? '', caseInsensitive, environment);
  const table = new Map<string, TableValue>();
  const keys: Array<{ original: string; normal: string }> = [];
  for (const [key, value] of entries) {
    const normal = normalizeKey(key, caseInsensitive);
    if (table.has(normal)) continue;
    table.set(normal, value);
    keys.push({ original: key, normal });
  }

  /** The table's value for one piece of text; undefined means "not found, left out". */
  const one = (text: string, original: Value): TableValue | undefined => {
    const normal = normalizeKey(text, caseInsensitive);
    const found = table.get(normal);
    if (found !== undefined || table.has(normal)) return found ?? null;
    // A blank cell is "no value", not an unknown key; `default` is the tool for it.
    if (normal === '') return original as TableValue;
    if (otherwise === 'keep') return original as TableValue;
    if (otherwise === 'empty') return undefined;
    const near = closestKeys(normal, keys);
    const hint = near.length === 0 ? 'the table is empty' : `closest keys: ${near.map(quote).join(', ')}`;
    throw new TransformError(
      `expected a key of the lookup table, got ${quote(text)} (${hint})`,
      'lookup',
      'one of the values the mapping knows',
    );
  };

  // Cells repeat their few spellings ("Germany" thousands of times): the answer for a text as
  // written is remembered, so trimming, lower-casing and the table search run once per spelling.
  // The first keys of the table are answered from the start (a long table file would only fill
  // the Map to be emptied). Errors are never remembered: the message is built when it is needed.
  const answers = new SpellingMemo();
  for (const [key] of entries.slice(0, PRELOADED)) {
    const found = table.get(normalizeKey(key, caseInsensitive));
    if (found === undefined) continue;
    answers.set(key, found);
    answers.set(normalizeKey(key, caseInsensitive), found);
  }

  return (value) => {
    if (typeof value === 'string') {
      const known = answers.get(value);
      if (known !== undefined) return known === KEEP ? value : known === EMPTY ? null : known;
      const result = one(value, value);
      answers.set(value, result === undefined ? EMPTY : result === value ? KEEP : result);
      return result === undefined ? null : result;
    }
    if (value === null) return null;
    if (Array.isArray(value)) {
      const out: string[] = [];
      for (const element of value) {
        const result = one(element, element);
        if (result === undefined || result === null) continue;
        out.push(typeof result === 'string' ? result : String(result));
      }
      return out;
    }
    const result = one(scalarToText(value), value);
    return result === undefined ? null : result;
  };
}

export const lookup: TransformDefinition<LookupOptions> = {
  name: 'lookup',
  summary:
    'Replaces a value with the one a table gives for it (inline or from a two-column CSV file); keys are matched after trimming, ignoring case by default; lists are looked up element by element.',
  options: lookupOptions,
  shorthand: 'file',
  examples: [
    { yaml: '{lookup: {table: {Mr: male, Mrs: female, Ms: female}}}', input: 'MRS', output: 'female' },
    {
      yaml: '{lookup: {table: {DE: Germany, UK: United Kingdom}, otherwise: keep}}',
      input: ['de', 'FR'],
      output: ['Germany', 'FR'],
    },
  ],
  create: createLookup,
};
