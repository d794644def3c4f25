/**
 * Activity types and their icons (spec 4.9).
 *
 * Choices where the interface leaves things open:
 * - creating an activity type on an account that is not a teams edition is 403: the request is
 *   well formed, the account's plan does not allow it;
 * - built-in types (negative ids) cannot be deleted or renamed; only `updateLastContacted` of a
 *   built-in can change. Both refusals are 422;
 * - deleting a type leaves its entries without an activity type rather than deleting them.
 */
import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';
import { created, forbidden, notFound, paginate, unwrap, validationError } from '../http.ts';
import type { ActivityTypeRec } from '../model.ts';

/** The icons an activity type can use: [id, iconName], in the service's order. */
const ICONS: ReadonlyArray<readonly [string, string]> = [
  ['BARCHART', 'bar-chart'],
  ['PIECHART', 'pie-chart'],
  ['MONEY', 'money'],
  ['TAG', 'tag'],
  ['CAMERA', 'camera'],
  ['PICTURE', 'picture'],
  ['BELL', 'bell'],
  ['CAR', 'car'],
  ['PLANE', 'plane'],
  ['DOCUMENT', 'document'],
  ['DOCUMENT2', 'document-2'],
  ['SPREADSHEET', 'spreadsheet'],
  ['PHONE', 'phone'],
  ['PERSONWALKING', 'person-walking'],
  ['SHOPPINGCART', 'shopping-cart'],
  ['LOCATION', 'location'],
  ['CLIPBOARD', 'clipboard'],
  ['MIC', 'mic'],
  ['MEETING', 'meeting'],
  ['PACKAGE', 'package'],
  ['CLOCK', 'clock'],
  ['DOUBLESPEECHBUBBLE', 'double-speech-bubble'],
  ['COG', 'cog'],
  ['LINK', 'link'],
  ['STAR', 'star'],
  ['CREDITCARD', 'credit-card'],
  ['MAIL', 'mail'],
  ['LINECHART', 'line-chart'],
  ['SHOPPINGBASKET', 'shopping-basket'],
];

export interface ActivityTypeIcon {
  order: number;
  id: string;
  displayName: string;
  iconName: string;
  isSystem: boolean;
}

/** Every icon, with a display name made from its icon name ("bar-chart" -> "Bar chart"). */
export const ACTIVITY_TYPE_ICONS: readonly ActivityTypeIcon[] = ICONS.map(([id, iconName], order) => {
  const words = iconName.replace(/-/g, ' ');
  return { order, id, displayName: words.charAt(0).toUpperCase() + words.slice(1), iconName, isSystem: false };
});

const ICONS_BY_ID = new Map(ACTIVITY_TYPE_ICONS.map((icon) => [icon.id, icon]));

type Problem = { field: string; message: string };

function activityTypeJson(type: ActivityTypeRec): Record<string, unknown> {
  return {
    id: type.id,
    name: type.name,
    icon: ICONS_BY_ID.get(type.iconId) ?? null,
    updateLastContacted: type.updateLastContacted,
  };
}

/** Built-ins first (-1, -2, -3), then the account's own types oldest first. */
function ordered(types: ActivityTypeRec[]): ActivityTypeRec[] {
  return [...types].sort((a, b) => (a.id < 0 && b.id < 0 ? b.id - a.id : a.id - b.id));
}

/** Parses the id of /activitytypes/{id}; built-in ids are negative. */
function parseTypeId(raw: string | undefined): number {
  if (raw === undefined || !/^-?\d{1,15}$/.test(raw))
    throw notFound(`no activity type with id ${JSON.stringify(raw ?? '')}`);
  return Number(raw);
}

interface TypeChanges {
  name?: string;
  iconId?: string;
  updateLastContacted?: boolean;
}

