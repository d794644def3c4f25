import { z } from 'zod';
import { TransformError } from './types.ts';
import type { TransformDefinition } from './types.ts';
import { listError, quote, scalarToText } from './values.ts';

const DEFAULT_TRUE = ['yes', 'y', 'true', '1', 'x'];
const DEFAULT_FALSE = ['no', 'n', 'false', '0', ''];

// YAML reads `1` and `true` in a list as a number and a boolean; both are words here.
const word = z.union([z.string(), z.number(), z.boolean()]);

function normalizeWord(entry: string | number | boolean): string {
  return String(entry).trim().toLowerCase();
}

const booleanOptions = z
  .object({
    true: z
      .array(word)
      .default(DEFAULT_TRUE)
      .describe(
        'Words meaning true, compared ignoring case and surrounding spaces; a list given replaces the default one.',
      ),
    false: z
      .array(word)
      .default(DEFAULT_FALSE)
      .describe('Words meaning false; "" stands for a blank cell. A list given replaces the default one.'),
  })
  .strict()
  .superRefine((options, context) => {
    const trueWords = new Set(options.true.map(normalizeWord));
    for (const entry of options.false) {
      if (trueWords.has(normalizeWord(entry))) {
        context.addIssue({
          code: 'custom',
          message: `${quote(String(entry))} cannot mean both true and false`,
          path: ['false'],
        });
      }
    }
  });

export const boolean: TransformDefinition<z.output<typeof booleanOptions>> = {
  name: 'boolean',
  summary:
    'Reads yes/no words as true or false (case-insensitive; by default a blank cell is false); other words reject the row.',
  options: booleanOptions,
  examples: [
    { yaml: 'boolean', input: 'X', output: true },
    { yaml: 'boolean', input: '', output: false },
    { yaml: '{boolean: {true: [ja, j], false: [nein, n]}}', input: 'Ja', output: true },
  ],
  create(options) {
    const words = new Map<string, boolean>();
    for (const entry of options.true) words.set(normalizeWord(entry), true);
    for (const entry of options.false) words.set(normalizeWord(entry), false);
    const accepted = [...options.true, ...options.false].map((entry) => quote(String(entry))).join(', ');
    const expected = `one of ${accepted}`;
    return (value) => {
      // The words are stored trimmed and lower-cased, so text that is one of them as it stands
      // needs neither step.
      if (typeof value === 'string') {
        const exact = words.get(value);
        if (exact !== undefined) return exact;
      }
      if (typeof value === 'boolean') return value;
      if (Array.isArray(value)) throw listError('boolean', expected, value);
      // A missing value reads like a blank cell, so the blank-word rule decides it.
      const text = value === null ? '' : scalarToText(value);
      const found = words.get(text.trim().toLowerCase());
      if (found === undefined) {
        throw new TransformError(
          `expected ${expected}, got ${value === null ? 'nothing' : quote(text)}`,
          'boolean',
          `yes or no (${expected})`,
        );
      }
      return found;
    };
  },
};
