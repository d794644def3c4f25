import formbody from '@fastify/formbody';
import Fastify, { type FastifyError, type FastifyInstance, type FastifyRequest } from 'fastify';
import { addPersonalToken, installBearerAuth, newTokenValue } from './auth.ts';
import type { SandboxContext } from './context.ts';
import { installFaults } from './faults.ts';
import { errorPayload, sendError } from './error-answer.ts';
import { HttpError } from './http.ts';
import { registerJobRoutes } from './jobs.ts';
import { registerOAuthRoutes } from './oauth.ts';
import { installRateLimit } from './rate-limit.ts';
import { registerAccountListRoutes } from './routes/account-lists.ts';
import { registerActivityTypeRoutes } from './routes/activity-types.ts';
import { registerEntryRoutes } from './routes/entries.ts';
import { registerFieldRoutes } from './routes/fields.ts';
import { registerFilterRoutes } from './routes/filters.ts';
import { registerKaseRoutes } from './routes/kases.ts';
import { registerOpportunityRoutes } from './routes/opportunities.ts';
import { registerPartyRoutes } from './routes/parties.ts';
import { registerPipelineRoutes } from './routes/pipelines.ts';
import { registerReferenceRoutes } from './routes/reference.ts';
import { registerTaskRoutes } from './routes/tasks.ts';
import { registerTrackRoutes } from './routes/tracks.ts';
import { ADMIN_USERNAME, seedAccount, seedAccountLists } from './seed.ts';
import { type SandboxOptions, type SandboxSettings, sandboxOptionsSchema } from './settings.ts';
import { DurableState } from './storage/journal.ts';
import { Store } from './store.ts';
import { seededRandom } from '../util/index.ts';

export { seededRandom };
import { registerLegacyRoutes } from './v1/routes.ts';

export interface RunningSandbox {
  /** Base address, e.g. `http://127.0.0.1:8787`; v2 lives under `${url}/api/v2`. */
  url: string;
  /** A personal token of the seeded Administrator. */
  token: string;
  /** Every personal token the sandbox accepts for the Administrator. */
  tokens: string[];
  store: Store;
  context: SandboxContext;
  app: FastifyInstance;
  /** The durable files behind the state; null without a data file. */
  durable: DurableState | null;
  /**
   * Stops accepting connections, waits up to `closeGraceMs` for requests in flight (then cuts
   * them), writes the final snapshot when a data file is set, and resolves. Rejects with a
   * `SANDBOX_STATE` error when saving had failed (the files then hold every acknowledged write).
   */
  close(): Promise<void>;
}

/** Builds the fastify app of the sandbox without listening; startSandbox() listens. */
export async function buildSandbox(options: SandboxOptions = {}): Promise<{
  app: FastifyInstance;
  context: SandboxContext;
  tokens: string[];
  durable: DurableState | null;
}> {
  const { now = () => new Date(), report = (message: string) => console.error(message), ...rest } = options;
  const settings: SandboxSettings = sandboxOptionsSchema.parse(rest);
  const store = new Store();
  const context: SandboxContext = { store, settings, now, random: seededRandom(settings.seed) };

  let durable: DurableState | null = null;
  let loaded = false;
  if (settings.dataFile)
    ({ durable, loaded } = await DurableState.open(store, settings.dataFile, { reset: settings.reset, report }));
  if (!loaded) seedAccount(store, now());
  else seedAccountLists(store, now());
  store.teamsEdition = settings.teamsEdition;

  const admin = store.users.all().find((u) => u.username === ADMIN_USERNAME);
  if (!admin) throw new Error('the sandbox account has no Administrator');
  const tokens = settings.tokens.length > 0 ? settings.tokens : [newTokenValue()];
  for (const token of tokens) addPersonalToken(context, token, admin.id);
  for (const client of settings.clients) store.oauthClients.set(client.clientId, client);

  const app = Fastify({
    // Requests are logged to stderr, beside the reports, leaving stdout to what the command says.
    logger: settings.log ? { level: 'info', stream: process.stderr } : false,
    bodyLimit: settings.bodyLimitBytes,
    // Ids and paths are matched exactly; `/parties/` and `/parties` are the same list.
    routerOptions: { ignoreTrailingSlash: true },
    // The web servers in front of the service merge repeated slashes (`/api/v2//parties`, as a
    // client joining `.../api/v2/` and `/parties` sends): the path is rewritten before any hook
    // sees it, so authentication and routing both see the merged path.
    rewriteUrl: (request) => mergeSlashes(request.url ?? '/'),
    return503OnClosing: false,
  });
  await app.register(formbody);
  // Many clients send `Content-Type: application/json` on every request, a DELETE included; the
  // service takes an empty body as no body whatever the method, so the sandbox does too (fastify
  // answers 400 to it). Anything else goes through fastify's own parser, poisoning checks included.
  const parseJson = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (request, body, done) => {
    if (body === '') done(null, undefined);
    else parseJson(request, String(body), done);
  });
  // Uploads carry any content type: keep the raw bytes.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      return sendError(request, reply.headers(error.headers), error.status, error.body);
    }
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // Fastify's own rejections: malformed JSON, body too large, unsupported media type.
      return sendError(request, reply, status, { message: error.message });
    }
    request.log.error(error);
    return sendError(request, reply, 500, { message: 'internal sandbox error; this is a bug in the sandbox' });
  });
  app.setNotFoundHandler((request, reply) =>
    sendError(request, reply, 404, { message: `no such endpoint: ${request.method} ${request.url.split('?')[0]}` }),
  );

  installLastQueryValue(app);
  installWriteTracking(app, durable, store);
  installFaults(app, context);
  installBearerAuth(app, context);
  installRateLimit(app, context);

  registerJobRoutes(app, context);
  registerOAuthRoutes(app, context);
  registerPartyRoutes(app, context);
  registerKaseRoutes(app, context);
  registerOpportunityRoutes(app, context);
  registerFieldRoutes(app, context);
  registerFilterRoutes(app, context);
  registerEntryRoutes(app, context);
  registerTaskRoutes(app, context);
  registerPipelineRoutes(app, context);
  registerTrackRoutes(app, context);
  registerActivityTypeRoutes(app, context);
  registerReferenceRoutes(app, context);
  registerAccountListRoutes(app, context);
  registerLegacyRoutes(app, context);

  // The seeded or loaded account, with this run's tokens and clients, becomes the new snapshot.
  await durable?.compact();
  return { app, context, tokens, durable };
}

