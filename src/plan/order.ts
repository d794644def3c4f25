import { FerryError, type ErrorLocation } from '../errors/index.ts';
import type { Mapping } from '../mapping/index.ts';
import { closestName } from '../util/index.ts';

/** A link from a mapping to another step, with where it is written. */
export interface StepRef {
  /** The step referred to. */
  step: string;
  /** Where the `ref:` is written, for messages: the mapping file and the YAML path. */
  location: ErrorLocation;
}

/** What ordering needs to know of a step. */
export interface StepDependencies {
  name: string;
  refs: readonly StepRef[];
}

/**
 * The steps the `ref:` entries of a mapping's fields name, each with its YAML path: one StepRef
 * per named step, so a `ref` listing two steps makes the mapping's step depend on both, and a
 * message about one of them points at its place in the list (`fields[2].ref[1]`).
 */
export function mappingRefs(mapping: Pick<Mapping, 'fields'>, file?: string): StepRef[] {
  const refs: StepRef[] = [];
  const add = (step: string, yamlPath: string): void => {
    const location: ErrorLocation = { yamlPath };
    if (file !== undefined) location.file = file;
    refs.push({ step, location });
  };
  mapping.fields.forEach((field, index) => {
    if (field.ref === undefined) return;
    if (typeof field.ref === 'string') add(field.ref, `fields[${index}].ref`);
    else field.ref.forEach((step, position) => add(step, `fields[${index}].ref[${position}]`));
  });
  return refs;
}

/** Finds one cycle among `remaining` (steps that could not be placed), as a list of names ending where it began. */
function findCycle(remaining: readonly StepDependencies[]): string[] {
  const byName = new Map(remaining.map((step) => [step.name, step]));
  const state = new Map<string, 'visiting' | 'done'>();
  const stack: string[] = [];
  const visit = (name: string): string[] | undefined => {
    state.set(name, 'visiting');
    stack.push(name);
    const step = byName.get(name);
    for (const ref of step?.refs ?? []) {
      if (!byName.has(ref.step)) continue;
      const seen = state.get(ref.step);
      if (seen === 'visiting') return [...stack.slice(stack.indexOf(ref.step)), ref.step];
      if (seen === undefined) {
        const found = visit(ref.step);
        if (found) return found;
      }
    }
    stack.pop();
    state.set(name, 'done');
    return undefined;
  };
  // Starting from the first step in file order makes the message the same on every run.
  for (const step of remaining) {
    if (state.has(step.name)) continue;
    const found = visit(step.name);
    if (found) return found;
  }
  /* c8 ignore next: a step is left over only because of a cycle */
  return remaining.map((s) => s.name);
}

/**
 * Orders steps so that each comes after every step it refers to, keeping the file's order
 * wherever the references leave a choice (a stable topological sort: at each turn the first
 * step in file order whose references are all placed goes next). Throws PLAN_INVALID for a
 * reference to an unknown step and PLAN_CYCLE naming a cycle ("people -> companies -> people").
 */
export function orderSteps<T extends StepDependencies>(steps: readonly T[]): T[] {
  const names = steps.map((step) => step.name);
  const known = new Set(names);
  for (const step of steps) {
    for (const ref of step.refs) {
      if (known.has(ref.step)) continue;
      const suggestion = closestName(ref.step, names);
      throw new FerryError(
        'PLAN_INVALID',
        `step ${step.name} refers to step \`${ref.step}\`, which the plan does not have${suggestion ? `; did you mean \`${suggestion}\`?` : ''}`,
        {
          location: ref.location,
          hint: `The plan's steps are: ${names.join(', ')}.`,
        },
      );
    }
  }
  const placed = new Set<string>();
  const ordered: T[] = [];
  const pending = [...steps];
  while (pending.length > 0) {
    const index = pending.findIndex((step) => step.refs.every((ref) => placed.has(ref.step)));
    if (index === -1) {
      const cycle = findCycle(pending);
      const first = pending.find((step) => step.name === cycle[0]);
      const ref = first?.refs.find((r) => r.step === cycle[1]);
      throw new FerryError('PLAN_CYCLE', `the steps refer to each other in a circle: ${cycle.join(' -> ')}`, {
        ...(ref ? { location: ref.location } : {}),
        hint: 'Records of one step can only link to records made by an earlier step; split one of the steps, or link the records after the import.',
      });
    }
    const [next] = pending.splice(index, 1) as [T];
    placed.add(next.name);
    ordered.push(next);
  }
  return ordered;
}
