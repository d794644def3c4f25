/** The scheme prefix that marks a live v1 source given where an input file would go. */
export const V1_LIVE_PREFIX = 'v1+';

/**
 * Whether an input names a live v1 account (`v1+https://HOST`) rather than a file. In a module of
 * its own so that the command line can tell without loading the client.
 */
export function isV1LiveInput(input: string): boolean {
  return /^v1\+https?:\/\//i.test(input);
}
