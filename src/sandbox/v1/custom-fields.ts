/** Custom field values and definitions in the v1 interface, and the tags of a record. */
import type { FastifyRequest } from 'fastify';
import type { SandboxContext } from '../context.ts';
import { timestamp, validationError } from '../http.ts';
import type { FieldDefinitionRec, KaseRec, OpportunityRec, PartyRec } from '../model.ts';
import { ENTITY_OF, findRecord, v1Location, type V1Kind, type V1Route } from './common.ts';
import { FieldReader, parseMoment } from './input.ts';
import { readBody, sendEmpty, sendNode } from './negotiate.ts';
import { customFieldNode, definitionNode } from './shapes.ts';
import { listNode, recordNode, type V1Node } from './xml.ts';

type AnyRecord = PartyRec | OpportunityRec | KaseRec;

/** The value element each definition type takes in a PUT. */
const VALUE_KEY: Record<FieldDefinitionRec['type'], 'text' | 'date' | 'boolean'> = {
  Text: 'text',
  List: 'text',
  Date: 'date',
  Boolean: 'boolean',
};

interface FieldChange {
  definition: FieldDefinitionRec;
  /** null removes the value. */
  value: string | boolean | null;
}

function customFieldsList(ctx: SandboxContext, record: AnyRecord): V1Node {
  const items = record.fields.flatMap((field) => {
    const node = customFieldNode(ctx, field);
    return node ? [node] : [];
  });
  return listNode('customFields', ['customField'], items);
}

/** Finds the definition an element names by label, and by data tag name when it belongs to one. */
function resolveDefinition(
  ctx: SandboxContext,
  kind: V1Kind,
  label: string,
  tagName: string | null | undefined,
): FieldDefinitionRec | string {
  const entity = ENTITY_OF[kind];
  const candidates = ctx.store.fieldDefinitions
    .all()
    .filter((d) => d.entity === entity && d.name.toLowerCase() === label.toLowerCase());
  if (candidates.length === 0) return `no custom field labelled ${JSON.stringify(label)} is defined for ${entity}`;
  const tagOf = (d: FieldDefinitionRec): string | null =>
    d.tagId === null ? null : (ctx.store.tags.get(d.tagId)?.name ?? null);
  if (tagName) {
    const found = candidates.find((d) => tagOf(d)?.toLowerCase() === tagName.toLowerCase());
    return found ?? `the data tag ${JSON.stringify(tagName)} has no field labelled ${JSON.stringify(label)}`;
  }
  const plain = candidates.find((d) => d.tagId === null);
  if (plain) return plain;
  return `the field ${JSON.stringify(label)} belongs to the data tag ${JSON.stringify(tagOf(candidates[0] as FieldDefinitionRec))}; give its tag`;
}

