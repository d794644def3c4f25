import { FerryError } from '../errors/index.ts';
import { checkBaseUrl } from './base-url.ts';

/** The scheme prefix that marks a live v1 source given where an input file would go. */
export const V1_LIVE_PREFIX = 'v1+';

/**
 * Whether an input names a live v1 account (`v1+https://HOST`) rather than a file. In a module of
 * its own so that the command line can tell without loading the client.
 */
export function isV1LiveInput(input: string): boolean {
  return /^v1\+https?:\/\//i.test(input);
}

/** The v1 lists a live source reads: the path segment after `/api/`. */
export type V1List = 'party' | 'opportunity' | 'kase' | 'tasks';

export const V1_LISTS: readonly V1List[] = ['party', 'opportunity', 'kase', 'tasks'];

/**
 * The list each v1 record kind lives in (a source's `record`), which a live input naming no list
 * reads. History has no list of its own: `historyItem` is read from the history of each record of
 * /api/party by default, or of /api/opportunity or /api/kase when the input names that list.
 */
export const V1_LIST_OF_RECORD: Readonly<
  Record<'person' | 'organisation' | 'party' | 'opportunity' | 'kase' | 'task' | 'historyItem', V1List>
> = {
  party: 'party',
  person: 'party',
  organisation: 'party',
  historyItem: 'party',
  opportunity: 'opportunity',
  kase: 'kase',
  task: 'tasks',
};

/** A live v1 input taken apart: the service's address and, when the input names one, the list. */
export interface V1LiveAddress {
  /** `https://HOST`, what the transport is built on. */
  baseUrl: string;
  /** `/api/kase` at the end of the input picks the list; otherwise the record kind decides. */
  list: V1List | undefined;
}

/**
 * Parses `v1+https://HOST[/api/LIST]`. The address is checked like `--base-url` (no user or
 * password in it, never quoted back); the transport rule is checked when the transport is built.
 */
export function parseV1LiveInput(input: string): V1LiveAddress {
  if (!isV1LiveInput(input)) {
    throw new FerryError('USAGE', `${JSON.stringify(input)} is not a live v1 source`, {
      hint: 'Give it as v1+https://YOUR-OLD-ACCOUNT.example.com.',
    });
  }
  const url = checkBaseUrl(input.slice(V1_LIVE_PREFIX.length));
  if (url.search !== '' || url.hash !== '') {
    throw new FerryError(
      'USAGE',
      `the live v1 source ${JSON.stringify(`${V1_LIVE_PREFIX}${url.origin}${url.pathname}`)} has a query or fragment; the reader adds its own`,
      {
        hint: 'Give it as v1+https://HOST, or v1+https://HOST/api/kase to read one list.',
      },
    );
  }
  const path = url.pathname.replace(/\/+$/, '');
  const match = /^(?:\/api(?:\/([^/]+))?)?$/.exec(path);
  const list = match?.[1];
  if (!match || (list !== undefined && !(V1_LISTS as readonly string[]).includes(list))) {
    throw new FerryError(
      'USAGE',
      `the live v1 source ${JSON.stringify(`${V1_LIVE_PREFIX}${url.origin}${url.pathname}`)} names no list it reads; it reads ${V1_LISTS.map((l) => `/api/${l}`).join(', ')}`,
      {
        hint: "Give it as v1+https://HOST (the mapping's record picks the list), or end it with /api/party, /api/opportunity, /api/kase or /api/tasks.",
      },
    );
  }
  return { baseUrl: url.origin, list: list as V1List | undefined };
}

/** `2011-09-14T15:22:01Z` -> `20110914T152201`, the form the v1 list filters take (UTC). */
export function v1FilterTime(moment: Date): string {
  if (Number.isNaN(moment.getTime()))
    throw new FerryError('USAGE', 'the time given for the v1 lastmodified filter is not a date', {
      hint: 'Give --since as 2024-05-01 or 2024-05-01T12:00:00Z.',
    });
  return moment.toISOString().replace(/[-:]/g, '').slice(0, 15);
}
