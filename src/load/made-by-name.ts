/**
 * Organisations made by name. A person linked to an organisation by its name alone (a link's
 * fallback, when the company's own row was rejected or is missing) makes the service create that
 * organisation when the account has none of that name. Such an organisation is the run's doing, so
 * it is the run's: journalled in the step of the person that made it, as a row of its own (key
 * `madeKey(name)`), which rollback deletes like any record the run created (when no one belongs to
 * it any more) and verify counts as the run's. A later row that writes the organisation itself
 * (the company's row, fixed) updates that record instead of creating a second one, so the people
 * linked to it by name stay on it.
 */
import type { RecordService } from '../client/index.ts';
import type { Entity } from '../mapping/index.ts';

type Body = Record<string, unknown>;

/** Keys no source row has: a NUL never comes out of a key template over a file's cells. */
const MADE_PREFIX = '\u0000made:organisation:';

/** An organisation's name as the service finds it by name: case and outer spaces aside. */
export function nameKey(name: string): string {
  return name.trim().toLowerCase();
}

/** The journal key of the organisation made by name `name`. */
export function madeKey(name: string): string {
  return `${MADE_PREFIX}${nameKey(name)}`;
}

/** Whether a journal row is an organisation made by name, not a source row. */
export function isMadeKey(key: string): boolean {
  return key.startsWith(MADE_PREFIX);
}

/** A journal key as a person reads it: a made organisation's as `organisation made by name: acme ltd`. */
export function shownKey(key: string): string {
  return isMadeKey(key) ? `organisation made by name: ${key.slice(MADE_PREFIX.length)}` : key;
}

/** The name of the organisation a party's body links to by name alone, or undefined. */
export function linkedByName(entity: Entity, body: Body): string | undefined {
  if (entity !== 'party') return undefined;
  const organisation = body.organisation as Body | undefined;
  if (organisation === null || typeof organisation !== 'object' || organisation.id !== undefined) return undefined;
  return typeof organisation.name === 'string' && organisation.name.trim() !== '' ? organisation.name : undefined;
}

/**
 * How far apart the person's and the organisation's creation times may be for the organisation to
 * count as made with the person: both are the service's clock, read in one request.
 */
const SAME_REQUEST_MS = 2000;

/**
 * A step as this registry reads it: its journal's rows, and the ids of every record they hold
 * (StepRun.taken), which it asks rather than keep a second set of a million ids.
 */
interface JournalledStep {
  journal: { rows: ReadonlyMap<string, { id: number | null }> };
  taken: { has(id: number): boolean };
}

/** The organisations the plan's runs made by name, and which of them a row of the plan has taken as its record. */
export class MadeByName {
  /** nameKey -> id of the organisation made by that name. */
  readonly #made = new Map<string, number>();
  /** The ids in #made, which the steps' sets of ids hold too. */
  readonly #madeIds = new Set<number>();
  /** Organisations made by name that a row of this run took as its record. */
  readonly #takenNow = new Set<number>();
  /** Names whose organisation this run is looking at, shared by the rows that name it at once. */
  readonly #checking = new Map<string, Promise<boolean>>();

  constructor(readonly steps: readonly JournalledStep[]) {
    for (const step of steps) {
      // The keys alone: the rows' states are not made for the few this looks for.
      for (const key of step.journal.rows.keys()) {
        if (!isMadeKey(key)) continue;
        const id = step.journal.rows.get(key)?.id;
        if (id === null || id === undefined) continue;
        this.#made.set(key.slice(MADE_PREFIX.length), id);
        this.#madeIds.add(id);
      }
    }
  }

  /** Whether `id` is a source row's record: in a step's ids and not only as made by name, or taken by a row of this run. */
  #taken(id: number): boolean {
    if (this.#takenNow.has(id)) return true;
    if (!this.steps.some((step) => step.taken.has(id))) return false;
    if (!this.#madeIds.has(id)) return true;
    // Made by name, and a source row's record too when some row of a journal holds it under its own key.
    return this.steps.some((step) => {
      for (const [key, row] of step.journal.rows) if (row.id === id && !isMadeKey(key)) return true;
      return false;
    });
  }

  /**
   * The organisation made by `name` by an earlier row, for a row that writes that organisation
   * itself: taken by this row (no other row gets it), or undefined when there is none or another
   * row has it already.
   */
  take(name: string): number | undefined {
    const id = this.#made.get(nameKey(name));
    if (id === undefined || this.#taken(id)) return undefined;
    this.#takenNow.add(id);
    return id;
  }

  /**
   * After a person's write that linked an organisation by name: whether the organisation in the
   * answer was made by that request (the account had none of the name), in which case `own` is
   * called once to journal it. An organisation the plan knows already (made earlier, or a row's
   * record) is not looked at; another is read once (its creation time against the person's).
   */
  async afterWrite(
    service: RecordService,
    name: string,
    answer: Body,
    own: (id: number) => Promise<void>,
  ): Promise<void> {
    const organisation = answer.organisation as Body | undefined;
    const id = organisation?.id;
    const key = nameKey(name);
    if (typeof id !== 'number' || this.#made.has(key) || this.#taken(id)) return;
    let checking = this.#checking.get(key);
    if (!checking) {
      checking = (async () => {
        const record = await service.read('party', id);
        const made =
          record !== null &&
          typeof record.createdAt === 'string' &&
          typeof answer.createdAt === 'string' &&
          Math.abs(Date.parse(record.createdAt) - Date.parse(answer.createdAt)) <= SAME_REQUEST_MS;
        if (made) {
          this.#made.set(key, id);
          await own(id);
        }
        return made;
      })();
      this.#checking.set(key, checking);
    }
    await checking;
  }
}
