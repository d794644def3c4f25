import { open } from 'node:fs/promises';
import { extname } from 'node:path';
import { FerryError } from '../errors/index.ts';
import { fileError, statSource } from './csv/csv.ts';
import type { CsvReadOptions } from './csv/csv.ts';
import { FORMAT_SETTINGS, type FormatSetting, type SourceFormatDefinition } from './format-types.ts';
import { findSourceFormat, sourceFormatNames, sourceFormats } from './formats.ts';
import type { SourceItem, SourceWarning } from './types.ts';
import type { V1ReadOptions } from './v1/v1-export.ts';
import type { V1LiveConnection, V1WireFormat } from '../client/index.ts';
import { isV1LiveInput, parseV1LiveInput } from '../util/index.ts';
import { readV1Live } from './v1/v1-live.ts';

/**
 * The name of a format of the registry (formats.ts): `csv`, `xlsx`, `v1-xml`, `v1-json`, `v1-api`
 * (not a file but a live legacy account, `v1+https://HOST`), or one a program registered.
 */
export type SourceFormat = string;

export interface FormatDecision {
  format: SourceFormat;
  /** Why, in a few words, for `inspect` and for warnings. */
  reason: string;
}

export interface OpenSourceOptions extends CsvReadOptions {
  /** Skips detection. */
  format?: SourceFormat;
  /** XLSX: sheet name or 1-based index. @default 1 */
  sheet?: string | number;
  /** Legacy exports: which records to read when a file holds several kinds. */
  record?: V1ReadOptions['record'];
  /** A live v1 source (`v1+https://HOST`): how to reach it. Without it such an input is refused. */
  v1Live?: V1LiveConnection | undefined;
  /** A live v1 source: the format to ask for. @default the connection's */
  wireFormat?: V1WireFormat;
  /** A live v1 source: records per page. @default 100 */
  pageSize?: number;
  /** A live v1 source: the address when the input does not give it (a mapping's `source: {format: v1-api, baseUrl}`). */
  baseUrl?: string;
  /** A live v1 source: the folder where the read spools what it fetched, to go on from there (see readV1Live `spool`). */
  v1Spool?: string | undefined;
  /** A live v1 source: read the spool alone, when it holds the whole list (see readV1Live `spoolOnly`). @default false */
  v1SpoolOnly?: boolean;
}

export interface OpenedSource {
  file: string;
  format: SourceFormat;
  reason: string;
  /** The records carry the columns of what they hold: the first is no header (legacy records). */
  varyingColumns: boolean;
  items: AsyncGenerator<SourceItem>;
}

/** How a setting's absence is said: "which has no sheets". */
const NONE: Record<FormatSetting, string> = {
  sheet: 'no sheets',
  delimiter: 'no delimiter to choose',
  encoding: 'no text encoding to choose',
  record: 'no legacy records',
};

/**
 * A setting for another kind of file (`--sheet 2` on a CSV, `--delimiter ';'` on a workbook) is
 * a mistake about the file, not something to pass over: said before anything is read.
 */
function refuseSettingsOfOtherFormats(
  file: string,
  decision: FormatDecision,
  definition: SourceFormatDefinition,
  options: OpenSourceOptions,
): void {
  for (const key of FORMAT_SETTINGS) {
    if (options[key] === undefined || definition.settings?.includes(key)) continue;
    throw new FerryError(
      'USAGE',
      `${key} ${JSON.stringify(options[key])} was given, but this file is read as ${decision.format} (${decision.reason}), which has ${NONE[key]}`,
      {
        location: { file },
        hint: `Leave \`${key}\` out for this file (from the mapping's \`source:\` or the command line), or check that the file and the mapping are the ones you meant (\`crm-ferry inspect\` shows what the file holds).`,
      },
    );
  }
}

const PREFIX_BYTES = 4096;

async function readPrefix(file: string): Promise<Buffer> {
  await statSource(file);
  let handle;
  try {
    handle = await open(file, 'r');
    const buffer = Buffer.alloc(PREFIX_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, PREFIX_BYTES, 0);
    return buffer.subarray(0, bytesRead);
  } catch (error) {
    throw fileError(file, error);
  } finally {
    await handle?.close();
  }
}

/**
 * Decides a file's format from its first bytes: the formats of the registry are asked in turn
 * (those a program registered first), and the first to recognise it wins. Throws
 * SOURCE_FORMAT_UNKNOWN (old .xls, HTML saved as a spreadsheet) or SOURCE_XLSX_ENCRYPTED (a
 * password-protected workbook).
 */