/** `url` with runs of `/` in its path made one; the query is left as it is. */
export function mergeSlashes(url: string): string {
  const query = url.indexOf('?');
  const path = query === -1 ? url : url.slice(0, query);
  return path.replace(/\/{2,}/g, '/') + (query === -1 ? '' : url.slice(query));
}

/**
 * A query parameter given twice (`perPage=100&perPage=100`, as clients that merge their defaults
 * with the caller's send) counts with its last value, as the web frameworks in front of services
 * take it. Only under `/api/`: OAuth refuses a repeated parameter (RFC 6749 section 3.1).
 */
function installLastQueryValue(app: FastifyInstance): void {
  app.addHook('onRequest', async (request) => {
    if (!request.url.startsWith('/api/')) return;
    const query = request.query as Record<string, unknown> | undefined;
    if (!query) return;
    for (const [name, value] of Object.entries(query)) if (Array.isArray(value)) query[name] = value[value.length - 1];
  });
}

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Whether a request may change the state: a write method, except the filter queries sent by POST. */
function writes(request: FastifyRequest): boolean {
  return WRITE_METHODS.has(request.method) && !(request.url.split('?')[0] ?? '').endsWith('/filters/results');
}

/**
 * Counts writes under way (records fetched during one may be changed in place, which the change
 * log and the list caches must know) and, with a data file, makes acknowledgement durable: a
 * write's changes are in the synced change log before its answer leaves (this onSend hook runs
 * before any other, fault injection included). Once saving has failed, writes are refused with
 * 503 rather than acknowledged and lost.
 */
function installWriteTracking(app: FastifyInstance, durable: DurableState | null, store: Store): void {
  const counted = new WeakSet<object>();
  const release = (request: object): void => {
    if (counted.delete(request)) store.tracker.writes -= 1;
  };
  app.addHook('onRequest', async (request, reply) => {
    if (!writes(request)) return undefined;
    if (durable?.failed) return sendError(request, reply, 503, { message: refusal(durable) });
    counted.add(request);
    store.tracker.writes += 1;
    return undefined;
  });
  app.addHook('onSend', async (request, reply, payload) => {
    const write = writes(request);
    if (!durable) {
      release(request);
      return payload;
    }
    try {
      // Reads change nothing, except a job that came due at their start.
      await durable.commit(!write);
    } catch {
      const { type, text } = errorPayload(request, 503, { message: refusal(durable) });
      reply.code(503).header('content-type', type).removeHeader('location');
      return text;
    } finally {
      release(request);
    }
    return payload;
  });
  app.addHook('onResponse', async (request) => release(request));
}

function refusal(durable: DurableState): string {
  return `the sandbox cannot save its state (${durable.failed?.message ?? 'unknown failure'}), so it refuses writes until it is restarted`;
}

/** Starts the sandbox on `host:port` (port 0 picks a free one). */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const { app, context, tokens, durable } = await buildSandbox(options);
  await app.listen({ port: context.settings.port, host: context.settings.host });
  const address = app.server.address();
  if (!address || typeof address === 'string') throw new Error('the sandbox did not get a TCP address');
  const host = address.family === 'IPv6' ? `[${address.address}]` : address.address;
  const token = tokens[0] as string;
  return {
    url: `http://${host}:${address.port}`,
    token,
    tokens,
    store: context.store,
    context,
    app,
    durable,
    close: async () => {
      // Requests still running after the grace period are cut off, so a slow client cannot hold
      // shutdown; their changes are in memory and go into the final snapshot.
      const cut = setTimeout(() => app.server.closeAllConnections(), context.settings.closeGraceMs);
      try {
        await app.close();
      } finally {
        clearTimeout(cut);
      }
      await durable?.close();
    },
  };
}
