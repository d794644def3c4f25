/** Tags and custom fields of a party, project or opportunity: planned from the body, applied after every check passed. */
import type { SandboxContext } from '../context.ts';
import type { EntityKind, FieldDefinitionRec, FieldValueRec } from '../model.ts';
import { Problems, isObject, checkKeys, isDate, readIdRef, describeInput } from './request-body.ts';

/** What a request does to the tags of a record; new tags are created only by applyTags(). */
export interface TagPlan {
  ids: number[];
  /** Tags to create, with what the element said of them. */
  newTags: Array<{ name: string; description: string | null; dataTag: boolean }>;
  removed: Set<number>;
}

/** A boolean property of a tag (`dataTag`); undefined when absent, a problem when not a boolean. */
export function readTagFlag(value: unknown, field: string, problems: Problems): boolean | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'boolean') {
    problems.add(field, `must be true or false, got ${describeInput(value)}`);
    return undefined;
  }
  return value;
}

function readTagDescription(value: unknown, field: string, problems: Problems): string | null | undefined {
  if (value === undefined) return undefined;
  if (value === null || value === '') return null;
  if (typeof value !== 'string') {
    problems.add(field, `must be text, got ${describeInput(value)}`);
    return undefined;
  }
  return value;
}

/**
 * Reads `tags[]`: elements name a tag by `id` or `name`; on update an element with `id` and
 * `_delete: true` removes it. An unknown name becomes a new tag of the entity, with the element's
 * `description` and `dataTag`; an unknown id is a problem. For a tag that exists, a `description`
 * or `dataTag` that says otherwise than the tag is a problem rather than silently dropped.
 */
export function planTags(
  ctx: SandboxContext,
  entity: EntityKind,
  currentIds: readonly number[],
  input: unknown,
  mode: 'create' | 'update',
  problems: Problems,
): TagPlan {
  const plan: TagPlan = { ids: [...currentIds], newTags: [], removed: new Set() };
  if (input === undefined) return plan;
  if (!Array.isArray(input)) {
    problems.add('tags', `must be an array, got ${describeInput(input)}`);
    return plan;
  }
  const tags = ctx.store.tags.all().filter((t) => t.entity === entity);
  input.forEach((element, index) => {
    const at = `tags[${index}]`;
    if (!isObject(element)) {
      problems.add(at, `must be an object with id or name, got ${describeInput(element)}`);
      return;
    }
    checkKeys(element, ['id', 'name', '_delete', 'description', 'dataTag'], [], problems, `${at}.`);
    if (element._delete !== undefined && typeof element._delete !== 'boolean')
      problems.add(`${at}._delete`, 'must be a boolean');
    const description = readTagDescription(element.description, `${at}.description`, problems);
    const dataTag = readTagFlag(element.dataTag, `${at}.dataTag`, problems);
    let id: number | undefined;
    if (element.id !== undefined) {
      const ref = readIdRef(element.id, `${at}.id`, problems);
      if (ref === undefined || ref === null) return;
      if (!tags.some((t) => t.id === ref)) {
        problems.add(`${at}.id`, `no ${entityNoun(entity)} tag with id ${ref}`);
        return;
      }
      id = ref;
    } else if (typeof element.name === 'string' && element.name.trim() !== '') {
      const wanted = element.name.trim().toLowerCase();
      id = tags.find((t) => t.name.toLowerCase() === wanted)?.id;
    } else {
      problems.add(at, 'needs an id or a non-blank name');
      return;
    }
    if (element._delete === true) {
      if (mode === 'create') {
        problems.add(`${at}._delete`, 'cannot remove a tag from a record being created');
      } else if (id !== undefined) {
        plan.ids = plan.ids.filter((t) => t !== id);
        plan.removed.add(id);
      }
      return;
    }
    if (id === undefined) {
      const name = (element.name as string).trim();
      if (!plan.newTags.some((t) => t.name.toLowerCase() === name.toLowerCase()))
        plan.newTags.push({ name, description: description ?? null, dataTag: dataTag ?? false });
      return;
    }
    const tag = tags.find((t) => t.id === id);
    if (tag && dataTag !== undefined && dataTag !== tag.dataTag) {
      problems.add(
        `${at}.dataTag`,
        `tag ${JSON.stringify(tag.name)} ${tag.dataTag ? 'is' : 'is not'} a data tag; a record cannot change that`,
      );
    }
    if (tag && description !== undefined && (description ?? null) !== (tag.description ?? null)) {
      problems.add(
        `${at}.description`,
        `tag ${JSON.stringify(tag.name)} exists with another description; a record cannot change it`,
      );
    }
    if (!plan.ids.includes(id)) plan.ids.push(id);
  });
  return plan;
}

