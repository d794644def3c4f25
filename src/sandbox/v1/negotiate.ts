/**
 * Formats of the v1 interface: which one an answer uses, how answers and errors are written, and how
 * request bodies in either format are read into one shape.
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { HttpError, badRequest } from '../http.ts';
import { listNode, parseXmlBody, recordNode, toJson, toXml, type V1Node } from './xml.ts';

export type V1Format = 'xml' | 'json';

function pathOf(request: FastifyRequest): string {
  const url = request.url;
  const query = url.indexOf('?');
  return query === -1 ? url : url.slice(0, query);
}

/** Whether the path carries a `.json` or `.xml` suffix that forces the format. */
export function suffixFormat(request: FastifyRequest): V1Format | null {
  const path = pathOf(request);
  if (path.endsWith('.json')) return 'json';
  if (path.endsWith('.xml')) return 'xml';
  return null;
}

/**
 * The answer format: a path suffix wins; otherwise the Accept header, where the best-rated of the
 * JSON and XML media types decides (earlier wins a tie); XML when neither is named.
 */
export function formatOf(request: FastifyRequest): V1Format {
  const forced = suffixFormat(request);
  if (forced) return forced;
  const accept = request.headers.accept;
  if (!accept) return 'xml';
  let best: { format: V1Format; q: number } | null = null;
  for (const range of accept.split(',')) {
    const [type = '', ...params] = range.split(';').map((part) => part.trim().toLowerCase());
    const format: V1Format | null =
      type === 'application/json' ? 'json' : type === 'application/xml' || type === 'text/xml' ? 'xml' : null;
    if (!format) continue;
    const qParam = params.find((p) => p.startsWith('q='));
    const q = qParam ? Number(qParam.slice(2)) : 1;
    if (!Number.isFinite(q) || q <= 0) continue;
    if (!best || q > best.q) best = { format, q };
  }
  return best?.format ?? 'xml';
}

/** Answers with the node in the negotiated format. */
export function sendNode(request: FastifyRequest, reply: FastifyReply, node: V1Node, status = 200): FastifyReply {
  if (formatOf(request) === 'json') {
    return reply
      .code(status)
      .type('application/json; charset=utf-8')
      .send(JSON.stringify(toJson(node)));
  }
  return reply.code(status).type('application/xml; charset=utf-8').send(toXml(node));
}

/** Answers with an empty body (the v1 interface sends none for creates, deletes and state changes). */
export function sendEmpty(reply: FastifyReply, status = 200, location?: string): FastifyReply {
  if (location) reply.header('Location', location);
  return reply.code(status).send();
}

function errorNode(status: number, body: Record<string, unknown>, fallback: string): V1Node {
  const message = typeof body.message === 'string' ? body.message : fallback;
  const fields: Array<[string, V1Node | string]> = [['message', message]];
  const problems = Array.isArray(body.errors) ? (body.errors as Array<Record<string, unknown>>) : [];
  if (status === 422 && problems.length > 0) {
    fields.push([
      'fieldErrors',
      listNode(
        'fieldErrors',
        ['fieldError'],
        problems.map((p) =>
          recordNode('fieldError', [
            ['field', String(p.field ?? '')],
            ['message', String(p.message ?? '')],
          ]),
        ),
        false,
      ),
    ]);
  }
  return recordNode('error', fields);
}

/**
 * The v1 interface's one error shape, `<error><message>...</message></error>` or
 * `{"error": {"message": ...}}` (with the field problems of a 422), in the negotiated format, as
 * the content type and text of the answer: for answers made before any route runs (401, 429,
 * unknown routes, injected faults) as well as by the routes.
 */
export function v1ErrorPayload(
  request: FastifyRequest,
  status: number,
  body: Record<string, unknown>,
): { type: string; text: string } {
  const node = errorNode(status, body, `HTTP ${status}`);
  if (formatOf(request) === 'json')
    return { type: 'application/json; charset=utf-8', text: JSON.stringify(toJson(node)) };
  return { type: 'application/xml; charset=utf-8', text: toXml(node) };
}

/** Answers with a v1 error (see v1ErrorPayload). */
export function sendV1Error(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  body: Record<string, unknown>,
): FastifyReply {
  const { type, text } = v1ErrorPayload(request, status, body);
  return reply.code(status).type(type).send(text);
}

/**
 * Route-level error handler of every v1 route: the same statuses as elsewhere in the sandbox, but
 * the body in the negotiated format (`<error><message>...</message></error>`).
 */
export function handleV1Error(
  error: FastifyError | HttpError,
  request: FastifyRequest,
  reply: FastifyReply,
): FastifyReply {
  if (error instanceof HttpError) {
    reply.headers(error.headers);
    return sendV1Error(request, reply, error.status, error.body);
  }
  const status = (error as FastifyError).statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return sendV1Error(request, reply, status, { message: error.message });
  }
  request.log.error(error);
  return sendV1Error(request, reply, 500, { message: 'internal sandbox error; this is a bug in the sandbox' });
}

/**
 * The resource out of a request body in either format: `<kase>...</kase>` or `{"kase": {...}}`
 * -> the inner object. XML is recognised by its Content-Type; any other body that fastify did not
 * parse as JSON is refused with 415.
 */
export function readBody(request: FastifyRequest, root: string): Record<string, unknown> {
  const type = String(request.headers['content-type'] ?? '').toLowerCase();
  const body = request.body;
  let document: Record<string, unknown>;
  if (Buffer.isBuffer(body) || typeof body === 'string') {
    if (!/^(application|text)\/([\w.+-]+\+)?xml\b/.test(type)) {
      throw new HttpError(415, {
        message: `send the body as application/xml or application/json, not ${JSON.stringify(type)}`,
      });
    }
    document = parseXmlBody(body);
  } else if (type.startsWith('application/json') && body !== undefined) {
    if (!body || typeof body !== 'object' || Array.isArray(body)) {
      throw badRequest(`the JSON body must be an object like {"${root}": {...}}`);
    }
    document = body as Record<string, unknown>;
  } else if (body === undefined || body === null) {
    throw badRequest(`a request body is required: <${root}>...</${root}> or {"${root}": {...}}`);
  } else {
    throw new HttpError(415, {
      message: `send the body as application/xml or application/json, not ${JSON.stringify(type)}`,
    });
  }
  const keys = Object.keys(document);
  if (keys.length !== 1 || keys[0] !== root) {
    throw badRequest(
      `the body must hold one ${root} element (<${root}> or {"${root}": ...}), found ${keys.map((k) => JSON.stringify(k)).join(', ') || 'nothing'}`,
    );
  }
  const inner = document[root];
  // An empty XML element parses as '' and carries no fields.
  if (inner === '') return {};
  if (!inner || typeof inner !== 'object' || Array.isArray(inner)) {
    throw badRequest(`the ${root} element must hold fields`);
  }
  return inner as Record<string, unknown>;
}
