export { buildSandbox, startSandbox, seededRandom, type RunningSandbox } from './server.ts';
export { sandboxOptionsSchema, type SandboxOptions, type SandboxSettings } from './settings.ts';
export { Store } from './store.ts';
export { ADMIN_USERNAME } from './seed.ts';
export type * from './model.ts';
