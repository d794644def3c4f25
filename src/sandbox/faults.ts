import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { SandboxContext } from './context.ts';
import { sendError } from './error-answer.ts';

/** The statuses an injected server error is drawn from, as a proxy or an overloaded service gives them. */
export const FAULT_STATUSES = [500, 502, 503] as const;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Seams for tests. */
export interface FaultOptions {
  /** Waits the injected latency. @default a timer */
  sleep?: (ms: number) => Promise<void>;
}

function sleepWithTimer(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

const FAULT_TEXT: Record<(typeof FAULT_STATUSES)[number], string> = {
  500: 'injected fault: internal server error',
  502: 'injected fault: bad gateway',
  503: 'injected fault: service unavailable',
};

/**
 * Makes the sandbox misbehave like a real service on a bad day when `settings.faults` is set:
 * added latency (with jitter) on every request; a share of `/api/` requests answered 500, 502 or
 * 503 before anything else happens (no authentication, no change); and a share of `/api/` writes
 * that are carried out in full and then lose their connection before the answer goes out, so the
 * client sees a socket error although the change is stored.
 *
 * Every choice comes from `ctx.random()`, seeded by `--seed`, and the draws happen in a fixed order
 * per request (jitter, error, status, drop), so the same seed and the same sequence of requests give
 * the same faults. Concurrent requests interleave their draws in arrival order.
 *
 * Installed first among the hooks, so that an injected error precedes authentication and rate
 * limiting, as an error in front of the service would.
 */
export function installFaults(app: FastifyInstance, ctx: SandboxContext, options: FaultOptions = {}): void {
  const faults = ctx.settings.faults;
  if (!faults) return;
  const sleep = options.sleep ?? sleepWithTimer;
  const doomed = new WeakSet<FastifyRequest>();

  app.addHook('onRequest', async (request: FastifyRequest, reply: FastifyReply) => {
    let delay = faults.latencyMs;
    if (faults.latencyJitterMs > 0) delay += Math.floor(ctx.random() * (faults.latencyJitterMs + 1));
    if (delay > 0) await sleep(delay);

    if (!request.url.startsWith('/api/')) return undefined;
    if (faults.errorRate > 0 && ctx.random() < faults.errorRate) {
      const status = FAULT_STATUSES[Math.floor(ctx.random() * FAULT_STATUSES.length)] ?? 500;
      return sendError(request, reply, status, { message: FAULT_TEXT[status] });
    }
    if (
      faults.dropAfterWriteRate > 0 &&
      WRITE_METHODS.has(request.method) &&
      ctx.random() < faults.dropAfterWriteRate
    ) {
      doomed.add(request);
    }
    return undefined;
  });

  if (faults.dropAfterWriteRate <= 0) return;
  app.addHook('onSend', async (request, reply, payload) => {
    // Only an answer whose change was made is dropped: the point is a client that cannot tell
    // whether its write happened. Refusals (4xx) change nothing and go out as usual.
    if (doomed.has(request) && reply.statusCode >= 200 && reply.statusCode < 300) {
      request.raw.socket?.destroy();
      // A destroyed socket never lets the answer finish, so Fastify would skip its onResponse hooks,
      // among them the one that persists writes to the data file. Reporting the drop as an error of
      // the answer runs them.
      const answer = reply.raw;
      setImmediate(() => {
        if (answer.listenerCount('error') > 0) answer.emit('error', new Error('connection dropped by fault injection'));
      });
    }
    return payload;
  });
}
