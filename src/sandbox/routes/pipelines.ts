import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from '../context.ts';

// Placeholder: the routes of this module are being written.
export function registerPipelineRoutes(_app: FastifyInstance, _ctx: SandboxContext): void {}
