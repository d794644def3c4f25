/**
 * Parties (spec 4.3): people and organisations, with their nested addresses, phone numbers,
 * websites and email addresses. A delete that drags entries or employees along is scheduled as a
 * job when the settings say so, as the service does; otherwise it happens at once.
 */
import { pageOf } from '../paging.ts';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerOf, type Caller, type SandboxContext } from '../context.ts';
import { badRequest, created, isIdList, paginate, parseEmbed, parseId, queryOf, timestamp, unwrap } from '../http.ts';
import { answerScheduled, registerJobHandler } from '../jobs.ts';
import type { AddressRec, EmailRec, PartyRec, PhoneRec, WebsiteRec } from '../model.ts';
import {
  forClassOf,
  KASE_EMBEDS,
  OPPORTUNITY_EMBEDS,
  PARTY_EMBEDS,
  serializeKase,
  serializeOpportunity,
  serializeParty,
  WEBSITE_SERVICES,
} from './record-serializers.ts';
import { deleteParty, partyDeleteIsScheduled } from './record-cascade.ts';
import {
  applyCollection,
  applyTags,
  type Body,
  changedSince,
  checkKeys,
  deletedList,
  dropFieldsOfRemovedTags,
  isObject,
  mustFind,
  mustFindAll,
  partyMatches,
  partyName,
  planFields,
  planTags,
  Problems,
  readIdRef,
  readString,
  resolveOwnerTeam,
  visibleTo,
} from './record-common.ts';

/** Avatars the sandbox gives new parties; the service shows a generic picture until one is uploaded. */
export const DEFAULT_PICTURE_URLS = {
  person: 'https://sandbox.crm-ferry.invalid/avatars/person.png',
  organisation: 'https://sandbox.crm-ferry.invalid/avatars/organisation.png',
} as const;

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

const PERSON_KEYS = ['type', 'title', 'firstName', 'lastName', 'jobTitle', 'organisation'];
const ORGANISATION_KEYS = ['type', 'name'];
const COMMON_KEYS = [
  'about',
  'owner',
  'team',
  'addresses',
  'phoneNumbers',
  'websites',
  'emailAddresses',
  'tags',
  'fields',
];
const READ_ONLY_KEYS = ['id', 'createdAt', 'updatedAt', 'lastContactedAt', 'pictureURL', 'missingImportantFields'];

// ---------------------------------------------------------------------------------------------
// Nested collection elements

function optionalText(
  element: Body,
  key: string,
  at: string,
  problems: Problems,
  existing: string | null | undefined,
): string | null {
  const value = readString(element, key, problems, { nullable: true, prefix: `${at}.`, max: 500 });
  return value === undefined ? (existing ?? null) : value;
}

function buildAddress(
  element: Body,
  existing: AddressRec | undefined,
  at: string,
  problems: Problems,
): AddressRec | undefined {
  const before = problems.list.length;
  checkKeys(element, ['id', '_delete', 'type', 'street', 'city', 'state', 'zip', 'country'], [], problems, `${at}.`);
  const address: AddressRec = {
    id: existing?.id ?? 0,
    type: optionalText(element, 'type', at, problems, existing?.type),
    street: optionalText(element, 'street', at, problems, existing?.street),
    city: optionalText(element, 'city', at, problems, existing?.city),
    state: optionalText(element, 'state', at, problems, existing?.state),
    zip: optionalText(element, 'zip', at, problems, existing?.zip),
    country: optionalText(element, 'country', at, problems, existing?.country),
  };
  if (!address.street && !address.city && !address.state && !address.zip && !address.country) {
    problems.add(at, 'an address needs at least one of street, city, state, zip or country');
  }
  return problems.list.length === before ? address : undefined;
}

function buildPhone(
  element: Body,
  existing: PhoneRec | undefined,
  at: string,
  problems: Problems,
): PhoneRec | undefined {
  const before = problems.list.length;
  checkKeys(element, ['id', '_delete', 'type', 'number'], [], problems, `${at}.`);
  const number = readString(element, 'number', problems, { required: !existing, prefix: `${at}.`, max: 100 });
  const phone: PhoneRec = {
    id: existing?.id ?? 0,
    type: optionalText(element, 'type', at, problems, existing?.type),
    number: number ?? existing?.number ?? '',
  };
  return problems.list.length === before ? phone : undefined;
}

