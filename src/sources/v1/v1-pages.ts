/**
 * Pages of a live v1 list as the readers take them: the records of one answer, parsed as they are
 * taken from its body (held whole, in memory or a temporary file, by V1Body), and the guard against
 * a service that answers the same page again and again.
 */
import type { V1Body, V1WireFormat } from '../../client/index.ts';
import { FerryError } from '../../errors/index.ts';
import type { RawV1Record } from './v1-xml.ts';

/** One page of a list: its records, read once, as they are taken. */
export interface V1PageRecords {
  /** Path and query the page was asked for with (`/api/party?start=100&limit=100`). */
  path: string;
  /** sha256 of the page's bytes. */
  digest: string;
  records: AsyncGenerator<RawV1Record>;
  /** Lets go of the page's bytes: after its last record, or when the read stops. */
  dispose(): Promise<void>;
}

/**
 * The pages of one list read so far, by the digest of their bytes. Two pages of a list never hold
 * the same bytes (their records differ), so a page answered again is a service that does not go
 * on through the list (it ignores `start`): read on, and the read would never end and its spool
 * would grow without bound. The read stops instead, before any record of the repeated page is taken.
 */
export class V1PageRepeats {
  readonly #seen = new Map<string, string>();

  /** Notes `page`, or throws API_RESPONSE_INVALID when a page with the same bytes was read before. */
  check(page: Pick<V1PageRecords, 'path' | 'digest'>): void {
    const earlier = this.#seen.get(page.digest);
    if (earlier !== undefined) {
      // Worded as the client's errors are (`GET path: ...`); sources/ reaches the client by types only.
      throw new FerryError(
        'API_RESPONSE_INVALID',
        `GET ${page.path}: the old account answered with the very page it gave for ${earlier}: it does not go on through the list (it ignores start), and reading on would never end`,
        {
          hint: 'Check that the address is the old account itself and not a cache or proxy in front of it; or read an export file of the list instead.',
        },
      );
    }
    this.#seen.set(page.digest, page.path);
  }
}

const BOM = Buffer.from([0xef, 0xbb, 0xbf]);
/** The most of a sub-list's start looked at for its XML declaration. */
const HEAD_BYTES = 1024;

/**
 * A sub-list's answer (`/api/kase/7/tag`: `<tags>...</tags>`, or `{"tags": ...}`) as the body of an
 * element of a record, so that the record parsers read it as they read it nested in an export:
 * `<kase>` + the answer without its BOM and XML declaration + `</kase>`, or `{"kase":` + the answer
 * (`{}` when it is empty) + `}`. Streamed: a large answer is never held as one string.
 */
export async function* wrappedSubList(body: V1Body, format: V1WireFormat): AsyncGenerator<Buffer> {
  const [open, close] = format === 'xml' ? ['<kase>', '</kase>'] : ['{"kase":', '}'];
  let head: Buffer = Buffer.alloc(0);
  let started = false;
  const start = function* (final: boolean): Generator<Buffer> {
    let rest = head.subarray(0, BOM.length).equals(BOM) ? head.subarray(BOM.length) : head;
    if (format === 'xml') {
      const declaration = /^\s*<\?xml[^>]*\?>/.exec(rest.toString('latin1'));
      if (declaration) rest = rest.subarray(declaration[0].length);
    } else if (final && rest.toString('latin1').trim() === '') rest = Buffer.from('{}');
    started = true;
    yield Buffer.from(open);
    yield rest;
  };
  for await (const chunk of body.chunks()) {
    if (started) {
      yield chunk;
      continue;
    }
    head = Buffer.concat([head, chunk]);
    if (head.length >= HEAD_BYTES) yield* start(false);
  }
  if (!started) yield* start(true);
  yield Buffer.from(close);
}
