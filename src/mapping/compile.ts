import { readFile } from 'node:fs/promises';
import { dirname, isAbsolute, resolve } from 'node:path';
import { isV1LiveInput, listSome, MAX_NAMES_SHOWN, suggest, formatCount } from '../util/index.ts';
import { FerryError } from '../errors/index.ts';
import { type CellValue, type FieldRow, namedValues, type SourceLocation, type SourceRow } from '../sources/index.ts';
import { CodeWriter, positionalCells } from './codegen.ts';
import { conditionColumns, emitCondition } from './compile-condition.ts';
import { type Draft, emitField, RecordLists } from './compile-fields.ts';
import { TARGET_INFO } from './compile-targets.ts';
import { isEmpty, isTemplate, parseTemplate } from './compile-template.ts';
import type { TransformRegistry } from './compile-transforms.ts';
import { emitKeyTemplate, RowRejection, valueCompiler } from './compile-value.ts';
import type { Entity, Mapping } from './schema.ts';
import { TRANSFORMS } from './transforms/index.ts';
import type { MappedItem, MappedRecord, RejectedRow } from './types.ts';

/** Options of compileMapping. */
export interface CompileOptions {
  /** The mapping file, for messages. */
  file: string;
  /** Folder that relative paths in transform options (lookup files) are resolved against. @default dirname(file) */
  baseDir?: string;
  /** Reads lookup files; injectable for tests. @default fs.readFile as UTF-8 */
  readTextFile?: (path: string) => Promise<string>;
  /** Transforms the mapping may use. @default TRANSFORMS */
  transforms?: TransformRegistry;
}

/** A mapping turned into functions, ready to map rows. Built once per run. */
export interface CompiledMapping {
  mapping: Mapping;
  entity: Entity;
  file: string;
  /** Every source column the mapping reads, in the order first met. */
  columns: string[];
  /**
   * Numbered columns the mapping reads, with `*` for the number (`phone.*.type`): a row may have
   * any number of them, none included, so they are not in `columns` and not checked against the
   * header. `readsColumn` tells whether a column is read either way.
   */
  columnPatterns: string[];
  /** Whether the mapping reads this column: one of `columns`, or a number of a `columnPatterns` entry. */
  readsColumn(column: string): boolean;
  /** The mapping's reason for leaving this column out (`leaveOut`), or undefined when it does not say. */
  leftOutBecause(column: string): string | undefined;
  /**
   * Throws MAPPING_INVALID naming every column the mapping reads that the header lacks, each with
   * the closest header names. Call it once, before the first row is mapped.
   */
  checkColumns(header: readonly string[]): void;
  /** Maps one row: a record, a reject (with its reason), or a skip. Never throws for bad data. */
  mapRow(row: SourceRow): MappedItem;
  /** The same for a row given as fields in header order (see SOURCE_FIELD_BATCHES). */
  mapFields(row: FieldRow): MappedItem;
  /** The JavaScript the skip condition, key and fields were compiled into (see codegen.ts), for reading when something goes wrong. */
  source: string;
}

/**
 * The generated function: true for a row the mapping skips; else it makes the key and writes every
 * field into the draft, throwing RowRejection for a row that cannot become a record.
 */
type FillFn<Cells> = (cells: Cells, draft: Draft) => true | undefined;

/** Readies the draft for the next row: one draft serves every row (mapping a row is synchronous), only what goes into the result is new. */
function startDraft(draft: Draft, inputDir: string | null): void {
  draft.key = null;
  draft.record = {};
  draft.names = [];
  draft.refs = [];
  draft.attachments = [];
  draft.tags = null;
  draft.milestone = null;
  draft.pipeline = null;
  draft.amount = null;
  draft.currency = null;
  draft.inputDir = inputDir;
  draft.warnings = null;
}

/** A key made of several columns: their texts joined by `|`, or '' when every one is empty. */
function keyOfParts(cells: ReadonlyArray<CellValue | undefined>): string {
  const parts = cells.map((value) =>
    value === null || value === undefined ? '' : value instanceof Date ? value.toISOString() : String(value).trim(),
  );
  return parts.every((part) => part === '') ? '' : parts.join('|');
}

