import { z } from 'zod';
import { FerryError } from '../errors/index.ts';
import type {
  AccountCatalog,
  CatalogFieldDefinition,
  CatalogList,
  CatalogPart,
  CatalogUser,
  CatalogWanted,
  FieldEntity,
  NamedItem,
} from './catalog.ts';
import type { CrmClient } from './client.ts';
import { ApiError } from './errors.ts';
import { activityTypeSchema, pipelineSchema, trackDefinitionSchema } from './schemas.ts';

const teamSchema = z.looseObject({ id: z.number().int(), name: z.string() });
const namedSchema = z.looseObject({ id: z.number().int(), name: z.string() });
const stageSchema = z.looseObject({
  id: z.number().int(),
  name: z.string(),
  board: z.looseObject({ name: z.string() }).nullish(),
});

function emailOf(user: Record<string, unknown>): string | undefined {
  for (const key of ['email', 'emailAddress']) {
    const value = user[key];
    if (typeof value === 'string' && value.includes('@')) return value;
  }
  return undefined;
}

function tagNameOf(definition: Record<string, unknown>): string | null {
  const tag = definition.tag;
  if (typeof tag === 'string') return tag;
  if (tag !== null && typeof tag === 'object' && typeof (tag as { name?: unknown }).name === 'string')
    return (tag as { name: string }).name;
  return null;
}

async function listAll<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A list beyond the spec: null when the service answers that it has no such endpoint. */
function unlessMissing<T>(read: Promise<T[]>): Promise<T[] | null> {
  return read.catch((error: unknown) => {
    if (error instanceof ApiError && error.code === 'API_NOT_FOUND') return null;
    throw error;
  });
}

type Listed = { id: number; name: string } & Record<string, unknown>;

/** The v1 path of an entity's custom field definitions. */
const V1_DEFINITIONS: Record<FieldEntity, string> = {
  parties: '/api/party/customfield/definitions',
  kases: '/api/kase/customfield/definitions',
  opportunities: '/api/opportunity/customfield/definitions',
};

/** Whether a definition leaves out what its type needs checked: a List's choices, a Text field's pattern. */
function lacksDetail(d: Listed): boolean {
  return (
    (d.type === 'List' && d.options === undefined) ||
    (d.type === 'Text' && d.pattern === undefined && d.options === undefined)
  );
}

/**
 * An entity's custom field definitions with what each takes. The v2 list is read first; where it
 * leaves out a List's choices or a Text field's pattern, the v1 list of the same definitions gives
 * them (`options`: the choices joined by `;`, or the pattern; ids as text), read once, merged by
 * id. Where v1 has no such list either, the definitions stay as they are, and the service alone
 * checks those values.
 */
async function fieldDefinitionsOf(client: CrmClient, entity: FieldEntity): Promise<Listed[]> {
  const listed = (await client.fieldDefinitions(entity)) as Listed[];
  if (!listed.some(lacksDetail)) return listed;
  const answer = await client.transport.request({
    method: 'GET',
    path: V1_DEFINITIONS[entity],
    headers: { accept: 'application/json' },
    accept: [404, 406],
  });
  if (answer.status !== 200) return listed;
  const holder = (answer.body as { customFieldDefinitions?: { customFieldDefinition?: unknown } } | null)
    ?.customFieldDefinitions?.customFieldDefinition;
  // A v1 list of one item is the item itself.
  const items = (Array.isArray(holder) ? holder : holder === undefined || holder === null ? [] : [holder]) as Array<
    Record<string, unknown>
  >;
  const byId = new Map(items.map((item) => [Number(item.id), item]));
  return listed.map((d) => {
    const v1 = byId.get(d.id);
    if (!v1 || !lacksDetail(d)) return d;
    return {
      ...d,
      options: v1.options ?? null,
      ...(d.forClass === undefined && v1.forClass !== undefined ? { forClass: v1.forClass } : {}),
    };
  });
}

/** A List's choices: a list (v2), or one text with `;` between them (v1's `options`). */
function optionsOf(options: unknown): string[] | undefined {
  if (Array.isArray(options)) return options.filter((o): o is string => typeof o === 'string');
  if (typeof options === 'string') return options === '' ? [] : options.split(';');
  return undefined;
}

