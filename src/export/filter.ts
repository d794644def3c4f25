import type { CatalogPart, Filter } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';

/** What can be exported, as the service names the lists. */
export const EXPORT_ENTITIES = ['parties', 'opportunities', 'kases', 'entries', 'tasks'] as const;
export type ExportEntity = (typeof EXPORT_ENTITIES)[number];
/** The entities with structured filters (spec 4.12). */
export type FilterEntity = 'parties' | 'opportunities' | 'kases';

export function isFilterEntity(entity: ExportEntity): entity is FilterEntity {
  return entity === 'parties' || entity === 'opportunities' || entity === 'kases';
}

type FieldType = 'string' | 'number' | 'boolean' | 'date' | 'tag' | 'user' | 'team' | 'numberOrString';

/** The fields a filter may name, per entity, with their types (spec 4.12). */
const FIELDS: Record<FilterEntity, Record<string, FieldType>> = {
  parties: {
    id: 'number',
    name: 'string',
    jobTitle: 'string',
    email: 'string',
    phone: 'string',
    city: 'string',
    zip: 'string',
    state: 'string',
    country: 'string',
    type: 'string',
    tag: 'tag',
    owner: 'user',
    team: 'team',
    hasEmailAddress: 'boolean',
    hasPhoneNumber: 'boolean',
    hasAddress: 'boolean',
    hasPeople: 'boolean',
    hasTags: 'boolean',
    addedOn: 'date',
    updatedOn: 'date',
    lastContactedOn: 'date',
    'org.name': 'string',
    'org.tag': 'tag',
  },
  opportunities: {
    id: 'number',
    name: 'string',
    status: 'string',
    milestone: 'string',
    lostReason: 'string',
    currency: 'string',
    expectedValue: 'string',
    pipeline: 'numberOrString',
    probability: 'number',
    tag: 'tag',
    owner: 'user',
    team: 'team',
    isOpen: 'boolean',
    isStale: 'boolean',
    isOwnedByMe: 'boolean',
    hasTags: 'boolean',
    addedOn: 'date',
    updatedOn: 'date',
    closedOn: 'date',
    expectedCloseOn: 'date',
  },
  kases: {
    id: 'number',
    name: 'string',
    status: 'string',
    board: 'numberOrString',
    stage: 'numberOrString',
    tag: 'tag',
    owner: 'user',
    team: 'team',
    isOpen: 'boolean',
    isOwnedByMe: 'boolean',
    hasTags: 'boolean',
    addedOn: 'date',
    updatedOn: 'date',
    startOn: 'date',
    closedOn: 'date',
    expectedCloseOn: 'date',
  },
};

/** Operators and the field types they take; the value they want follows from the type. */
const OPERATORS: Record<string, { types: ReadonlySet<string>; days?: true }> = {
  is: { types: new Set(['string', 'number', 'boolean', 'date', 'tag', 'user', 'team', 'numberOrString', 'custom']) },
  'is not': {
    types: new Set(['string', 'number', 'boolean', 'date', 'tag', 'user', 'team', 'numberOrString', 'custom']),
  },
  'starts with': { types: new Set(['string', 'custom:Text', 'custom:List']) },
  'ends with': { types: new Set(['string', 'custom:Text', 'custom:List']) },
  contains: { types: new Set(['string', 'custom:Text', 'custom:List']) },
  'is greater than': { types: new Set(['number']) },
  'is less than': { types: new Set(['number']) },
  'is after': { types: new Set(['date', 'custom:Date']) },
  'is before': { types: new Set(['date', 'custom:Date']) },
  'is older than': { types: new Set(['date', 'custom:Date']), days: true },
  'is within last': { types: new Set(['date', 'custom:Date']), days: true },
  'is within next': { types: new Set(['date', 'custom:Date']), days: true },
};

/** Longest first, so that `is not` is not read as `is` followed by a value starting with "not". */
const OPERATOR_NAMES = Object.keys(OPERATORS).sort((a, b) => b.length - a.length);

export type Condition = { field: string; operator: string; value?: unknown };

