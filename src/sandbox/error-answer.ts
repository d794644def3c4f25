/**
 * One error shape per interface, whoever answers: a route, the authentication or rate-limit hook,
 * fault injection, the durability guard or the unknown-route handler.
 *
 * - v2 (`/api/v2/...`), OAuth and the rest: JSON with a `message` (plus what the answer adds:
 *   `errors` of a 422, `error`/`error_description` of an authentication refusal).
 * - legacy v1 (`/api/...` without `v2`): `<error><message>` in XML, or `{"error": {"message"}}`
 *   when JSON was asked for (Accept or a `.json` suffix), like every v1 answer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { v1ErrorPayload } from './v1/negotiate.ts';

/** Whether a path (a URL, query allowed) belongs to the legacy v1 interface. */
export function isLegacyPath(url: string): boolean {
  return url.startsWith('/api/') && !url.startsWith('/api/v2/') && url !== '/api/v2' && !url.startsWith('/api/v2?');
}

/** The answer's content type and text for an error body, in the shape of the request's interface. */
export function errorPayload(
  request: FastifyRequest,
  status: number,
  body: Record<string, unknown>,
): { type: string; text: string } {
  if (isLegacyPath(request.url)) return v1ErrorPayload(request, status, body);
  return { type: 'application/json; charset=utf-8', text: JSON.stringify(body) };
}

/** Answers an error in the shape of the request's interface. */
export function sendError(
  request: FastifyRequest,
  reply: FastifyReply,
  status: number,
  body: Record<string, unknown>,
): FastifyReply {
  const { type, text } = errorPayload(request, status, body);
  return reply.code(status).type(type).send(text);
}
