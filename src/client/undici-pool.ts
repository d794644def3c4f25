import { createRequire } from 'node:module';
import type { Dispatcher, Pool as UndiciPool } from 'undici';

const require = createRequire(import.meta.url);

/**
 * undici's Pool, from its own file. The package's door (`undici`) loads all of undici (fetch, web
 * sockets, caches, HTTP/2, mocks) at once, a fifth of a second of CPU at every start of a command
 * that connects, for the one class the client uses. undici 7 has no `exports` map, so the file is
 * reachable; `undici-pool.test.ts` holds it to be the very class the door exports, and fails when
 * undici moves it.
 */
export const Pool: typeof UndiciPool = require('undici/lib/dispatcher/pool.js') as typeof UndiciPool;

type RequestApi = (this: Dispatcher, options: Dispatcher.RequestOptions) => Promise<Dispatcher.ResponseData>;
let requestApi: RequestApi | undefined;

/**
 * undici's request() on `dispatcher`: the answer as a stream. The door adds request() to every
 * dispatcher's prototype as it loads; a Pool from its own file lacks it, so it is taken from its
 * file too, on the first streamed answer.
 */
export function streamRequest(
  dispatcher: Dispatcher,
  options: Dispatcher.RequestOptions,
): Promise<Dispatcher.ResponseData> {
  requestApi ??= require('undici/lib/api/api-request.js') as RequestApi;
  return requestApi.call(dispatcher, options);
}
