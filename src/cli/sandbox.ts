import type { SandboxOptions } from '../sandbox/index.ts';
import { FerryError } from '../errors/index.ts';
import { refuseArguments, type Command, type ParsedArgs } from './command.ts';

function usage(message: string): never {
  throw new FerryError('USAGE', message);
}

/** Parses `4000/h`, `60/min` or `10/s` into a limit per window. */
export function parseRateLimit(text: string): { limit: number; windowSeconds: number } {
  const match = /^(\d+)\s*\/\s*(h|hour|min|minute|m|s|sec|second)$/i.exec(text.trim());
  if (!match) usage(`--rate-limit takes N/h, N/min or N/s, got ${JSON.stringify(text)}`);
  const limit = Number(match[1]);
  if (limit < 1) usage(`--rate-limit: the limit must be at least 1, got ${JSON.stringify(text)}`);
  const unit = (match[2] as string).toLowerCase();
  const windowSeconds = unit.startsWith('h') ? 3600 : unit.startsWith('m') ? 60 : 1;
  return { limit, windowSeconds };
}

/** The faults, each with the range it takes: rates from 0 to 1, times in whole milliseconds. */
const FAULTS = {
  '5xx': { key: 'errorRate', rate: true },
  error: { key: 'errorRate', rate: true },
  drop: { key: 'dropAfterWriteRate', rate: true },
  latency: { key: 'latencyMs', rate: false },
  jitter: { key: 'latencyJitterMs', rate: false },
} as const;

/** Parses `5xx=0.05,latency=20,drop=0.01,jitter=10` into fault settings. */
export function parseFaults(text: string): NonNullable<SandboxOptions['faults']> {
  const faults: NonNullable<SandboxOptions['faults']> = {};
  const parts = text.split(',').map((p) => p.trim());
  if (parts.every((p) => p === '')) usage('--faults needs KEY=NUMBER pairs, e.g. 5xx=0.05,latency=20');
  for (const part of parts) {
    const match = /^([a-z0-9]+)=([0-9]+(?:\.[0-9]+)?)$/i.exec(part);
    if (!match) usage(`--faults: ${JSON.stringify(part)} is not KEY=NUMBER (a number like 0.05 or 20)`);
    const name = (match[1] as string).toLowerCase();
    const fault = FAULTS[name as keyof typeof FAULTS];
    if (!fault) usage(`--faults: unknown fault ${JSON.stringify(name)}; use 5xx, latency, jitter or drop`);
    const value = Number(match[2]);
    if (fault.rate && value > 1) usage(`--faults: ${name} is a share of requests from 0 to 1, got ${match[2]}`);
    if (!fault.rate && (!Number.isInteger(value) || value > 600_000))
      usage(`--faults: ${name} takes whole milliseconds up to 600000, got ${match[2]}`);
    faults[fault.key] = value;
  }
  return faults;
}

