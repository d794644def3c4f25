import { FerryError } from '../errors/index.ts';
import type { CatalogPart } from '../client/index.ts';
import {
  conditionColumns,
  type FieldEntry,
  isTemplate,
  type Mapping,
  parseTemplate,
  type ValueSpec,
} from '../mapping/index.ts';
import { availableColumns, type Column } from './columns.ts';
import type { ExportEntity } from './filter.ts';

/** The export entity each mapping entity reads back. */
const ENTITY_OF: Record<Mapping['entity'], ExportEntity> = {
  party: 'parties',
  kase: 'kases',
  opportunity: 'opportunities',
  entry: 'entries',
  task: 'tasks',
};

const ADDRESS_PARTS = ['street', 'city', 'state', 'zip', 'country'] as const;

type Body = Record<string, unknown>;

function idOf(value: unknown): number | null {
  const id = value !== null && typeof value === 'object' ? (value as Body).id : undefined;
  return typeof id === 'number' ? id : null;
}

function textOrNull(value: unknown): string | null {
  return value === undefined || value === null || value === '' ? null : String(value);
}

/**
 * Columns only an export through a mapping writes: the ids of linked records, so that a link is
 * made by id (two organisations of one name are still two), and what an opportunity's default
 * columns leave out. A link whose key reads one of these is written as the id; any other key
 * column of a link gets the linked record's name, as before.
 */
const MAPPING_ONLY: Record<ExportEntity, Column[]> = {
  parties: [{ name: 'organisationId', value: (r) => idOf(r.organisation) }],
  opportunities: [
    { name: 'partyId', value: (r) => idOf(r.party) },
    {
      name: 'pipeline',
      value: (r) => textOrNull(((r.milestone as Body | null | undefined)?.pipeline as Body | null | undefined)?.name),
    },
    { name: 'durationBasis', value: (r) => textOrNull(r.durationBasis) },
    { name: 'duration', value: (r) => (typeof r.duration === 'number' ? r.duration : null) },
    // A track applied on create starts from its definition, named as the track's description.
    { name: 'tracks', fetches: 'tracks', value: (r) => joinedTexts(r.tracks, 'description') },
  ],
  kases: [
    { name: 'partyId', value: (r) => idOf(r.party) },
    { name: 'opportunityId', value: (r) => idOf(r.opportunity) },
    // A stage by id, for a mapping written for an account with the same stages; the round trip
    // reads the stage's name (the `stage` column), found again in any account's stages.
    { name: 'stageId', value: (r) => idOf(r.stage) },
    // A track applied on create starts from its definition, named as the track's description.
    { name: 'tracks', fetches: 'tracks', value: (r) => joinedTexts(r.tracks, 'description') },
  ],
  entries: [
    { name: 'partyId', value: (r) => idOf(r.party) },
    { name: 'kaseId', value: (r) => idOf(r.kase) },
    { name: 'opportunityId', value: (r) => idOf(r.opportunity) },
  ],
  tasks: [
    { name: 'partyId', value: (r) => idOf(r.party) },
    { name: 'kaseId', value: (r) => idOf(r.kase) },
    { name: 'opportunityId', value: (r) => idOf(r.opportunity) },
    { name: 'stageId', value: (r) => idOf(r.stage) },
    // A track's task is made again by its track when the project is created.
    { name: 'hasTrack', value: (r) => r.hasTrack === true },
  ],
};

/** The texts of `key` in a list of objects, joined with ";" (as a `split: ";"` reads them back). */
function joinedTexts(items: unknown, key: string): string | null {
  const texts = (Array.isArray(items) ? (items as Body[]) : []).flatMap((item) =>
    typeof item[key] === 'string' && item[key] !== '' ? [item[key] as string] : [],
  );
  return texts.length === 0 ? null : texts.join(';');
}

/**
 * A project's additional contacts as the JSON list of their ids, which the import looks up among
 * the parties of the `ref` steps; an entry's attachments as the JSON list of the files
 * `--attachments DIR` downloaded (their paths relative to the output), each with its content type.
 */
const LIST_COLUMNS: Record<'additionalContact' | 'attachment', (name: string) => Column> = {
  additionalContact: (name) => ({
    name,
    fetches: 'parties',
    value: (r) => {
      const ids = (Array.isArray(r.parties) ? (r.parties as Body[]) : []).flatMap((p) =>
        typeof p.id === 'number' ? [p.id] : [],
      );
      return ids.length === 0 ? null : JSON.stringify(ids);
    },
  }),
  attachment: (name) => ({
    name,
    fetches: 'attachments',
    value: (r) => {
      // The attachment's own name goes beside a file named otherwise (shortened to fit the file system).
      const files = (Array.isArray(r.attachments) ? (r.attachments as Body[]) : []).map((a) => ({
        file: a.file,
        contentType: a.contentType ?? undefined,
        ...(typeof a.filename === 'string' && typeof a.file === 'string' && a.file.split('/').pop() !== a.filename
          ? { filename: a.filename }
          : {}),
      }));
      return files.length === 0 ? null : JSON.stringify(files);
    },
  }),
};

