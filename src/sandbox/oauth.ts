import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from './context.ts';

// Placeholder: the OAuth routes are being written.
export function registerOAuthRoutes(_app: FastifyInstance, _ctx: SandboxContext): void {}
