/** Reads of parties, opportunities and history in the v1 interface, as old exports saw them (their writes: party-writes.ts). */
import { callerOf, type SandboxContext } from '../context.ts';
import { queryOf } from '../http.ts';
import type { EntryRec, PartyRec } from '../model.ts';
import { partyMatches } from '../routes/record-search.ts';
import { filterByQuery, findRecord, sliceByQuery, visibleTo, type V1Kind, type V1Route } from './common.ts';
import { sendNode } from './negotiate.ts';
import { historyItemNode, opportunityNode, partyNode } from './shapes.ts';
import { listNode } from './xml.ts';

/** Read-only party and opportunity routes and the history of parties, opportunities and cases. */
export function registerPartyRoutes(route: V1Route, ctx: SandboxContext): void {
  const { store } = ctx;

  // Beside `lastmodified` and `tag`, the party list takes `email` (the parties with that address,
  // ignoring case) and `q` (the v2 search: name, e-mail address, postcode, phone number). The
  // people and the organisations are lists of their own, with the same filters, in a `parties`.
  for (const [path, kinds] of [
    ['/api/party', ['person', 'organisation']],
    ['/api/person', ['person']],
    ['/api/organisation', ['organisation']],
  ] as const) {
    route('GET', path, (request, reply) => {
      const user = callerOf(request).user;
      const query = queryOf(request);
      const email = query.email?.trim().toLowerCase() ?? '';
      const q = query.q?.trim() ?? '';
      const wanted = (party: PartyRec): boolean =>
        (kinds as readonly string[]).includes(party.type) &&
        visibleTo(party, user) &&
        (email === '' || party.emailAddresses.some((e) => e.address.toLowerCase() === email)) &&
        (q === '' || partyMatches(party, q));
      const matching = filterByQuery(ctx, request, 'parties', store.parties.all().filter(wanted));
      const items = sliceByQuery(request, matching).map((p) => partyNode(ctx, p));
      return sendNode(request, reply, listNode('parties', kinds, items));
    });
  }

  route('GET', '/api/party/:id', (request, reply) => {
    const party = findRecord(ctx, request, 'party', (request.params as { id?: string }).id);
    return sendNode(request, reply, partyNode(ctx, party));
  });

  route('GET', '/api/opportunity', (request, reply) => {
    const user = callerOf(request).user;
    const matching = filterByQuery(
      ctx,
      request,
      'opportunities',
      store.opportunities.all().filter((o) => visibleTo(o, user)),
    );
    const items = sliceByQuery(request, matching).map((o) => opportunityNode(ctx, o));
    return sendNode(request, reply, listNode('opportunities', ['opportunity'], items));
  });

  route('GET', '/api/opportunity/:id', (request, reply) => {
    const opportunity = findRecord(ctx, request, 'opportunity', (request.params as { id?: string }).id);
    return sendNode(request, reply, opportunityNode(ctx, opportunity));
  });

  route('GET', '/api/party/:id/opportunity', (request, reply) => {
    const party = findRecord(ctx, request, 'party', (request.params as { id?: string }).id);
    const user = callerOf(request).user;
    const items = store.opportunities.all().filter((o) => o.partyId === party.id && visibleTo(o, user));
    return sendNode(
      request,
      reply,
      listNode(
        'opportunities',
        ['opportunity'],
        sliceByQuery(request, items).map((o) => opportunityNode(ctx, o)),
      ),
    );
  });

  const belongs: Record<V1Kind, (entry: EntryRec, id: number) => boolean> = {
    party: (entry, id) => entry.partyId === id || entry.partyIds.includes(id),
    opportunity: (entry, id) => entry.opportunityId === id,
    kase: (entry, id) => entry.kaseId === id,
  };
  for (const kind of ['party', 'opportunity', 'kase'] as const) {
    route('GET', `/api/${kind}/:id/history`, (request, reply) => {
      const record = findRecord(ctx, request, kind, (request.params as { id?: string }).id);
      // Newest first, as a record's history reads in the service; ties keep the order of creation.
      const entries = store.entries
        .all()
        .filter((entry) => belongs[kind](entry, record.id))
        .sort((a, b) => Date.parse(b.entryAt) - Date.parse(a.entryAt) || b.id - a.id);
      const items = sliceByQuery(request, entries).map((entry) => historyItemNode(ctx, entry));
      return sendNode(request, reply, listNode('history', ['historyItem'], items));
    });
  }
}