/** The record's list each `items` target reads back, and the keys an item keeps (ids and derived links left out). */
const ITEM_LISTS: Record<string, { list: string; keys: readonly string[] }> = {
  email: { list: 'emailAddresses', keys: ['type', 'address'] },
  phone: { list: 'phoneNumbers', keys: ['type', 'number'] },
  website: { list: 'websites', keys: ['type', 'service', 'address'] },
  address: { list: 'addresses', keys: ['type', 'street', 'city', 'state', 'zip', 'country'] },
};

/**
 * The column of an `items: {column}` entry: the record's whole list as JSON, every item with its
 * type, as the importer reads it back. Custom fields go by definition name and data tag (the
 * account's catalog says which tag a definition has), with the value as the service gives it.
 */
function itemsColumn(name: string, to: string, catalog: CatalogPart | null, entity: ExportEntity): Column {
  if (to === 'additionalContact' || to === 'attachment') return LIST_COLUMNS[to](name);
  if (to === 'custom') {
    const definitions =
      entity === 'parties' || entity === 'opportunities' || entity === 'kases'
        ? (catalog?.fieldDefinitions[entity] ?? [])
        : [];
    const byId = new Map(definitions.map((d) => [d.id, d]));
    return {
      name,
      value: (r) => {
        const fields = Array.isArray(r.fields) ? (r.fields as Body[]) : [];
        const items = fields.flatMap((field) => {
          const id = idOf(field.definition);
          const known = id === null ? undefined : byId.get(id);
          const definition = known?.name ?? (field.definition as Body | undefined)?.name;
          if (typeof definition !== 'string' || field.value === undefined || field.value === null || field.value === '')
            return [];
          return [{ definition, tag: known?.tag ?? null, value: field.value }];
        });
        return items.length === 0 ? null : JSON.stringify(items);
      },
    };
  }
  const { list, keys } = ITEM_LISTS[to] as { list: string; keys: readonly string[] };
  return {
    name,
    value: (r) => {
      const items = Array.isArray(r[list]) ? (r[list] as Body[]) : [];
      const out = items.map((item) => {
        const kept: Body = {};
        for (const key of keys)
          if (item[key] !== undefined && item[key] !== null && item[key] !== '') kept[key] = item[key];
        return kept;
      });
      return out.length === 0 ? null : JSON.stringify(out);
    },
  };
}

/** Every column a value reads: its column, a template's placeholders, a coalesce's values and their conditions. */
function specColumns(spec: ValueSpec | undefined, into: Set<string> = new Set()): string[] {
  if (typeof spec === 'string') {
    const parsed = isTemplate(spec) ? parseTemplate(spec) : null;
    if (parsed?.ok) for (const column of parsed.columns) into.add(column);
  } else if (spec !== null && typeof spec === 'object') {
    if (spec.column !== undefined) into.add(spec.column);
    if (spec.template !== undefined) specColumns(spec.template, into);
    for (const inner of spec.coalesce ?? []) specColumns(inner, into);
    if (spec.when !== undefined) conditionColumns(spec.when, into);
  }
  return [...into];
}

/**
 * The columns an export writes so that importing the file with the same mapping makes the same
 * records: each source column the mapping reads is filled from the record field it writes. A
 * mapping is the import's declaration; read backwards it is the export's. Only what can be read
 * backwards is accepted: a column copied to a field (transforms are taken to read back what the
 * default column holds: tags joined with ";", dates as YYYY-MM-DD, yes/no as true/false), links
 * by a key of one column, the key and the skip condition's columns. A template or a coalesce over
 * several columns cannot be split again, and is refused with its place in the mapping.
 */