function buildEmail(
  element: Body,
  existing: EmailRec | undefined,
  at: string,
  problems: Problems,
): EmailRec | undefined {
  const before = problems.list.length;
  checkKeys(element, ['id', '_delete', 'type', 'address'], [], problems, `${at}.`);
  const address = readString(element, 'address', problems, { required: !existing, prefix: `${at}.`, max: 254 });
  if (typeof address === 'string' && !EMAIL.test(address.trim())) {
    problems.add(`${at}.address`, `is not an email address: ${JSON.stringify(address)}`);
  }
  const email: EmailRec = {
    id: existing?.id ?? 0,
    type: optionalText(element, 'type', at, problems, existing?.type),
    address: address?.trim() ?? existing?.address ?? '',
  };
  return problems.list.length === before ? email : undefined;
}

function buildWebsite(
  element: Body,
  existing: WebsiteRec | undefined,
  at: string,
  problems: Problems,
): WebsiteRec | undefined {
  const before = problems.list.length;
  checkKeys(element, ['id', '_delete', 'type', 'service', 'address'], ['url'], problems, `${at}.`);
  const address = readString(element, 'address', problems, { required: !existing, prefix: `${at}.`, max: 500 });
  const service = readString(element, 'service', problems, { prefix: `${at}.`, max: 50 });
  if (typeof service === 'string' && !(service in WEBSITE_SERVICES)) {
    problems.add(
      `${at}.service`,
      `must be one of ${Object.keys(WEBSITE_SERVICES).join(', ')}, got ${JSON.stringify(service)}`,
    );
  }
  const website: WebsiteRec = {
    id: existing?.id ?? 0,
    type: optionalText(element, 'type', at, problems, existing?.type),
    service: service ?? existing?.service ?? 'URL',
    address: address ?? existing?.address ?? '',
  };
  return problems.list.length === before ? website : undefined;
}

// ---------------------------------------------------------------------------------------------
// Create and update

interface OrganisationLink {
  id: number | null;
  /** A name of an organisation that does not exist yet and is created with the person. */
  newName?: string;
}

function readOrganisation(ctx: SandboxContext, value: unknown, problems: Problems): OrganisationLink | undefined {
  if (value === undefined) return undefined;
  if (value === null) return { id: null };
  if (isObject(value) && value.id === undefined && value.name !== undefined) {
    if (typeof value.name !== 'string' || value.name.trim() === '') {
      problems.add('organisation.name', 'must be a non-blank string');
      return undefined;
    }
    const wanted = value.name.trim().toLowerCase();
    const found = ctx.store.partyIndex.organisationNamed(wanted);
    return found ? { id: found.id } : { id: null, newName: value.name.trim() };
  }
  const id = readIdRef(value, 'organisation', problems);
  if (id === undefined || id === null) return undefined;
  const organisation = ctx.store.parties.get(id);
  if (!organisation || organisation.type !== 'organisation') {
    problems.add('organisation', `no organisation with id ${id}`);
    return undefined;
  }
  return { id };
}

/**
 * Checks a create or update body and applies it to `base` (a blank record on create). Nothing
 * is stored until the whole body passed, so a 422 leaves no new tags or organisations behind.
 */
