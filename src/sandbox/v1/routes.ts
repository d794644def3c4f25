import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';
import { v1Router } from './common.ts';
import { registerCustomFieldRoutes, registerTagRoutes } from './custom-fields.ts';
import { registerKaseRoutes } from './kases.ts';
import { registerPartyRoutes } from './parties.ts';
import { registerPartyWriteRoutes } from './party-writes.ts';
import { registerTaskRoutes } from './tasks.ts';

/**
 * The legacy v1 interface under `/api/` (no version segment): XML by default, JSON on request, over
 * the same stored records as v2. Every path also answers with `.json` or `.xml` appended.
 */
export function registerLegacyRoutes(app: FastifyInstance, ctx: SandboxContext): void {
  const route = v1Router(app);
  registerKaseRoutes(route, ctx);
  registerPartyRoutes(route, ctx);
  registerPartyWriteRoutes(route, ctx);
  registerCustomFieldRoutes(route, ctx);
  registerTagRoutes(route, ctx);
  registerTaskRoutes(route, ctx);
}
