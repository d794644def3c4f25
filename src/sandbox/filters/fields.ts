/**
 * The field table of each entity: what every field name of the filter interface reads from a
 * stored record, and its kind (which decides the operators and value types it takes).
 */
import type { KaseRec, MilestoneRec, OpportunityRec, PartyRec } from '../model.ts';
import { custom, day, flag, number, reference, tags, text, texts, via } from './builders.ts';
import { addDays } from './dates.ts';
import { FilterError } from './filter-error.ts';
import type { EntityRecords, FieldSpec, FilterEntity, FilterEnv } from './types.ts';

type FieldFactory<R> = (env: FilterEnv) => FieldSpec<R>;
type FieldTable<R> = Record<string, FieldFactory<R>>;

function isNumeric(text: string): boolean {
  const trimmed = text.trim();
  return trimmed !== '' && Number.isFinite(Number(trimmed));
}

function digitsOf(text: string): string {
  return text.replace(/\D+/g, '');
}

function personName(first: string | null, last: string | null): string | null {
  if (first && last) return `${first} ${last}`;
  return first || last || null;
}

/** A party's display name: "first last" for people, the name for organisations. */
export function partyName(party: PartyRec): string | null {
  return party.type === 'organisation' ? party.name : personName(party.firstName, party.lastName);
}

const PARTY_FIELDS: FieldTable<PartyRec> = {
  id: () => number((p) => p.id),
  name: () => text(partyName),
  jobTitle: () => text((p) => p.jobTitle),
  email: () =>
    texts(
      (p) => p.emailAddresses,
      (e) => e.address,
    ),
  phone: () => ({
    ...texts(
      (p: PartyRec) => p.phoneNumbers,
      (n) => n.number,
    ),
    // Numbers are written many ways (`+44 20 7946 0000`, `020-7946-0000`): a value with digits is
    // compared on digits alone, as the party search does.
    canonical: (value: string) => (/\d/.test(value) ? digitsOf : null),
  }),
  city: () =>
    texts(
      (p) => p.addresses,
      (a) => a.city,
    ),
  zip: () =>
    texts(
      (p) => p.addresses,
      (a) => a.zip,
    ),
  state: () =>
    texts(
      (p) => p.addresses,
      (a) => a.state,
    ),
  country: () =>
    texts(
      (p) => p.addresses,
      (a) => a.country,
    ),
  type: () => text((p) => p.type),
  tag: (env) => tags(env, 'parties'),
  owner: () => number((p) => p.ownerId),
  team: () => number((p) => p.teamId),
  hasEmailAddress: () => flag((p) => p.emailAddresses.length > 0),
  hasPhoneNumber: () => flag((p) => p.phoneNumbers.length > 0),
  hasAddress: () => flag((p) => p.addresses.length > 0),
  hasPeople: (env) => {
    // One pass over the parties per filter, instead of one per organisation tested.
    const employers = new Set<number>();
    for (const party of env.store.parties.all()) {
      if (party.type === 'person' && party.organisationId !== null) employers.add(party.organisationId);
    }
    return flag((p) => p.type === 'organisation' && employers.has(p.id));
  },
  hasTags: () => flag((p) => p.tagIds.length > 0),
  addedOn: () => day((p) => p.createdAt),
  updatedOn: () => day((p) => p.updatedAt),
  lastContactedOn: () => day((p) => p.lastContactedAt),
};

/** OPEN while the milestone is not complete; a complete milestone at 100 % is a win, any other a loss. */
export function opportunityStatus(milestone: MilestoneRec | undefined): 'OPEN' | 'WON' | 'LOST' | null {
  if (!milestone) return null;
  if (!milestone.complete) return 'OPEN';
  return milestone.probability === 100 ? 'WON' : 'LOST';
}