function applyPartyBody(
  ctx: SandboxContext,
  caller: Caller,
  body: Body,
  base: PartyRec,
  mode: 'create' | 'update',
): PartyRec {
  const problems = new Problems('party');
  const record: PartyRec = { ...base };
  if (mode === 'create') {
    if (body.type !== 'person' && body.type !== 'organisation') {
      problems.add('type', `must be "person" or "organisation", got ${JSON.stringify(body.type ?? null)}`);
      problems.check();
    }
    record.type = body.type as PartyRec['type'];
    record.pictureURL = DEFAULT_PICTURE_URLS[record.type];
  } else if (body.type !== undefined && body.type !== base.type) {
    problems.add('type', `a ${base.type} cannot become a ${JSON.stringify(body.type)}`);
  }
  const person = record.type === 'person';
  checkKeys(body, [...COMMON_KEYS, ...(person ? PERSON_KEYS : ORGANISATION_KEYS)], READ_ONLY_KEYS, problems);

  const text = (key: 'title' | 'firstName' | 'lastName' | 'jobTitle' | 'name' | 'about', max = 255): void => {
    const value = readString(body, key, problems, { nullable: true, max });
    if (value !== undefined) record[key] = value;
  };
  text('about', 100_000);
  let organisation: OrganisationLink | undefined;
  if (person) {
    text('title', 50);
    text('firstName');
    text('lastName');
    text('jobTitle');
    if (!record.firstName && !record.lastName) problems.add('firstName', 'a person needs a firstName or a lastName');
    organisation = readOrganisation(ctx, body.organisation, problems);
    if (organisation) record.organisationId = organisation.id;
  } else {
    text('name');
    if (!record.name) problems.add('name', 'an organisation needs a name');
  }

  Object.assign(record, resolveOwnerTeam(ctx, body, caller, problems, mode === 'create' ? null : base));
  record.addresses = applyCollection(ctx, 'addresses', base.addresses, body.addresses, problems, (e, x, at) =>
    buildAddress(e, x, at, problems),
  );
  record.phoneNumbers = applyCollection(
    ctx,
    'phoneNumbers',
    base.phoneNumbers,
    body.phoneNumbers,
    problems,
    (e, x, at) => buildPhone(e, x, at, problems),
  );
  record.emailAddresses = applyCollection(
    ctx,
    'emailAddresses',
    base.emailAddresses,
    body.emailAddresses,
    problems,
    (e, x, at) => buildEmail(e, x, at, problems),
  );
  record.websites = applyCollection(ctx, 'websites', base.websites, body.websites, problems, (e, x, at) =>
    buildWebsite(e, x, at, problems),
  );

  const tagPlan = planTags(ctx, 'parties', base.tagIds, body.tags, mode, problems);
  const fields = planFields(ctx, 'parties', forClassOf(record.type), base.fields, body.fields, mode, problems);
  problems.check();

  record.fields = dropFieldsOfRemovedTags(ctx, fields, tagPlan.removed);
  record.tagIds = applyTags(ctx, 'parties', tagPlan, record.fields);
  if (organisation?.newName !== undefined) {
    const at = timestamp(ctx.now());
    const created = ctx.store.parties.insert({
      ...blankParty(at),
      type: 'organisation',
      name: organisation.newName,
      pictureURL: DEFAULT_PICTURE_URLS.organisation,
      ownerId: record.ownerId,
      teamId: record.teamId,
    });
    record.organisationId = created.id;
  }
  return record;
}

function blankParty(at: string): Omit<PartyRec, 'id'> {
  return {
    type: 'person',
    title: null,
    firstName: null,
    lastName: null,
    jobTitle: null,
    name: null,
    about: null,
    organisationId: null,
    ownerId: null,
    teamId: null,
    lastContactedAt: null,
    pictureURL: DEFAULT_PICTURE_URLS.person,
    addresses: [],
    phoneNumbers: [],
    emailAddresses: [],
    websites: [],
    tagIds: [],
    fields: [],
    restrictedFor: [],
    createdAt: at,
    updatedAt: at,
  };
}

/** Creates a party from a v2 create body (checked whole first: a 422 stores nothing); v1 creates come here too. */
export function createParty(ctx: SandboxContext, caller: Caller, body: Body): PartyRec {
  const at = timestamp(ctx.now());
  const draft = applyPartyBody(ctx, caller, body, { ...blankParty(at), id: 0 }, 'create');
  const { id: _ignored, ...rest } = draft;
  return ctx.store.parties.insert(rest);
}

/** Applies a v2 update body to a party and stores it; v1 updates come here too. */
export function updateParty(ctx: SandboxContext, caller: Caller, existing: PartyRec, body: Body): PartyRec {
  const record = applyPartyBody(ctx, caller, body, existing, 'update');
  record.updatedAt = timestamp(ctx.now());
  return ctx.store.parties.put(record);
}

// ---------------------------------------------------------------------------------------------
// Routes

function searchQuery(request: FastifyRequest): string {
  const q = queryOf(request).q;
  if (q === undefined || q.trim() === '') throw badRequest('the search needs a non-empty q parameter');
  return q;
}

