import { distance } from 'fastest-levenshtein';
import { FerryError, type ErrorCode } from '../errors/index.ts';
import { NAME_VALUED_KINDS } from './compile-fields.ts';
import { ENTITY_PLURAL, TARGET_INFO } from './compile-targets.ts';
import { refusedFieldValue } from './field-rules.ts';
import type {
  AccountCatalog,
  CatalogFieldDefinition,
  CatalogList,
  CatalogMilestone,
  CatalogWanted,
  FieldEntity,
  NamedItem,
  WritingUser,
} from '../client/index.ts';
import { authoredContent } from './note-author.ts';
import { type Entity, type Mapping, matchCriteria, type ValueSpec } from './schema.ts';
import type { MappedRecord, NameKind, NameResolver, NameUse, RowWarning } from './types.ts';

export type {
  AccountCatalog,
  CatalogFieldDefinition,
  CatalogMilestone,
  CatalogUser,
  FieldEntity,
  NamedItem,
} from '../client/index.ts';

type Scope = NameUse['scope'];

/** A problem with one record, on its way to the rejects file. */
export interface RecordProblem {
  field: string;
  code: ErrorCode;
  message: string;
  /** The column the refused value (a key, a name) was read from, when one column holds it. */
  column?: string;
  /** The refused value as the source holds it. */
  value?: string;
  /** Where the rule is in the mapping (`fields[7]`). */
  rule?: string;
  /** What the value should have been, in plain words (`one of the choices of Industry: …`). */
  expected?: string;
  /** The row's other problems, each a reason of its own (see joinProblems). */
  also?: RecordProblem[];
}

/** A resolver that can also say why a name did not resolve (ambiguous, unknown, not listable). */
export interface ExplainingResolver extends NameResolver {
  /** False for the offline resolver: names are then not checked at all. */
  readonly online: boolean;
  /** The message for a name that does not resolve. */
  explain(kind: NameKind, name: string, scope?: Scope): string;
}

const KIND_LABEL: Record<NameKind, string> = {
  user: 'user',
  team: 'team',
  pipeline: 'pipeline',
  milestone: 'milestone',
  stage: 'project stage',
  lostReason: 'lost reason',
  activityType: 'activity type',
  taskCategory: 'task category',
  fieldDefinition: 'custom field',
  trackDefinition: 'track definition',
};

function norm(text: string): string {
  return text.trim().toLowerCase();
}

const INTEGER = /^-?\d+$/;

/**
 * Up to three of `names` closest to `name` (case-insensitive), leaving out those so far away that
 * they would only confuse.
 */
export function closestNames(name: string, names: Iterable<string>, limit = 3): string[] {
  const wanted = norm(name);
  const limitDistance = Math.max(2, Math.floor(wanted.length / 2));
  const scored: Array<{ name: string; d: number }> = [];
  const seen = new Set<string>();
  for (const candidate of names) {
    if (seen.has(candidate)) continue;
    seen.add(candidate);
    const d = distance(wanted, norm(candidate));
    if (d <= limitDistance) scored.push({ name: candidate, d });
  }
  scored.sort((a, b) => a.d - b.d || a.name.localeCompare(b.name));
  return scored.slice(0, limit).map((s) => s.name);
}

function quoteList(names: readonly string[]): string {
  return names.map((n) => `\`${n}\``).join(', ');
}

function withSuggestions(message: string, suggestions: readonly string[]): string {
  if (suggestions.length === 0) return message;
  if (suggestions.length === 1) return `${message}; did you mean \`${suggestions[0]}\`?`;
  return `${message}; did you mean one of ${quoteList(suggestions)}?`;
}

/** Items whose name matches, case-insensitively; an exact-case match alone wins over others. */
function byName<T extends NamedItem>(items: readonly T[], name: string): T[] {
  const wanted = norm(name);
  const matches = items.filter((item) => norm(item.name) === wanted);
  if (matches.length > 1) {
    const exact = matches.filter((item) => item.name === name.trim());
    if (exact.length === 1) return exact;
  }
  return matches;
}

function byId<T extends NamedItem>(items: readonly T[], name: string): T | undefined {
  if (!INTEGER.test(name.trim())) return undefined;
  const id = Number(name.trim());
  return items.find((item) => item.id === id);
}

/** Resolves names against a catalog read from the account (see client/account-catalog.ts). */
export class CatalogResolver implements ExplainingResolver {
  readonly online = true;
  readonly #catalog: AccountCatalog;
  readonly #users = new Map<string, number>();
  /** Users by full name; null for a name two users share (it names neither). */
  readonly #userNames = new Map<string, number | null>();

