/**
 * Entries (notes, emails, completed-task records), attachment uploads and attachment downloads:
 * interface spec 4.4 and the entry shape of 2.5.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { callerOf, type SandboxContext } from '../context.ts';
import { describeValue } from '../describe-value.ts';
import {
  badRequest,
  created,
  type FieldProblem,
  notFound,
  parseEmbed,
  parseId,
  timestamp,
  unwrap,
  validationError,
} from '../http.ts';
import { answerScheduled, registerJobHandler } from '../jobs.ts';
import { pageOf } from '../paging.ts';
import type { AttachmentRec, EntityKind, EntryRec } from '../model.ts';
import { kaseSummary, opportunitySummary, partySummary, userSummary } from '../serialize.ts';

export const ENTRY_EMBEDS = ['party', 'kase', 'opportunity', 'creator', 'activityType'] as const;

/** The activity type an entry gets when the request names none: the built-in Note. */
export const DEFAULT_ACTIVITY_TYPE_ID = -1;

/** Longest file name an upload may carry, in characters. */
export const MAX_FILENAME_LENGTH = 255;

type Problem = Omit<FieldProblem, 'resource'>;

/** The three kinds of record an entry or a task can be filed on, by their wire key. */
export const LINK_KEYS = ['party', 'opportunity', 'kase'] as const;
export type LinkKey = (typeof LINK_KEYS)[number];

const LINK_ENTITY: Record<LinkKey, EntityKind> = { party: 'parties', opportunity: 'opportunities', kase: 'kases' };

/** Whether a record of that kind exists; used to check `{id}` references in request bodies. */
export function linkedRecordExists(ctx: SandboxContext, key: LinkKey, id: number): boolean {
  return ctx.store[LINK_ENTITY[key]].has(id);
}

/**
 * Reads an `{id}` reference. Returns the id, or a problem message naming what was found, so the
 * caller can gather every problem of a body into one 422.
 */
export function readIdRef(value: unknown): number | { problem: string } {
  if (!value || typeof value !== 'object' || Array.isArray(value)) {
    return { problem: `must be an object like {"id": 123}, got ${describeValue(value)}` };
  }
  const id = (value as Record<string, unknown>).id;
  if (typeof id !== 'number' || !Number.isSafeInteger(id) || id <= 0) {
    return { problem: `id must be a positive integer, got ${describeValue(id)}` };
  }
  return id;
}

/**
 * Problems for every key of `body` that is not in `allowed`. `notes` gives a better message for
 * keys that are known but cannot be written by this request (read-only or fixed at create).
 */
export function unknownKeyProblems(
  body: Record<string, unknown>,
  allowed: readonly string[],
  notes: Readonly<Record<string, string>> = {},
): Problem[] {
  return Object.keys(body)
    .filter((key) => !allowed.includes(key))
    .map((key) => ({
      field: key,
      message: Object.hasOwn(notes, key)
        ? (notes[key] as string)
        : `is not a known property; expected one of ${allowed.join(', ')}`,
    }));
}

const ISO_TIMESTAMP = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** Reads an ISO 8601 timestamp with a zone and normalises it to the service's `...Z` form. */
function readTimestamp(value: unknown): string | { problem: string } {
  if (typeof value !== 'string' || !ISO_TIMESTAMP.test(value) || Number.isNaN(Date.parse(value))) {
    return { problem: `must be an ISO 8601 timestamp like 2024-05-01T09:30:00Z, got ${describeValue(value)}` };
  }
  return timestamp(new Date(value));
}

/** Reads `activityType` as an integer id or `{id}`; the read shape `{id, name}` is accepted back. */
function readActivityType(ctx: SandboxContext, value: unknown): number | { problem: string } {
  const id =
    typeof value === 'number' ? value : value && typeof value === 'object' ? (value as { id?: unknown }).id : undefined;
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) {
    return { problem: `must be an activity type id (an integer), got ${describeValue(value)}` };
  }
  if (!ctx.store.activityTypes.has(id)) return { problem: `no activity type has id ${id}` };
  return id;
}

// ---------------------------------------------------------------------------------------------
// Wire shape

/**
 * The v2 wire shape of an entry. Creator, activity type and the linked party (`parties[]` for
 * emails) are always present; `party`, `kase` and `opportunity` appear when the entry is filed on
 * such a record, and embedding one of them makes its key appear (null) even when it is not.
 */
