/**
 * A party as text, the way searches compare it: its display name and a phone number's digits. Kept
 * apart from the search routes so that the store's party index reads them without the routes'
 * context (which holds the store: a circle).
 */
import type { PartyRec } from './model.ts';

/** The display name of a party: the organisation name or the person's first and last name. */
export function partyName(party: PartyRec): string {
  return party.type === 'organisation'
    ? (party.name ?? '')
    : [party.firstName, party.lastName].filter(Boolean).join(' ');
}

/** The digits of a text alone: how phone numbers are compared. */
export function digitsOf(text: string): string {
  return text.replace(/\D+/g, '');
}