function readChanges(body: Record<string, unknown>, creating: boolean, problems: Problem[]): TypeChanges {
  const changes: TypeChanges = {};
  for (const key of Object.keys(body)) {
    if (!['name', 'icon', 'updateLastContacted', 'id'].includes(key))
      problems.push({ field: key, message: 'is not a property that can be written' });
  }
  if (body.name !== undefined || creating) {
    if (typeof body.name === 'string' && body.name.trim() !== '') changes.name = body.name.trim();
    else
      problems.push({
        field: 'name',
        message:
          body.name === undefined ? 'is required' : `must be a non-empty string, got ${JSON.stringify(body.name)}`,
      });
  }
  if (body.icon !== undefined || creating) {
    const icon = body.icon;
    const id =
      icon !== null && typeof icon === 'object' && !Array.isArray(icon) ? (icon as Record<string, unknown>).id : icon;
    if (typeof id === 'string' && ICONS_BY_ID.has(id)) changes.iconId = id;
    else {
      problems.push({
        field: 'icon',
        message:
          icon === undefined
            ? 'is required, as {"id": <icon id>}'
            : `must be {"id": <icon id>} naming one of GET /activitytypes/icons, got ${JSON.stringify(icon)}`,
      });
    }
  }
  if (body.updateLastContacted !== undefined) {
    if (typeof body.updateLastContacted === 'boolean') changes.updateLastContacted = body.updateLastContacted;
    else
      problems.push({
        field: 'updateLastContacted',
        message: `must be true or false, got ${JSON.stringify(body.updateLastContacted)}`,
      });
  }
  return changes;
}

/** Registers the activity type routes. */
export function registerActivityTypeRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const store = ctx.store;

  const typeOr404 = (raw: string | undefined): ActivityTypeRec => {
    const id = parseTypeId(raw);
    const type = store.activityTypes.get(id);
    if (!type) throw notFound(`no activity type with id ${id}`);
    return type;
  };

  const nameTaken = (name: string, exceptId: number | null): boolean =>
    store.activityTypes.all().some((t) => t.id !== exceptId && t.name.toLowerCase() === name.toLowerCase());

  app.get('/api/v2/activitytypes', async (request, reply) => {
    return { activityTypes: paginate(request, reply, ordered(store.activityTypes.all())).map(activityTypeJson) };
  });

  // A static path: fastify matches it before the parametric /activitytypes/:activityTypeId.
  app.get('/api/v2/activitytypes/icons', async () => ({ activityTypeIcons: ACTIVITY_TYPE_ICONS }));

  app.get('/api/v2/activitytypes/:activityTypeId', async (request) => {
    return { activityType: activityTypeJson(typeOr404((request.params as { activityTypeId: string }).activityTypeId)) };
  });

  app.post('/api/v2/activitytypes', async (request, reply) => {
    if (!store.teamsEdition) throw forbidden('activity types can only be created on a teams edition account');
    const body = unwrap(request, 'activityType');
    const problems: Problem[] = [];
    const changes = readChanges(body, true, problems);
    if (changes.name !== undefined && nameTaken(changes.name, null)) {
      problems.push({
        field: 'name',
        message: `an activity type named ${JSON.stringify(changes.name)} already exists`,
      });
    }
    if (problems.length > 0 || changes.name === undefined || changes.iconId === undefined)
      throw validationError('activityType', problems);
    const type = store.activityTypes.insert({
      name: changes.name,
      iconId: changes.iconId,
      updateLastContacted: changes.updateLastContacted ?? false,
    });
    return created(request, reply, `/activitytypes/${type.id}`, { activityType: activityTypeJson(type) });
  });

  app.put('/api/v2/activitytypes/:activityTypeId', async (request) => {
    const type = typeOr404((request.params as { activityTypeId: string }).activityTypeId);
    const body = unwrap(request, 'activityType');
    const problems: Problem[] = [];
    const changes = readChanges(body, false, problems);
    if (type.id < 0) {
      if (changes.name !== undefined && changes.name !== type.name)
        problems.push({ field: 'name', message: 'a built-in activity type cannot be renamed' });
      if (changes.iconId !== undefined && changes.iconId !== type.iconId)
        problems.push({ field: 'icon', message: 'the icon of a built-in activity type cannot change' });
    }
    if (changes.name !== undefined && nameTaken(changes.name, type.id)) {
      problems.push({
        field: 'name',
        message: `an activity type named ${JSON.stringify(changes.name)} already exists`,
      });
    }
    if (problems.length > 0) throw validationError('activityType', problems);
    Object.assign(type, changes);
    return { activityType: activityTypeJson(type) };
  });

  app.delete('/api/v2/activitytypes/:activityTypeId', async (request, reply) => {
    const type = typeOr404((request.params as { activityTypeId: string }).activityTypeId);
    if (type.id < 0) {
      throw validationError('activityType', [
        { field: 'id', message: `${type.name} is a built-in activity type and cannot be deleted` },
      ]);
    }
    for (const entry of store.entries.all()) {
      if (entry.activityTypeId !== type.id) continue;
      entry.activityTypeId = null;
      store.entries.touch(entry);
    }
    store.activityTypes.delete(type.id);
    return reply.code(204).send();
  });
}