const PERSON_ONLY = ['title', 'firstName', 'lastName', 'jobTitle', 'organisation'] as const;

const LINKS = ['party', 'kase', 'opportunity'] as const;

/** The link targets a record has, without a callback: this runs for every note and task. */
function linksOf(record: Record<string, unknown>): string[] {
  const out: string[] = [];
  for (const key of LINKS) if (record[key] !== undefined) out.push(key);
  return out;
}

function filledText(record: Record<string, unknown>, key: string): boolean {
  const value = record[key];
  return typeof value === 'string' && !isEmpty(value);
}

/** Entity rules a single field cannot check: what makes a record the service accepts. */
function finishRecord(
  entity: Entity,
  draft: Draft,
  defaultPartyType: 'person' | 'organisation',
): Record<string, unknown> {
  const { record } = draft;
  if (draft.tags !== null) record.tags = draft.tags;
  switch (entity) {
    case 'party': {
      const type = (record.type as 'person' | 'organisation' | undefined) ?? defaultPartyType;
      if (type === 'organisation') {
        const stray = PERSON_ONLY.filter((k) => record[k] !== undefined);
        if (stray.length > 0)
          throw new RowRejection(
            stray[0] as string,
            `an organisation has no ${stray.join(', ')}; leave ${stray.length === 1 ? 'it' : 'them'} empty for organisations`,
          );
        if (!filledText(record, 'name')) throw new RowRejection('name', 'an organisation needs a `name`');
      } else {
        if (record.name !== undefined)
          throw new RowRejection('name', 'a person has no `name`; map it to firstName and lastName');
        if (!filledText(record, 'firstName') && !filledText(record, 'lastName'))
          throw new RowRejection('lastName', 'a person needs a `firstName` or a `lastName`');
      }
      record.type = type;
      return record;
    }
    case 'kase':
      if (!filledText(record, 'name')) throw new RowRejection('name', 'a project needs a `name`');
      if (record.party === undefined) throw new RowRejection('party', 'a project needs a `party`');
      return record;
    case 'opportunity': {
      if (!filledText(record, 'name')) throw new RowRejection('name', 'an opportunity needs a `name`');
      if (record.milestone === undefined) throw new RowRejection('milestone', 'an opportunity needs a `milestone`');
      if (record.party === undefined) throw new RowRejection('party', 'an opportunity needs a `party`');
      if (draft.amount !== null) {
        if (draft.currency === null) throw new RowRejection('currency', 'an `amount` needs a `currency`');
        record.value = { amount: draft.amount, currency: draft.currency };
      }
      if (draft.milestone) draft.milestone.scope = { pipeline: draft.pipeline };
      return record;
    }
    case 'entry': {
      const links = linksOf(record);
      if (links.length !== 1) {
        throw new RowRejection(
          links[0] ?? 'party',
          links.length === 0
            ? 'a note needs one of `party`, `kase` or `opportunity`'
            : `a note goes on exactly one record, found ${links.join(' and ')}`,
        );
      }
      if (!filledText(record, 'content') && draft.attachments.length === 0)
        throw new RowRejection('content', 'a note needs `content` or an `attachment`');
      record.type = 'note';
      return record;
    }
    case 'task': {
      if (!filledText(record, 'description')) throw new RowRejection('description', 'a task needs a `description`');
      if (record.dueOn === undefined) throw new RowRejection('dueOn', 'a task needs a `dueOn` date');
      const links = linksOf(record);
      if (links.length > 1)
        throw new RowRejection(links[1] as string, `a task goes on at most one record, found ${links.join(' and ')}`);
      return record;
    }
  }
}

/**
 * Compiles a checked mapping (from parseMapping or loadMapping) into a row mapper: transforms are
 * built once (lookup files read once), and the skip condition, the key and every field become one
 * generated function (see codegen.ts), whose source the result keeps. The result's `columns` and
 * `checkColumns` let the caller check the input's header before mapping any row.
 */
