import { createRequire } from 'node:module';
import type { Pool as UndiciPool } from 'undici';

/**
 * undici's Pool, from its own file. The package's door (`undici`) loads all of undici (fetch, web
 * sockets, caches, HTTP/2, mocks) at once, a fifth of a second of CPU at every start of a command
 * that connects, for the one class the client uses. undici 7 has no `exports` map, so the file is
 * reachable; `undici-pool.test.ts` holds it to be the very class the door exports, and fails when
 * undici moves it.
 */
export const Pool: typeof UndiciPool = createRequire(import.meta.url)('undici/lib/dispatcher/pool.js') as typeof UndiciPool;
