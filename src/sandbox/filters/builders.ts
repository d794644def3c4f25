/**
 * Small constructors for the field tables, so that each entity's table reads as a list of
 * "name: how to get the value".
 */
import type { EntityKind, FieldType, FieldValueRec } from '../model.ts';
import type { BooleanField, DateField, FieldSpec, FilterEnv, NumberField, RefField, StringField } from './types.ts';

type Maybe<T> = T | null | undefined;

/** A field with one text value (or none). */
export function text<R>(get: (record: R) => Maybe<string>): StringField<R> {
  return {
    kind: 'string',
    some: (record, test) => {
      const value = get(record);
      return value != null && test(value);
    },
    sortKey: (record) => get(record)?.toLowerCase() ?? null,
  };
}

/** A field with several text values, e.g. every email address of a party; ordered by the first. */
export function texts<R, T>(list: (record: R) => readonly T[], pick: (item: T) => Maybe<string>): StringField<R> {
  return {
    kind: 'string',
    some: (record, test) => {
      for (const item of list(record)) {
        const value = pick(item);
        if (value != null && test(value)) return true;
      }
      return false;
    },
    sortKey: (record) => {
      for (const item of list(record)) {
        const value = pick(item);
        if (value != null) return value.toLowerCase();
      }
      return null;
    },
  };
}

/** A field with one number value (or none). */
export function number<R>(get: (record: R) => Maybe<number>): NumberField<R> {
  return {
    kind: 'number',
    some: (record, test) => {
      const value = get(record);
      return value != null && test(value);
    },
    sortKey: (record) => get(record) ?? null,
  };
}

/** A field with one boolean value (or none). */
export function flag<R>(get: (record: R) => Maybe<boolean>): BooleanField<R> {
  return {
    kind: 'boolean',
    some: (record, test) => {
      const value = get(record);
      return value != null && test(value);
    },
    sortKey: (record) => get(record) ?? null,
  };
}

/** A date field from a `YYYY-MM-DD` date or a timestamp, of which the (UTC) date part counts. */
export function day<R>(get: (record: R) => Maybe<string>): DateField<R> {
  const dayOf = (record: R): string | null => {
    const value = get(record);
    return value == null || value === '' ? null : value.slice(0, 10);
  };
  return {
    kind: 'date',
    some: (record, test) => {
      const value = dayOf(record);
      return value !== null && test(value);
    },
    sortKey: dayOf,
  };
}

/** A reference to one record of `targets` (a pipeline, a stage), by id or by name. */
export function reference<R>(
  targets: () => Iterable<{ id: number; name: string }>,
  get: (record: R) => Maybe<number>,
  sortName: (id: number) => Maybe<string>,
): RefField<R> {
  return {
    kind: 'ref',
    targets,
    some: (record, test) => {
      const id = get(record);
      return id != null && test(id);
    },
    sortKey: (record) => {
      const id = get(record);
      return id == null ? null : (sortName(id)?.toLowerCase() ?? null);
    },
  };
}

/** The tags of a record: by id, or by name among the tags of the entity. Not orderable. */
export function tags<R extends { tagIds: number[] }>(env: FilterEnv, entity: EntityKind): RefField<R> {
  return {
    kind: 'ref',
    targets: () => env.store.tags.all().filter((tag) => tag.entity === entity),
    some: (record, test) => record.tagIds.some(test),
  };
}

/** Custom field values of one definition, typed by the definition. */
export function custom<R extends { fields: FieldValueRec[] }>(definitionId: number, type: FieldType): FieldSpec<R> {
  if (type === 'Boolean') {
    // An unticked checkbox is stored as no value at all, so no value reads as false.
    const ticked = (record: R): boolean =>
      record.fields.some((f) => f.definitionId === definitionId && f.value === true);
    return flag(ticked);
  }
  const values = (record: R): FieldValueRec[] => record.fields;
  const pick = (field: FieldValueRec): string | null =>
    field.definitionId === definitionId && typeof field.value === 'string' ? field.value : null;
  if (type === 'Date') {
    const first = (record: R): string | null => {
      for (const field of record.fields) {
        const value = pick(field);
        if (value !== null) return value;
      }
      return null;
    };
    const spec: DateField<R> = day(first);
    return {
      ...spec,
      some: (record: R, test: (value: string) => boolean) => {
        for (const field of record.fields) {
          const value = pick(field);
          if (value !== null && test(value.slice(0, 10))) return true;
        }
        return false;
      },
    };
  }
  return texts(values, pick);
}

/** A field of a related record (a person's organisation), read through `to`; no related record, no value. */
export function via<R, S>(spec: FieldSpec<S>, to: (record: R) => S | null): FieldSpec<R> {
  const some = spec.some as (record: S, test: (value: never) => boolean) => boolean;
  const sortKey = spec.sortKey;
  return {
    ...spec,
    some: (record: R, test: (value: never) => boolean) => {
      const related = to(record);
      return related !== null && some(related, test);
    },
    sortKey: sortKey
      ? (record: R) => {
          const related = to(record);
          return related === null ? null : sortKey(related);
        }
      : undefined,
  } as FieldSpec<R>;
}
