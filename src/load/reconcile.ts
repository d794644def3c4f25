/**
 * `--reconcile`: rows the journal does not know are looked up in the account before they are
 * created. A journal cut short (or replaced by an older copy) has lost the lines of records its
 * runs made; without a look, the next run would create each of those rows again. The look is the
 * one a resumed run makes for a create whose answer was lost (findCreated): records
 * of the step's kind made since the state began, compared by what the service keeps as sent
 * (signatureOf). The account is listed once per step (per parent record for notes), 100 records a
 * request, not once per row.
 */
import type { Entity } from '../mapping/index.ts';
import { signatureOf } from './update-plan.ts';
import type { RecordService } from '../client/index.ts';

type Body = Record<string, unknown>;

/** How far before the state began to look: covers clock differences with the service (as findCreated). */
const LOOKBACK_MS = 10 * 60_000;

function createdTime(record: Body): number {
  return typeof record.createdAt === 'string' ? Date.parse(record.createdAt) : Number.NaN;
}

/** The parent lists a note is looked for in (notes are listed per record they are on). */
function parentsOf(body: Body): string {
  return ['party', 'kase', 'opportunity'].map((kind) => String((body[kind] as Body | undefined)?.id ?? '')).join('|');
}

/** The records of one step's kind made since its state began, by signature, newest first. */
export class ReconcileIndex {
  #lists = new Map<string, Promise<Map<string, Body[]>>>();
  readonly #since: Date;

  constructor(
    private readonly service: RecordService,
    private readonly entity: Entity,
    /** When the state began. */
    began: Date,
    /** Whether an id belongs to a row already: such a record is never taken twice. */
    private readonly taken: (id: number) => boolean,
  ) {
    this.#since = new Date(began.getTime() - LOOKBACK_MS);
  }

  /**
   * The account's record made for `body` by an earlier run, or null: the newest record made since
   * the state began that the service holds as `body` would be sent, and that no row has.
   */
  async find(body: Body): Promise<Body | null> {
    const list = (await this.#list(body)).get(signatureOf(this.entity, body));
    if (!list) return null;
    const index = list.findIndex(
      (record) =>
        !this.taken(record.id as number) &&
        (Number.isNaN(createdTime(record)) || createdTime(record) >= this.#since.getTime()),
    );
    if (index < 0) return null;
    return list.splice(index, 1)[0] as Body;
  }

  #list(body: Body): Promise<Map<string, Body[]>> {
    const key = this.entity === 'entry' ? parentsOf(body) : '';
    let list = this.#lists.get(key);
    if (!list) {
      list = this.#read(body);
      this.#lists.set(key, list);
    }
    return list;
  }

  async #read(body: Body): Promise<Map<string, Body[]>> {
    const bySignature = new Map<string, Body[]>();
    for await (const record of this.service.candidates(this.entity, [{ body }], this.#since, { embed: true })) {
      if (typeof record.id !== 'number') continue;
      const signature = signatureOf(this.entity, record);
      const list = bySignature.get(signature) ?? [];
      list.push(record);
      bySignature.set(signature, list);
    }
    for (const list of bySignature.values())
      list.sort((a, b) => createdTime(b) - createdTime(a) || (b.id as number) - (a.id as number));
    return bySignature;
  }
}