export async function detectFormat(file: string): Promise<FormatDecision> {
  const prefix = await readPrefix(file);
  const extension = extname(file).toLowerCase();
  for (const format of sourceFormats()) {
    const reason = format.detect?.({ file, prefix, extension });
    if (reason !== undefined) return { format: format.name, reason };
  }
  throw new FerryError('SOURCE_FORMAT_UNKNOWN', 'no source format recognises this file', {
    location: { file },
    hint: `Name its format in the mapping's \`source: {format: …}\` (${sourceFormatNames().join(', ')}).`,
  });
}

/** The registry's definition of a format named by a caller (a mapping's `source.format`). */
function definitionOf(name: SourceFormat, file: string): SourceFormatDefinition {
  const definition = findSourceFormat(name);
  if (!definition) {
    throw new FerryError(
      'USAGE',
      `unknown source format ${JSON.stringify(name)}; the formats are ${sourceFormatNames().join(', ')}`,
      { location: { file } },
    );
  }
  return definition;
}

/**
 * Opens any source file: detects its format (or takes `options.format`) and hands back the rows of
 * the matching reader. A file whose extension disagrees with its content gets an OTHER warning.
 */
export async function openSource(file: string, options: OpenSourceOptions = {}): Promise<OpenedSource> {
  if (isV1LiveInput(file) || options.format === 'v1-api') return openV1Live(file, options);
  // detectFormat checks the file first; a format given skips detection, not the check.
  if (options.format) await statSource(file);
  const decision: FormatDecision = options.format
    ? { format: options.format, reason: 'given' }
    : await detectFormat(file);
  const definition = definitionOf(decision.format, file);
  const extension = extname(file).toLowerCase();
  if (!options.format && !definition.extensions.includes(extension) && options.onWarning) {
    const warning: SourceWarning = {
      code: 'OTHER',
      message: `the file is named ${extension || 'without an extension'} but holds ${decision.reason}; reading it as ${decision.format}`,
      location: { file, row: 1 },
    };
    options.onWarning(warning);
  }
  refuseSettingsOfOtherFormats(file, decision, definition, options);
  return {
    file,
    format: decision.format,
    reason: decision.reason,
    varyingColumns: definition.varyingColumns === true,
    items: definition.read(file, options),
  };
}

/**
 * A live v1 account as a source: `v1+https://HOST[/api/LIST]`, or the `baseUrl` of a mapping's
 * `source: {format: v1-api}` when the input is not given as such an address.
 */
function openV1Live(input: string, options: OpenSourceOptions): OpenedSource {
  let address = input;
  if (!isV1LiveInput(input)) {
    if (options.baseUrl === undefined) {
      throw new FerryError(
        'USAGE',
        `the source format is v1-api (a live account), but the input ${JSON.stringify(input)} is no v1+https:// address and the source names no baseUrl`,
        {
          hint: "Give the input as v1+https://OLD-ACCOUNT.example.com, or `baseUrl:` in the mapping's source.",
        },
      );
    }
    address = `v1+${options.baseUrl}`;
  }
  const { baseUrl, list } = parseV1LiveInput(address);
  if (!options.v1Live) {
    throw new FerryError('CONFIG_MISSING', `${address} is a live v1 source, which only import, run and verify read`, {
      hint: 'Read it with crm-ferry import --input v1+https://HOST (--dry-run to check the mapping), crm-ferry run PLAN or crm-ferry verify; here, read an export file of it instead.',
    });
  }
  const live = options.v1Live;
  const reader = live.readerFor(baseUrl, options.wireFormat);
  const read: Parameters<typeof readV1Live>[1] = {
    onMalformed: options.onMalformed,
    onWarning: options.onWarning,
    signal: options.signal,
  };
  if (options.record !== undefined) read.record = options.record;
  if (list !== undefined) read.list = list;
  if (options.pageSize !== undefined) read.pageSize = options.pageSize;
  if (live.since !== undefined) read.since = live.since;
  if (options.v1Spool !== undefined) read.spool = options.v1Spool;
  if (options.v1SpoolOnly) read.spoolOnly = true;
  return {
    file: address,
    format: 'v1-api',
    reason: `live v1 account (${reader.format.toUpperCase()})`,
    varyingColumns: true,
    items: readV1Live(reader, read),
  };
}
