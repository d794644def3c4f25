import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from './context.ts';

// Placeholder: rate limiting is being written.
export function installRateLimit(_app: FastifyInstance, _ctx: SandboxContext): void {}