/** Parses `ID:SECRET:REDIRECT_URI` (the secret may be empty; the URI holds colons of its own). */
export function parseClient(text: string): { clientId: string; clientSecret: string; redirectUri: string } {
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (first <= 0 || second < 0) usage(`--client takes ID:SECRET:REDIRECT_URI, got ${JSON.stringify(text)}`);
  const redirectUri = text.slice(second + 1);
  let url: URL | null = null;
  try {
    url = new URL(redirectUri);
  } catch {
    // reported below
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:'))
    usage(`--client: the redirect URI ${JSON.stringify(redirectUri)} is not an http(s) address`);
  return { clientId: text.slice(0, first), clientSecret: text.slice(first + 1, second), redirectUri };
}

/** A whole number written in digits (no hex, no exponent, no sign) within a range. */
function wholeNumber(raw: unknown, flag: string, min: number, max: number): number | undefined {
  if (raw === undefined) return undefined;
  const text = String(raw);
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max)
    usage(`--${flag} takes a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  return Number(text);
}

/** The shortest personal token the sandbox takes: a guessable one would defeat its purpose. */
export const MIN_TOKEN = 8;

function toOptions(args: ParsedArgs): SandboxOptions {
  refuseArguments('sandbox', args);
  const v = args.values;
  const tokens = (v.token as string[] | undefined) ?? [];
  for (const token of tokens) {
    if (token.length < MIN_TOKEN || !/^[\x21-\x7e]+$/.test(token))
      usage(`--token takes at least ${MIN_TOKEN} visible characters (no spaces), got one of ${token.length}`);
  }
  const host = (v.host as string | undefined) ?? '127.0.0.1';
  if (host.trim() === '') usage('--host needs an address, e.g. 127.0.0.1');
  const options: SandboxOptions = {
    port: wholeNumber(v.port, 'port', 0, 65535) ?? 8787,
    host,
    tokens,
    clients: ((v.client as string[] | undefined) ?? []).map(parseClient),
    dataFile: (v.data as string | undefined) ?? null,
    reset: Boolean(v.reset),
    log: Boolean(v.log),
  };
  if (options.dataFile === '') usage('--data needs a file name');
  const ttl = wholeNumber(v['token-ttl'], 'token-ttl', 1, 31_536_000);
  if (ttl !== undefined) options.tokenTtlSeconds = ttl;
  const seed = wholeNumber(v.seed, 'seed', 0, 2 ** 31 - 1);
  if (seed !== undefined) options.seed = seed;
  if (v['rate-limit'] !== undefined) options.rateLimit = parseRateLimit(v['rate-limit'] as string);
  if (v.faults !== undefined) options.faults = parseFaults(v.faults as string);
  return options;
}

/** Listening failures a person causes (a busy port, an address not on this machine), said plainly (USAGE, exit 2); the workbench's too. */
export function listenError(error: unknown, options: Pick<SandboxOptions, 'port' | 'host'>): never {
  const code = (error as NodeJS.ErrnoException).code;
  if (code === 'EADDRINUSE')
    usage(`port ${options.port} on ${options.host} is in use; give another --port (0 picks a free one)`);
  if (code === 'EADDRNOTAVAIL' || code === 'ENOTFOUND' || code === 'EAI_AGAIN')
    usage(`--host ${options.host} is not an address of this machine; use 127.0.0.1 (or 0.0.0.0 for every address)`);
  if (code === 'EACCES')
    usage(`not allowed to listen on port ${options.port}; ports below 1024 need privileges: give another --port`);
  throw error;
}

export const sandboxCommand: Command = {
  name: 'sandbox',
  usage: `Usage: crm-ferry sandbox [options]

Runs a local copy of the CRM service (v2, OAuth and legacy v1) for rehearsals and tests.`,
  options: {
    port: { type: 'string', value: 'N', describe: 'port to listen on (default 8787; 0 picks a free one)' },
    host: { type: 'string', value: 'ADDRESS', describe: 'address to listen on (default 127.0.0.1)' },
    token: {
      type: 'string',
      multiple: true,
      value: 'VALUE',
      describe: `accept VALUE (at least ${MIN_TOKEN} visible characters, no spaces) as a personal token of the Administrator (repeatable); without it a token is generated and printed`,
    },
    client: {
      type: 'string',
      multiple: true,
      value: 'ID:SECRET:URI',
      describe: 'register an OAuth client (repeatable; empty SECRET for an installed app)',
    },
    'token-ttl': { type: 'string', value: 'SECONDS', describe: 'lifetime of OAuth access tokens (default 7200)' },
    'rate-limit': {
      type: 'string',
      value: 'N/h|N/min|N/s',
      describe: 'limit requests per user, like the service (default off)',
      group: 'Rehearsing trouble:',
    },
    faults: {
      type: 'string',
      value: 'SPEC',
      describe: 'inject faults: 5xx=RATE,latency=MS,jitter=MS,drop=RATE',
      group: 'Rehearsing trouble:',
    },
    seed: {
      type: 'string',
      value: 'N',
      describe: 'seed for fault injection, so runs repeat (default 1)',
      group: 'Rehearsing trouble:',
    },
    data: {
      type: 'string',
      value: 'FILE',
      describe:
        'keep the state in FILE between runs (every acknowledged write is synced to FILE.log first; uploads in FILE.blobs/)',
      group: 'State:',
    },
    reset: { type: 'boolean', describe: 'start from the seeded account even if FILE exists', group: 'State:' },
    log: { type: 'boolean', describe: 'log every request to stderr' },
  },
  async run(args, io) {
    const options = toOptions(args);
    const { startSandbox } = await import('../sandbox/index.ts');
    const sandbox = await startSandbox(options).catch((error: unknown) => listenError(error, options));
    io.stdout.write(`sandbox listening on ${sandbox.url}\n`);
    io.stdout.write(`token: ${sandbox.token}\n`);
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    const grace = sandbox.context.settings.closeGraceMs / 1000;
    io.stderr.write(
      `stopping: finishing the requests under way (at most ${grace} s), then saving; Ctrl-C again stops at once\n`,
    );
    await sandbox.close();
    io.stdout.write('sandbox stopped\n');
    return 0;
  },
};
