/**
 * Writes of people, organisations and opportunities in the v1 interface, as the published v1
 * clients send them: `POST /api/person` and `/api/organisation` (201, `Location: .../api/party/{id}`,
 * no body), `PUT /api/person/{id}` and `/api/organisation/{id}` (200, no body), `DELETE
 * /api/party/{id}` and `/api/opportunity/{id}` (200), `POST /api/party/{id}/opportunity` (201 +
 * `Location`). A v1 body (XML or JSON) is read into the v2 body it stands for and goes through the
 * v2 writes, so the rules of what a person or an organisation may hold, the cascade of a deleted
 * party and the store's bookkeeping are the same whichever interface wrote.
 */
import type { FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import { HttpError, notFound, validationError } from '../http.ts';
import type { PartyRec } from '../model.ts';
import { createParty, updateParty } from '../routes/parties.ts';
import { OPPORTUNITY_KIND } from '../routes/opportunities.ts';
import { deleteOpportunity, deleteParty } from '../routes/record-cascade.ts';
import { createRecord } from '../routes/record-routes.ts';
import { findRecord, v1Location, type V1Route } from './common.ts';
import { FieldReader, parseMoment } from './input.ts';
import { readBody, sendEmpty } from './negotiate.ts';

type Body = Record<string, unknown>;
type PartyKind = 'person' | 'organisation';

const PERSON_FIELDS = [
  'title',
  'firstName',
  'lastName',
  'jobTitle',
  'organisationId',
  'organisationName',
  'about',
  'contacts',
] as const;
const ORGANISATION_FIELDS = ['name', 'about', 'contacts'] as const;
const PARTY_READ_ONLY = ['id', 'createdOn', 'updatedOn', 'pictureURL'] as const;

/** Each contact kind of v1: its fields, and the v2 collection and field names they become. */
const CONTACT_KINDS = {
  address: {
    collection: 'addresses',
    fields: { type: 'type', street: 'street', city: 'city', state: 'state', zip: 'zip', country: 'country' },
  },
  email: { collection: 'emailAddresses', fields: { type: 'type', emailAddress: 'address' } },
  phone: { collection: 'phoneNumbers', fields: { type: 'type', phoneNumber: 'number' } },
  website: { collection: 'websites', fields: { type: 'type', webService: 'service', webAddress: 'address' } },
} as const satisfies Record<string, { collection: string; fields: Record<string, string> }>;

/** Read-only fields of a contact an earlier answer carries: skipped. */
const CONTACT_READ_ONLY: Record<string, readonly string[]> = { website: ['url'] };

const isObject = (value: unknown): value is Body =>
  value !== null && typeof value === 'object' && !Array.isArray(value);

/** An id given as v1 text (`"12"`) or a JSON number; undefined (with a problem) otherwise. */
function readId(reader: FieldReader, field: string, value: unknown): number | undefined {
  const text = typeof value === 'number' ? String(value) : value;
  if (typeof text === 'string' && /^\d{1,15}$/.test(text.trim())) return Number(text.trim());
  reader.fail(field, `must be a record id (digits), got ${JSON.stringify(value)}`);
  return undefined;
}

/** The items of one contact kind: an XML element given once or repeated, a JSON object or list. */
function itemsOf(value: unknown): unknown[] {
  if (value === '' || value === null || value === undefined) return [];
  return Array.isArray(value) ? value : [value];
}

/**
 * `<contacts>` as the v2 collections it stands for: an item with an `id` changes that item of the
 * party, one without is added (the v2 rule of nested collections); items left out stay.
 */
function readContacts(reader: FieldReader, contacts: unknown, into: Body): void {
  if (contacts === undefined || contacts === '' || contacts === null) return;
  if (!isObject(contacts)) {
    reader.fail('contacts', 'must hold address, email, phone or website elements');
    return;
  }
  for (const [kind, value] of Object.entries(contacts)) {
    const spec = CONTACT_KINDS[kind as keyof typeof CONTACT_KINDS];
    if (spec === undefined) {
      reader.fail(
        `contacts.${kind}`,
        `is not a kind of contact; known kinds: ${Object.keys(CONTACT_KINDS).join(', ')}`,
      );
      continue;
    }
    const list: Body[] = [];
    itemsOf(value).forEach((item, index) => {
      const at = `contacts.${kind}[${index}]`;
      if (!isObject(item)) {
        reader.fail(at, `must hold the fields of ${kind === 'address' ? 'an' : 'a'} ${kind}`);
        return;
      }
      const out: Body = {};
      for (const [key, raw] of Object.entries(item)) {
        if (key === 'id') {
          const id = readId(reader, `${at}.id`, raw);
          if (id !== undefined) out.id = id;
          continue;
        }
        if (CONTACT_READ_ONLY[kind]?.includes(key)) continue;
        const to = (spec.fields as Record<string, string>)[key];
        if (to === undefined) {
          reader.fail(
            `${at}.${key}`,
            `is not a field of ${kind}; known fields: ${Object.keys(spec.fields).join(', ')}`,
          );
          continue;
        }
        if (raw !== null && typeof raw === 'object') {
          reader.fail(`${at}.${key}`, 'must be text');
          continue;
        }
        out[to] = raw === '' || raw === null ? null : String(raw);
      }
      list.push(out);
    });
    into[spec.collection] = [...((into[spec.collection] as Body[] | undefined) ?? []), ...list];
  }
}

/**
 * A v1 person or organisation body as the v2 party body it stands for. An empty element or
 * `null` clears a field; `organisationId` links a person to an organisation, `organisationName`
 * to one of that name (made when missing, as v2 does).
 */
function readParty(request: FastifyRequest, kind: PartyKind): Body {
  const fields = kind === 'person' ? PERSON_FIELDS : ORGANISATION_FIELDS;
  const v1 = readBody(request, kind);
  const reader = new FieldReader(kind, v1, fields, PARTY_READ_ONLY);
  const body: Body = {};
  for (const field of fields) {
    if (field === 'contacts' || field === 'organisationId' || field === 'organisationName') continue;
    const value = reader.text(field);
    if (value !== undefined) body[field] = value;
  }
  if (kind === 'person') {
    const id = reader.text('organisationId');
    const name = reader.text('organisationName');
    if (id === null) body.organisation = null;
    else if (id !== undefined) {
      const organisation = readId(reader, 'organisationId', id);
      if (organisation !== undefined) body.organisation = { id: organisation };
    } else if (name === null) body.organisation = null;
    else if (name !== undefined) body.organisation = { name };
  }
  readContacts(reader, v1.contacts, body);
  reader.check();
  return body;
}

const OPPORTUNITY_FIELDS = [
  'name',
  'description',
  'currency',
  'value',
  'durationBasis',
  'duration',
  'milestoneId',
  'milestone',
  'probability',
  'expectedCloseDate',
  'actualCloseDate',
  'owner',
] as const;
const OPPORTUNITY_READ_ONLY = ['id', 'partyId', 'createdOn', 'updatedOn'] as const;

/** A v1 opportunity body as the v2 body of an opportunity on `partyId`. */
function readOpportunity(request: FastifyRequest, partyId: number): Body {
  const reader = new FieldReader(
    'opportunity',
    readBody(request, 'opportunity'),
    OPPORTUNITY_FIELDS,
    OPPORTUNITY_READ_ONLY,
  );
  const body: Body = { party: { id: partyId } };
  const name = reader.requiredText('name');
  if (name !== undefined) body.name = name;
  const description = reader.text('description');
  if (description !== undefined) body.description = description;
  const value = reader.text('value');
  const currency = reader.text('currency');
  if (value !== undefined && value !== null) {
    const amount = Number(value.trim());
    if (value.trim() === '' || !Number.isFinite(amount))
      reader.fail('value', `must be a number like 1500.00, got ${JSON.stringify(value)}`);
    else if (currency === undefined || currency === null)
      reader.fail('currency', 'is required with a value (an ISO 4217 code such as GBP)');
    else body.value = { amount, currency: currency.trim().toUpperCase() };
  } else if (value === null) body.value = null;
  const milestoneId = reader.text('milestoneId');
  const milestone = reader.text('milestone');
  if (milestoneId !== undefined && milestoneId !== null) {
    const id = readId(reader, 'milestoneId', milestoneId);
    if (id !== undefined) body.milestone = { id };
  } else if (milestone !== undefined && milestone !== null) body.milestone = { name: milestone };
  else reader.fail('milestone', 'is required: give milestoneId or the milestone name');
  const probability = reader.text('probability');
  if (probability !== undefined && probability !== null) {
    if (/^\d{1,3}$/.test(probability.trim())) body.probability = Number(probability.trim());
    else reader.fail('probability', `must be a whole number from 0 to 100, got ${JSON.stringify(probability)}`);
  }
  const durationBasis = reader.text('durationBasis');
  if (durationBasis !== undefined && durationBasis !== null) body.durationBasis = durationBasis.trim().toUpperCase();
  const duration = reader.text('duration');
  if (duration !== undefined && duration !== null) {
    if (/^\d{1,9}$/.test(duration.trim())) body.duration = Number(duration.trim());
    else reader.fail('duration', `must be a whole number, got ${JSON.stringify(duration)}`);
  }
  for (const [field, to] of [
    ['expectedCloseDate', 'expectedCloseOn'],
    ['actualCloseDate', 'closedOn'],
  ] as const) {
    const text = reader.text(field);
    if (text === undefined || text === null) continue;
    const moment = parseMoment(text.trim());
    if (moment) body[to] = moment.date;
    else reader.fail(field, `must be a date like 2011-09-14 or 2011-09-14T00:00:00Z, got ${JSON.stringify(text)}`);
  }
  const owner = reader.text('owner');
  if (owner !== undefined && owner !== null) body.owner = { username: owner };
  reader.check();
  return body;
}

/** The v1 field a v2 field of a party or an opportunity stands for, by the name it has in the v1 body. */
function v1Field(field: string, given: Body): string {
  const contact = /^(addresses|emailAddresses|phoneNumbers|websites)(\[\d+\])(?:\.(\w+))?$/.exec(field);
  if (contact) {
    const [, collection = '', index = '', key] = contact;
    const kind = Object.entries(CONTACT_KINDS).find(([, spec]) => spec.collection === collection)?.[0] ?? collection;
    const fields = CONTACT_KINDS[kind as keyof typeof CONTACT_KINDS]?.fields as Record<string, string> | undefined;
    const name =
      key === undefined ? undefined : (Object.entries(fields ?? {}).find(([, to]) => to === key)?.[0] ?? key);
    return `contacts.${kind}${index}${name === undefined ? '' : `.${name}`}`;
  }
  if (field === 'organisation' || field.startsWith('organisation.'))
    return isObject(given.organisation) && given.organisation.id !== undefined ? 'organisationId' : 'organisationName';
  if (field === 'milestone' || field.startsWith('milestone.'))
    return isObject(given.milestone) && given.milestone.id !== undefined ? 'milestoneId' : 'milestone';
  const renamed: Record<string, string> = {
    'value.amount': 'value',
    'value.currency': 'currency',
    expectedCloseOn: 'expectedCloseDate',
    closedOn: 'actualCloseDate',
  };
  return renamed[field] ?? field;
}

/**
 * Runs a v2 write of a v1 body: a refusal (422) names the fields as the v1 body does
 * (`contacts.email[0].emailAddress`, not `emailAddresses[0].address`).
 */
function inV1Terms<T>(given: Body, write: () => T): T {
  try {
    return write();
  } catch (error) {
    if (!(error instanceof HttpError) || error.status !== 422 || !Array.isArray(error.body.errors)) throw error;
    const problems = (error.body.errors as Array<{ field: string; message: string; resource: string }>).map((p) => ({
      field: v1Field(p.field, given),
      message: p.message,
    }));
    throw validationError(
      String((error.body.errors as Array<{ resource?: unknown }>)[0]?.resource ?? 'party'),
      problems,
    );
  }
}

/** A party of the kind the path names; another kind is not found under that path. */
function findParty(ctx: SandboxContext, request: FastifyRequest, kind: PartyKind): PartyRec {
  const party = findRecord(ctx, request, 'party', (request.params as { id?: string }).id);
  if (party.type !== kind) throw notFound(`no ${kind} with id ${party.id}`);
  return party;
}

/** Registers the v1 writes of people, organisations and opportunities. */
export function registerPartyWriteRoutes(route: V1Route, ctx: SandboxContext): void {
  for (const kind of ['person', 'organisation'] as const) {
    route('POST', `/api/${kind}`, (request, reply) => {
      const body = readParty(request, kind);
      const party = inV1Terms(body, () => createParty(ctx, callerOf(request), { ...body, type: kind }));
      return sendEmpty(reply, 201, v1Location(request, `/party/${party.id}`));
    });

    route('PUT', `/api/${kind}/:id`, (request, reply) => {
      const existing = findParty(ctx, request, kind);
      const body = readParty(request, kind);
      inV1Terms(body, () => updateParty(ctx, callerOf(request), existing, body));
      return sendEmpty(reply);
    });
  }

  // At once, whatever hangs off the party (v2 may schedule a heavy delete; v1 answers when done).
  route('DELETE', '/api/party/:id', (request, reply) => {
    deleteParty(ctx, findRecord(ctx, request, 'party', (request.params as { id?: string }).id).id);
    return sendEmpty(reply);
  });

  route('DELETE', '/api/opportunity/:id', (request, reply) => {
    deleteOpportunity(ctx, findRecord(ctx, request, 'opportunity', (request.params as { id?: string }).id).id);
    return sendEmpty(reply);
  });

  route('POST', '/api/party/:id/opportunity', (request, reply) => {
    const party = findRecord(ctx, request, 'party', (request.params as { id?: string }).id);
    const body = readOpportunity(request, party.id);
    const opportunity = inV1Terms(body, () => createRecord(ctx, OPPORTUNITY_KIND, callerOf(request), body));
    return sendEmpty(reply, 201, v1Location(request, `/opportunity/${opportunity.id}`));
  });
}
