/** Search of parties and the records that name one. */
import type { SandboxContext } from '../context.ts';
import type { PartyRec } from '../model.ts';

import { digitsOf, partyName } from '../party-text.ts';

export { digitsOf, partyName };

/**
 * Whether one of a party's e-mail addresses is `needle` (lower case), ignoring case. A needle with
 * an `@` also finds addresses holding it (`@acme.example` finds everyone at that domain); a bare
 * word does not, or a search for "an" would find most people by their address.
 */
export function hasEmailAddress(party: PartyRec, needle: string): boolean {
  const partial = needle.includes('@');
  return party.emailAddresses.some((e) => {
    const address = e.address.toLowerCase();
    return address === needle || (partial && address.includes(needle));
  });
}

/**
 * Whether a party matches a search: part of its name, an e-mail address (see hasEmailAddress), a
 * postcode, or a phone number. Phone numbers are compared on their digits alone, so
 * `+44 (0)20 7946-0018` is found by `7946 0018`.
 */
export function partyMatches(party: PartyRec, q: string): boolean {
  const needle = q.trim().toLowerCase();
  if (needle === '') return false;
  if (partyName(party).toLowerCase().includes(needle)) return true;
  if (hasEmailAddress(party, needle)) return true;
  const squeezed = needle.replace(/\s+/g, '');
  if (party.addresses.some((a) => a.zip !== null && a.zip.toLowerCase().replace(/\s+/g, '') === squeezed)) return true;
  const digits = digitsOf(needle);
  // Only a query that is mostly digits is a phone number; otherwise "a1" would match any phone with a 1.
  if (digits.length >= 3 && digits.length >= squeezed.replace(/[^0-9a-z]/g, '').length) {
    return party.phoneNumbers.some((p) => digitsOf(p.number).includes(digits));
  }
  return false;
}

/** Whether a project or opportunity matches a search: by its own name, or by its party (name, postcode, phone). */
export function nameOrPartyMatches(ctx: SandboxContext, record: { name: string; partyId: number }, q: string): boolean {
  if (record.name.toLowerCase().includes(q.trim().toLowerCase())) return true;
  const party = ctx.store.parties.get(record.partyId);
  return party !== undefined && partyMatches(party, q);
}