export function columnsFromMappings(
  entity: ExportEntity,
  mappings: Array<{ file: string; mapping: Mapping }>,
  catalog: CatalogPart | null,
): Column[] {
  const all = [...availableColumns(entity, catalog), ...MAPPING_ONLY[entity]];
  const byName = new Map(all.map((c) => [c.name, c]));
  const out = new Map<string, Column>();
  /** The target each `items` column holds the list of. */
  const itemColumns = new Map<string, string>();
  for (const { file, mapping } of mappings) {
    const refuse = (yamlPath: string, message: string): never => {
      throw new FerryError('USAGE', `${file}: ${yamlPath}: ${message}`, {
        location: { file, yamlPath },
        hint: `An export mapping copies columns to fields; the export fills these columns: ${all.map((c) => c.name).join(', ')}.`,
      });
    };
    if (ENTITY_OF[mapping.entity] !== entity)
      refuse('entity', `the mapping makes ${ENTITY_OF[mapping.entity]}, and this export is of ${entity}`);
    /** The source column `name` holds what the export column `from` holds. */
    const add = (name: string, from: string | undefined, yamlPath: string): void => {
      const column = from === undefined ? undefined : byName.get(from);
      if (!column)
        return refuse(
          yamlPath,
          `the export has nothing to write into column ${JSON.stringify(name)}${from ? ` (the field ${from})` : ''}`,
        );
      const seen = out.get(name);
      if (seen && seen.value !== column.value)
        refuse(yamlPath, `column ${JSON.stringify(name)} would hold two different fields`);
      out.set(name, { name, value: column.value, ...(column.fetches ? { fetches: column.fetches } : {}) });
    };
    /**
     * A template or a coalesce whose every column is one the export writes, by that name (the
     * author line of a round-trip entry: `Originally by {{creator}}` over `{{content}}`): each
     * column is written as it is and the import computes the value again. Any other column in
     * it could not be split back out of the value, and is refused.
     */
    const addByName = (value: ValueSpec, yamlPath: string, message: string): void => {
      const columns = specColumns(value);
      if (columns.length === 0 || columns.some((column) => !byName.has(column))) refuse(yamlPath, message);
      for (const column of columns) if (!out.has(column)) add(column, column, yamlPath);
    };
    /** A value that is one column as it is; null for a constant, or a value over columns written by name. */
    const columnOf = (value: ValueSpec | undefined, yamlPath: string): string | null => {
      if (value === undefined || value === null || typeof value !== 'object') {
        if (typeof value === 'string' && isTemplate(value))
          addByName(value, yamlPath, 'a template cannot be split back into its columns');
        return null;
      }
      if (value.column !== undefined && value.template === undefined && value.coalesce === undefined)
        return value.column;
      if (value.template !== undefined || value.coalesce !== undefined)
        addByName(value, yamlPath, 'a template or a coalesce cannot be split back into its columns');
      return null;
    };
    const keyColumns = (key: string | string[], yamlPath: string): string[] => {
      if (Array.isArray(key)) return key;
      const parsed = parseTemplate(key);
      if (!parsed.ok || parsed.parts.length !== 1 || parsed.columns.length !== 1)
        refuse(yamlPath, `the key ${JSON.stringify(key)} is not one column ("{{Column}}")`);
      return parsed.ok ? parsed.columns : [];
    };

    mapping.fields.forEach((field: FieldEntry, i) => {
      const at = `fields[${i}]`;
      if (field.ref !== undefined && field.key !== undefined) {
        // A link: the key names the linked record; the export writes its id when the key reads
        // an id column (`organisationId`, `partyId`), else its name.
        // Of a list of keys tried in order, the first (a template, not a column list) is the one
        // written back.
        const key = Array.isArray(field.key) ? (field.key[0] ?? '') : (field.key ?? '');
        const [column] = keyColumns(key, `${at}.key`);
        if (column) add(column, column.endsWith('Id') && byName.has(column) ? column : field.to, `${at}.key`);
        return;
      }
      if (field.items === 'numbered') {
        return refuse(
          `${at}.items`,
          'numbered columns cannot be written back: a file has one header for every record, however many items each has; use `items: {column: ...}`, which writes the whole list as JSON',
        );
      }
      if (field.items !== undefined) {
        const column = field.items.column;
        const seen = out.get(column);
        // Two mappings of one export (organisations and people) read the same list: one column.
        if (seen && itemColumns.get(column) !== field.to)
          refuse(`${at}.items`, `column ${JSON.stringify(column)} would hold two different fields`);
        if (!seen) out.set(column, itemsColumn(column, field.to, catalog, entity));
        itemColumns.set(column, field.to);
        return;
      }
      if (field.to === 'address') {
        for (const part of ADDRESS_PARTS) {
          const column = columnOf(field.parts?.[part], `${at}.parts.${part}`);
          if (column !== null) add(column, part, `${at}.parts.${part}`);
        }
        return;
      }
      if (field.service !== undefined && columnOf(field.service, `${at}.service`) !== null)
        refuse(
          `${at}.service`,
          'a website service read from a column cannot be written back (the export writes the first website of any service); use `items: {column: ...}`',
        );
      if (field.type !== undefined && columnOf(field.type, `${at}.type`) !== null)
        refuse(
          `${at}.type`,
          'a type read from a column cannot be written back (the export writes the first address, phone or e-mail of any type)',
        );
      const column = columnOf(field.value, `${at}.value`);
      if (column === null) return;
      if (field.to === 'custom') {
        const definition = field.definition ?? '';
        const name = field.tag ? `${definition} (${field.tag})` : definition;
        // An account without the field has no value for it: the column is there, empty. Found by
        // the field, not the column's name: a field named like another column has its own name.
        const custom = all.find((c) => c.customField === name);
        if (custom) add(column, custom.name, `${at}.value`);
        else if (!out.has(column)) out.set(column, { name: column, value: () => null });
        return;
      }
      // An id column (`stageId`) holds the id of what the field names: the value it reads back.
      add(column, column.endsWith('Id') && byName.has(column) ? column : field.to, `${at}.value`);
    });
    // The row's key and what decides a skip must be there too; a key column no field fills is
    // the record's id, which identifies the row as well as any.
    for (const column of keyColumns(mapping.key, 'key'))
      if (!out.has(column)) add(column, byName.has(column) ? column : 'id', 'key');
    if (mapping.skip)
      for (const column of conditionColumns(mapping.skip)) if (!out.has(column)) add(column, column, 'skip');
  }
  return [...out.values()];
}