/** A `--where` the service's filter cannot express: checked on each record as it is read. */
export interface LocalCondition {
  /** The condition as given, for the summary. */
  text: string;
  test(record: Record<string, unknown>): boolean;
}

/** The `--where` conditions: those the service checks, and those checked here (which cost a read of what the others let through). */
export interface ParsedWhere {
  conditions: Condition[];
  local: LocalCondition[];
}

/**
 * Fields the service's filter cannot compare, read from the record instead. An opportunity's
 * amount (`value`, or `amount` as the export's column is named) is a number in the record but
 * only a text (`expectedValue`) in the filter: equality goes to the service as `expectedValue`,
 * `is greater than` and `is less than` are compared here. Amounts are compared as numbers,
 * whatever their currency.
 */
const LOCAL_NUMBERS: Partial<Record<FilterEntity, Record<string, (record: Record<string, unknown>) => unknown>>> = {
  opportunities: {
    value: (r) => (r.value as Record<string, unknown> | null | undefined)?.amount,
    amount: (r) => (r.value as Record<string, unknown> | null | undefined)?.amount,
  },
};

/** The fields and operators a `--where` checks here rather than in the service, for help texts. */
export const LOCAL_WHERE_HELP = "an opportunity's value (or amount) `is greater than` / `is less than` N";

function localCondition(
  entity: FilterEntity,
  text: string,
  field: string,
  operator: string,
  raw: string,
): Condition | LocalCondition | null {
  const read = LOCAL_NUMBERS[entity]?.[field];
  if (!read) return null;
  const where = JSON.stringify(text);
  if (!['is', 'is not', 'is greater than', 'is less than'].includes(operator))
    usage(
      `--where ${where}: \`${operator}\` does not apply to ${field}`,
      `${field} takes: is, is not, is greater than, is less than (a number).`,
    );
  const wanted = typed(where, 'number', operator, raw, null) as number;
  if (operator === 'is' || operator === 'is not') return { field: 'expectedValue', operator, value: String(wanted) };
  const above = operator === 'is greater than';
  return {
    text,
    test: (record) => {
      const amount = read(record);
      return typeof amount === 'number' && (above ? amount > wanted : amount < wanted);
    },
  };
}

function usage(message: string, hint?: string): never {
  throw new FerryError('USAGE', message, hint ? { hint } : {});
}