const OPPORTUNITY_FIELDS: FieldTable<OpportunityRec> = {
  id: () => number((o) => o.id),
  name: () => text((o) => o.name),
  status: (env) => text((o) => opportunityStatus(env.store.milestones.get(o.milestoneId))),
  milestone: (env) => text((o) => env.store.milestones.get(o.milestoneId)?.name),
  lostReason: () => text((o) => o.lostReason),
  currency: () => text((o) => o.value?.currency),
  expectedValue: () => ({
    ...text((o: OpportunityRec) => (o.value ? String(o.value.amount) : null)),
    // `is "1500.00"` should find an amount of 1500. Only equality compares numbers: a prefix such
    // as "15." is not a number to normalise.
    canonical: (value, operator) =>
      (operator === 'is' || operator === 'is not') && isNumeric(value)
        ? (text) => (isNumeric(text) ? String(Number(text)) : text)
        : null,
    sortKey: (o: OpportunityRec) => o.value?.amount ?? null,
  }),
  pipeline: (env) =>
    reference(
      () => env.store.pipelines.all(),
      (o) => env.store.milestones.get(o.milestoneId)?.pipelineId,
      (id) => env.store.pipelines.get(id)?.name,
    ),
  probability: () => number((o) => o.probability),
  tag: (env) => tags(env, 'opportunities'),
  owner: () => number((o) => o.ownerId),
  team: () => number((o) => o.teamId),
  isOpen: (env) =>
    flag((o) => {
      const status = opportunityStatus(env.store.milestones.get(o.milestoneId));
      return status === null ? null : status === 'OPEN';
    }),
  isStale: (env) => {
    // Stale: still open, and its last change is more than the milestone's daysUntilStale ago.
    // Few milestones share few limits, so each limit date is worked out once.
    const limits = new Map<number, string>();
    const limitOf = (days: number): string => {
      let limit = limits.get(days);
      if (limit === undefined) limits.set(days, (limit = addDays(env.today, -days)));
      return limit;
    };
    return flag((o) => {
      const milestone = env.store.milestones.get(o.milestoneId);
      if (!milestone || milestone.complete || milestone.daysUntilStale === null) return false;
      return o.updatedAt.slice(0, 10) < limitOf(milestone.daysUntilStale);
    });
  },
  isOwnedByMe: (env) => flag((o) => o.ownerId === env.callerId),
  hasTags: () => flag((o) => o.tagIds.length > 0),
  addedOn: () => day((o) => o.createdAt),
  updatedOn: () => day((o) => o.updatedAt),
  closedOn: () => day((o) => o.closedOn),
  expectedCloseOn: () => day((o) => o.expectedCloseOn),
};

/*
 * Stages are not records of the store: env.boards lists them. A project points at its stage by id;
 * its board is the one holding that stage.
 */
function stagesOf(env: FilterEnv): Array<{ id: number; name: string }> {
  return env.boards.flatMap((board) => board.stages);
}

const KASE_FIELDS: FieldTable<KaseRec> = {
  id: () => number((k) => k.id),
  name: () => text((k) => k.name),
  status: () => text((k) => k.status),
  board: (env) => {
    const boardOfStage = new Map<number, number>();
    for (const board of env.boards) for (const stage of board.stages) boardOfStage.set(stage.id, board.id);
    const names = new Map(env.boards.map((board) => [board.id, board.name]));
    return reference(
      () => env.boards,
      (k) => (k.stageId === null ? null : boardOfStage.get(k.stageId)),
      (id) => names.get(id),
    );
  },
  stage: (env) => {
    const stages = stagesOf(env);
    const byId = new Map(stages.map((stage) => [stage.id, stage.name]));
    return reference(
      () => stages,
      (k) => k.stageId,
      (id) => byId.get(id),
    );
  },
  tag: (env) => tags(env, 'kases'),
  owner: () => number((k) => k.ownerId),
  team: () => number((k) => k.teamId),
  isOpen: () => flag((k) => k.status === 'OPEN'),
  isOwnedByMe: (env) => flag((k) => k.ownerId === env.callerId),
  hasTags: () => flag((k) => k.tagIds.length > 0),
  addedOn: () => day((k) => k.createdAt),
  updatedOn: () => day((k) => k.updatedAt),
  startOn: () => day((k) => k.startOn),
  closedOn: () => day((k) => k.closedOn),
  expectedCloseOn: () => day((k) => k.expectedCloseOn),
};

