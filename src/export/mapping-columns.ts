import { FerryError } from '../errors/index.ts';
import { conditionColumns, isTemplate, parseTemplate, type Mapping } from '../mapping/index.ts';
import type { FieldEntry, ValueSpec } from '../mapping/index.ts';
import type { AccountCatalog } from '../mapping/resolve-catalog.ts';
import { availableColumns, type Column } from './columns.ts';
import type { ExportEntity } from './filter.ts';

/** The export entity each mapping entity reads back. */
const ENTITY_OF: Record<Mapping['entity'], ExportEntity> = { party: 'parties', kase: 'kases', opportunity: 'opportunities', entry: 'entries', task: 'tasks' };

const ADDRESS_PARTS = ['street', 'city', 'state', 'zip', 'country'] as const;

/**
 * The columns an export writes so that importing the file with the same mapping makes the same
 * records: each source column the mapping reads is filled from the record field it writes. A
 * mapping is the import's declaration; read backwards it is the export's. Only what can be read
 * backwards is accepted: a column copied to a field (transforms are taken to read back what the
 * default column holds: tags joined with ";", dates as YYYY-MM-DD, yes/no as true/false), links
 * by a key of one column, the key and the skip condition's columns. A template or a coalesce over
 * several columns cannot be split again, and is refused with its place in the mapping.
 */
export function columnsFromMappings(entity: ExportEntity, mappings: Array<{ file: string; mapping: Mapping }>, catalog: AccountCatalog | null): Column[] {
  const all = availableColumns(entity, catalog);
  const byName = new Map(all.map((c) => [c.name, c]));
  const out = new Map<string, Column>();
  for (const { file, mapping } of mappings) {
    const refuse = (yamlPath: string, message: string): never => {
      throw new FerryError('USAGE', `${file}: ${yamlPath}: ${message}`, { location: { file, yamlPath }, hint: `An export mapping copies columns to fields; the export fills these columns: ${all.map((c) => c.name).join(', ')}.` });
    };
    if (ENTITY_OF[mapping.entity] !== entity) refuse('entity', `the mapping makes ${ENTITY_OF[mapping.entity]}, and this export is of ${entity}`);
    /** The source column `name` holds what the export column `from` holds. */
    const add = (name: string, from: string | undefined, yamlPath: string): void => {
      const column = from === undefined ? undefined : byName.get(from);
      if (!column) return refuse(yamlPath, `the export has nothing to write into column ${JSON.stringify(name)}${from ? ` (the field ${from})` : ''}`);
      const seen = out.get(name);
      if (seen && seen.value !== column.value) refuse(yamlPath, `column ${JSON.stringify(name)} would hold two different fields`);
      out.set(name, { name, value: column.value });
    };
    /** A value that is one column as it is; null for a constant; refused when it mixes columns. */
    const columnOf = (value: ValueSpec | undefined, yamlPath: string): string | null => {
      if (value === undefined || value === null || typeof value !== 'object') {
        if (typeof value === 'string' && isTemplate(value)) refuse(yamlPath, 'a template cannot be split back into its columns');
        return null;
      }
      if (value.column !== undefined && value.template === undefined && value.coalesce === undefined) return value.column;
      if (value.template !== undefined || value.coalesce !== undefined) refuse(yamlPath, 'a template or a coalesce cannot be split back into its columns');
      return null;
    };
    const keyColumns = (key: string | string[], yamlPath: string): string[] => {
      if (Array.isArray(key)) return key;
      const parsed = parseTemplate(key);
      if (!parsed.ok || parsed.parts.length !== 1 || parsed.columns.length !== 1) refuse(yamlPath, `the key ${JSON.stringify(key)} is not one column ("{{Column}}")`);
      return parsed.ok ? parsed.columns : [];
    };

    mapping.fields.forEach((field: FieldEntry, i) => {
      const at = `fields[${i}]`;
      if (field.ref !== undefined) {
        // A link: the key names the linked record; the export writes its name. Of a list of keys
        // tried in order, the first (a template, not a column list) is the one written back.
        const key = Array.isArray(field.key) ? (field.key[0] ?? '') : (field.key ?? '');
        const [column] = keyColumns(key, `${at}.key`);
        if (column) add(column, field.to, `${at}.key`);
        return;
      }
      if (field.to === 'address') {
        for (const part of ADDRESS_PARTS) {
          const column = columnOf(field.parts?.[part], `${at}.parts.${part}`);
          if (column !== null) add(column, part, `${at}.parts.${part}`);
        }
        return;
      }
      if (field.type !== undefined && columnOf(field.type, `${at}.type`) !== null) refuse(`${at}.type`, 'a type read from a column cannot be written back (the export writes the first address, phone or e-mail of any type)');
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
      add(column, field.to, `${at}.value`);
    });
    // The row's key and what decides a skip must be there too; a key column no field fills is
    // the record's id, which identifies the row as well as any.
    for (const column of keyColumns(mapping.key, 'key')) if (!out.has(column)) add(column, byName.has(column) ? column : 'id', 'key');
    if (mapping.skip) for (const column of conditionColumns(mapping.skip)) if (!out.has(column)) add(column, column, 'skip');
  }
  return [...out.values()];
}