/** Creates the tags a plan names and returns the final tag ids; the data tags of `fields` are added too. */
export function applyTags(
  ctx: SandboxContext,
  entity: EntityKind,
  plan: TagPlan,
  fields: readonly FieldValueRec[],
): number[] {
  const ids = [...plan.ids];
  for (const tag of plan.newTags) ids.push(ctx.store.tags.insert({ entity, ...tag }).id);
  // A value of a data-tag field only makes sense with its tag on the record, so the tag follows.
  for (const field of fields) {
    const tagId = ctx.store.fieldDefinitions.get(field.definitionId)?.tagId ?? null;
    if (tagId !== null && !ids.includes(tagId)) ids.push(tagId);
  }
  return ids;
}

// ---------------------------------------------------------------------------------------------
// Custom fields

function entityNoun(entity: EntityKind): string {
  return entity === 'parties' ? 'party' : entity === 'kases' ? 'project' : 'opportunity';
}

function findDefinition(
  ctx: SandboxContext,
  entity: EntityKind,
  value: unknown,
  at: string,
  problems: Problems,
): FieldDefinitionRec | undefined {
  const definitions = ctx.store.fieldDefinitions.all().filter((d) => d.entity === entity);
  if (isObject(value) && value.id === undefined && value.name !== undefined) {
    if (typeof value.name !== 'string') {
      problems.add(`${at}.name`, 'must be a string');
      return undefined;
    }
    if (!('tag' in value)) {
      problems.add(
        `${at}.tag`,
        'is required with a definition name: the data tag id or name, or null for a field outside data tags',
      );
      return undefined;
    }
    let tagId: number | null = null;
    if (value.tag !== null) {
      const tags = ctx.store.tags.all().filter((t) => t.entity === entity && t.dataTag);
      const tag =
        typeof value.tag === 'string'
          ? tags.find((t) => t.name.toLowerCase() === (value.tag as string).toLowerCase())
          : tags.find((t) => t.id === (isObject(value.tag) ? value.tag.id : value.tag));
      if (!tag) {
        problems.add(`${at}.tag`, `no data tag ${describeInput(value.tag)}`);
        return undefined;
      }
      tagId = tag.id;
    }
    const wanted = value.name.toLowerCase();
    const found = definitions.find((d) => d.name.toLowerCase() === wanted && d.tagId === tagId);
    if (!found) {
      problems.add(
        at,
        `no custom field named ${JSON.stringify(value.name)} ${tagId === null ? 'outside data tags' : `in data tag ${tagId}`}`,
      );
    }
    return found;
  }
  const id = readIdRef(value, at, problems);
  if (id === undefined || id === null) return undefined;
  const found = definitions.find((d) => d.id === id);
  if (!found) problems.add(at, `no ${entityNoun(entity)} custom field definition with id ${id}`);
  return found;
}

/** Checks a value against its definition; returns the value as stored or undefined (problem recorded). */
export function checkFieldValue(
  definition: FieldDefinitionRec,
  value: unknown,
  at: string,
  problems: Problems,
): string | boolean | undefined {
  const bad = (expected: string): undefined => {
    problems.add(
      at,
      `${definition.name} is a ${definition.type} field: expected ${expected}, got ${describeInput(value)}`,
    );
    return undefined;
  };
  switch (definition.type) {
    case 'Boolean':
      return typeof value === 'boolean' ? value : bad('true or false');
    case 'Date':
      return typeof value === 'string' && isDate(value) ? value : bad('a date written YYYY-MM-DD');
    case 'List': {
      const options = definition.options ?? [];
      return typeof value === 'string' && options.includes(value)
        ? value
        : bad(`one of ${options.map((o) => JSON.stringify(o)).join(', ')}`);
    }
    case 'Text': {
      if (typeof value !== 'string') return bad('a string');
      if (definition.pattern !== null && !new RegExp(definition.pattern).test(value))
        return bad(`text matching ${definition.pattern}`);
      return value;
    }
  }
}

