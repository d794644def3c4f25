import type { KaseRec, OpportunityRec, PartyRec } from '../model.ts';
import type { Store } from '../store.ts';

/** The entities the filter endpoint serves, with the record type each holds. */
export interface EntityRecords {
  parties: PartyRec;
  opportunities: OpportunityRec;
  kases: KaseRec;
}

export type FilterEntity = keyof EntityRecords;

/** What a compiled filter may read besides the record: fixed for one request. */
export interface FilterEnv {
  store: Store;
  /** The calling user, for `isOwnedByMe`. */
  callerId: number;
  /** Today's date (UTC, `YYYY-MM-DD`) for the relative date operators and `isStale`. */
  today: string;
  /**
   * The project boards with their stages, for the `board` and `stage` fields. The service
   * describes no stage records, so the projects module decides them and passes them in.
   */
  boards: ReadonlyArray<ProjectBoard>;
}

/** A project board and its stages, by id and name. */
export interface ProjectBoard {
  id: number;
  name: string;
  stages: ReadonlyArray<{ id: number; name: string }>;
}

/**
 * The value types of the field table. `ref` fields point at another record (tag, pipeline, stage)
 * and take either its id (number) or its name (string).
 */
export type FieldKind = 'string' | 'number' | 'boolean' | 'date' | 'ref';

/** The operators of a filter condition, as the service names them. */
export const OPERATORS = [
  'is',
  'is not',
  'starts with',
  'ends with',
  'contains',
  'is greater than',
  'is less than',
  'is after',
  'is before',
  'is older than',
  'is within last',
  'is within next',
] as const;

export type Operator = (typeof OPERATORS)[number];

/**
 * Which operators each kind of field takes. Reference fields (tag, pipeline, stage) take the
 * equality and text operators (text ones match names); ordering ids makes no sense, so no
 * `is greater than` there.
 */
export const OPERATORS_BY_KIND: Record<FieldKind, readonly Operator[]> = {
  string: ['is', 'is not', 'starts with', 'ends with', 'contains'],
  number: ['is', 'is not', 'is greater than', 'is less than'],
  boolean: ['is', 'is not'],
  date: ['is', 'is not', 'is after', 'is before', 'is older than', 'is within last', 'is within next'],
  ref: ['is', 'is not', 'starts with', 'ends with', 'contains'],
};

/** A value records are ordered by; null (no value) sorts last in either direction. */
export type SortKey = string | number | boolean | null;

export type Test<V> = (value: V) => boolean;

interface FieldBase<R> {
  /**
   * The key to order by (strings already lower-cased). Absent when ordering by the field makes no
   * sense (tags).
   */
  sortKey?: (record: R) => SortKey;
}

/*
 * Each field hands its value(s) to a test instead of returning them: a field with several values
 * (a party's email addresses) then needs no array per record, and "no value" simply never calls
 * the test. A field passes when any of its values passes.
 */

export interface StringField<R> extends FieldBase<R> {
  kind: 'string';
  some(record: R, test: Test<string>): boolean;
  /**
   * Given the condition's value and operator, a rewrite applied to that value and to every record
   * value before they are compared (`1500.00` -> `1500`, a phone number -> its digits), or null to
   * compare the texts as written.
   */
  canonical?: (value: string, operator: Operator) => ((text: string) => string) | null;
}

export interface NumberField<R> extends FieldBase<R> {
  kind: 'number';
  some(record: R, test: Test<number>): boolean;
}

export interface BooleanField<R> extends FieldBase<R> {
  kind: 'boolean';
  some(record: R, test: Test<boolean>): boolean;
}

/** Values are dates as `YYYY-MM-DD`, so that they compare as strings. */
export interface DateField<R> extends FieldBase<R> {
  kind: 'date';
  some(record: R, test: Test<string>): boolean;
}

export interface RefField<R> extends FieldBase<R> {
  kind: 'ref';
  /** The records a name is matched against. */
  targets(): Iterable<{ id: number; name: string }>;
  /** Visits the ids the record points at. */
  some(record: R, test: Test<number>): boolean;
}

export type FieldSpec<R> = StringField<R> | NumberField<R> | BooleanField<R> | DateField<R> | RefField<R>;
