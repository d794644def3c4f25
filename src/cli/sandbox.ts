import type { SandboxOptions } from '../sandbox/index.ts';
import { FerryError } from '../errors/index.ts';
import type { Command, ParsedArgs } from './command.ts';

/** Parses `4000/h`, `60/min` or `10/s` into a limit per window. */
export function parseRateLimit(text: string): { limit: number; windowSeconds: number } {
  const match = /^(\d+)\s*\/\s*(h|hour|min|minute|m|s|sec|second)$/i.exec(text.trim());
  if (!match) {
    throw new FerryError('USAGE', `--rate-limit takes N/h, N/min or N/s, got ${JSON.stringify(text)}`);
  }
  const unit = (match[2] as string).toLowerCase();
  const windowSeconds = unit.startsWith('h') ? 3600 : unit.startsWith('m') ? 60 : 1;
  return { limit: Number(match[1]), windowSeconds };
}

/** Parses `5xx=0.05,latency=20,drop=0.01,jitter=10` into fault settings. */
export function parseFaults(text: string): NonNullable<SandboxOptions['faults']> {
  const faults: NonNullable<SandboxOptions['faults']> = {};
  for (const part of text.split(',').map((p) => p.trim()).filter(Boolean)) {
    const [key, raw] = part.split('=');
    const value = Number(raw);
    if (raw === undefined || Number.isNaN(value)) {
      throw new FerryError('USAGE', `--faults: ${JSON.stringify(part)} is not KEY=NUMBER`);
    }
    if (key === '5xx' || key === 'error') faults.errorRate = value;
    else if (key === 'latency') faults.latencyMs = value;
    else if (key === 'jitter') faults.latencyJitterMs = value;
    else if (key === 'drop') faults.dropAfterWriteRate = value;
    else throw new FerryError('USAGE', `--faults: unknown fault ${JSON.stringify(key)}; use 5xx, latency, jitter or drop`);
  }
  return faults;
}

/** Parses `ID:SECRET:REDIRECT_URI` (the secret may be empty; the URI holds colons of its own). */
export function parseClient(text: string): { clientId: string; clientSecret: string; redirectUri: string } {
  const first = text.indexOf(':');
  const second = first < 0 ? -1 : text.indexOf(':', first + 1);
  if (first <= 0 || second < 0) {
    throw new FerryError('USAGE', `--client takes ID:SECRET:REDIRECT_URI, got ${JSON.stringify(text)}`);
  }
  return { clientId: text.slice(0, first), clientSecret: text.slice(first + 1, second), redirectUri: text.slice(second + 1) };
}

function toOptions(args: ParsedArgs): SandboxOptions {
  const v = args.values;
  const number = (name: string): number | undefined => {
    const raw = v[name];
    if (raw === undefined) return undefined;
    const value = Number(raw);
    if (!Number.isInteger(value)) throw new FerryError('USAGE', `--${name} takes a whole number, got ${JSON.stringify(raw)}`);
    return value;
  };
  const options: SandboxOptions = {
    port: number('port') ?? 8787,
    host: (v.host as string | undefined) ?? '127.0.0.1',
    tokens: (v.token as string[] | undefined) ?? [],
    clients: ((v.client as string[] | undefined) ?? []).map(parseClient),
    dataFile: (v.data as string | undefined) ?? null,
    reset: Boolean(v.reset),
    log: Boolean(v.log),
  };
  const ttl = number('token-ttl');
  if (ttl !== undefined) options.tokenTtlSeconds = ttl;
  const seed = number('seed');
  if (seed !== undefined) options.seed = seed;
  if (v['rate-limit'] !== undefined) options.rateLimit = parseRateLimit(v['rate-limit'] as string);
  if (v.faults !== undefined) options.faults = parseFaults(v.faults as string);
  return options;
}

export const sandboxCommand: Command = {
  name: 'sandbox',
  usage: `Usage: crm-ferry sandbox [options]

Runs a local copy of the CRM service (v2, OAuth and legacy v1) for rehearsals and tests.

Options:
  --port N                    port to listen on (default 8787; 0 picks a free one)
  --host ADDRESS              address to listen on (default 127.0.0.1)
  --token VALUE               accept VALUE as a personal token of the Administrator (repeatable);
                              without it a token is generated and printed
  --client ID:SECRET:URI      register an OAuth client (repeatable; empty SECRET for an installed app)
  --token-ttl SECONDS         lifetime of OAuth access tokens (default 7200)
  --rate-limit N/h|N/min|N/s  limit requests per user, like the service (default off)
  --faults SPEC               inject faults: 5xx=RATE,latency=MS,jitter=MS,drop=RATE
  --seed N                    seed for fault injection, so runs repeat (default 1)
  --data FILE                 keep the state in FILE between runs (written atomically)
  --reset                     start from the seeded account even if FILE exists
  --log                       log every request to stderr
`,
  options: {
    port: { type: 'string' },
    host: { type: 'string' },
    token: { type: 'string', multiple: true },
    client: { type: 'string', multiple: true },
    'token-ttl': { type: 'string' },
    'rate-limit': { type: 'string' },
    faults: { type: 'string' },
    seed: { type: 'string' },
    data: { type: 'string' },
    reset: { type: 'boolean' },
    log: { type: 'boolean' },
  },
  async run(args, io) {
    const { startSandbox } = await import('../sandbox/index.ts');
    const sandbox = await startSandbox(toOptions(args));
    io.stdout.write(`sandbox listening on ${sandbox.url}\n`);
    io.stdout.write(`token: ${sandbox.token}\n`);
    await new Promise<void>((resolve) => {
      if (io.signal.aborted) resolve();
      else io.signal.addEventListener('abort', () => resolve(), { once: true });
    });
    await sandbox.close();
    io.stdout.write('sandbox stopped\n');
    return 0;
  },
};
