/**
 * The workbench's server: the page's files and a small JSON interface over the engine, on
 * 127.0.0.1 only, every request past the guard of security.ts first. The run is held here, not by
 * the page: closing the tab leaves it running, and a page opened later is shown it (the events
 * stream sends the job's state on connecting and on every change).
 */
import { readFile, realpath } from 'node:fs/promises';
import { extname } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { FerryError } from '../errors/index.ts';
import { openInside } from '../util/index.ts';
import type { ErrorBody, JobKind, MapEdit, MapRequest, SaveRequest, SessionView } from './api.ts';
import type { Engine } from './engine.ts';
import { Jobs } from './jobs.ts';
import { PLAN_FILE } from './project.ts';
import { forPage } from './reasons.ts';
import { admit, commonHeaders, newSession, REPORT_POLICY, type Session, sessionUrl } from './security.ts';

/** The page's files, built by `npm run build` (web/workbench -> dist/workbench/page). */
export const PAGE_DIR = fileURLToPath(new URL('../../dist/workbench/page/', import.meta.url));

/** The addresses the page routes itself; each serves the page, which then shows its view. */
const VIEWS = ['/', '/files', '/map', '/check', '/run', '/verify', '/undo'];

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.html': 'text/html; charset=utf-8',
  '.svg': 'image/svg+xml',
};

export interface WorkbenchServerOptions {
  engine: Engine;
  session: Omit<SessionView, 'planExists'>;
  /** @default 0 (any free port) */
  port?: number;
  /** Where the page's built files are. @default PAGE_DIR */
  pageDir?: string;
  /** Told of an unexpected error (a bug), with its stack: the page is only told that one happened. */
  onBug?: (error: unknown) => void;
}

export interface RunningWorkbench {
  url: string;
  port: number;
  app: FastifyInstance;
  jobs: Jobs;
  /** Stops the job under way (as Ctrl-C does), waits for it, and closes the server. */
  close(): Promise<void>;
}

/** The HTTP status of an error the page is told about. */
function statusOf(error: FerryError): number {
  if (error.code === 'PATH_UNSAFE') return 403;
  if (error.code.startsWith('API_')) return 502;
  if (error.code === 'INTERNAL') return 500;
  return 400;
}

/**
 * The answer for an error: its code and words, never a stack trace, and never a path of the server
 * (the project folder is "the project folder" there, the page's files "the page's folder"). A
 * file that is not there is 404 with its code; anything unexpected is said to be a bug, its
 * details left to the terminal the workbench runs in (`onBug`).
 */
function errorBody(
  error: unknown,
  folders: ReadonlyArray<[string, string]>,
  onBug: (error: unknown) => void,
): { status: number; body: ErrorBody } {
  // The page's words (no flag, rule path or run id), and no path of the server.
  const scrub = (message: string): string =>
    forPage(folders.reduce((text, [path, name]) => (path === '' ? text : text.split(path).join(name)), message));
  if (error instanceof FerryError) {
    const message = error.hint ? `${error.message}. ${error.hint}` : error.message;
    return {
      status: statusOf(error),
      body: { error: { code: error.code, message: scrub(message), line: error.location?.line ?? null } },
    };
  }
  const code = (error as NodeJS.ErrnoException | null)?.code;
  if (code === 'ENOENT' || code === 'ENOTDIR')
    return {
      status: 404,
      body: { error: { code: 'SOURCE_NOT_FOUND', message: 'there is no such file in the project folder' } },
    };
  const fastify = error as { statusCode?: number; message?: string };
  if (typeof fastify.statusCode === 'number' && fastify.statusCode < 500)
    return {
      status: fastify.statusCode,
      body: { error: { code: 'USAGE', message: scrub(fastify.message ?? 'bad request') } },
    };
  onBug(error);
  return {
    status: 500,
    body: {
      error: {
        code: 'INTERNAL',
        message: "this is a bug in crm-ferry: the workbench's terminal shows what happened; please report it",
      },
    },
  };
}

function text(value: unknown, what: string): string {
  if (typeof value !== 'string' || value === '') throw new FerryError('USAGE', `${what} is missing`);
  return value;
}

