import { crc32 } from 'node:zlib';
import type { MappedRecord, RecordProblem, RefUse } from '../mapping/index.ts';
import { KeySet } from '../util/index.ts';

/**
 * Why one record cannot be linked or kept: a record problem like any other on its way to the
 * rejects file, `field` the mapping place (`fields[2]`) or the target (`party`), `column`, `value`
 * and `rule` the key's column, the key and the link's place in the mapping.
 */
export type ReferenceProblem = RecordProblem;

/** What looking a link's key up in its steps found. */
export type RefLookup<T> =
  /** Exactly one of the steps has the key. */
  | { status: 'found'; step: string; value: T }
  /** Several steps have the key, listed in the link's order; the link cannot tell which is meant. */
  | { status: 'ambiguous'; steps: string[]; value: T }
  | { status: 'missing' };

/**
 * Looks a link's key up in each of its steps, in the order the mapping lists them. Every step is
 * asked, not only up to the first hit: a key two steps share would otherwise link to whichever
 * step happens to come first, silently and differently if the mapping's list is reordered. With
 * `ambiguous`, `value` is what the first step had, for callers that only report.
 *
 * `find` says what a step has for a key (an id, a row's state), or undefined when it has none.
 */
export function lookUpRef<T>(
  ref: Pick<RefUse, 'steps' | 'key'>,
  find: (step: string, key: string) => T | undefined,
): RefLookup<T> {
  let first: { step: string; value: T } | undefined;
  let steps: string[] | undefined;
  for (const step of ref.steps) {
    const value = find(step, ref.key);
    if (value === undefined) continue;
    if (!first) first = { step, value };
    else (steps ??= [first.step]).push(step);
  }
  if (!first) return { status: 'missing' };
  return steps
    ? { status: 'ambiguous', steps, value: first.value }
    : { status: 'found', step: first.step, value: first.value };
}

/** The keys a link tries, in order: its key, then its alternatives. */
export function linkKeys(ref: Pick<RefUse, 'key' | 'alternatives'>): readonly string[] {
  return ref.alternatives === undefined ? [ref.key] : [ref.key, ...ref.alternatives];
}

/**
 * What a step holds for a key a link names: the id of the row's record (where no id can be known
 * yet, as in validate, any number), `rejected` (the row is there, but refused), or undefined (no
 * row has the key).
 */
export type LinkTarget = number | 'rejected' | undefined;

/** One key of a link, looked up in the link's steps. */
export interface KeyTried {
  key: string;
  lookup: RefLookup<LinkTarget>;
}

/** What following a link found: the id to write, a key two steps have, or nothing. */
export type LinkOutcome =
  | { status: 'linked'; id: number }
  | { status: 'ambiguous'; key: string; steps: string[] }
  | { status: 'unresolved'; tried: KeyTried[] };

/** Where a run looks its links up, and how it words a link that cannot be made. */
export interface LinkBook {
  find(step: string, key: string): LinkTarget | Promise<LinkTarget>;
  /** A key that several of the link's steps have: the link cannot tell which record is meant. */
  ambiguous(key: string, steps: readonly string[]): string;
  /** No key of the link found a record; `tried` holds what each key found, in order. */
  unresolved(ref: RefUse, tried: readonly KeyTried[]): string;
}

/**
 * Follows a link: its keys in order, each looked up in every step it names; the first key one
 * step has with a record wins. Synchronous when `find` is (validate's checks), a promise when
 * `find` waits for rows still being written (the importer).
 */
export function followLink(
  ref: Pick<RefUse, 'steps' | 'key' | 'alternatives'>,
  find: LinkBook['find'],
): LinkOutcome | Promise<LinkOutcome> {
  // The usual link, one step and its record written, found with nothing more made (every row
  // of a step that links takes this path).
  if (ref.steps.length === 1) {
    const found = find(ref.steps[0] as string, ref.key);
    if (typeof found === 'number') return { status: 'linked', id: found };
  }
  const keys = linkKeys(ref);
  const tried: KeyTried[] = [];
  const next = (index: number): LinkOutcome | Promise<LinkOutcome> => {
    const key = keys[index];
    if (key === undefined) return { status: 'unresolved', tried };
    const decide = (found: readonly LinkTarget[]): LinkOutcome | Promise<LinkOutcome> => {
      const lookup = lookUpRef({ steps: ref.steps, key }, (step) => found[ref.steps.indexOf(step)]);
      if (lookup.status === 'ambiguous') return { status: 'ambiguous', key, steps: lookup.steps };
      if (lookup.status === 'found' && typeof lookup.value === 'number') return { status: 'linked', id: lookup.value };
      tried.push({ key, lookup });
      return next(index + 1);
    };
    const found = ref.steps.map((step) => find(step, key));
    return found.some((value) => value instanceof Promise)
      ? Promise.all(found).then(decide)
      : decide(found as LinkTarget[]);
  };
  return next(0);
}

