import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';

// Placeholder: the legacy v1 routes are being written.
export function registerLegacyRoutes(_app: FastifyInstance, _ctx: SandboxContext): void {}