/** Splits `FIELD OPERATOR VALUE`; the field may be quoted when it holds spaces (`"custom:Customer since" is after 2021-01-01`). */
export function splitWhere(text: string): { field: string; operator: string; value: string } {
  const trimmed = text.trim();
  let field: string;
  let rest: string;
  const quoted = /^(["'])(.+?)\1\s+(.*)$/s.exec(trimmed);
  if (quoted) {
    field = quoted[2] as string;
    rest = ` ${quoted[3] as string}`;
  } else {
    // The leftmost operator surrounded by spaces ends the field name.
    let best: { at: number; op: string } | null = null;
    for (const op of OPERATOR_NAMES) {
      const at = trimmed.indexOf(` ${op} `);
      const atEnd = trimmed.endsWith(` ${op}`) ? trimmed.length - op.length - 1 : -1;
      const found = at >= 0 ? at : atEnd;
      if (found > 0 && (best === null || found < best.at)) best = { at: found, op };
    }
    if (!best)
      usage(
        `--where ${JSON.stringify(text)}: expected FIELD OPERATOR VALUE, e.g. 'tag is VIP'`,
        `Operators: ${OPERATOR_NAMES.join(', ')}.`,
      );
    field = trimmed.slice(0, best.at);
    rest = trimmed.slice(best.at);
  }
  const op = OPERATOR_NAMES.find((name) => rest.startsWith(` ${name} `) || rest === ` ${name}`);
  if (!op)
    usage(
      `--where ${JSON.stringify(text)}: no operator after ${JSON.stringify(field)}`,
      `Operators: ${OPERATOR_NAMES.join(', ')}.`,
    );
  const value = rest.slice(op.length + 2).trim();
  if (value === '')
    usage(
      `--where ${JSON.stringify(text)}: no value after \`${op}\``,
      `Give one, or "" for an empty value: '${field.trim()} ${op} ""'.`,
    );
  // A value in quotes, as the field may be: "Acme Ltd" means Acme Ltd (it found nothing before).
  const quotedValue = /^(["'])(.*)\1$/s.exec(value);
  return { field: field.trim(), operator: op, value: quotedValue ? (quotedValue[2] as string) : value };
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;

function typed(
  where: string,
  type: string,
  operator: string,
  raw: string,
  catalog: CatalogPart | null | undefined,
): unknown {
  if (OPERATORS[operator]?.days) {
    if (!/^\d+$/.test(raw))
      usage(`--where ${where}: \`${operator}\` takes a number of days, got ${JSON.stringify(raw)}`);
    return Number(raw);
  }
  const base = type.startsWith('custom:') ? type.slice('custom:'.length) : type;
  switch (base) {
    case 'number':
      if (!/^-?\d+(\.\d+)?$/.test(raw)) usage(`--where ${where}: the field takes a number, got ${JSON.stringify(raw)}`);
      return Number(raw);
    case 'boolean':
    case 'Boolean':
      if (raw !== 'true' && raw !== 'false')
        usage(`--where ${where}: the field takes true or false, got ${JSON.stringify(raw)}`);
      return raw === 'true';
    case 'date':
    case 'Date':
      if (!DATE.test(raw) || Number.isNaN(Date.parse(raw)))
        usage(`--where ${where}: the field takes a date as YYYY-MM-DD, got ${JSON.stringify(raw)}`);
      return raw;
    case 'tag':
    case 'numberOrString':
      return /^\d+$/.test(raw) ? Number(raw) : raw;
    case 'user': {
      if (/^\d+$/.test(raw)) return Number(raw);
      if (catalog === undefined) return raw;
      const users = catalog === null ? [] : namesRead(catalog.users, 'users');
      const user = users.find(
        (u) => u.username.toLowerCase() === raw.toLowerCase() || u.email?.toLowerCase() === raw.toLowerCase(),
      );
      if (!user)
        usage(
          `--where ${where}: no user ${JSON.stringify(raw)} in the account`,
          catalog ? `Users: ${users.map((u) => u.username).join(', ')}.` : undefined,
        );
      return user.id;
    }
    case 'team': {
      if (/^\d+$/.test(raw)) return Number(raw);
      if (catalog === undefined) return raw;
      const teams = (catalog === null ? null : namesRead(catalog.teams, 'teams')) ?? [];
      const team = teams.find((t) => t.name.toLowerCase() === raw.toLowerCase());
      if (!team)
        usage(
          `--where ${where}: no team ${JSON.stringify(raw)} in the account`,
          teams.length > 0 ? `Teams: ${teams.map((t) => t.name).join(', ')}.` : "Give the team's id.",
        );
      return team.id;
    }
    default:
      return raw;
  }
}

/** A list of the account's names that namesNeeded said to read. */
function namesRead<T>(list: T | undefined, what: string): T {
  if (list === undefined)
    throw new FerryError('INTERNAL', `a --where condition needs the account's ${what}, and they were not read`);
  return list;
}

/**
 * Which of the account's names the `--where` texts need besides the entity's custom fields (read
 * for its columns anyway), so that only those are read: the users and the teams a condition names,
 * unless by id.
 */
export function namesNeeded(entity: FilterEntity, wheres: readonly string[]): { users: boolean; teams: boolean } {
  const needs = { users: false, teams: false };
  for (const text of wheres) {
    const { field, operator, value } = splitWhere(text);
    if (localCondition(entity, text, field, operator, value)) continue;
    if (OPERATORS[operator]?.days || /^\d+$/.test(value)) continue;
    const type = FIELDS[entity][field];
    if (type === 'user') needs.users = true;
    if (type === 'team') needs.teams = true;
  }
  return needs;
}

/**
 * Turns `--where` texts into the service's filter conditions for `entity`: field and operator
 * names checked against the spec's table, values typed, custom fields named by their definition
 * (`custom:Customer since`) turned into `custom:{id}`, users and teams named turned into ids.
 * Every mistake is a USAGE error naming the valid choices. With `catalog` undefined (the account's
 * names not read yet) everything but the names is checked, so that most mistakes are found
 * before any request.
 */
export function parseWhere(
  entity: FilterEntity,
  wheres: readonly string[],
  catalog: CatalogPart | null | undefined,
  any = false,
): ParsedWhere {
  const parsed: ParsedWhere = { conditions: [], local: [] };
  for (const text of wheres) {
    const condition = parseCondition(entity, text, catalog);
    if ('test' in condition) parsed.local.push(condition);
    else parsed.conditions.push(condition);
  }
  if (any && parsed.local.length > 0 && parsed.conditions.length > 0) {
    usage(
      `--any cannot join ${parsed.local.map((l) => JSON.stringify(l.text)).join(', ')} (checked here, on the records the service sends) with conditions the service checks`,
      'Give the conditions without --any, or export once per condition.',
    );
  }
  return parsed;
}

/** Whether a record passes the conditions checked here: all of them, or with `any` one. */
export function passesLocal(local: readonly LocalCondition[], any: boolean, record: Record<string, unknown>): boolean {
  return any ? local.some((l) => l.test(record)) : local.every((l) => l.test(record));
}

function parseCondition(
  entity: FilterEntity,
  text: string,
  catalog: CatalogPart | null | undefined,
): Condition | LocalCondition {
  const where = JSON.stringify(text);
  const { field, operator, value } = splitWhere(text);
  const local = localCondition(entity, text, field, operator, value);
  if (local) return local;
  let name = field;
  let type: string | undefined = FIELDS[entity][field];
  const custom = /^(org\.)?custom:(.+)$/.exec(field);
  // A person's organisation is a party: its custom fields are those of parties, in a party filter only.
  if (custom?.[1] !== undefined && entity !== 'parties') {
    usage(
      `--where ${where}: ${entity} have no field ${JSON.stringify(field)}`,
      "org.custom:NAME is an organisation's custom field, in an export of parties; use custom:NAME.",
    );
  }
  // Which operators and values fit a custom field depends on its type, known with the catalog.
  if (custom && catalog === undefined) return { field, operator, value };
  if (custom) {
    const wanted = custom[2] as string;
    const definitions = catalog?.fieldDefinitions[entity] ?? [];
    const definition = /^\d+$/.test(wanted)
      ? definitions.find((d) => d.id === Number(wanted))
      : definitions.find((d) => d.name.toLowerCase() === wanted.toLowerCase());
    if (!definition && !(/^\d+$/.test(wanted) && catalog === null)) {
      usage(
        `--where ${where}: no custom field ${JSON.stringify(wanted)} for ${entity}`,
        definitions.length > 0 ? `Custom fields: ${definitions.map((d) => d.name).join(', ')}.` : undefined,
      );
    }
    name = `${custom[1] ?? ''}custom:${definition?.id ?? wanted}`;
    type = `custom:${definition?.type ?? 'Text'}`;
  }
  if (type === undefined)
    usage(
      `--where ${where}: ${entity} have no field ${JSON.stringify(field)}`,
      `Fields: ${[...Object.keys(FIELDS[entity]), ...Object.keys(LOCAL_NUMBERS[entity] ?? {})].join(', ')}, custom:NAME.`,
    );
  const spec = OPERATORS[operator];
  const accepts = spec?.types.has(type) || (type.startsWith('custom:') && (operator === 'is' || operator === 'is not'));
  if (!accepts) {
    const fits = OPERATOR_NAMES.filter(
      (op) =>
        OPERATORS[op]?.types.has(type as string) || (type?.startsWith('custom:') && (op === 'is' || op === 'is not')),
    );
    usage(`--where ${where}: \`${operator}\` does not apply to ${field}`, `${field} takes: ${fits.join(', ')}.`);
  }
  return { field: name, operator, value: typed(where, type, operator, value, catalog) };
}

/** `--order-by FIELD[:desc]` as the service's orderBy. */
export function parseOrderBy(entity: FilterEntity, text: string): NonNullable<Filter['orderBy']> {
  return text.split(',').map((part) => {
    const [field = '', direction = 'asc'] = part.trim().split(':');
    if (!(field in FIELDS[entity]) && !field.startsWith('custom:'))
      usage(
        `--order-by: ${entity} have no field ${JSON.stringify(field)}`,
        `Fields: ${Object.keys(FIELDS[entity]).join(', ')}.`,
      );
    if (!['asc', 'desc', 'ascending', 'descending'].includes(direction))
      usage(`--order-by ${JSON.stringify(part)}: the direction is asc or desc`);
    return { field, direction: direction.startsWith('desc') ? 'descending' : 'ascending' };
  });
}

/** Builds the filter from its parts: all conditions hold, or with `any` one of them. */
export function buildFilter(conditions: Condition[], any: boolean, orderBy: Filter['orderBy']): Filter {
  const filter: Filter = { conditions: any && conditions.length > 1 ? [{ orGroup: conditions }] : conditions };
  if (orderBy && orderBy.length > 0) filter.orderBy = orderBy;
  return filter;
}

/** A filter file (YAML or JSON) in the service's shape, checked as --where is. */
export function checkFilterFile(entity: FilterEntity, value: unknown, file: string): Filter {
  const root = (value as { filter?: unknown } | null)?.filter ?? value;
  const conditions = (root as { conditions?: unknown } | null)?.conditions;
  if (!Array.isArray(conditions))
    throw new FerryError(
      'USAGE',
      `${file}: a filter has \`conditions\`: a list of {field, operator, value} or {orGroup: [...]}`,
      { location: { file } },
    );
  const check = (c: unknown, path: string): void => {
    if (c && typeof c === 'object' && Array.isArray((c as { orGroup?: unknown }).orGroup)) {
      (c as { orGroup: unknown[] }).orGroup.forEach((inner, i) => check(inner, `${path}.orGroup[${i}]`));
      return;
    }
    const { field, operator } = (c ?? {}) as { field?: unknown; operator?: unknown };
    if (typeof field !== 'string' || typeof operator !== 'string')
      throw new FerryError('USAGE', `${file}: ${path} needs field and operator`, {
        location: { file, yamlPath: path },
      });
    if (!(field in FIELDS[entity]) && !/^(org\.)?custom:\d+$/.test(field)) {
      throw new FerryError('USAGE', `${file}: ${path}: ${entity} have no field ${JSON.stringify(field)}`, {
        location: { file, yamlPath: path },
        hint: `Fields: ${Object.keys(FIELDS[entity]).join(', ')}, custom:ID.`,
      });
    }
    if (!(operator in OPERATORS))
      throw new FerryError('USAGE', `${file}: ${path}: unknown operator ${JSON.stringify(operator)}`, {
        location: { file, yamlPath: path },
        hint: `Operators: ${OPERATOR_NAMES.join(', ')}.`,
      });
    const type = FIELDS[entity][field];
    // Custom fields' types are the account's; the service judges those.
    if (type === undefined) return;
    const fits = OPERATOR_NAMES.filter((op) => OPERATORS[op]?.types.has(type));
    if (!fits.includes(operator))
      throw new FerryError('USAGE', `${file}: ${path}: \`${operator}\` does not apply to ${field}`, {
        location: { file, yamlPath: path },
        hint: `${field} takes: ${fits.join(', ')}.`,
      });
    const value = (c as { value?: unknown }).value;
    const wanted = OPERATORS[operator]?.days
      ? 'a number of days'
      : type === 'number'
        ? 'a number'
        : type === 'boolean'
          ? 'true or false'
          : type === 'date'
            ? 'a date as YYYY-MM-DD'
            : null;
    const ok =
      OPERATORS[operator]?.days || type === 'number'
        ? typeof value === 'number'
        : type === 'boolean'
          ? typeof value === 'boolean'
          : type === 'date'
            ? typeof value === 'string' && DATE.test(value)
            : true;
    if (!ok)
      throw new FerryError(
        'USAGE',
        `${file}: ${path}: ${field} \`${operator}\` takes ${wanted}, got ${JSON.stringify(value)}`,
        { location: { file, yamlPath: path } },
      );
  };
  conditions.forEach((c, i) => check(c, `conditions[${i}]`));
  return root as Filter;
}
