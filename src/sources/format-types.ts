/** What a source format is (formats.ts keeps the registry; builtin-formats.ts defines crm-ferry's own). */
import type { CsvReadOptions } from './csv/csv.ts';
import type { SourceItem } from './types.ts';
import type { V1ReadOptions } from './v1/v1-export.ts';

/** The settings of a mapping's `source:` that only some formats read. */
export const FORMAT_SETTINGS = ['sheet', 'delimiter', 'encoding', 'record'] as const;
export type FormatSetting = (typeof FORMAT_SETTINGS)[number];

/** What a format's reader is given: the common options, and the settings it takes. */
export interface SourceReadOptions extends CsvReadOptions {
  /** A workbook's sheet: its name or 1-based index. */
  sheet?: string | number;
  /** Legacy exports: which records to read. */
  record?: V1ReadOptions['record'];
}

/** What format detection looks at. */
export interface FormatSample {
  file: string;
  /** Its first bytes (up to 4 KiB). */
  prefix: Buffer;
  /** Its extension, lower case with the dot ('' for none). */
  extension: string;
}

/** One source format. */
export interface SourceFormatDefinition {
  /** Its name in a mapping's `source.format` and in messages: a plain word (`csv`, `vcard`). */
  name: string;
  /** What such a file is, in a few words, for `inspect` and warnings ("text file"). */
  description: string;
  /** The file name endings expected of it, lower case with the dot; another one gets a warning. */
  extensions: readonly string[];
  /** The `source:` settings it reads (`sheet`, `delimiter`, `encoding`, `record`); another one given is refused. @default none */
  settings?: readonly FormatSetting[];
  /**
   * Its records carry the columns of what they hold (a legacy organisation has no firstName): the
   * first record is no header to check the mapping against. @default false
   */
  varyingColumns?: boolean;
  /**
   * Recognises the format from the first bytes of a file: the reason it is this format ("zip
   * container (Excel workbook)"), or undefined. May throw a FerryError for a file it knows cannot
   * be read (an encrypted workbook). Without it the format is read only when named.
   */
  detect?(sample: FormatSample): string | undefined;
  /** The file's rows (and its unreadable records, as errors), read lazily. */
  read(file: string, options: SourceReadOptions): AsyncGenerator<SourceItem>;
}
