import type { FastifyInstance } from 'fastify';
import type { SandboxContext } from './context.ts';

// Placeholder: fault injection is being written.
export function installFaults(_app: FastifyInstance, _ctx: SandboxContext): void {}
