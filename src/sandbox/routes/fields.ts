/**
 * Custom field definitions and tags per entity. The interface mentions these lists without
 * describing them (spec 4.13), so the sandbox offers listings in the v2 style:
 * `/{entity}/fields/definitions[/{id}]` and `/{entity}/tags[/{id}]`, paged like every list, and
 * tag creation (`POST /{entity}/tags`).
 */
import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';
import { created, notFound, paginate, parseId, unwrap } from '../http.ts';
import type { EntityKind, FieldDefinitionRec, TagRec } from '../model.ts';
import { checkKeys, Problems, readString } from './record-common.ts';
import { readTagFlag } from './record-tags-fields.ts';

const ENTITIES: readonly EntityKind[] = ['parties', 'opportunities', 'kases'];

/** The wire shape of a custom field definition. */
export function serializeFieldDefinition(ctx: SandboxContext, definition: FieldDefinitionRec): Record<string, unknown> {
  const tag = definition.tagId === null ? undefined : ctx.store.tags.get(definition.tagId);
  const out: Record<string, unknown> = {
    id: definition.id,
    name: definition.name,
    type: definition.type,
    options: definition.type === 'List' ? [...(definition.options ?? [])] : null,
    pattern: definition.type === 'Text' ? definition.pattern : null,
    tag: tag ? { id: tag.id, name: tag.name } : null,
    important: definition.important,
    displayOrder: definition.displayOrder,
  };
  // Only party fields can be limited to people or organisations.
  if (definition.entity === 'parties') out.forClass = definition.forClass;
  return out;
}

/** A tag as its own endpoints show it: with its description (records embed only id, name, dataTag). */
function tagJson(tag: TagRec): Record<string, unknown> {
  // A state saved before tags kept a description has none.
  return { id: tag.id, name: tag.name, description: tag.description ?? null, dataTag: tag.dataTag };
}

/** Registers the definition and tag listings of parties, opportunities and projects. */
export function registerFieldRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { store } = ctx;
  for (const entity of ENTITIES) {
    const definitionsOf = (): FieldDefinitionRec[] =>
      store.fieldDefinitions
        .all()
        .filter((d) => d.entity === entity)
        .sort((a, b) => a.displayOrder - b.displayOrder || a.id - b.id);

    app.get(`/api/v2/${entity}/fields/definitions`, async (request, reply) => ({
      definitions: paginate(request, reply, definitionsOf()).map((d) => serializeFieldDefinition(ctx, d)),
    }));

    app.get(`/api/v2/${entity}/fields/definitions/:definitionId`, async (request) => {
      const { definitionId } = request.params as { definitionId: string };
      const id = parseId(definitionId, 'custom field definition');
      const definition = store.fieldDefinitions.get(id);
      if (!definition || definition.entity !== entity)
        throw notFound(`no ${entity} custom field definition with id ${id}`);
      return { definition: serializeFieldDefinition(ctx, definition) };
    });

    const tagsOf = (): TagRec[] => store.tags.all().filter((t) => t.entity === entity);

    app.get(`/api/v2/${entity}/tags`, async (request, reply) => ({
      tags: paginate(request, reply, tagsOf()).map(tagJson),
    }));

    app.get(`/api/v2/${entity}/tags/:tagId`, async (request) => {
      const id = parseId((request.params as { tagId: string }).tagId, 'tag');
      const tag = store.tags.get(id);
      if (!tag || tag.entity !== entity) throw notFound(`no ${entity} tag with id ${id}`);
      return { tag: tagJson(tag) };
    });

    // Tag creation, beyond the spec (records create the tags they name; some clients create them
    // first, with a description and as a data tag). Records find tags by name ignoring case, so a
    // second tag of the same name is refused.
    app.post(`/api/v2/${entity}/tags`, async (request, reply) => {
      const body = unwrap(request, 'tag');
      const problems = new Problems('tag');
      checkKeys(body, ['name', 'description', 'dataTag'], ['id'], problems);
      const name = readString(body, 'name', problems, { required: true, max: 255 })?.trim();
      const description = readString(body, 'description', problems, { nullable: true, max: 1000 }) ?? null;
      const dataTag = readTagFlag(body.dataTag, 'dataTag', problems) ?? false;
      const taken = name === undefined ? undefined : tagsOf().find((t) => t.name.toLowerCase() === name.toLowerCase());
      if (taken)
        problems.add('name', `a ${entity} tag named ${JSON.stringify(taken.name)} exists already (id ${taken.id})`);
      problems.check();
      const tag = store.tags.insert({ entity, name: name as string, description, dataTag });
      return created(request, reply, `/${entity}/tags/${tag.id}`, { tag: tagJson(tag) });
    });
  }
}
