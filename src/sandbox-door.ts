/**
 * crm-ferry/sandbox: the local copy of the service, as its own door, so that a program that only
 * migrates data (`crm-ferry`) never loads the sandbox's web server. docs/library.md and
 * docs/sandbox.md show it in use.
 */
import { asFerryError, FerryError, parseOptions } from './errors/index.ts';
import { sandboxOptionsSchema, type SandboxOptions, startSandbox as start } from './sandbox/index.ts';

export type { SandboxOptions } from './sandbox/index.ts';

/** A sandbox listening for requests. */
export interface Sandbox {
  /** Base address, e.g. `http://127.0.0.1:8787`: give it to `connect({ baseUrl })`. */
  readonly url: string;
  /** A personal token of the seeded Administrator: give it to `connect({ token })`. */
  readonly token: string;
  /** Every personal token the sandbox accepts. */
  readonly tokens: readonly string[];
  /**
   * Stops taking connections, lets requests in flight finish (up to `closeGraceMs`) and saves the
   * data file when there is one. Rejects with SANDBOX_STATE when saving had failed.
   */
  close(): Promise<void>;
}

/**
 * Starts a sandbox of the service (by default on 127.0.0.1, on a free port, its state in memory).
 * Its options are the flags of `crm-ferry sandbox`; a wrong one is a FerryError of kind `input`
 * naming it.
 */
export async function startSandbox(options: SandboxOptions = {}): Promise<Sandbox> {
  const { now: _now, report: _report, ...settings } = options;
  parseOptions(sandboxOptionsSchema.strict(), settings, 'startSandbox');
  let running: Awaited<ReturnType<typeof start>>;
  try {
    running = await start(options);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code;
    if (code === 'EADDRINUSE' || code === 'EACCES' || code === 'EADDRNOTAVAIL') {
      throw new FerryError('CONFIG_INVALID', `startSandbox: cannot listen on ${settings.host ?? '127.0.0.1'}:${settings.port ?? 0} (${code})`, {
        cause: error,
        hint: 'Choose another `port` (0 takes a free one) or `host`.',
      });
    }
    throw asFerryError(error, 'startSandbox');
  }
  return { url: running.url, token: running.token, tokens: running.tokens, close: () => running.close() };
}
