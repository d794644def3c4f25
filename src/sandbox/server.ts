import formbody from '@fastify/formbody';
import Fastify, { type FastifyError, type FastifyInstance } from 'fastify';
import { addPersonalToken, installBearerAuth, newTokenValue } from './auth.ts';
import type { SandboxContext } from './context.ts';
import { installFaults } from './faults.ts';
import { HttpError } from './http.ts';
import { registerJobRoutes } from './jobs.ts';
import { registerOAuthRoutes } from './oauth.ts';
import { installRateLimit } from './rate-limit.ts';
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
import { ADMIN_USERNAME, seedAccount } from './seed.ts';
import { type SandboxOptions, type SandboxSettings, sandboxOptionsSchema } from './settings.ts';
import { loadStore, saveStore, Store } from './store.ts';
import { seededRandom } from '../util/seeded-random.ts';

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
  /** Writes the state (when a data file is set) and stops listening. */
  close(): Promise<void>;
}

/** Builds the fastify app of the sandbox without listening; startSandbox() listens. */
export async function buildSandbox(options: SandboxOptions = {}): Promise<{
  app: FastifyInstance;
  context: SandboxContext;
  tokens: string[];
  flush: () => Promise<void>;
}> {
  const { now = () => new Date(), ...rest } = options;
  const settings: SandboxSettings = sandboxOptionsSchema.parse(rest);
  const store = new Store();
  const context: SandboxContext = { store, settings, now, random: seededRandom(settings.seed) };

  const loaded = settings.dataFile && !settings.reset ? await loadStore(store, settings.dataFile) : false;
  if (!loaded) seedAccount(store, now());
  store.teamsEdition = settings.teamsEdition;

  const admin = store.users.all().find((u) => u.username === ADMIN_USERNAME);
  if (!admin) throw new Error('the sandbox account has no Administrator');
  const tokens = settings.tokens.length > 0 ? settings.tokens : [newTokenValue()];
  for (const token of tokens) addPersonalToken(context, token, admin.id);
  for (const client of settings.clients) store.oauthClients.set(client.clientId, client);

  const app = Fastify({
    logger: settings.log ? { level: 'info' } : false,
    bodyLimit: settings.bodyLimitBytes,
    // Ids and paths are matched exactly; `/parties/` and `/parties` are the same list.
    routerOptions: { ignoreTrailingSlash: true },
    return503OnClosing: false,
  });
  await app.register(formbody);
  // Uploads carry any content type: keep the raw bytes.
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_request, body, done) => done(null, body));

  app.setErrorHandler((error: FastifyError | HttpError, request, reply) => {
    if (error instanceof HttpError) {
      return reply.code(error.status).headers(error.headers).send(error.body);
    }
    const status = (error as FastifyError).statusCode;
    if (status !== undefined && status >= 400 && status < 500) {
      // Fastify's own rejections: malformed JSON, body too large, unsupported media type.
      return reply.code(status).send({ message: error.message });
    }
    request.log.error(error);
    return reply.code(500).send({ message: 'internal sandbox error; this is a bug in the sandbox' });
  });
  app.setNotFoundHandler((request, reply) =>
    reply.code(404).send({ message: `no such endpoint: ${request.method} ${request.url.split('?')[0]}` }),
  );

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
  registerLegacyRoutes(app, context);

  // Persist after every change. Saves are serialised; a burst of writes coalesces into one save.
  let saving: Promise<void> = Promise.resolve();
  let dirty = false;
  const flush = async (): Promise<void> => {
    if (!settings.dataFile) return;
    const file = settings.dataFile;
    saving = saving.then(async () => {
      if (!dirty) return;
      dirty = false;
      await saveStore(store, file);
    });
    await saving;
  };
  if (settings.dataFile) {
    let savedJobs = context.store.completedJobs;
    app.addHook('onResponse', async (request) => {
      // Reads change nothing, except when they were the first request after a scheduled job
      // came due (jobs complete at the start of any request).
      const jobsDone = context.store.completedJobs !== savedJobs;
      if ((request.method === 'GET' || request.method === 'HEAD') && !jobsDone) return;
      savedJobs = context.store.completedJobs;
      dirty = true;
      void flush().catch((error: unknown) => request.log.error(error));
    });
    dirty = true;
    await flush();
  }
  return { app, context, tokens, flush };
}

/** Starts the sandbox on `host:port` (port 0 picks a free one). */
export async function startSandbox(options: SandboxOptions = {}): Promise<RunningSandbox> {
  const { app, context, tokens, flush } = await buildSandbox(options);
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
    close: async () => {
      await app.close();
      await flush();
    },
  };
}