/**
 * The account's custom fields with what each takes: its type, a List's choices, a Text field's
 * pattern and the class of party it is for, so that a value the service would refuse is refused
 * before a request (see mapping/field-rules.ts). What the service does not say is left out, and
 * then not checked.
 */
function definitions(list: readonly Listed[]): CatalogFieldDefinition[] {
  return list.map((d) => {
    const definition: CatalogFieldDefinition = { id: d.id, name: d.name, tag: tagNameOf(d) };
    if (typeof d.type === 'string') definition.type = d.type;
    const options = d.type === 'List' ? optionsOf(d.options) : undefined;
    if (options !== undefined) definition.options = options;
    // v1 gives a Text field's pattern as its `options`.
    const pattern =
      d.type === 'Text' ? (d.pattern ?? (typeof d.options === 'string' ? d.options : undefined)) : undefined;
    if (typeof pattern === 'string' && pattern !== '') definition.pattern = pattern;
    else if (pattern === null) definition.pattern = null;
    if (d.forClass === 'PERSON' || d.forClass === 'ORGANISATION' || d.forClass === null)
      definition.forClass = d.forClass;
    return definition;
  });
}

function catalogUsers(users: ReadonlyArray<{ id: number; username: string } & Record<string, unknown>>): CatalogUser[] {
  return users.map((u) => ({
    id: u.id,
    username: u.username,
    name: typeof u.name === 'string' && u.name.trim() !== '' ? u.name : undefined,
    email: emailOf(u),
  }));
}

function catalogTeams(teams: readonly Listed[] | null): NamedItem[] | null {
  return teams === null ? null : teams.map((t) => ({ id: t.id, name: t.name }));
}

const readTeams = (client: CrmClient): Promise<Listed[] | null> =>
  unlessMissing(listAll(client.paginate('/teams', 'teams', teamSchema)));

/**
 * Some of the account's names for a command that needs few of them (an export): the custom field
 * definitions of some entities (a request each), and the users and the teams when asked for. Read
 * by readAccountCatalog, the one reader of names, narrowed to these.
 */
export async function readCatalogPart(
  client: CrmClient,
  wanted: { fieldDefinitions: readonly FieldEntity[]; users: boolean; teams: boolean },
): Promise<CatalogPart> {
  const catalog = await readAccountCatalog(client, {
    lists: new Set(wanted.teams ? (['teams'] as const) : []),
    fieldDefinitions: new Set(wanted.fieldDefinitions),
    users: wanted.users,
  });
  const part: CatalogPart = {
    fieldDefinitions: Object.fromEntries(
      wanted.fieldDefinitions.map((entity) => [entity, catalog.fieldDefinitions[entity]]),
    ),
  };
  if (wanted.users) part.users = catalog.users;
  if (wanted.teams) part.teams = catalog.teams;
  return part;
}

const LIST_LABEL: Record<CatalogList, string> = {
  teams: 'teams',
  pipelines: 'pipelines and milestones',
  activityTypes: 'activity types',
  taskCategories: 'task categories',
  trackDefinitions: 'track definitions',
  stages: 'project stages',
  lostReasons: 'lost reasons',
};

/**
 * Marks a list of `target` as not read: reading it throws, so that a name of a kind the run did
 * not ask for is never taken for a name the account lacks (which a set-up would create again).
 */
function notRead(target: object, key: string, what: string): void {
  Object.defineProperty(target, key, {
    enumerable: true,
    get: () => {
      throw new FerryError(
        'INTERNAL',
        `the account's ${what} were not read for this run, whose mappings name none, and something asked for them`,
        {
          hint: 'This is a bug in crm-ferry: please report it with the command and its mapping files.',
        },
      );
    },
  });
}

/**
 * Reads the account's users, teams, active pipelines and their milestones, activity types, task
 * categories, custom field definitions of parties, projects and opportunities, track definitions,
 * project stages, lost reasons and the token's user: twelve requests and one a pipeline (more past 100 of any), run
 * once, before any row. With `wanted` only the users and the lists it names (and the token's user
 * when a note mapping names an author): an import of people with an owner and a custom field reads
 * two lists instead of them all; the lists left out throw when read (see CatalogWanted).
 *
 * Teams, stages and lost reasons are lists the spec leaves out (the service serves stages and
 * lost reasons; only the sandbox lists teams): where the service has no such list, the catalog
 * says null and those names cannot be checked.
 */
