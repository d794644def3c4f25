/**
 * The registry of source formats: what openSource can read, how it recognises each from a file's
 * first bytes, which `source:` settings each takes, and the names a mapping's `source.format`
 * accepts. A new format is one file that exports a SourceFormatDefinition, plus its line in
 * BUILT_IN_FORMATS; a program using crm-ferry as a module adds its own with registerSourceFormat.
 */
import { FerryError } from '../errors/index.ts';
import { csvFormat, v1ApiFormat, v1JsonFormat, v1XmlFormat, xlsxFormat } from './builtin-formats.ts';
import { FORMAT_SETTINGS, type SourceFormatDefinition } from './format-types.ts';

/** Every format crm-ferry reads, in the order they are tried on a file; the last (CSV) takes any text. */
const BUILT_IN_FORMATS: readonly SourceFormatDefinition[] = [
  xlsxFormat,
  v1XmlFormat,
  v1JsonFormat,
  csvFormat,
  v1ApiFormat,
];

/** Formats registered by the program, tried before the built-in ones. */
const registered: SourceFormatDefinition[] = [];

/** Every format, in the order their `detect` is tried. */
export function sourceFormats(): readonly SourceFormatDefinition[] {
  return [...registered, ...BUILT_IN_FORMATS];
}

/** The format of that name, or undefined. */
export function findSourceFormat(name: string): SourceFormatDefinition | undefined {
  return sourceFormats().find((format) => format.name === name);
}

/** The names of every format, for messages and for a mapping's `source.format`. */
export function sourceFormatNames(): string[] {
  return sourceFormats().map((format) => format.name);
}

const FORMAT_NAME = /^[a-z][a-z0-9-]*$/;

/**
 * Adds a source format for the rest of the process: openSource reads it when a mapping (or the
 * caller) names it, or when its `detect` recognises a file (before the built-in formats are
 * tried), and mappings may name it in `source.format`. A name already taken, or a definition
 * without `read`, is CONFIG_INVALID.
 */
export function registerSourceFormat(definition: SourceFormatDefinition): void {
  const name: unknown = (definition as { name?: unknown } | null)?.name;
  const refuse = (problem: string, hint: string): FerryError =>
    new FerryError('CONFIG_INVALID', `source format ${JSON.stringify(name)} ${problem}`, { hint });
  if (typeof name !== 'string' || !FORMAT_NAME.test(name))
    throw refuse(
      'has no usable name',
      'Name it with a lower-case word that starts with a letter (letters, digits and -), as mappings will write it.',
    );
  if (findSourceFormat(name))
    throw refuse(
      'is already a format crm-ferry reads',
      `Give it a name of its own; the formats are: ${sourceFormatNames().join(', ')}.`,
    );
  if (typeof definition.read !== 'function')
    throw refuse('has no `read` function', 'See docs/library.md, "A source format of your own".');
  for (const setting of definition.settings ?? []) {
    if (!(FORMAT_SETTINGS as readonly string[]).includes(setting))
      throw refuse(
        `names the setting ${JSON.stringify(setting)}, which no source has`,
        `The settings are: ${FORMAT_SETTINGS.join(', ')}.`,
      );
  }
  registered.push({ ...definition, extensions: definition.extensions.map((extension) => extension.toLowerCase()) });
}