  constructor(catalog: AccountCatalog) {
    this.#catalog = catalog;
    for (const user of catalog.users) {
      this.#users.set(norm(user.username), user.id);
      // A username wins over someone else's identical email address.
      if (user.email !== undefined && !this.#users.has(norm(user.email))) this.#users.set(norm(user.email), user.id);
      if (user.name !== undefined) {
        const key = norm(user.name);
        this.#userNames.set(key, this.#userNames.has(key) ? null : user.id);
      }
    }
  }

  /** The user the import writes as, when the catalog read it. */
  writer(): WritingUser | null | undefined {
    return this.#catalog.writer;
  }

  /** The ids of the account's users: what tells one account from another behind the same address. */
  userIds(): number[] {
    return this.#catalog.users.map((user) => user.id);
  }

  #pipeline(name: string): NamedItem[] {
    const found = byName(this.#catalog.pipelines, name);
    if (found.length > 0) return found;
    const item = byId(this.#catalog.pipelines, name);
    return item ? [item] : [];
  }

  #milestones(name: string, scope: Scope): { matches: CatalogMilestone[]; pipelineMissing: boolean } {
    const pipeline = scope?.pipeline;
    let pool = this.#catalog.milestones;
    if (pipeline !== undefined && pipeline !== null && pipeline.trim() !== '') {
      const pipelines = this.#pipeline(pipeline);
      if (pipelines.length !== 1) return { matches: [], pipelineMissing: true };
      pool = pool.filter((m) => m.pipelineId === pipelines[0]?.id);
    }
    const matches = byName(pool, name);
    if (matches.length > 0) return { matches, pipelineMissing: false };
    const item = byId(pool, name);
    return { matches: item ? [item] : [], pipelineMissing: false };
  }

  #definitions(name: string, scope: Scope): CatalogFieldDefinition[] {
    const pool = this.#definitionPool(scope);
    const matches = byName(pool, name);
    if (matches.length > 0) return matches;
    const item = byId(pool, name);
    return item ? [item] : [];
  }

