import type { ErrorCode } from '../errors/index.ts';
import type { RefUse } from '../mapping/types.ts';

/** Why one record cannot be linked or kept. */
export interface ReferenceProblem {
  /** The mapping place (`fields[2]`) or the target (`party`). */
  field: string;
  code: ErrorCode;
  message: string;
}

/**
 * Keys of the rows each step produced, to check links between steps without writing anything.
 *
 * Memory: one Set of strings per step, measured on Node 20 at about 45 bytes per key of 8
 * characters (43 MiB per million keys) and about 117 bytes per key of 36 characters (111 MiB per
 * million). A plan with several million-row steps therefore needs a few hundred MB of heap.
 * Keys of rejected rows are kept apart, so a link to one can say the row exists but was
 * rejected instead of that it is missing.
 */
export class ReferenceBook {
  readonly #valid = new Map<string, Set<string>>();
  readonly #rejected = new Map<string, Set<string>>();

  #set(map: Map<string, Set<string>>, step: string): Set<string> {
    let set = map.get(step);
    if (!set) {
      set = new Set();
      map.set(step, set);
    }
    return set;
  }

  /**
   * Checks a record's key against the step's earlier rows. The second row with a key is a
   * problem: re-runs and links find a row by its key, so two rows with one key would make one
   * of them unreachable.
   */
  checkKey(step: string, key: string): ReferenceProblem | undefined {
    if (!this.#set(this.#valid, step).has(key) && !this.#set(this.#rejected, step).has(key)) return undefined;
    return {
      field: 'key',
      code: 'MAPPING_VALUE',
      message: `duplicate key '${key}': an earlier row of step ${step} has the same key; keys must be unique within a step`,
    };
  }

  /** Problems of each link of a record to a step whose rows are already recorded. */
  checkRefs(refs: readonly RefUse[]): ReferenceProblem[] {
    const problems: ReferenceProblem[] = [];
    for (const ref of refs) {
      if (this.#valid.get(ref.step)?.has(ref.key)) continue;
      const rejected = this.#rejected.get(ref.step)?.has(ref.key) ?? false;
      problems.push({
        field: ref.yamlPath,
        code: 'MAPPING_REFERENCE',
        message: rejected ? `the row with key '${ref.key}' in step ${ref.step} was rejected` : `no row with key '${ref.key}' in step ${ref.step}`,
      });
    }
    return problems;
  }

  /** Records the key of a row that became a valid record. */
  addValid(step: string, key: string): void {
    this.#set(this.#valid, step).add(key);
  }

  /** Records the key of a rejected row (when it had one). */
  addRejected(step: string, key: string): void {
    this.#set(this.#rejected, step).add(key);
  }

  /** Number of valid keys kept for a step. */
  validCount(step: string): number {
    return this.#valid.get(step)?.size ?? 0;
  }
}