/**
 * A link none of whose keys found a record. One that must be made is a problem (the row is
 * rejected); any other gets its fallback (`value` beside `ref`) or is left out of the record, and
 * the record carries a LINK_UNRESOLVED warning with the keys it tried. Never silent.
 */
export function unresolvedLink(
  mapped: MappedRecord,
  ref: RefUse,
  reason: string,
  rejected = false,
): ReferenceProblem | null {
  const detail = { value: ref.key, rule: ref.yamlPath, ...(ref.column === undefined ? {} : { column: ref.column }) };
  if (ref.required) return { field: ref.yamlPath, code: 'MAPPING_REFERENCE', message: reason, ...detail };
  const target = ref.path[0] as string;
  // A link that is one element of a list (a project's additional contacts) is that element alone.
  const index = ref.path[1];
  const list =
    typeof index === 'number' && Array.isArray(mapped.record[target]) ? (mapped.record[target] as unknown[]) : null;
  if (ref.fallback !== undefined) {
    if (list) list[index as number] = ref.fallback;
    else mapped.record[target] = ref.fallback;
    // The linked row is there but was rejected: the record goes to whatever has the fallback's
    // name (an organisation made by name when the account has none), which the person should know.
    if (rejected)
      (mapped.warnings ??= []).push({
        code: 'LINK_BY_NAME',
        field: target,
        message: `linked by its ${fallbackWords(ref.fallback)} instead: ${reason}`,
        value: linkKeys(ref).join(' / '),
        rule: ref.yamlPath,
        ...(ref.column === undefined ? {} : { column: ref.column }),
      });
    return null;
  }
  // An element left without its id is not sent (see contactIdsOf); the rest of the list is.
  if (!list) delete mapped.record[target];
  (mapped.warnings ??= []).push({
    code: 'LINK_UNRESOLVED',
    field: target,
    message: `left without ${target}: ${reason}`,
    value: linkKeys(ref).join(' / '),
    rule: ref.yamlPath,
    ...(ref.column === undefined ? {} : { column: ref.column }),
  });
  return null;
}

/** The fallback a link writes, in words: `name "Groothandel Jansen"`. */
function fallbackWords(fallback: unknown): string {
  if (fallback !== null && typeof fallback === 'object' && typeof (fallback as { name?: unknown }).name === 'string')
    return `name "${(fallback as { name: string }).name}"`;
  return `value ${JSON.stringify(fallback)}`;
}

/** Whether a link's keys found a row that was rejected (rather than no row at all). */
export function foundRejected(tried: readonly KeyTried[]): boolean {
  return tried.some((t) => t.lookup.status === 'found' && t.lookup.value === 'rejected');
}

/**
 * Steps that other steps link to (`ref:`). Their rows may name one record many times: an
 * organisation step read from a contacts sheet meets each company once per person. Such a row is
 * the same record again when it gives the same values, and written once.
 */
export function linkedSteps(steps: ReadonlyArray<{ refs: ReadonlyArray<{ step: string }> }>): Set<string> {
  return new Set(steps.flatMap((step) => step.refs.map((ref) => ref.step)));
}

/**
 * A digest of what a mapped row gives its record (body, links, files), taken before links and
 * names are filled in: equal digests, the same record. CRC-32 of the JSON: two different rows of
 * one key pass for the same once in four billion.
 */
export function recordDigest(mapped: MappedRecord): number {
  return crc32(JSON.stringify([mapped.record, mapped.refs.map((ref) => [ref.steps, ref.key]), mapped.attachments]));
}

/** The problem of a row whose key an earlier row of its step has; `differs`: that row gave its record other values. */
export function duplicateKeyProblem(step: string, key: string, differs: boolean): ReferenceProblem {
  return {
    field: 'key',
    code: 'MAPPING_VALUE',
    rule: 'key',
    message: differs
      ? `duplicate key '${key}': an earlier row of step ${step} has the same key with other values; rows naming one record must agree on its values (or give the rows different keys)`
      : `duplicate key '${key}': an earlier row of step ${step} has the same key; keys must be unique within a step`,
  };
}

/**
 * The one decision on a row whose key an earlier row of its step already has (validate and the
 * importer both ask it). `digest` is the row's recordDigest in a linked step, `earlier` the digest
 * of the valid row before it; a linked step's row giving the same values is that record named
 * again ('repeat'), anything else a duplicate key.
 */
export function repeatedKey(
  step: string,
  key: string,
  digest: number | undefined,
  earlier: number | undefined,
): ReferenceProblem | 'repeat' {
  if (digest === undefined || earlier === undefined) return duplicateKeyProblem(step, key, false);
  return earlier === digest ? 'repeat' : duplicateKeyProblem(step, key, true);
}

/** `people`, `people or organisations`, `people, organisations or leads` */
function stepList(steps: readonly string[], word: 'or' | 'and'): string {
  return steps.length === 1 ? `step ${steps[0]}` : `steps ${steps.slice(0, -1).join(', ')} ${word} ${steps.at(-1)}`;
}

/**
 * Why a link found no record, in the words validate and the run share: the first key's story, its
 * row rejected or no row of the link's steps having it.
 */
