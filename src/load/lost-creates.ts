/**
 * Creates whose answers were lost: the records they may have made, looked up in the account the
 * same way during a run (LostCreates) and when a resumed run settles them (findCreated).
 */
import type { RecordService } from '../client/index.ts';
import type { Entity } from '../mapping/index.ts';
import { signatureOf } from './update-plan.ts';

type Body = Record<string, unknown>;

/** A create whose answer never came: what was sent, and when. */
export interface UnconfirmedCreate {
  key: string;
  body: Body;
  /** When the intent was written (ISO time). */
  at: string;
}

/** How far before an unconfirmed create to look for it: covers clock differences with the service. */
const LOOKBACK_MS = 10 * 60_000;

/** When the service says a record was created (ms), NaN when it does not say. */
function createdTime(record: Body): number {
  return typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN;
}

/**
 * Looks for the records that unconfirmed creates may have made: records of the same kind
 * changed since shortly before the earliest of them, compared by what the service keeps as sent
 * (signatureOf). `taken` says whether an id already belongs to another row. Returns the id found
 * for each key; a key missing from the answer was certainly not created.
 */
export async function findCreated(
  service: RecordService,
  entity: Entity,
  creates: readonly UnconfirmedCreate[],
  taken: (id: number) => boolean,
): Promise<Map<string, number>> {
  const found = new Map<string, number>();
  if (creates.length === 0) return found;
  const wanted = new Map<string, UnconfirmedCreate[]>();
  for (const create of creates) {
    const signature = signatureOf(entity, create.body);
    wanted.set(signature, [...(wanted.get(signature) ?? []), create]);
  }
  const earliest = Math.min(...creates.map((c) => Date.parse(c.at)));
  const matching = new Map<string, Body[]>();
  for await (const record of service.candidates(entity, creates, new Date(earliest - LOOKBACK_MS))) {
    if (typeof record.id !== 'number' || taken(record.id)) continue;
    const signature = signatureOf(entity, record);
    if (wanted.has(signature)) matching.set(signature, [...(matching.get(signature) ?? []), record]);
  }
  // The account may hold an older record with the same values (the same contacts imported
  // before, by another state or by hand). The create's own record is the newest of them: taking
  // an older one would make a rollback delete a record this run never wrote.
  for (const [signature, records] of matching) {
    records.sort((a, b) => createdTime(b) - createdTime(a) || (b.id as number) - (a.id as number));
    for (const create of wanted.get(signature) ?? []) {
      const index = records.findIndex(
        (record) => Number.isNaN(createdTime(record)) || createdTime(record) >= Date.parse(create.at) - LOOKBACK_MS,
      );
      if (index < 0) continue;
      found.set(create.key, records.splice(index, 1)[0]?.id as number);
    }
  }
  return found;
}

interface LostCreate {
  create: UnconfirmedCreate;
  resolve(id: number | undefined): void;
  reject(error: unknown): void;
}

/**
 * The creates of one step whose answers were lost during the run, settled the way a resumed run
 * settles them (findCreated) without stopping it: the first lost answer starts a pause (the
 * transport's backoff), and every create lost meanwhile is looked up with it in one listing of
 * the records changed since the earliest, instead of one listing each.
 */
export class LostCreates {
  #waiting: LostCreate[] = [];
  #round: Promise<void> | null = null;

  constructor(
    private readonly service: RecordService,
    private readonly entity: Entity,
    /** Whether an id belongs to a row already. */
    private readonly taken: (id: number) => boolean,
  ) {}

  /**
   * The id of the record the create made, or undefined when it was certainly not made (it may
   * be sent again). `attempt`: how many times this row's create has been lost.
   */
  find(create: UnconfirmedCreate, attempt: number): Promise<number | undefined> {
    const found = new Promise<number | undefined>((resolve, reject) => this.#waiting.push({ create, resolve, reject }));
    this.#round ??= this.#settle(attempt);
    return found;
  }

  async #settle(attempt: number): Promise<void> {
    let batch: LostCreate[] | null = null;
    const take = (): LostCreate[] => {
      // Creates lost from here on start a round of their own, after a pause of their own.
      batch = this.#waiting;
      this.#waiting = [];
      this.#round = null;
      return batch;
    };
    try {
      await this.service.pause(attempt);
      const creates = take();
      const found = await findCreated(
        this.service,
        this.entity,
        creates.map((lost) => lost.create),
        this.taken,
      );
      for (const lost of creates) lost.resolve(found.get(lost.create.key));
    } catch (error) {
      for (const lost of batch ?? take()) lost.reject(error);
    }
  }
}