export function serializeEntry(
  ctx: SandboxContext,
  entry: EntryRec,
  embed: ReadonlySet<string>,
): Record<string, unknown> {
  const activityType = entry.activityTypeId === null ? undefined : ctx.store.activityTypes.get(entry.activityTypeId);
  const out: Record<string, unknown> = {
    id: entry.id,
    type: entry.type,
    content: entry.content,
    creator: userSummary(ctx, entry.creatorId),
    activityType: activityType ? { id: activityType.id, name: activityType.name } : null,
    createdAt: entry.createdAt,
    updatedAt: entry.updatedAt,
    entryAt: entry.entryAt,
  };
  if (entry.type === 'email') {
    out.subject = entry.subject ?? '';
    out.parties = entry.partyIds.flatMap((id) => partySummary(ctx, id) ?? []);
  }
  // Emails list their parties in `parties`; a `party` key beside it would always be null.
  if (entry.partyId !== null || (embed.has('party') && entry.type !== 'email'))
    out.party = partySummary(ctx, entry.partyId);
  if (entry.kaseId !== null || embed.has('kase')) out.kase = kaseSummary(ctx, entry.kaseId);
  if (entry.opportunityId !== null || embed.has('opportunity')) {
    out.opportunity = opportunitySummary(ctx, entry.opportunityId);
  }
  out.attachments = entry.attachments.map((a) => ({
    id: a.id,
    filename: a.filename,
    contentType: a.contentType,
    size: a.size,
  }));
  out.participants = entry.participants.map((p) => ({ id: p.id, address: p.address, name: p.name, role: p.role }));
  return out;
}

/** Newest `entryAt` first; ties by newest id so the order is stable. */
function byNewest(a: EntryRec, b: EntryRec): number {
  return Date.parse(b.entryAt) - Date.parse(a.entryAt) || b.id - a.id;
}

// ---------------------------------------------------------------------------------------------
// Changes shared with other modules

/**
 * Removes an entry and the bytes of its attachments at once. Returns false when there is no such
 * entry (a scheduled delete may find it gone already). Party, project and opportunity deletes
 * can use it to take their entries with them.
 */
export function deleteEntry(ctx: SandboxContext, id: number): boolean {
  const entry = ctx.store.entries.get(id);
  if (!entry) return false;
  for (const attachment of entry.attachments) ctx.store.blobs.delete(attachment.blobId);
  ctx.store.entries.delete(id);
  return true;
}

/** The attachment with that id and the entry holding it. */
export function findAttachment(ctx: SandboxContext, id: number): { entry: EntryRec; attachment: AttachmentRec } | null {
  for (const entry of ctx.store.entries.all()) {
    const attachment = entry.attachments.find((a) => a.id === id);
    // Fetched again by id so that a write changing the entry has it noted for the change log.
    if (attachment) return { entry: ctx.store.entries.get(entry.id) ?? entry, attachment };
  }
  return null;
}

/**
 * Moves the linked record's `lastContactedAt` forward to the entry's time when the entry's
 * activity type counts as contact. Never moves it back, so back-dated notes leave it alone.
 */