const TABLES: { [E in FilterEntity]: FieldTable<EntityRecords[E]> } = {
  parties: PARTY_FIELDS,
  opportunities: OPPORTUNITY_FIELDS,
  kases: KASE_FIELDS,
};

const CUSTOM = /^custom:(\d{1,15})$/;

/** Every field name an entity accepts, as listed in messages (custom fields as patterns). */
export function fieldNames(entity: FilterEntity): string[] {
  const names = [...Object.keys(TABLES[entity]), 'custom:{fieldId}'];
  if (entity === 'parties') names.push('org.name', 'org.tag', 'org.custom:{fieldId}');
  return names;
}

function customField<E extends FilterEntity>(
  entity: E,
  name: string,
  env: FilterEnv,
  path: string,
): FieldSpec<EntityRecords[E]> | null {
  const match = CUSTOM.exec(name);
  if (!match) {
    if (name.startsWith('custom:')) {
      throw new FilterError(
        path,
        `custom fields are named custom:{fieldId} with a numeric id, got ${JSON.stringify(name)}`,
      );
    }
    return null;
  }
  const definition = env.store.fieldDefinitions.get(Number(match[1]));
  if (!definition)
    throw new FilterError(path, `there is no custom field definition with id ${match[1]} (field "${name}")`);
  if (definition.entity !== entity) {
    throw new FilterError(
      path,
      `custom field ${definition.id} ("${definition.name}") is defined for ${definition.entity}, not for ${entity}`,
    );
  }
  return custom(definition.id, definition.type) as FieldSpec<EntityRecords[E]>;
}

function organisationOf(env: FilterEnv): (party: PartyRec) => PartyRec | null {
  return (party) => {
    if (party.type !== 'person' || party.organisationId === null) return null;
    const organisation = env.store.parties.get(party.organisationId);
    return organisation?.type === 'organisation' ? organisation : null;
  };
}

function organisationField(name: string, env: FilterEnv, path: string): FieldSpec<PartyRec> | null {
  if (!name.startsWith('org.')) return null;
  const inner = name.slice(4);
  let spec: FieldSpec<PartyRec> | null = null;
  if (inner === 'name' || inner === 'tag') spec = PARTY_FIELDS[inner]?.(env) ?? null;
  else spec = customField('parties', inner, env, path);
  if (!spec) {
    throw new FilterError(
      path,
      `unknown organisation field ${JSON.stringify(name)}; organisation fields: org.name, org.tag, org.custom:{fieldId}`,
    );
  }
  return via(spec, organisationOf(env));
}

/**
 * Finds the field a condition or orderBy element names.
 *
 * @throws FilterError (at `path`) for an unknown field, a custom field id without definition, or
 *   a definition that belongs to another entity.
 */
export function resolveField<E extends FilterEntity>(
  entity: E,
  name: string,
  env: FilterEnv,
  path: string,
): FieldSpec<EntityRecords[E]> {
  const table = TABLES[entity] as FieldTable<EntityRecords[E]>;
  if (Object.hasOwn(table, name)) {
    const factory = table[name];
    if (factory) return factory(env);
  }
  const customSpec = customField(entity, name, env, path);
  if (customSpec) return customSpec;
  if (entity === 'parties') {
    const orgSpec = organisationField(name, env, path);
    if (orgSpec) return orgSpec as FieldSpec<EntityRecords[E]>;
  }
  throw new FilterError(
    path,
    `unknown field ${JSON.stringify(name)} for ${entity}; fields: ${fieldNames(entity).join(', ')}`,
  );
}