/** Reads every element of a PUT and checks it against its definition; any problem fails the whole PUT. */
function readFieldChanges(
  ctx: SandboxContext,
  request: FastifyRequest,
  kind: V1Kind,
  record: AnyRecord,
): FieldChange[] {
  const body = readBody(request, 'customFields');
  const outer = new FieldReader('customFields', body, ['customField']);
  outer.check();
  const raw = body.customField;
  const elements = raw === undefined || raw === '' ? [] : Array.isArray(raw) ? raw : [raw];
  const changes: FieldChange[] = [];
  const problems: Array<{ field: string; message: string }> = [];
  elements.forEach((element, index) => {
    const where = `customField[${index}]`;
    if (!element || typeof element !== 'object' || Array.isArray(element)) {
      problems.push({ field: where, message: 'must hold label and a value element' });
      return;
    }
    const fields = element as Record<string, unknown>;
    const allowed = ['label', 'tag', 'text', 'date', 'boolean'];
    for (const key of Object.keys(fields)) {
      if (!allowed.includes(key) && key !== 'id')
        problems.push({
          field: `${where}.${key}`,
          message: `is not a custom field element; known: ${allowed.join(', ')}`,
        });
    }
    const text = (key: string): string | null | undefined => {
      if (!Object.hasOwn(fields, key)) return undefined;
      const value = fields[key];
      if (value === null || value === '') return null;
      if (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean') return String(value);
      problems.push({ field: `${where}.${key}`, message: 'must be text' });
      return undefined;
    };
    const label = text('label');
    if (!label) {
      problems.push({ field: `${where}.label`, message: 'is required' });
      return;
    }
    const definition = resolveDefinition(ctx, kind, label, text('tag'));
    if (typeof definition === 'string') {
      problems.push({ field: `${where}.label`, message: definition });
      return;
    }
    if (kind === 'party' && definition.forClass !== null) {
      const partyType = (record as PartyRec).type === 'person' ? 'PERSON' : 'ORGANISATION';
      if (definition.forClass !== partyType) {
        problems.push({
          field: `${where}.label`,
          message: `${JSON.stringify(definition.name)} is only for ${definition.forClass.toLowerCase()} records`,
        });
        return;
      }
    }
    const given = (['text', 'date', 'boolean'] as const).filter((key) => text(key) !== undefined && text(key) !== null);
    if (given.length > 1) {
      problems.push({ field: where, message: `give one value element, found ${given.join(' and ')}` });
      return;
    }
    const key = given[0];
    if (key === undefined) {
      changes.push({ definition, value: null });
      return;
    }
    const expected = VALUE_KEY[definition.type];
    const value = text(key) as string;
    if (key !== expected) {
      problems.push({
        field: `${where}.${key}`,
        message: `${JSON.stringify(definition.name)} is a ${definition.type} field and takes <${expected}>`,
      });
      return;
    }
    const problem = checkValue(definition, value);
    if (typeof problem === 'string') problems.push({ field: `${where}.${key}`, message: problem });
    else changes.push({ definition, value: problem.value });
  });
  if (problems.length > 0) throw validationError('customField', problems);
  return changes;
}

/** The stored value for the given text, or a message saying why the value does not fit. */
function checkValue(definition: FieldDefinitionRec, value: string): { value: string | boolean | null } | string {
  switch (definition.type) {
    case 'Boolean': {
      const lower = value.toLowerCase();
      if (lower !== 'true' && lower !== 'false') return `must be true or false, got ${JSON.stringify(value)}`;
      // Unticking a checkbox leaves no value, as v1 lists only ticked ones.
      return { value: lower === 'true' ? true : null };
    }
    case 'Date': {
      const moment = parseMoment(value);
      return moment ? { value: moment.date } : `must be a date like 2011-09-14T00:00:00Z, got ${JSON.stringify(value)}`;
    }
    case 'List': {
      const option = (definition.options ?? []).find((o) => o.toLowerCase() === value.toLowerCase());
      return option !== undefined
        ? { value: option }
        : `must be one of ${(definition.options ?? []).join(';')}, got ${JSON.stringify(value)}`;
    }
    case 'Text': {
      if (definition.pattern) {
        let pattern: RegExp | null = null;
        try {
          pattern = new RegExp(definition.pattern);
        } catch {
          // A definition with a broken expression cannot reject anything.
        }
        if (pattern && !pattern.test(value))
          return `does not match the pattern ${definition.pattern} of ${JSON.stringify(definition.name)}`;
      }
      return { value };
    }
  }
}

function applyFieldChanges(ctx: SandboxContext, record: AnyRecord, changes: FieldChange[]): void {
  for (const { definition, value } of changes) {
    const existing = record.fields.find((f) => f.definitionId === definition.id);
    if (value === null) {
      record.fields = record.fields.filter((f) => f.definitionId !== definition.id);
      continue;
    }
    if (existing) existing.value = value;
    else record.fields.push({ id: ctx.store.next(), definitionId: definition.id, value });
    // A value in a data tag's field puts the tag on the record, as it does in the service.
    if (definition.tagId !== null && !record.tagIds.includes(definition.tagId)) record.tagIds.push(definition.tagId);
  }
  record.updatedAt = timestamp(ctx.now());
}

/** Path segment -> record kind; `opportuntity` is the service's own spelling for custom fields. */
const FIELD_PATHS: Array<[string, V1Kind]> = [
  ['party', 'party'],
  ['opportuntity', 'opportunity'],
  ['opportunity', 'opportunity'],
  ['kase', 'kase'],
];

/** Custom field values (GET/PUT) and definitions of parties, opportunities and cases. */
export function registerCustomFieldRoutes(route: V1Route, ctx: SandboxContext): void {
  for (const [segment, kind] of FIELD_PATHS) {
    route('GET', `/api/${segment}/:id/customfields`, (request, reply) => {
      const record = findRecord(ctx, request, kind, (request.params as { id?: string }).id);
      return sendNode(request, reply, customFieldsList(ctx, record));
    });
    route('PUT', `/api/${segment}/:id/customfields`, (request, reply) => {
      const record = findRecord(ctx, request, kind, (request.params as { id?: string }).id);
      applyFieldChanges(ctx, record, readFieldChanges(ctx, request, kind, record));
      return sendNode(request, reply, customFieldsList(ctx, record));
    });
    route('GET', `/api/${segment}/customfield/definitions`, (request, reply) => {
      const definitions = ctx.store.fieldDefinitions
        .all()
        .filter((d) => d.entity === ENTITY_OF[kind])
        .sort((a, b) => a.displayOrder - b.displayOrder || a.id - b.id);
      return sendNode(
        request,
        reply,
        listNode(
          'customFieldDefinitions',
          ['customFieldDefinition'],
          definitions.map((d) => definitionNode(ctx, d)),
        ),
      );
    });
  }
}

/** Tag routes: list, add (201 when added, 200 when present) and remove. */
export function registerTagRoutes(route: V1Route, ctx: SandboxContext): void {
  const { store } = ctx;
  for (const kind of ['party', 'opportunity', 'kase'] as const) {
    const entity = ENTITY_OF[kind];
    const tagNamed = (name: string) =>
      store.tags.all().find((t) => t.entity === entity && t.name.toLowerCase() === name.toLowerCase());
    const tagName = (raw: string | undefined): string => {
      const name = (raw ?? '').trim();
      if (name === '') throw validationError('tag', [{ field: 'name', message: 'a tag name cannot be empty' }]);
      return name;
    };

    route('GET', `/api/${kind}/:id/tag`, (request, reply) => {
      const record = findRecord(ctx, request, kind, (request.params as { id?: string }).id);
      const items = record.tagIds.flatMap((id) => {
        const tag = store.tags.get(id);
        return tag ? [recordNode('tag', [['name', tag.name]])] : [];
      });
      return sendNode(request, reply, listNode('tags', ['tag'], items));
    });

    route('POST', `/api/${kind}/:id/tag/:name`, (request, reply) => {
      const params = request.params as { id?: string; name?: string };
      const record = findRecord(ctx, request, kind, params.id);
      const name = tagName(params.name);
      const tag = tagNamed(name) ?? store.tags.insert({ entity, name, description: null, dataTag: false });
      if (record.tagIds.includes(tag.id)) return sendEmpty(reply, 200);
      record.tagIds.push(tag.id);
      record.updatedAt = timestamp(ctx.now());
      return sendEmpty(reply, 201, v1Location(request, `/${kind}/${record.id}/tag/${encodeURIComponent(tag.name)}`));
    });

    route('DELETE', `/api/${kind}/:id/tag/:name`, (request, reply) => {
      const params = request.params as { id?: string; name?: string };
      const record = findRecord(ctx, request, kind, params.id);
      const tag = tagNamed(tagName(params.name));
      if (tag && record.tagIds.includes(tag.id)) {
        record.tagIds = record.tagIds.filter((id) => id !== tag.id);
        // The values of a data tag's fields go with the tag.
        if (tag.dataTag) {
          const ofTag = new Set(
            store.fieldDefinitions
              .all()
              .filter((d) => d.tagId === tag.id)
              .map((d) => d.id),
          );
          record.fields = record.fields.filter((f) => !ofTag.has(f.definitionId));
        }
        record.updatedAt = timestamp(ctx.now());
      }
      return sendEmpty(reply);
    });
  }
}
