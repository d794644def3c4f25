import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from './context.ts';
import { sendError } from './error-answer.ts';

/** The state of one user's current window. */
interface Window {
  /** Start of the window, epoch milliseconds. */
  start: number;
  used: number;
}

/**
 * The body of every answer past the limit: the service's `{"error": "rate limit reached"}`, with
 * the `message` every other v2 error carries (the legacy interface answers `<error><message>`).
 */
export const RATE_LIMIT_BODY = { error: 'rate limit reached', message: 'rate limit reached' } as const;

/**
 * Where a request falls in the fixed windows. Windows are aligned to the epoch (an hourly window
 * runs from one full hour to the next), which keeps the reset time the same for every user and
 * makes it easy to predict in tests.
 */
export function windowOf(nowMs: number, windowSeconds: number): { start: number; end: number } {
  const length = windowSeconds * 1000;
  const start = Math.floor(nowMs / length) * length;
  return { start, end: start + length };
}

/**
 * Limits `/api/` requests per user in fixed windows when `settings.rateLimit` is set, like the
 * service's 4,000 requests per hour: every answer carries `X-RateLimit-Limit` (scaled to requests
 * per hour), `X-RateLimit-Remaining` and `X-RateLimit-Reset` (epoch seconds); past the limit the
 * answer is 429 with `Retry-After`. Keys on the caller set by the bearer hook, so it must be
 * installed after installBearerAuth(); requests refused by that hook are not counted.
 */
export function installRateLimit(app: FastifyInstance, ctx: SandboxContext): void {
  const settings = ctx.settings.rateLimit;
  if (!settings) return;
  const { limit, windowSeconds } = settings;
  const perHour = String(Math.round((limit * 3600) / windowSeconds));
  const windows = new Map<number, Window>();

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    if (!request.url.startsWith('/api/') || !request.caller) return undefined;
    const now = ctx.now().getTime();
    const { start, end } = windowOf(now, windowSeconds);
    const userId = request.caller.user.id;
    let window = windows.get(userId);
    if (!window || window.start !== start) {
      window = { start, used: 0 };
      windows.set(userId, window);
    }
    window.used += 1;
    // Headers set here stay on the reply whatever answers later: a handler's 4xx or a 500.
    reply.header('X-RateLimit-Limit', perHour);
    reply.header('X-RateLimit-Remaining', String(Math.max(0, limit - window.used)));
    reply.header('X-RateLimit-Reset', String(Math.ceil(end / 1000)));
    if (window.used <= limit) return undefined;
    reply.header('Retry-After', String(Math.max(1, Math.ceil((end - now) / 1000))));
    return sendError(request, reply, 429, RATE_LIMIT_BODY);
  });
}
