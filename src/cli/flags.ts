/**
 * The flag helpers the commands share: paths against the working folder, whole numbers and
 * durations in bounds, the live v1 flags. Each turns one flag's text into a value or a USAGE error
 * naming the flag.
 */
import { isAbsolute, resolve } from 'node:path';
import type { CrmClient, V1LiveConnection, V1WireFormat } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { type AccountIdentity, defaultStateKey, type StateStoreOptions } from '../journal/index.ts';
import { isV1LiveInput } from '../util/index.ts';
import type { CliIo, OptionSpec, ParsedArgs } from './command.ts';
import { connectionOptions } from './connection-flags.ts';

/** A file or folder flag against the working folder `cwd`. */
export function path(value: unknown, cwd: string): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value !== 'string' || value === '') throw new FerryError('USAGE', 'a file or folder option needs a value');
  return isAbsolute(value) ? value : resolve(cwd, value);
}

/** `--input`: a file (resolved like any path), or a live legacy account (`v1+https://HOST`), an address kept as given. */
export function inputPath(value: unknown, cwd: string): string | undefined {
  return typeof value === 'string' && isV1LiveInput(value) ? value : path(value, cwd);
}

export function wholeNumber(value: unknown, flag: string, min: number, max: number): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value);
  if (!/^\d+$/.test(text) || Number(text) < min || Number(text) > max) {
    throw new FerryError('USAGE', `--${flag} takes a whole number from ${min} to ${max}, got ${JSON.stringify(text)}`);
  }
  return Number(text);
}

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, min: 60_000, h: 3_600_000 };

/**
 * A duration as a person writes it: `30m`, `90s`, `1h30m`, `500ms` (whole numbers, units ms, s,
 * m or min, h, largest first or in any order). Returns milliseconds.
 */
export function parseDuration(value: unknown, flag: string): number | undefined {
  if (value === undefined) return undefined;
  const text = String(value).trim().toLowerCase();
  const parts = [...text.matchAll(/(\d+)\s*(ms|min|s|m|h)/g)];
  const rebuilt = parts.map((p) => p[0]).join('');
  if (parts.length === 0 || rebuilt.replace(/\s/g, '') !== text.replace(/\s/g, '')) {
    throw new FerryError(
      'USAGE',
      `--${flag} takes a duration such as 30m, 90s or 1h30m, got ${JSON.stringify(String(value))}`,
    );
  }
  const ms = parts.reduce((sum, p) => sum + Number(p[1]) * (UNIT_MS[p[2] as string] as number), 0);
  if (ms < 1000) throw new FerryError('USAGE', `--${flag} must be at least 1s, got ${JSON.stringify(String(value))}`);
  return ms;
}

/**
 * The longest a run waits for the service at a time before it stops (exit 4): an outage, or a
 * pause the service asks for (a 429's `Retry-After` or its hourly window's reset). A little over
 * the hourly window, so that a rate limit never stops a run that is left to wait.
 */
export const DEFAULT_GIVE_UP_AFTER_MS = 65 * 60_000;

/** Live v1 sources: the format to ask for (--v1-format) and the `lastmodified` filter (--since). */
export interface V1Flags {
  format: V1WireFormat;
  since: Date | undefined;
}

/** `--v1-format xml|json`. */
export function v1Format(value: unknown): V1WireFormat {
  const format = value ?? 'xml';
  if (format !== 'xml' && format !== 'json')
    throw new FerryError('USAGE', `--v1-format takes xml or json, got ${JSON.stringify(String(format))}`);
  return format;
}

/** `--since 2024-05-01` or `--since 2024-05-01T12:00:00Z`: a moment (a date alone is its midnight, UTC). */
export function parseSince(value: unknown): Date | undefined {
  if (value === undefined) return undefined;
  const text = String(value).trim();
  const moment = /^\d{4}-\d{2}-\d{2}$/.test(text)
    ? new Date(`${text}T00:00:00Z`)
    : /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d+)?)?(Z|[+-]\d{2}:\d{2})$/.test(text)
      ? new Date(text)
      : new Date(Number.NaN);
  if (Number.isNaN(moment.getTime()))
    throw new FerryError(
      'USAGE',
      `--since takes a date or a time with its zone, such as 2024-05-01 or 2024-05-01T12:00:00Z, got ${JSON.stringify(text)}`,
    );
  return moment;
}

/**
 * How a command that connects reaches live v1 inputs: the old account's token from
 * CRM_FERRY_V1_TOKEN, the command's transport settings and `--verbose` log; a source at the
 * address written to, without a token of its own, shares the command's connection.
 */
export async function v1LiveOf(
  client: CrmClient,
  args: ParsedArgs,
  io: CliIo,
  v1: V1Flags,
  transport?: { connections: number; giveUpAfterMs: number },
): Promise<V1LiveConnection> {
  const { v1LiveConnection } = await import('../client/index.ts');
  const log = connectionOptions(args, io.env).verbose ? { log: (line: string) => io.stderr.write(`${line}\n`) } : {};
  return v1LiveConnection({
    target: client.transport,
    token: io.env.CRM_FERRY_V1_TOKEN || undefined,
    format: v1.format,
    since: v1.since,
    transport: { ...(transport ?? {}), ...log, stopSignal: io.signal },
  });
}

/** `--state-key`, for the commands that keep a state. */
export const stateKeyFlag: OptionSpec = {
  'state-key': {
    type: 'string',
    value: 'KEY',
    describe:
      'with --state-store: the name of the state there (default: the plan or mapping file name and the account); the same key from any folder or machine goes on with the same state',
  },
};

/**
 * Where the state is kept besides its folder (`--state-store`, or CRM_FERRY_STATE_STORE) and its
 * key there (`--state-key`, else the plan's or mapping's file name and the account); null for the
 * folder alone. An export's or a backup's key is led by its `kind` (`export:KEY`): never a run's
 * state of the same name.
 */
export function stateStoreOf(
  args: ParsedArgs,
  env: NodeJS.ProcessEnv,
  account: AccountIdentity,
  file: string | undefined,
  kind?: 'export' | 'backup',
): StateStoreOptions | null {
  const url = connectionOptions(args, env).stateStore;
  const key = args.values['state-key'];
  if (key !== undefined && (typeof key !== 'string' || key.trim() === ''))
    throw new FerryError('USAGE', '--state-key needs a value');
  if (url === undefined) {
    if (key !== undefined)
      throw new FerryError('USAGE', '--state-key names a state in a state store: it goes with --state-store URL', {
        hint: 'Give --state-store (or CRM_FERRY_STATE_STORE), or leave --state-key out.',
      });
    return null;
  }
  const kindOf = (name: string): string => (kind ? `${kind}:${name}` : name);
  if (typeof key === 'string') return { url, key: kindOf(key.trim()) };
  if (file === undefined)
    throw new FerryError('USAGE', 'with --state-store, give the plan or mapping of the runs, or --state-key KEY');
  return { url, key: kindOf(defaultStateKey(file, account)) };
}