  #definitionPool(scope: Scope): CatalogFieldDefinition[] {
    const all = this.#catalog.fieldDefinitions[scope?.entity ?? 'parties'];
    const tag = scope?.tag;
    if (tag === undefined) return all;
    if (tag === null) return all.filter((d) => d.tag === null);
    return all.filter((d) => d.tag !== null && norm(d.tag) === norm(tag));
  }

  #simple(kind: NameKind): readonly NamedItem[] | null {
    switch (kind) {
      case 'stage':
        return this.#catalog.stages ?? null;
      case 'lostReason':
        return this.#catalog.lostReasons ?? null;
      case 'team':
        return this.#catalog.teams;
      case 'pipeline':
        return this.#catalog.pipelines;
      case 'activityType':
        return this.#catalog.activityTypes;
      case 'taskCategory':
        return this.#catalog.taskCategories;
      case 'trackDefinition':
        return this.#catalog.trackDefinitions;
      default:
        return [];
    }
  }

  resolve(kind: NameKind, name: string, scope?: Scope): number | undefined {
    switch (kind) {
      case 'user': {
        // A username or an email address first: each names one user. A full name last, and only
        // when no other user has it.
        const id = this.#users.get(norm(name)) ?? this.#userNames.get(norm(name));
        if (id !== undefined && id !== null) return id;
        if (id === null) return undefined;
        return byId(
          this.#catalog.users.map((u) => ({ id: u.id, name: u.username })),
          name,
        )?.id;
      }
      case 'milestone': {
        const { matches } = this.#milestones(name, scope);
        return matches.length === 1 ? matches[0]?.id : undefined;
      }
      case 'fieldDefinition': {
        const matches = this.#definitions(name, scope);
        return matches.length === 1 ? matches[0]?.id : undefined;
      }
      default: {
        const items = this.#simple(kind);
        // A list the service does not give (teams, stages): an id is taken as given, a name cannot be checked.
        if (items === null) return kind !== 'lostReason' && /^\d+$/.test(name.trim()) ? Number(name.trim()) : undefined;
        const matches = byName(items, name);
        if (matches.length === 1) return matches[0]?.id;
        if (matches.length > 1) return undefined;
        return byId(items, name)?.id;
      }
    }
  }

  suggest(kind: NameKind, name: string, scope?: Scope): string[] {
    switch (kind) {
      case 'user':
        return closestNames(
          name,
          this.#catalog.users.flatMap((u) => [
            u.username,
            ...(u.email === undefined ? [] : [u.email]),
            ...(u.name === undefined ? [] : [u.name]),
          ]),
        );
      case 'milestone': {
        const pipeline = scope?.pipeline;
        if (pipeline !== undefined && pipeline !== null && pipeline.trim() !== '') {
          const pipelines = this.#pipeline(pipeline);
          if (pipelines.length !== 1) return [];
          return closestNames(
            name,
            this.#catalog.milestones.filter((m) => m.pipelineId === pipelines[0]?.id).map((m) => m.name),
          );
        }
        return closestNames(
          name,
          this.#catalog.milestones.map((m) => m.name),
        );
      }
      case 'fieldDefinition':
        return closestNames(
          name,
          this.#definitionPool(scope).map((d) => d.name),
        );
      default:
        return closestNames(
          name,
          (this.#simple(kind) ?? []).map((item) => item.name),
        );
    }
  }

  explain(kind: NameKind, name: string, scope?: Scope): string {
    const label = KIND_LABEL[kind];
    switch (kind) {
      case 'stage':
        if (!this.#catalog.stages)
          return `project stage \`${name}\` cannot be checked by name: the service does not list stages; give the stage's id`;
        if (byName(this.#catalog.stages, name).length > 1) {
          const boards = byName(this.#catalog.stages, name).map((s) => `\`${s.boardName}\` (id ${s.id})`);
          return `project stage \`${name}\` is on several boards (${boards.join(', ')}); give the stage's id`;
        }
        break;
      case 'lostReason':
        if (!this.#catalog.lostReasons)
          return `lost reason \`${name}\` cannot be checked: the service does not list lost reasons`;
        break;
      case 'team':
        if (this.#catalog.teams === null)
          return `team \`${name}\` cannot be checked by name: the service does not list teams; give the team's id`;
        break;
      case 'milestone': {
        const pipeline = scope?.pipeline;
        const { matches, pipelineMissing } = this.#milestones(name, scope);
        if (pipelineMissing && pipeline) {
          const candidates = this.#pipeline(pipeline);
          if (candidates.length > 1)
            return `pipeline \`${pipeline}\` is ambiguous: several active pipelines have that name`;
          return withSuggestions(`unknown pipeline \`${pipeline}\``, this.suggest('pipeline', pipeline));
        }
        if (matches.length > 1) {
          const names = [...new Set(matches.map((m) => m.pipelineName))];
          return `milestone \`${name}\` is in several pipelines (${quoteList(names)}); name the pipeline (a \`pipeline\` field) to choose one`;
        }
        const where = pipeline ? ` in pipeline \`${pipeline}\`` : ' in any active pipeline';
        return withSuggestions(`unknown milestone \`${name}\`${where}`, this.suggest(kind, name, scope));
      }
      case 'fieldDefinition': {
        const entity = scope?.entity ?? 'parties';
        const matches = this.#definitions(name, scope);
        if (matches.length > 1) {
          const tags = matches.map((d) => (d.tag === null ? 'no data tag' : `\`${d.tag}\``));
          return `custom field \`${name}\` of ${entity} exists several times (${tags.join(', ')}); give its data tag with \`tag:\` (null for none)`;
        }
        const tag = scope?.tag;
        const where = tag === undefined ? '' : tag === null ? ' without a data tag' : ` in data tag \`${tag}\``;
        return withSuggestions(
          `unknown custom field \`${name}\`${where} of ${entity}`,
          this.suggest(kind, name, scope),
        );
      }
      default:
        break;
    }
    if (kind === 'user' && this.#userNames.get(norm(name)) === null) {
      return `user \`${name}\` is ambiguous: several users of the account have that name; give a username or an email address`;
    }
    if (kind !== 'user') {
      const items = this.#simple(kind) ?? [];
      if (byName(items, name).length > 1)
        return `${label} \`${name}\` is ambiguous: the account has several with that name; give its id`;
    }
    return withSuggestions(`unknown ${label} \`${name}\``, this.suggest(kind, name, scope));
  }

  /** The custom field of `entity` with this id, with what it takes. */
  fieldDefinition(entity: FieldEntity, id: number): CatalogFieldDefinition | undefined {
    return this.#catalog.fieldDefinitions[entity].find((d) => d.id === id);
  }

  /** The account's own spelling of a name-valued item (a lost reason) with this id. */
  nameOf(kind: NameKind, id: number): string | undefined {
    return this.#simple(kind)?.find((item) => item.id === id)?.name;
  }
}

/** The resolver of an offline run: knows no account, resolves nothing, and is never asked to. */
export const offlineResolver: ExplainingResolver = {
  online: false,
  resolve: () => undefined,
  suggest: () => [],
  explain: (kind, name) => `${KIND_LABEL[kind]} \`${name}\` was not checked (offline)`,
};

/** Builds the resolver of one account from its catalog (read, or made by hand in tests). */
export function createResolver(catalog: AccountCatalog): CatalogResolver {
  return new CatalogResolver(catalog);
}

function isExplaining(resolver: NameResolver): resolver is ExplainingResolver {
  return typeof (resolver as Partial<ExplainingResolver>).explain === 'function';
}

/** Puts `value` at `path` inside `target`; false when the path does not exist. Used for names and links. */
export function setAt(target: Record<string, unknown>, path: ReadonlyArray<string | number>, value: unknown): boolean {
  let node: unknown = target;
  for (let i = 0; i < path.length - 1; i += 1) {
    if (node === null || typeof node !== 'object') return false;
    node = (node as Record<string | number, unknown>)[path[i] as string | number];
  }
  const last = path[path.length - 1];
  if (last === undefined || node === null || typeof node !== 'object') return false;
  (node as Record<string | number, unknown>)[last] = value;
  return true;
}

/**
 * Puts the account's id for each name of `mapped` into its record (at the name's `path`) and
 * returns the names that did not resolve, as MAPPING_UNKNOWN_NAME problems. A name whose entry
 * says `onUnknown: drop` is no problem: its field is left out of the record and the record gets
 * a warning (USER_UNKNOWN for an owner, whom the service then makes the token's user;
 * NOT_CARRIED for a team). With the offline resolver nothing is checked and nothing is filled in.
 */
export function resolveRecord(mapped: MappedRecord, resolver: NameResolver): RecordProblem[] {
  if (mapped.entity === 'entry') headByAuthor(mapped, resolver);
  if (isExplaining(resolver) && !resolver.online) return [];
  const problems: RecordProblem[] = [];
  /** Custom field values their field refuses under `onInvalid: drop`: taken out once every path is filled in. */
  const dropped: number[] = [];
  for (const use of mapped.names) {
    const id = resolver.resolve(use.kind, use.name, use.scope);
    if (id !== undefined) {
      // A lost reason goes to the service as the account's name for it, not its id.
      const value = NAME_VALUED_KINDS.has(use.kind) ? (resolver.nameOf?.(use.kind, id) ?? use.name) : id;
      if (!setAt(mapped.record, use.path, value)) {
        throw new FerryError(
          'INTERNAL',
          `a name's path ${JSON.stringify(use.path)} does not exist in the mapped record (${use.yamlPath})`,
        );
      }
      if (use.kind === 'fieldDefinition') checkFieldValue(mapped, use, id, resolver, problems, dropped);
      continue;
    }
    const message = isExplaining(resolver)
      ? resolver.explain(use.kind, use.name, use.scope)
      : withSuggestions(
          `unknown ${KIND_LABEL[use.kind]} \`${use.name}\``,
          resolver.suggest(use.kind, use.name, use.scope),
        );
    if (use.onUnknown === 'drop') {
      const field = String(use.path[0]);
      delete mapped.record[field];
      const outcome =
        use.kind === 'user' ? "the record goes to the token's user" : `the record is written without a ${field}`;
      const warning: RowWarning = {
        code: use.kind === 'user' ? 'USER_UNKNOWN' : 'NOT_CARRIED',
        field,
        message: `${message}; ${outcome} (onUnknown: drop)`,
        value: use.name,
        rule: use.yamlPath,
      };
      if (use.column !== undefined) warning.column = use.column;
      (mapped.warnings ??= []).push(warning);
      continue;
    }
    problems.push({
      field: use.yamlPath,
      code: 'MAPPING_UNKNOWN_NAME',
      message,
      value: use.name,
      rule: use.yamlPath,
      ...(use.column === undefined ? {} : { column: use.column }),
    });
  }
  if (dropped.length > 0) {
    const fields = mapped.record.fields as unknown[];
    for (const position of dropped.sort((a, b) => b - a)) fields.splice(position, 1);
  }
  return problems;
}

/**
 * A note's `author` and `authorLine` (which the service does not take) turned into its text: kept
 * as it was when the author is the user the import writes as, else headed by the author's line
 * (note-author.ts, the rule restore follows too). A resolver that knows no writing user (offline)
 * heads every named author's note.
 */
function headByAuthor(mapped: MappedRecord, resolver: NameResolver): void {
  const record = mapped.record;
  if (!('author' in record) && !('authorLine' in record)) return;
  const { author, authorLine, content } = record;
  delete record.author;
  delete record.authorLine;
  const name = typeof author === 'string' ? author.trim() : '';
  if (name === '') return;
  const given = {
    ...(name.includes('@') ? { email: name } : { name }),
    line: typeof authorLine === 'string' ? authorLine : undefined,
  };
  const text = typeof content === 'string' ? content : '';
  const headed = authoredContent(text, given, null);
  const sent = authoredContent(text, given, resolver.writer?.());
  if (sent !== headed) mapped.contentAlso = headed;
  if (sent !== text || 'content' in record) record.content = sent;
}

/**
 * A custom field's value against what its definition takes (field-rules.ts): a value the service
 * would refuse rejects the row, or under the field's `onInvalid: drop` (and `keep`, as the service
 * takes no value as typed there) is left out with a VALUE_DROPPED warning.
 */
function checkFieldValue(
  mapped: MappedRecord,
  use: NameUse,
  id: number,
  resolver: NameResolver,
  problems: RecordProblem[],
  dropped: number[],
): void {
  const entity = use.scope?.entity;
  const definition = entity === undefined ? undefined : resolver.fieldDefinition?.(entity, id);
  const [list, position] = use.path;
  const element =
    typeof position === 'number'
      ? (mapped.record[list as string] as Array<{ value?: unknown }> | undefined)?.[position]
      : undefined;
  if (definition === undefined || element === undefined) return;
  const partyClass = entity === 'parties' && typeof mapped.record.type === 'string' ? mapped.record.type : undefined;
  const refusal = refusedFieldValue(definition, element.value, partyClass);
  if (refusal === null) return;
  const shown = typeof element.value === 'string' ? element.value : JSON.stringify(element.value);
  const detail = {
    rule: use.yamlPath,
    ...(use.valueColumn === undefined ? {} : { column: use.valueColumn }),
    ...(refusal.expected === undefined ? {} : { expected: refusal.expected }),
  };
  const message =
    refusal.expected === undefined ? refusal.message : `expected ${refusal.expected}, got ${JSON.stringify(shown)}`;
  if (use.onInvalid === 'drop') {
    dropped.push(position as number);
    (mapped.warnings ??= []).push({
      code: 'VALUE_DROPPED',
      field: 'custom',
      message: `left out: ${message}`,
      value: shown,
      ...detail,
    });
    return;
  }
  problems.push({ field: use.yamlPath, code: 'MAPPING_VALUE', message, value: shown, ...detail });
}

// ---------------------------------------------------------------------------------------------
// Names written as constants in a mapping: checked once, before any row.

/** The kind of name a target of `entity` holds, from the compiler's target table. */
function nameKindOf(entity: Entity, to: string): NameKind | undefined {
  const info = TARGET_INFO[entity][to];
  if (!info) return undefined;
  if (info.kind === 'pipeline') return 'pipeline';
  return info.kind === 'name' || info.kind === 'names' ? info.nameKind : undefined;
}

const FIELD_ENTITY: Partial<Record<Entity, FieldEntity>> = ENTITY_PLURAL;

/** The list of the account's names a kind is looked up in (users are always read; custom fields apart). */
const LIST_OF_KIND: Record<Exclude<NameKind, 'user' | 'fieldDefinition'>, CatalogList> = {
  team: 'teams',
  pipeline: 'pipelines',
  milestone: 'pipelines',
  stage: 'stages',
  lostReason: 'lostReasons',
  activityType: 'activityTypes',
  taskCategory: 'taskCategories',
  trackDefinition: 'trackDefinitions',
};

/**
 * The lists of the account's names that steps can look names up in: one per kind of name a field
 * of a mapping holds (from a column or written in the mapping, the compiler's target table says
 * which), and the custom fields of the steps' entities that write custom fields or match by one.
 * A run reads these and the users alone (readAccountCatalog), where the whole catalog is a dozen
 * requests. A set-up creates what the rows name and reads the whole catalog.
 */
export function catalogWanted(mappings: ReadonlyArray<Pick<Mapping, 'entity' | 'fields' | 'match'>>): CatalogWanted {
  const lists = new Set<CatalogList>();
  const fieldDefinitions = new Set<FieldEntity>();
  let writer = false;
  for (const mapping of mappings) {
    if (mapping.entity === 'entry' && mapping.fields.some((field) => field.to === 'author')) writer = true;
    const entity = FIELD_ENTITY[mapping.entity];
    if (entity !== undefined && mapping.match !== undefined && matchCriteria(mapping.match).includes('custom'))
      fieldDefinitions.add(entity);
    for (const field of mapping.fields) {
      if (TARGET_INFO[mapping.entity][field.to]?.kind === 'custom') {
        if (entity !== undefined) fieldDefinitions.add(entity);
        continue;
      }
      const kind = nameKindOf(mapping.entity, field.to);
      if (kind !== undefined && kind !== 'user' && kind !== 'fieldDefinition') lists.add(LIST_OF_KIND[kind]);
    }
  }
  return writer ? { lists, fieldDefinitions, writer } : { lists, fieldDefinitions };
}

/** The value of a spec when it is the same for every row; undefined when it depends on the row or on transforms. */
export function constantOf(spec: ValueSpec | undefined): string | undefined {
  if (spec === undefined || spec === null) return undefined;
  if (typeof spec === 'string') return spec.includes('{{') || spec.trim() === '' ? undefined : spec;
  if (typeof spec === 'number') return String(spec);
  if (typeof spec === 'boolean') return undefined;
  if (spec.transform !== undefined && spec.transform.length > 0) return undefined;
  if (spec.const !== undefined && spec.const !== null && typeof spec.const !== 'boolean') {
    const text = String(spec.const);
    return text.trim() === '' ? undefined : text;
  }
  return undefined;
}

/** A name a mapping states as a constant, with where it is written. */
export type ConstantName = Omit<NameUse, 'path'>;

/** Every name a mapping writes as a constant: the same for every row, so checked once. */
export function constantNames(mapping: Pick<Mapping, 'entity' | 'fields'>): ConstantName[] {
  const found: ConstantName[] = [];
  const pipelineEntry = mapping.fields.find((f) => f.to === 'pipeline');
  // A milestone is looked up in the mapping's pipeline when that is a constant; a pipeline from a
  // column differs per row, so its milestones are checked per row.
  const pipeline = pipelineEntry === undefined ? null : constantOf(pipelineEntry.value);
  mapping.fields.forEach((field, index) => {
    if (field.to === 'custom' && field.definition !== undefined) {
      const entity = FIELD_ENTITY[mapping.entity];
      if (!entity) return;
      const scope: NonNullable<Scope> = { entity };
      if (field.tag !== undefined) scope.tag = field.tag;
      found.push({ kind: 'fieldDefinition', name: field.definition, scope, yamlPath: `fields[${index}].definition` });
      return;
    }
    const kind = nameKindOf(mapping.entity, field.to);
    // A name the entry lets go (`onUnknown: drop`) is no reason to stop the run: rows warn of it.
    if (!kind || field.ref !== undefined || field.onUnknown === 'drop') return;
    const name = constantOf(field.value);
    if (name === undefined) return;
    if (kind === 'milestone') {
      if (pipeline === undefined) return;
      found.push({ kind, name, scope: { pipeline }, yamlPath: `fields[${index}].value` });
      return;
    }
    found.push({ kind, name, yamlPath: `fields[${index}].value` });
  });
  return found;
}

/** A constant name the account does not have, located in the mapping file. */
export interface ConstantNameProblem {
  yamlPath: string;
  message: string;
}

/** The constant names of a mapping that do not resolve. Empty with the offline resolver. */
export function checkConstantNames(
  mapping: Pick<Mapping, 'entity' | 'fields'>,
  resolver: NameResolver,
): ConstantNameProblem[] {
  if (isExplaining(resolver) && !resolver.online) return [];
  const problems: ConstantNameProblem[] = [];
  for (const use of constantNames(mapping)) {
    if (resolver.resolve(use.kind, use.name, use.scope) !== undefined) continue;
    const message = isExplaining(resolver)
      ? resolver.explain(use.kind, use.name, use.scope)
      : withSuggestions(
          `unknown ${KIND_LABEL[use.kind]} \`${use.name}\``,
          resolver.suggest(use.kind, use.name, use.scope),
        );
    problems.push({ yamlPath: use.yamlPath, message });
  }
  return problems;
}