/** Registers the v2 party endpoints (spec 4.3) and the per-party lists of projects and opportunities. */
export function registerPartyRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const { store } = ctx;
  const list = (
    request: FastifyRequest,
    reply: FastifyReply,
    matches: (party: PartyRec) => boolean,
    candidates?: () => Iterable<PartyRec> | null,
  ): { parties: unknown[] } => {
    const embed = parseEmbed(request, PARTY_EMBEDS);
    const caller = callerOf(request);
    const page = pageOf(store, request, reply, {
      records: () => candidates?.() ?? store.parties.values(),
      matches: (r) => visibleTo(r, caller) && matches(r),
      key: `caller ${caller.user.id}`,
    });
    return { parties: page.map((r) => serializeParty(ctx, r, embed)) };
  };
  const withTagsAndFields = (embed: Set<string>): Set<string> => new Set([...embed, 'tags', 'fields']);

  app.get('/api/v2/parties', async (request, reply) => list(request, reply, changedSince(request)));

  app.get('/api/v2/parties/search', async (request, reply) => {
    const q = searchQuery(request);
    // The index gives the parties the search can match, in table order; partyMatches keeps the matches.
    return list(
      request,
      reply,
      (p) => partyMatches(p, q),
      () => store.partyIndex.searchCandidates(q),
    );
  });

  app.get('/api/v2/parties/deleted', async (request) =>
    deletedList(request, store, callerOf(request), store.deleted.parties, () => store.parties.values(), partyName, {
      deleted: 'parties',
      restricted: 'restrictedParties',
    }),
  );

  app.get('/api/v2/parties/:partyId', async (request) => {
    const { partyId } = request.params as { partyId: string };
    const embed = parseEmbed(request, PARTY_EMBEDS);
    const caller = callerOf(request);
    if (isIdList(partyId)) {
      return {
        parties: mustFindAll(store.parties, partyId, caller, 'party').map((r) => serializeParty(ctx, r, embed)),
      };
    }
    return { party: serializeParty(ctx, mustFind(store.parties, parseId(partyId, 'party'), caller, 'party'), embed) };
  });

  app.post('/api/v2/parties', async (request, reply) => {
    const embed = parseEmbed(request, PARTY_EMBEDS);
    const record = createParty(ctx, callerOf(request), unwrap(request, 'party'));
    return created(request, reply, `/parties/${record.id}`, {
      party: serializeParty(ctx, record, withTagsAndFields(embed)),
    });
  });

  app.put('/api/v2/parties/:partyId', async (request) => {
    const { partyId } = request.params as { partyId: string };
    const embed = parseEmbed(request, PARTY_EMBEDS);
    const caller = callerOf(request);
    const existing = mustFind(store.parties, parseId(partyId, 'party'), caller, 'party');
    const record = updateParty(ctx, caller, existing, unwrap(request, 'party'));
    return { party: serializeParty(ctx, record, withTagsAndFields(embed)) };
  });

  app.delete('/api/v2/parties/:partyId', async (request, reply) => {
    const { partyId } = request.params as { partyId: string };
    const party = mustFind(store.parties, parseId(partyId, 'party'), callerOf(request), 'party');
    if (ctx.settings.scheduledDeletes && partyDeleteIsScheduled(ctx, party.id)) {
      return answerScheduled(ctx, request, reply, 'Deleting Party', { table: 'parties', id: party.id });
    }
    deleteParty(ctx, party.id);
    return reply.code(204).send();
  });
  registerJobHandler('parties', (jobCtx, id) => deleteParty(jobCtx, id));

  app.get('/api/v2/parties/:partyId/people', async (request, reply) => {
    const { partyId } = request.params as { partyId: string };
    const party = mustFind(store.parties, parseId(partyId, 'party'), callerOf(request), 'party');
    return list(
      request,
      reply,
      (p) => p.type === 'person' && p.organisationId === party.id,
      () => store.partyIndex.employees(party.id),
    );
  });

  app.get('/api/v2/parties/:partyId/kases', async (request, reply) => {
    const { partyId } = request.params as { partyId: string };
    const caller = callerOf(request);
    const party = mustFind(store.parties, parseId(partyId, 'party'), caller, 'party');
    const embed = parseEmbed(request, KASE_EMBEDS);
    const kases = store.kases
      .all()
      .filter((k) => (k.partyId === party.id || k.partyIds.includes(party.id)) && visibleTo(k, caller));
    return { kases: paginate(request, reply, kases).map((k) => serializeKase(ctx, k, embed)) };
  });

  app.get('/api/v2/parties/:partyId/opportunities', async (request, reply) => {
    const { partyId } = request.params as { partyId: string };
    const caller = callerOf(request);
    const party = mustFind(store.parties, parseId(partyId, 'party'), caller, 'party');
    const embed = parseEmbed(request, OPPORTUNITY_EMBEDS);
    const opportunities = store.opportunities
      .all()
      .filter((o) => (o.partyId === party.id || o.partyIds.includes(party.id)) && visibleTo(o, caller));
    return { opportunities: paginate(request, reply, opportunities).map((o) => serializeOpportunity(ctx, o, embed)) };
  });
}