export async function compileMapping(mapping: Mapping, options: CompileOptions): Promise<CompiledMapping> {
  const { file } = options;
  const baseDir = options.baseDir ?? dirname(file);
  const readTextFile = options.readTextFile ?? ((path: string) => readFile(path, 'utf8'));
  const code = new CodeWriter();
  const compiler = valueCompiler(code, {
    transforms: options.transforms ?? TRANSFORMS,
    environment: { baseDir, readTextFile: (path) => readTextFile(isAbsolute(path) ? path : resolve(baseDir, path)) },
    context: { timeZone: mapping.timeZone },
  });
  const entity = mapping.entity;
  const { helpers } = compiler;
  // The generated function first decides whether the row is skipped (it returns true), then makes
  // its key (kept in the draft, so a reject can name it), then writes the fields.
  if (mapping.skip) {
    for (const column of conditionColumns(mapping.skip)) compiler.columns.add(column);
    code.line(`if (${emitCondition(code, mapping.skip, helpers)}) return true;`);
  }
  if (typeof mapping.key === 'string') emitKeyTemplate(compiler, mapping.key, 'draft.key');
  else {
    for (const column of mapping.key) compiler.columns.add(column);
    code.line(
      `draft.key = ${code.constant(keyOfParts)}([${mapping.key.map((column) => code.cell(column)).join(', ')}]);`,
    );
  }
  const keyColumns =
    typeof mapping.key === 'string'
      ? isTemplate(mapping.key)
        ? (parseTemplate(mapping.key) as { columns: string[] }).columns
        : [mapping.key]
      : mapping.key;
  const noKey = (): RowRejection =>
    new RowRejection('key', 'the row has no key: the key columns are empty', 'MAPPING_VALUE', false, {
      rule: 'key',
      column: keyColumns.join(', '),
      value: '',
    });
  code.line(`if (draft.key === '') { draft.key = null; throw ${code.constant(noKey)}(); }`);
  const targets = TARGET_INFO[entity];
  const lists = new RecordLists();
  code.line('const record = draft.record;');
  for (const [index, field] of mapping.fields.entries()) {
    const info = Object.hasOwn(targets, field.to) ? targets[field.to] : undefined;
    if (!info)
      throw new FerryError('MAPPING_INVALID', `unknown target \`${field.to}\` for entity ${entity}`, {
        location: { file, yamlPath: `fields[${index}].to` },
      });
    await emitField({ compiler, lists, entity, onInvalid: mapping.onInvalid }, field, info, index);
  }
  const prologue = lists.declarations();
  const { fn: fill, source } = code.build<FillFn<Record<string, CellValue>>>(
    'fillRecord',
    ['values', 'draft'],
    prologue,
  );
  // Rows given as fields get the same function reading cells by position, built once per header.
  let positional: { header: readonly string[]; fill: FillFn<readonly CellValue[]> } | undefined;
  const fillFields = (header: readonly string[]): FillFn<readonly CellValue[]> => {
    if (positional?.header !== header)
      positional = {
        header,
        fill: code.build<FillFn<readonly CellValue[]>>(
          'fillRecord',
          ['fields', 'draft'],
          prologue,
          positionalCells(header),
        ).fn,
      };
    return positional.fill;
  };
  const writes = new Set(mapping.fields.map((f) => f.to));
  // The line that heads another author's note names that author: without one it would head nothing.
  if (writes.has('authorLine') && !writes.has('author')) {
    const at = mapping.fields.findIndex((f) => f.to === 'authorLine');
    throw new FerryError(
      'MAPPING_INVALID',
      '`authorLine` heads the notes of an author other than the writing user, and no entry gives the `author`',
      {
        location: { file, yamlPath: `fields[${at}].to` },
        hint: 'Add an entry `to: author` (the column naming who wrote each note), or take the `authorLine` entry out.',
      },
    );
  }
  const defaultPartyType =
    writes.has('name') && !writes.has('firstName') && !writes.has('lastName') ? 'organisation' : 'person';
  const columns = [...compiler.columns];
  const columnPatterns = [...compiler.patterns];
  const known = new Set(columns);
  const numbered = columnPatterns.map(numberedPattern);
  const leftOut = Object.entries(mapping.leaveOut ?? {}).map(([pattern, reason]) => ({
    test: numberedPattern(pattern),
    reason,
  }));
  // A column both read and left out is a mapping that contradicts itself.
  for (const pattern of Object.keys(mapping.leaveOut ?? {})) {
    if (
      known.has(pattern) ||
      columnPatterns.includes(pattern) ||
      (!pattern.includes('*') && numbered.some((test) => test.test(pattern)))
    ) {
      throw new FerryError(
        'MAPPING_INVALID',
        `\`leaveOut\` names column ${JSON.stringify(pattern)}, which the fields read: take it out of one of them`,
        { location: { file, yamlPath: `leaveOut.${pattern}` } },
      );
    }
  }
  let lastDir: { file: string; dir: string | null } = { file: '', dir: '' };
  const draft: Draft = {
    key: null,
    record: {},
    names: [],
    refs: [],
    attachments: [],
    tags: null,
    milestone: null,
    pipeline: null,
    amount: null,
    currency: null,
    inputDir: '',
    warnings: null,
  };

  /** Maps the cells of one row, by name or by position; `valuesOf` gives the named values for a reject. */
  function map<Cells>(
    cells: Cells,
    run: FillFn<Cells>,
    row: number,
    location: SourceLocation,
    valuesOf: () => Record<string, CellValue>,
  ): MappedItem {
    // A live v1 source (`v1+https://HOST/api/party`) has no folder to read attachments from.
    if (lastDir.file !== location.file)
      lastDir = { file: location.file, dir: isV1LiveInput(location.file) ? null : dirname(location.file) };
    startDraft(draft, lastDir.dir);
    try {
      if (run(cells, draft) === true) return { kind: 'skipped', row, location };
      const record = finishRecord(entity, draft, defaultPartyType);
      const mapped: MappedRecord = {
        kind: 'record',
        entity,
        key: draft.key as string,
        row,
        location,
        record,
        names: draft.names,
        refs: draft.refs,
        attachments: draft.attachments,
        valuesOf,
      };
      if (draft.warnings !== null) mapped.warnings = draft.warnings;
      return mapped;
    } catch (error) {
      if (!(error instanceof RowRejection)) throw error;
      const rejected: RejectedRow = {
        kind: 'rejected',
        row,
        location,
        key: draft.key,
        field: error.field,
        code: error.code,
        message: error.message,
        values: valuesOf(),
      };
      if (error.column !== undefined) rejected.column = error.column;
      if (error.value !== undefined) rejected.value = error.value;
      if (error.expected !== undefined) rejected.expected = error.expected;
      if (error.rule !== undefined) rejected.rule = error.rule;
      return rejected;
    }
  }

  return {
    mapping,
    entity,
    file,
    columns,
    columnPatterns,
    readsColumn: (column) => known.has(column) || numbered.some((pattern) => pattern.test(column)),
    leftOutBecause: (column) => leftOut.find((entry) => entry.test.test(column))?.reason,
    source,
    checkColumns(header) {
      const known = new Set(header);
      const missing = columns.filter((c) => !known.has(c));
      if (missing.length === 0) return;
      // Suggestions for the first few only: each compares a name with every column of the input.
      const described = missing.slice(0, MAX_NAMES_SHOWN).map((c) => {
        const close = suggest(c, header, 1);
        return `\`${c}\`${close[0] === undefined ? '' : ` (did you mean \`${close[0]}\`?)`}`;
      });
      const more = missing.length > MAX_NAMES_SHOWN ? ` and ${formatCount(missing.length - MAX_NAMES_SHOWN)} more` : '';
      throw new FerryError(
        'MAPPING_INVALID',
        `the input has no column${missing.length === 1 ? '' : 's'} ${described.join(', ')}${more}, which the mapping reads`,
        {
          location: { file },
          hint: `The input's ${formatCount(header.length)} columns are: ${listSome(header.map((h) => JSON.stringify(h)))}`,
        },
      );
    },
    mapRow(row) {
      const { values } = row;
      return map(values, fill, row.row, row.location, () => values);
    },
    mapFields(row) {
      const { fields, header } = row;
      return map(fields, fillFields(header), row.row, row.location, () => namedValues(header, fields));
    },
  };
}

/** A column name in which a `*` stands for an item's number (1, 2, 3, ...), as a pattern. */
export function numberedPattern(column: string): RegExp {
  return new RegExp(
    `^${column
      .split('*')
      .map((piece) => piece.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))
      .join('[1-9][0-9]*')}$`,
  );
}
