/**
 * Custom field definitions and tags per entity. The interface mentions these lists without
 * describing them (spec 4.13), so the sandbox offers read-only listings in the v2 style:
 * `/{entity}/fields/definitions[/{id}]` and `/{entity}/tags`, paged like every list.
 */
import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';
import { notFound, paginate, parseId } from '../http.ts';
import type { EntityKind, FieldDefinitionRec } from '../model.ts';

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
      if (!definition || definition.entity !== entity) throw notFound(`no ${entity} custom field definition with id ${id}`);
      return { definition: serializeFieldDefinition(ctx, definition) };
    });

    app.get(`/api/v2/${entity}/tags`, async (request, reply) => {
      const tags = store.tags.all().filter((t) => t.entity === entity);
      return { tags: paginate(request, reply, tags).map((t) => ({ id: t.id, name: t.name, dataTag: t.dataTag })) };
    });
  }
}
