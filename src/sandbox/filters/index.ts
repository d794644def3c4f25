export { compileFilter, type CompiledFilter } from './compile.ts';
export { addDays, isIsoDate, utcDate } from './dates.ts';
export { fieldNames, opportunityStatus, partyName, resolveField } from './fields.ts';
export { FilterError } from './filter-error.ts';
export { OPERATORS, OPERATORS_BY_KIND, type Operator } from './types.ts';
export {
  parseFilter,
  parseFilterBody,
  type ConditionSpec,
  type FilterSpec,
  type OrderSpec,
  type OrGroupSpec,
  type SortDirection,
} from './parse.ts';
export type { EntityRecords, FieldKind, FieldSpec, FilterEntity, FilterEnv, ProjectBoard, SortKey } from './types.ts';