export function touchLastContacted(ctx: SandboxContext, entry: EntryRec): void {
  if (entry.type !== 'note' || entry.activityTypeId === null) return;
  if (!ctx.store.activityTypes.get(entry.activityTypeId)?.updateLastContacted) return;
  const records = [
    entry.partyId === null ? undefined : ctx.store.parties.get(entry.partyId),
    entry.kaseId === null ? undefined : ctx.store.kases.get(entry.kaseId),
    entry.opportunityId === null ? undefined : ctx.store.opportunities.get(entry.opportunityId),
  ];
  for (const record of records) {
    if (!record) continue;
    if (record.lastContactedAt === null || Date.parse(record.lastContactedAt) < Date.parse(entry.entryAt)) {
      record.lastContactedAt = entry.entryAt;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Attachments in request bodies

type AttachmentChange = { add: string[]; remove: number[] };

/**
 * Reads `attachments[]`. On create only `{token}` elements are allowed; on update `{id, _delete:
 * true}` removes and a bare `{id}` of an existing attachment is accepted and left alone, since
 * clients often send back the list they read.
 */
function readAttachments(
  ctx: SandboxContext,
  value: unknown,
  existing: readonly AttachmentRec[] | null,
  problems: Problem[],
): AttachmentChange {
  const change: AttachmentChange = { add: [], remove: [] };
  if (!Array.isArray(value)) {
    problems.push({ field: 'attachments', message: `must be an array, got ${describeValue(value)}` });
    return change;
  }
  value.forEach((element: unknown, index) => {
    const field = `attachments[${index}]`;
    if (!element || typeof element !== 'object' || Array.isArray(element)) {
      problems.push({ field, message: `must be an object like {"token": "..."}, got ${describeValue(element)}` });
      return;
    }
    const item = element as Record<string, unknown>;
    if (item.id !== undefined) {
      if (existing === null) {
        problems.push({
          field: `${field}.id`,
          message: 'new entries take attachments as {"token"} from an upload, not by id',
        });
        return;
      }
      const id = item.id;
      if (typeof id !== 'number' || !existing.some((a) => a.id === id)) {
        problems.push({ field: `${field}.id`, message: `this entry has no attachment with id ${describeValue(id)}` });
        return;
      }
      if (item.token !== undefined) {
        problems.push({ field, message: 'give either an id (existing attachment) or a token (new upload), not both' });
        return;
      }
      if (item._delete !== undefined && typeof item._delete !== 'boolean') {
        problems.push({ field: `${field}._delete`, message: `must be a boolean, got ${describeValue(item._delete)}` });
        return;
      }
      if (item._delete === true) change.remove.push(id);
      return;
    }
    const token = item.token;
    if (typeof token !== 'string' || token === '') {
      problems.push({
        field: `${field}.token`,
        message: `must be the token of an upload, got ${describeValue(token)}`,
      });
      return;
    }
    if (!ctx.store.uploads.has(token)) {
      problems.push({ field: `${field}.token`, message: 'no upload has this token; a token can be used once only' });
      return;
    }
    if (change.add.includes(token)) {
      problems.push({ field: `${field}.token`, message: 'the same upload token is given twice' });
      return;
    }
    change.add.push(token);
  });
  return change;
}

/** Turns uploads into attachments; the token is spent, the bytes stay under the same blob id. */
function consumeUploads(ctx: SandboxContext, tokens: readonly string[]): AttachmentRec[] {
  return tokens.flatMap((token) => {
    const upload = ctx.store.uploads.get(token);
    if (!upload) return [];
    ctx.store.uploads.delete(token);
    return [
      {
        id: ctx.store.next(),
        filename: upload.filename,
        contentType: upload.contentType,
        size: upload.size,
        blobId: upload.blobId,
      },
    ];
  });
}

// ---------------------------------------------------------------------------------------------
// Create and update

const CREATE_KEYS = ['type', 'content', 'activityType', 'entryAt', 'attachments', 'party', 'opportunity', 'kase'];
const NOTE_UPDATE_KEYS = ['type', 'content', 'activityType', 'entryAt', 'attachments'];
const EMAIL_UPDATE_KEYS = ['type', 'content', 'subject', 'entryAt', 'attachments'];
const READ_ONLY = 'is read-only and cannot be written';
const CREATE_NOTES: Record<string, string> = {
  id: READ_ONLY,
  creator: 'is read-only: the creator is the user of the token',
  createdAt: READ_ONLY,
  updatedAt: READ_ONLY,
  participants: 'belongs to emails, which cannot be created through this interface',
  parties: 'belongs to emails, which cannot be created through this interface',
  subject: 'belongs to emails; notes have no subject',
};
const UPDATE_NOTES: Record<string, string> = {
  ...CREATE_NOTES,
  party: 'cannot change: an entry stays on the record it was filed on',
  opportunity: 'cannot change: an entry stays on the record it was filed on',
  kase: 'cannot change: an entry stays on the record it was filed on',
  activityType: 'cannot be set on an email',
};

function createEntry(ctx: SandboxContext, request: FastifyRequest): EntryRec {
  const body = unwrap(request, 'entry');
  const problems: Problem[] = unknownKeyProblems(body, CREATE_KEYS, CREATE_NOTES);

  if (body.type === undefined) problems.push({ field: 'type', message: 'is required and must be "note"' });
  else if (body.type !== 'note') {
    problems.push({ field: 'type', message: `only "note" entries can be created, got ${describeValue(body.type)}` });
  }

  const links: Partial<Record<LinkKey, number>> = {};
  for (const key of LINK_KEYS) {
    if (body[key] === undefined || body[key] === null) continue;
    const id = readIdRef(body[key]);
    if (typeof id !== 'number') problems.push({ field: key, message: id.problem });
    else if (!linkedRecordExists(ctx, key, id))
      problems.push({ field: `${key}.id`, message: `no ${key} has id ${id}` });
    else links[key] = id;
  }
  const given = LINK_KEYS.filter((key) => body[key] !== undefined && body[key] !== null);
  if (given.length !== 1) {
    problems.push({
      field: 'party',
      message: `exactly one of party, opportunity or kase must be given, got ${given.length === 0 ? 'none' : given.join(' and ')}`,
    });
  }

  let content = '';
  if (body.content !== undefined && body.content !== null) {
    if (typeof body.content !== 'string')
      problems.push({ field: 'content', message: `must be a string, got ${describeValue(body.content)}` });
    else content = body.content;
  }

  let activityTypeId = DEFAULT_ACTIVITY_TYPE_ID;
  if (body.activityType !== undefined && body.activityType !== null) {
    const id = readActivityType(ctx, body.activityType);
    if (typeof id === 'number') activityTypeId = id;
    else problems.push({ field: 'activityType', message: id.problem });
  }

  let entryAt = timestamp(ctx.now());
  if (body.entryAt !== undefined && body.entryAt !== null) {
    const at = readTimestamp(body.entryAt);
    if (typeof at === 'string') entryAt = at;
    else problems.push({ field: 'entryAt', message: at.problem });
  }

  const attachments =
    body.attachments === undefined ? { add: [], remove: [] } : readAttachments(ctx, body.attachments, null, problems);
  if (problems.length === 0 && content.trim() === '' && attachments.add.length === 0) {
    problems.push({ field: 'content', message: 'a note needs content or at least one attachment' });
  }
  if (problems.length > 0) throw validationError('entry', problems);

  const now = timestamp(ctx.now());
  const entry = ctx.store.entries.insert({
    type: 'note',
    content,
    subject: null,
    creatorId: callerOf(request).user.id,
    activityTypeId,
    entryAt,
    partyId: links.party ?? null,
    kaseId: links.kase ?? null,
    opportunityId: links.opportunity ?? null,
    partyIds: [],
    attachments: consumeUploads(ctx, attachments.add),
    participants: [],
    createdAt: now,
    updatedAt: now,
  });
  touchLastContacted(ctx, entry);
  return entry;
}

function updateEntry(ctx: SandboxContext, request: FastifyRequest, entry: EntryRec): EntryRec {
  const body = unwrap(request, 'entry');
  if (entry.type === 'task') {
    throw validationError('entry', [
      { field: 'type', message: 'only note and email entries can be updated; this entry records a completed task' },
    ]);
  }
  const allowed = entry.type === 'email' ? EMAIL_UPDATE_KEYS : NOTE_UPDATE_KEYS;
  const problems: Problem[] = unknownKeyProblems(body, allowed, UPDATE_NOTES);
  if (body.type !== undefined && body.type !== entry.type) {
    problems.push({
      field: 'type',
      message: `the type of an entry cannot change (it is "${entry.type}"), got ${describeValue(body.type)}`,
    });
  }

  let content = entry.content;
  if (body.content !== undefined) {
    if (body.content === null) content = '';
    else if (typeof body.content !== 'string')
      problems.push({ field: 'content', message: `must be a string, got ${describeValue(body.content)}` });
    else content = body.content;
  }

  let subject = entry.subject;
  if (entry.type === 'email' && body.subject !== undefined) {
    if (typeof body.subject !== 'string')
      problems.push({ field: 'subject', message: `must be a string, got ${describeValue(body.subject)}` });
    else subject = body.subject;
  }

  let activityTypeId = entry.activityTypeId;
  if (entry.type === 'note' && body.activityType !== undefined) {
    const id = readActivityType(ctx, body.activityType);
    if (typeof id === 'number') activityTypeId = id;
    else problems.push({ field: 'activityType', message: id.problem });
  }

  let entryAt = entry.entryAt;
  if (body.entryAt !== undefined) {
    const at = readTimestamp(body.entryAt);
    if (typeof at === 'string') entryAt = at;
    else problems.push({ field: 'entryAt', message: at.problem });
  }

  const change =
    body.attachments === undefined
      ? { add: [], remove: [] }
      : readAttachments(ctx, body.attachments, entry.attachments, problems);
  const kept = entry.attachments.filter((a) => !change.remove.includes(a.id));
  if (problems.length === 0 && content.trim() === '' && kept.length + change.add.length === 0) {
    problems.push({
      field: change.remove.length > 0 ? 'attachments' : 'content',
      message: 'an entry needs content or at least one attachment; delete the entry instead',
    });
  }
  if (problems.length > 0) throw validationError('entry', problems);

  for (const attachment of entry.attachments) {
    if (change.remove.includes(attachment.id)) ctx.store.blobs.delete(attachment.blobId);
  }
  entry.content = content;
  entry.subject = subject;
  entry.activityTypeId = activityTypeId;
  entry.entryAt = entryAt;
  entry.attachments = [...kept, ...consumeUploads(ctx, change.add)];
  entry.updatedAt = timestamp(ctx.now());
  touchLastContacted(ctx, entry);
  return entry;
}

// ---------------------------------------------------------------------------------------------
// Uploads and downloads

/** Characters a file name may not hold: controls could forge headers or confuse file systems. */
const CONTROL_CHARACTERS = /[\u0000-\u001f\u007f]/;

function readUploadFilename(request: FastifyRequest): string {
  const raw = request.headers['x-attachment-filename'];
  if (raw === undefined || Array.isArray(raw) || raw.trim() === '') {
    throw badRequest('the upload needs the file name in the X-Attachment-Filename header (URL-encoded)');
  }
  if (/[^\x20-\x7e]/.test(raw)) {
    // Header bytes arrive as Latin-1, so an unencoded UTF-8 name would be silently garbled.
    throw badRequest('X-Attachment-Filename must be URL-encoded: percent-encode every non-ASCII character as UTF-8');
  }
  let name: string;
  try {
    name = decodeURIComponent(raw.trim());
  } catch {
    throw badRequest(`X-Attachment-Filename must be URL-encoded (percent-encoded UTF-8), got ${JSON.stringify(raw)}`);
  }
  if (name.trim() === '' || CONTROL_CHARACTERS.test(name)) {
    throw badRequest('X-Attachment-Filename must decode to a non-blank file name without control characters');
  }
  if ([...name].length > MAX_FILENAME_LENGTH) {
    throw badRequest(`X-Attachment-Filename is longer than ${MAX_FILENAME_LENGTH} characters`);
  }
  return name;
}

/** RFC 5987 `value-chars`: percent-encoded UTF-8 leaving only `attr-char` bare. */
function encodeExtValue(value: string): string {
  return encodeURIComponent(value).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
}

/**
 * `Content-Disposition` for a download (RFC 6266): a quoted ASCII `filename` for every client and,
 * when the name is not plain ASCII, `filename*` with the exact UTF-8 name for those that read it.
 */
export function contentDisposition(filename: string): string {
  const plain = /^[\x20-\x7e]*$/.test(filename);
  const fallback = filename.replace(/[^\x20-\x7e]/g, '_').replace(/["\\]/g, '\\$&');
  return plain
    ? `attachment; filename="${fallback}"`
    : `attachment; filename="${fallback}"; filename*=UTF-8''${encodeExtValue(filename)}`;
}

async function registerUploadRoute(app: FastifyInstance, ctx: SandboxContext): Promise<void> {
  // The upload body is the file itself whatever its type: a JSON or text file must not be parsed.
  // Parsers are per plugin scope, so this scope takes every content type as raw bytes.
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.post('/api/v2/attachments/upload', async (request) => {
    const filename = readUploadFilename(request);
    const body = request.body === undefined || request.body === null ? Buffer.alloc(0) : request.body;
    if (!Buffer.isBuffer(body)) throw badRequest('the upload body must be the raw file content');
    const typeHeader = request.headers['content-type'];
    const contentType = typeHeader && typeHeader.trim() !== '' ? typeHeader.trim() : 'application/octet-stream';
    const token = randomBytes(24).toString('base64url');
    const blobId = ctx.store.newBlobId();
    ctx.store.blobs.set(blobId, Buffer.from(body));
    ctx.store.uploads.set(token, {
      token,
      filename,
      contentType,
      size: body.length,
      blobId,
      createdAt: timestamp(ctx.now()),
    });
    return { upload: { token } };
  });
}

// ---------------------------------------------------------------------------------------------
// Routes

function entryOr404(ctx: SandboxContext, raw: string | undefined): EntryRec {
  const id = parseId(raw, 'entry');
  const entry = ctx.store.entries.get(id);
  if (!entry) throw notFound(`no entry with id ${id}`);
  return entry;
}

function listOf(
  request: FastifyRequest,
  reply: FastifyReply,
  ctx: SandboxContext,
  matches: (entry: EntryRec) => boolean,
): { entries: unknown[] } {
  const embed = parseEmbed(request, ENTRY_EMBEDS);
  // Newest first is not table order: the sorted list is built once per query and paged from.
  const page = pageOf(ctx.store, request, reply, {
    records: () => ctx.store.entries.values(),
    matches,
    sort: (rows) => rows.sort(byNewest),
    key: '',
  });
  return { entries: page.map((entry) => serializeEntry(ctx, entry, embed)) };
}

export function registerEntryRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  registerJobHandler('entries', (jobCtx, id) => {
    deleteEntry(jobCtx, id);
  });

  const filedOn: Record<LinkKey, (entry: EntryRec, id: number) => boolean> = {
    party: (entry, id) => entry.partyId === id || entry.partyIds.includes(id),
    opportunity: (entry, id) => entry.opportunityId === id,
    kase: (entry, id) => entry.kaseId === id,
  };
  for (const key of LINK_KEYS) {
    const entity = LINK_ENTITY[key];
    app.get(`/api/v2/${entity}/:recordId/entries`, async (request, reply) => {
      const id = parseId((request.params as { recordId?: string }).recordId, key);
      if (!linkedRecordExists(ctx, key, id)) throw notFound(`no ${key} with id ${id}`);
      return listOf(request, reply, ctx, (entry) => filedOn[key](entry, id));
    });
  }

  app.get('/api/v2/entries', async (request, reply) => listOf(request, reply, ctx, () => true));

  app.get('/api/v2/entries/:entryId', async (request) => {
    const embed = parseEmbed(request, ENTRY_EMBEDS);
    const entry = entryOr404(ctx, (request.params as { entryId?: string }).entryId);
    return { entry: serializeEntry(ctx, entry, embed) };
  });

  app.post('/api/v2/entries', async (request, reply) => {
    const embed = parseEmbed(request, ENTRY_EMBEDS);
    const entry = createEntry(ctx, request);
    return created(request, reply, `/entries/${entry.id}`, { entry: serializeEntry(ctx, entry, embed) });
  });

  app.put('/api/v2/entries/:entryId', async (request) => {
    const embed = parseEmbed(request, ENTRY_EMBEDS);
    const entry = entryOr404(ctx, (request.params as { entryId?: string }).entryId);
    return { entry: serializeEntry(ctx, updateEntry(ctx, request, entry), embed) };
  });

  app.delete('/api/v2/entries/:entryId', async (request, reply) => {
    const entry = entryOr404(ctx, (request.params as { entryId?: string }).entryId);
    // Removing stored files takes the service a while, so only entries with attachments are queued.
    if (ctx.settings.scheduledDeletes && entry.attachments.length > 0) {
      return answerScheduled(ctx, request, reply, 'Deleting Entry', { table: 'entries', id: entry.id });
    }
    deleteEntry(ctx, entry.id);
    return reply.code(204).send();
  });

  void app.register(async (scope) => registerUploadRoute(scope, ctx));

  app.get('/api/v2/attachments/:attachmentId', async (request, reply) => {
    const id = parseId((request.params as { attachmentId?: string }).attachmentId, 'attachment');
    const found = findAttachment(ctx, id);
    const bytes = found ? ctx.store.blobs.get(found.attachment.blobId) : undefined;
    if (!found || !bytes) throw notFound(`no attachment with id ${id}`);
    return reply
      .code(200)
      .header('Content-Type', found.attachment.contentType)
      .header('Content-Disposition', contentDisposition(found.attachment.filename))
      .send(bytes);
  });
}