/** Starts the workbench's server on 127.0.0.1. */
export async function startWorkbenchServer(options: WorkbenchServerOptions): Promise<RunningWorkbench> {
  const { engine } = options;
  const pageDir = options.pageDir ?? PAGE_DIR;
  let session: Session | null = null;
  // The events streams stay open: closing ends them rather than waiting for the pages to go.
  const app = Fastify({ logger: false, bodyLimit: 8 * 1024 * 1024, forceCloseConnections: true });
  // An upload is streamed to its file as it comes (Engine.upload), never held whole in memory.
  app.addContentTypeParser('application/octet-stream', (_request, payload, done) => done(null, payload));

  app.addHook('onRequest', async (request, reply) => {
    const admission = session
      ? admit(
          {
            method: request.method,
            url: request.url,
            host: request.headers.host,
            origin: request.headers.origin,
            cookie: request.headers.cookie,
            fetchSite: request.headers['sec-fetch-site'] as string | undefined,
          },
          session,
        )
      : ({ kind: 'refuse', status: 403, message: 'the workbench is starting' } as const);
    if (admission.kind === 'pass') return;
    reply.headers(commonHeaders());
    if (admission.kind === 'enter')
      return reply.code(303).header('set-cookie', admission.setCookie).header('location', admission.location).send();
    return reply.code(admission.status).type('text/plain; charset=utf-8').send(`${admission.message}\n`);
  });
  app.addHook('onSend', async (_request, reply, payload) => {
    if (!reply.hasHeader('content-security-policy')) reply.headers(commonHeaders());
    return payload;
  });
  const folders: Array<[string, string]> = [
    [engine.project.dir, 'the project folder'],
    [await realpath(engine.project.dir).catch(() => ''), 'the project folder'],
    [pageDir, "the page's folder"],
  ];
  const onBug = options.onBug ?? (() => {});
  const jobs = new Jobs(undefined, (error) => {
    const { code, message } = errorBody(error, folders, onBug).body.error;
    return { code, message };
  });
  app.setErrorHandler((error, _request, reply) => {
    const { status, body } = errorBody(error, folders, onBug);
    void reply.code(status).send(body);
  });
  app.setNotFoundHandler((_request, reply) => {
    void reply.code(404).send({ error: { code: 'USAGE', message: 'no such page' } } satisfies ErrorBody);
  });

  // -- The page ------------------------------------------------------------------------------
  const sendPageFile = async (reply: FastifyReply, name: string): Promise<void> => {
    let body: Buffer;
    try {
      body = await readFile(`${pageDir}${name}`);
    } catch {
      throw new FerryError(
        'INTERNAL',
        `the page's file ${name} is missing from ${pageDir}: build it with \`npm run build\``,
      );
    }
    await reply.type(TYPES[extname(name)] ?? 'application/octet-stream').send(body);
  };
  for (const view of VIEWS) app.get(view, (_request, reply) => sendPageFile(reply, 'index.html'));
  app.get('/assets/:name', (request: FastifyRequest<{ Params: { name: string } }>, reply) => {
    const name = request.params.name;
    if (!/^[a-z0-9-]+\.(js|css|svg)$/.test(name))
      throw new FerryError('PATH_UNSAFE', `no asset ${JSON.stringify(name)}`);
    return sendPageFile(reply, name);
  });

  // -- Reads -----------------------------------------------------------------------------------
  app.get(
    '/api/session',
    async () =>
      ({ ...options.session, planExists: await engine.project.exists(engine.planFile) }) satisfies SessionView,
  );
  app.get('/api/files', () => engine.project.files());
  app.get('/api/inspect', (request: FastifyRequest<{ Querystring: { file?: string } }>) =>
    engine.inspect(text(request.query.file, 'the file')),
  );
  app.get('/api/jobs', () => jobs.view());
  app.get('/api/results', () => engine.results());
  app.get('/api/latest-run', () => engine.latestRun());
  app.get('/api/undo/preview', () => engine.undoPreview());
  app.get('/api/download', async (request: FastifyRequest<{ Querystring: { file?: string } }>, reply) => {
    const name = text(request.query.file, 'the file');
    const { handle } = await openInside(engine.project.dir, name, {
      what: "the page's download",
      hint: 'The workbench reads only inside its project folder.',
    });
    try {
      const body = await handle.readFile();
      const file = name.split('/').at(-1) ?? 'download';
      return await reply
        .type(/\.csv$/i.test(file) ? 'text/csv; charset=utf-8' : 'application/octet-stream')
        .header('content-disposition', `attachment; filename="${file.replace(/[^\w.-]/g, '_')}"`)
        .send(body);
    } finally {
      await handle.close();
    }
  });
  app.get('/report/verify.html', async (_request, reply) => {
    const html = engine.verifyReportHtml();
    if (html === null)
      throw new FerryError('USAGE', 'no verify has run yet', { hint: 'Start one in the Verify view.' });
    return reply.headers(commonHeaders(REPORT_POLICY)).type('text/html; charset=utf-8').send(html);
  });

  // The job's state on connecting, then on every change: a page opened mid-run sees the run.
  app.get('/api/events', (request, reply) => {
    reply.hijack();
    reply.raw.writeHead(200, {
      ...commonHeaders(),
      'content-type': 'text/event-stream; charset=utf-8',
      connection: 'keep-alive',
    });
    const send = (view: unknown): void => {
      reply.raw.write(`data: ${JSON.stringify(view)}\n\n`);
    };
    send(jobs.view());
    const stop = jobs.listen(send);
    const beat = setInterval(() => reply.raw.write(': still here\n\n'), 15_000);
    beat.unref();
    request.raw.on('close', () => {
      clearInterval(beat);
      stop();
    });
  });

  // -- Changes (POST: from the workbench's own origin only) ----------------------------------
  app.post('/api/upload', async (request: FastifyRequest<{ Querystring: { name?: string } }>) => {
    if (!(request.body instanceof Readable))
      throw new FerryError('USAGE', 'an upload is sent as application/octet-stream');
    const length = Number(request.headers['content-length']);
    return {
      name: await engine.upload(
        text(request.query.name, 'the file name'),
        request.body,
        Number.isSafeInteger(length) && length >= 0 ? length : null,
      ),
    };
  });
  app.post('/api/map', (request: FastifyRequest<{ Body: Partial<Record<keyof MapRequest, unknown>> | undefined }>) => {
    const body = request.body ?? {};
    if (body.yaml !== undefined && typeof body.yaml !== 'string')
      throw new FerryError('USAGE', 'the mapping is sent as text');
    // The edit is checked by the engine (parseEdit) against the edits the table makes; the YAML may be any text, even empty.
    return engine.mapView({
      input: text(body.input, 'the input'),
      ...(body.yaml === undefined ? {} : { yaml: body.yaml }),
      ...(body.edit === undefined ? {} : { edit: body.edit as MapEdit }),
    });
  });
  app.post('/api/save', (request: FastifyRequest<{ Body: SaveRequest }>) =>
    engine.save({ input: text(request.body?.input, 'the input'), yaml: text(request.body?.yaml, 'the mapping') }),
  );
  const startJob = (kind: JobKind, limit: number | null, work: Parameters<Jobs['start']>[2]) =>
    jobs.start(kind, limit, work);
  app.post('/api/check', () => startJob('check', null, (context) => engine.check(context)));
  app.post('/api/run', (request: FastifyRequest<{ Body: { limit?: number | null } | undefined }>) => {
    const limit = request.body?.limit ?? null;
    if (limit !== null && (!Number.isInteger(limit) || limit < 1))
      throw new FerryError('USAGE', `a sample takes a whole number of rows, got ${JSON.stringify(limit)}`);
    return startJob('run', limit, (context) => engine.run(context, limit));
  });
  app.post('/api/verify', () => startJob('verify', null, (context) => engine.verify(context)));
  app.post('/api/undo', () => startJob('undo', null, (context) => engine.undo(context)));
  app.post('/api/stop', () => ({ stopping: jobs.stop() }));

  await app.listen({ host: '127.0.0.1', port: options.port ?? 0 });
  const address = app.server.address();
  const port = typeof address === 'object' && address ? address.port : (options.port ?? 0);
  session = newSession(port);
  return {
    url: sessionUrl(session),
    port,
    app,
    jobs,
    async close() {
      jobs.stop();
      await jobs.settled();
      await app.close();
    },
  };
}

export { PLAN_FILE };