export function unresolvedText(ref: Pick<RefUse, 'key' | 'steps'>, tried: readonly KeyTried[]): string {
  const [first] = tried;
  const key = first?.key ?? ref.key;
  if (first?.lookup.status === 'found') return `the row with key '${key}' in step ${first.lookup.step} was rejected`;
  return `no row with key '${key}' in ${stepList(ref.steps, 'or')}`;
}

/**
 * Keys of the rows each step produced, to check links between steps without writing anything.
 *
 * Memory: the valid keys of a step in a KeySet (their UTF-8 bytes and a hash table: about 30
 * bytes per key of 8 characters, where a Set of strings took 45, and 117 for a key of 36), so a
 * million-row step costs some tens of MB. The few keys found rejected after all (demote) are a
 * small set beside it.
 * Keys of rejected rows are kept apart, so a link to one can say the row exists but was
 * rejected instead of that it is missing.
 */
export class ReferenceBook implements LinkBook {
  readonly #valid = new Map<string, ValidKeys>();
  readonly #rejected = new Map<string, Set<string>>();
  /** `step\0key` of a folded row -> the key of the row it was folded into, until that row is valid. */
  readonly #aliases = new Map<string, string>();

  /** `linked`: the steps whose rows may repeat a key with the same values (their RowChecks keep digests). */
  constructor(readonly linked: ReadonlySet<string> = new Set()) {}

  #set(map: Map<string, Set<string>>, step: string): Set<string> {
    let set = map.get(step);
    if (!set) {
      set = new Set();
      map.set(step, set);
    }
    return set;
  }

  #validOf(step: string): ValidKeys {
    let valid = this.#valid.get(step);
    if (!valid) {
      valid = new ValidKeys();
      this.#valid.set(step, valid);
    }
    return valid;
  }

  /** What a step has recorded for a key: a valid row wins over a rejected duplicate of it. */
  #state(step: string, key: string): 'valid' | 'rejected' | undefined {
    if (this.#valid.get(step)?.has(key)) return 'valid';
    const alias = this.#aliases.get(`${step}\u0000${key}`);
    if (alias !== undefined) return this.#state(step, alias);
    return this.#rejected.get(step)?.has(key) ? 'rejected' : undefined;
  }

  /**
   * Problems of each link of a record to steps whose rows are already recorded, in validate's
   * words. A link to several steps must find its key in exactly one of them. A rejected row counts
   * as having its key: once fixed it would make the link ambiguous, so that is said now rather
   * than on the next run.
   */
  checkRefs(refs: readonly RefUse[]): ReferenceProblem[] {
    const problems: ReferenceProblem[] = [];
    for (const ref of refs) {
      const outcome = followLink(ref, this.find) as LinkOutcome;
      if (outcome.status === 'ambiguous')
        problems.push({
          field: ref.yamlPath,
          code: 'MAPPING_REFERENCE',
          message: this.ambiguous(outcome.key, outcome.steps),
        });
      else if (outcome.status === 'unresolved')
        problems.push({ field: ref.yamlPath, code: 'MAPPING_REFERENCE', message: this.unresolved(ref, outcome.tried) });
    }
    return problems;
  }

  /** A link's key as validate knows it: a valid row (its record has no id yet: 0), a rejected one, or none. */
  readonly find = (step: string, key: string): LinkTarget => {
    const state = this.#state(step, key);
    return state === 'valid' ? 0 : state;
  };

  ambiguous(key: string, steps: readonly string[]): string {
    return `the key '${key}' is in ${stepList(steps, 'and')}, so the link is ambiguous; keys must be unique across the steps one \`ref\` names`;
  }

  unresolved(ref: RefUse, tried: readonly KeyTried[]): string {
    return unresolvedText(ref, tried);
  }

  /** A key of a step that stands for another row's record (onDuplicate folded its row into that one). */
  addAlias(step: string, key: string, into: string): void {
    if (key === into) return;
    if (this.#state(step, into) === 'valid') this.#validOf(step).add(key);
    else this.#aliases.set(`${step}\u0000${key}`, into);
  }

  /** Records the key of a row that became a valid record. */
  addValid(step: string, key: string): void {
    this.#validOf(step).add(key);
  }

  /** A row recorded as valid that turns out rejected after all (the account's lookup under `match:`). */
  demote(step: string, key: string): void {
    this.#valid.get(step)?.remove(key);
    this.addRejected(step, key);
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

/** The valid keys of a step: a KeySet, which only grows, and the few keys taken out again. */
class ValidKeys {
  readonly #keys = new KeySet();
  readonly #removed = new Set<string>();

  get size(): number {
    return this.#keys.size - this.#removed.size;
  }

  has(key: string): boolean {
    return this.#keys.has(key) && !this.#removed.has(key);
  }

  add(key: string): void {
    this.#keys.add(key);
    this.#removed.delete(key);
  }

  remove(key: string): void {
    if (this.#keys.has(key)) this.#removed.add(key);
  }
}