export async function readAccountCatalog(client: CrmClient, wanted?: CatalogWanted): Promise<AccountCatalog> {
  const want = (list: CatalogList): boolean => wanted === undefined || wanted.lists.has(list);
  const wantFields = (entity: FieldEntity): boolean => wanted === undefined || wanted.fieldDefinitions.has(entity);
  const fields = (entity: FieldEntity): Promise<Listed[]> | undefined =>
    wantFields(entity) ? fieldDefinitionsOf(client, entity) : undefined;
  const [
    users,
    teams,
    pipelines,
    activityTypes,
    taskCategories,
    parties,
    kases,
    opportunities,
    trackDefinitions,
    stages,
    lostReasons,
  ] = await Promise.all([
    wanted?.users === false ? [] : client.users(),
    want('teams') ? readTeams(client) : null,
    want('pipelines') ? listAll(client.paginate('/pipelines', 'pipelines', pipelineSchema)) : [],
    want('activityTypes') ? listAll(client.paginate('/activitytypes', 'activityTypes', activityTypeSchema)) : [],
    want('taskCategories') ? client.taskCategories() : [],
    fields('parties') ?? [],
    fields('kases') ?? [],
    fields('opportunities') ?? [],
    want('trackDefinitions')
      ? listAll(client.paginate('/trackdefinitions', 'trackDefinitions', trackDefinitionSchema))
      : [],
    want('stages') ? unlessMissing(listAll(client.paginate('/stages', 'stages', stageSchema))) : null,
    want('lostReasons') ? unlessMissing(listAll(client.paginate('/lostreasons', 'lostReasons', namedSchema))) : null,
  ]);
  // The token's user, when a note mapping names an author (see mapping/note-author.ts).
  const writer = wanted === undefined || wanted.writer === true ? await client.currentUser() : undefined;
  const milestoneLists = await Promise.all(pipelines.map((pipeline) => client.pipelineMilestones(pipeline.id)));
  const milestones = pipelines.flatMap((pipeline, index) =>
    (milestoneLists[index] ?? []).map((m) => ({
      id: m.id,
      name: m.name,
      pipelineId: pipeline.id,
      pipelineName: pipeline.name,
    })),
  );
  const catalog: AccountCatalog = {
    users: catalogUsers(users),
    teams: catalogTeams(teams),
    pipelines: pipelines.map((p) => ({ id: p.id, name: p.name })),
    milestones,
    activityTypes: activityTypes.map((a) => ({ id: a.id, name: a.name })),
    taskCategories: taskCategories.map((c) => ({ id: c.id, name: c.name })),
    fieldDefinitions: {
      parties: definitions(parties),
      kases: definitions(kases),
      opportunities: definitions(opportunities),
    },
    trackDefinitions: trackDefinitions.map((t) => ({ id: t.id, name: t.description })),
    stages: stages === null ? null : stages.map((s) => ({ id: s.id, name: s.name, boardName: s.board?.name ?? '' })),
    lostReasons: lostReasons === null ? null : lostReasons.map((r) => ({ id: r.id, name: r.name })),
    ...(writer === undefined
      ? {}
      : {
          writer:
            writer === null
              ? null
              : {
                  username: writer.username,
                  name: typeof writer.name === 'string' && writer.name.trim() !== '' ? writer.name : undefined,
                  email: emailOf(writer),
                },
        }),
  };
  return wanted === undefined ? catalog : catalogWithOnly(catalog, wanted);
}

/** `catalog` with the lists `wanted` leaves out made unreadable (they throw): what a run that asked for those alone has. */
export function catalogWithOnly(catalog: AccountCatalog, wanted: CatalogWanted): AccountCatalog {
  const narrowed: AccountCatalog = { ...catalog, fieldDefinitions: { ...catalog.fieldDefinitions } };
  for (const list of Object.keys(LIST_LABEL) as CatalogList[])
    if (!wanted.lists.has(list)) notRead(narrowed, list, LIST_LABEL[list]);
  if (!wanted.lists.has('pipelines')) notRead(narrowed, 'milestones', LIST_LABEL.pipelines);
  if (wanted.users === false) notRead(narrowed, 'users', 'users');
  for (const entity of ['parties', 'kases', 'opportunities'] as const)
    if (!wanted.fieldDefinitions.has(entity)) notRead(narrowed.fieldDefinitions, entity, `custom fields of ${entity}`);
  return narrowed;
}
