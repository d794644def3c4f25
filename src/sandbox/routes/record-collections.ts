/** Nested collections of a record with the add / update / `_delete` convention. */
import type { SandboxContext } from '../context.ts';
import { describeInput, isObject, Problems, readIdRef, type Body } from './request-body.ts';

/**
 * Applies a nested collection (addresses, phone numbers, ...) with the add / update / `_delete`
 * convention. `build` checks one element and returns the stored item, merging into `existing`
 * on update; it records problems and returns undefined when the element is unusable.
 */
export function applyCollection<T extends { id: number }>(
  ctx: SandboxContext,
  name: string,
  current: readonly T[],
  input: unknown,
  problems: Problems,
  build: (element: Body, existing: T | undefined, at: string) => T | undefined,
): T[] {
  let items = [...current];
  if (input === undefined) return items;
  if (!Array.isArray(input)) {
    problems.add(name, `must be an array, got ${describeInput(input)}`);
    return items;
  }
  input.forEach((element, index) => {
    const at = `${name}[${index}]`;
    if (!isObject(element)) {
      problems.add(at, `must be an object, got ${describeInput(element)}`);
      return;
    }
    if (element._delete !== undefined && typeof element._delete !== 'boolean') {
      problems.add(`${at}._delete`, 'must be a boolean');
      return;
    }
    if (element.id === undefined) {
      if (element._delete === true) {
        problems.add(`${at}._delete`, 'needs the id of the item to remove');
        return;
      }
      const added = build(element, undefined, at);
      if (added) items.push({ ...added, id: ctx.store.next() });
      return;
    }
    const id = readIdRef(element.id, `${at}.id`, problems);
    if (id === undefined || id === null) return;
    const existing = items.find((item) => item.id === id);
    if (!existing) {
      problems.add(`${at}.id`, `no item with id ${id} in ${name} of this record`);
      return;
    }
    if (element._delete === true) {
      items = items.filter((item) => item.id !== id);
      return;
    }
    const updated = build(element, existing, at);
    if (updated) items = items.map((item) => (item.id === id ? { ...updated, id } : item));
  });
  return items;
}
