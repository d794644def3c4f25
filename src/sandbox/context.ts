import type { FastifyRequest } from 'fastify';
import type { AccessTokenRec, UserRec } from './model.ts';
import type { Store } from './store.ts';
import type { SandboxSettings } from './settings.ts';

/** Everything a route module needs: the state, the settings and the clock. */
export interface SandboxContext {
  store: Store;
  settings: SandboxSettings;
  /** The sandbox's clock; tests inject one to control timestamps and expiry. */
  now(): Date;
  /** Random numbers for fault injection, seeded by `--seed`. */
  random(): number;
}

/** Who is calling: set by the authentication hook on every `/api/` request. */
export interface Caller {
  user: UserRec;
  token: AccessTokenRec;
}

declare module 'fastify' {
  interface FastifyRequest {
    caller: Caller | null;
  }
}

/** The authenticated caller of a request; routes under `/api/` always have one. */
export function callerOf(request: FastifyRequest): Caller {
  if (!request.caller) throw new Error('route reached without an authenticated caller');
  return request.caller;
}