/**
 * Applies `fields[]` to the current values. An element without `id` sets the value of its
 * definition (replacing an earlier value, as a record holds one value per field); with `id` it
 * updates that instance, or removes it with `_delete: true` or a null value.
 */
export function planFields(
  ctx: SandboxContext,
  entity: EntityKind,
  forClass: 'PERSON' | 'ORGANISATION' | null,
  current: readonly FieldValueRec[],
  input: unknown,
  mode: 'create' | 'update',
  problems: Problems,
): FieldValueRec[] {
  let fields = current.map((f) => ({ ...f }));
  if (input === undefined) return fields;
  if (!Array.isArray(input)) {
    problems.add('fields', `must be an array, got ${describeInput(input)}`);
    return fields;
  }
  input.forEach((element, index) => {
    const at = `fields[${index}]`;
    if (!isObject(element)) {
      problems.add(at, `must be an object with definition and value, got ${describeInput(element)}`);
      return;
    }
    checkKeys(element, ['id', 'definition', 'value', '_delete'], ['tagId'], problems, `${at}.`);
    if (element.id !== undefined) {
      const id = readIdRef(element.id, `${at}.id`, problems);
      if (id === undefined || id === null) return;
      const existing = fields.find((f) => f.id === id);
      if (!existing || mode === 'create') {
        problems.add(`${at}.id`, `no custom field value with id ${id} on this record`);
        return;
      }
      if (element._delete === true || element.value === null) {
        fields = fields.filter((f) => f.id !== id);
        return;
      }
      const definition = ctx.store.fieldDefinitions.get(existing.definitionId);
      if (!definition || !('value' in element)) {
        problems.add(`${at}.value`, 'is required to change a custom field');
        return;
      }
      const value = checkFieldValue(definition, element.value, `${at}.value`, problems);
      if (value !== undefined) existing.value = value;
      return;
    }
    if (element._delete !== undefined) {
      problems.add(`${at}._delete`, 'needs the id of the custom field value to remove');
      return;
    }
    if (element.definition === undefined) {
      problems.add(`${at}.definition`, 'is required');
      return;
    }
    const definition = findDefinition(ctx, entity, element.definition, `${at}.definition`, problems);
    if (!definition) return;
    if (definition.forClass !== null && forClass !== null && definition.forClass !== forClass) {
      problems.add(
        `${at}.definition`,
        `${definition.name} is only for ${definition.forClass === 'PERSON' ? 'people' : 'organisations'}`,
      );
      return;
    }
    if (!('value' in element) || element.value === undefined) {
      problems.add(`${at}.value`, 'is required');
      return;
    }
    if (element.value === null) {
      fields = fields.filter((f) => f.definitionId !== definition.id);
      return;
    }
    const value = checkFieldValue(definition, element.value, `${at}.value`, problems);
    if (value === undefined) return;
    const existing = fields.find((f) => f.definitionId === definition.id);
    if (existing) existing.value = value;
    else fields.push({ id: ctx.store.next(), definitionId: definition.id, value });
  });
  return fields;
}

/** Drops values of data-tag fields whose tag this request removed from the record. */
export function dropFieldsOfRemovedTags(
  ctx: SandboxContext,
  fields: FieldValueRec[],
  removed: ReadonlySet<number>,
): FieldValueRec[] {
  if (removed.size === 0) return fields;
  return fields.filter((f) => {
    const tagId = ctx.store.fieldDefinitions.get(f.definitionId)?.tagId ?? null;
    return tagId === null || !removed.has(tagId);
  });
}

/**
 * Whether an important field that applies to the record has no value. Fields of a data tag apply
 * only when the record carries the tag; party fields may be for people or organisations only.
 */
export function missingImportantFields(
  ctx: SandboxContext,
  entity: EntityKind,
  record: { tagIds: readonly number[]; fields: readonly FieldValueRec[] },
  forClass: 'PERSON' | 'ORGANISATION' | null,
): boolean {
  return ctx.store.fieldDefinitions
    .all()
    .some(
      (d) =>
        d.entity === entity &&
        d.important &&
        (d.tagId === null || record.tagIds.includes(d.tagId)) &&
        (d.forClass === null || forClass === null || d.forClass === forClass) &&
        !record.fields.some((f) => f.definitionId === d.id && f.value !== ''),
    );
}
