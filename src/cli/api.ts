import { resolve } from 'node:path';
import { type ApiRequest, type ApiResponse, type HttpMethod, parseLinkHeader } from '../client/index.ts';
import { FerryError } from '../errors/index.ts';
import { readTextInput } from '../util/index.ts';
import type { CliIo, Command, ParsedArgs } from './command.ts';
import { connectionFlags, connectWith } from './connection-flags.ts';

const METHODS = new Set(['GET', 'POST', 'PUT', 'DELETE', 'HEAD']);

export interface ApiCommandOptions {
  method: HttpMethod;
  path: string;
  query: Record<string, string>;
  data: unknown;
  paginate: boolean;
}

/** Turns `api [METHOD] PATH --data ... --query k=v` into options; reads `--data @file`. */
export async function apiOptions(args: ParsedArgs, cwd: string): Promise<ApiCommandOptions> {
  const [first, second, ...extra] = args.positionals;
  if (first === undefined) throw new FerryError('USAGE', 'api needs a PATH, e.g. `crm-ferry api /parties`');
  if (extra.length > 0) throw new FerryError('USAGE', `api takes [METHOD] PATH, got extra words: ${extra.join(' ')}`);
  const hasMethod = second !== undefined;
  const path = hasMethod ? second : first;
  let data: unknown;
  const raw = args.values.data;
  if (typeof raw === 'string') {
    const file = resolve(cwd, raw.slice(1));
    const text = raw.startsWith('@')
      ? await readTextInput(
          file,
          'the --data file',
          (message) => new FerryError('USAGE', message, { location: { file } }),
        ).catch((error: Error) => {
          if (error instanceof FerryError) throw error;
          throw new FerryError('USAGE', `cannot read --data file ${raw.slice(1)}: ${error.message}`);
        })
      : raw;
    try {
      data = JSON.parse(text);
    } catch (error) {
      throw new FerryError('USAGE', `--data is not valid JSON: ${(error as Error).message}`);
    }
  }
  const method = (hasMethod ? first.toUpperCase() : data === undefined ? 'GET' : 'POST') as HttpMethod;
  if (!METHODS.has(method))
    throw new FerryError('USAGE', `unknown method ${JSON.stringify(first)}; use GET, POST, PUT, DELETE or HEAD`);
  if (!path.startsWith('/')) throw new FerryError('USAGE', `PATH must start with /, got ${JSON.stringify(path)}`);
  const query: Record<string, string> = {};
  for (const pair of (args.values.query as string[] | undefined) ?? []) {
    const eq = pair.indexOf('=');
    if (eq <= 0) throw new FerryError('USAGE', `--query takes KEY=VALUE, got ${JSON.stringify(pair)}`);
    query[pair.slice(0, eq)] = pair.slice(eq + 1);
  }
  const paginate = Boolean(args.values.paginate);
  if (paginate && method !== 'GET' && method !== 'POST')
    throw new FerryError('USAGE', '--paginate works with GET (lists) and POST (filters)');
  return { method, path, query, data, paginate };
}

/** The one array in a list answer (`{parties: [...]}` -> the array). */
function listOf(body: unknown): unknown[] | undefined {
  if (!body || typeof body !== 'object') return undefined;
  const arrays = Object.values(body as Record<string, unknown>).filter(Array.isArray);
  return arrays.length === 1 ? (arrays[0] as unknown[]) : undefined;
}

async function runApi(options: ApiCommandOptions, io: CliIo, args: ParsedArgs): Promise<number> {
  const { client } = await connectWith(args, io);
  try {
    const base: ApiRequest = { method: options.method, path: options.path, query: options.query, signal: io.signal };
    if (options.data !== undefined) base.json = options.data;
    if (!options.paginate) {
      const answer = await client.transport.request(base);
      if (answer.body !== null)
        io.stdout.write(`${typeof answer.body === 'string' ? answer.body : JSON.stringify(answer.body, null, 2)}\n`);
      return 0;
    }
    let request: ApiRequest | null = { ...base, idempotent: true, query: { perPage: '100', ...options.query } };
    while (request) {
      const answer: ApiResponse = await client.transport.request(request);
      const list = listOf(answer.body);
      if (!list) throw new FerryError('USAGE', '--paginate needs a list answer (an object holding one array)');
      for (const item of list) io.stdout.write(`${JSON.stringify(item)}\n`);
      const next: string | undefined = parseLinkHeader(answer.headers.link).next;
      if (!next) break;
      const url: URL = new URL(next, client.transport.origin);
      request = { ...base, idempotent: true, path: url.pathname + url.search, query: {} };
    }
    return 0;
  } finally {
    await client.close();
  }
}

export const apiCommand: Command = {
  name: 'api',
  usage: `Usage: crm-ferry api [METHOD] PATH [options]

Sends one request with your credentials and prints the JSON answer. PATH is under /api/v2
unless it starts with /api/ (legacy) or /oauth/. METHOD defaults to GET, or POST with --data.`,
  epilog: `Examples:
  crm-ferry api /parties --query embed=tags --paginate
  crm-ferry api PUT /parties/12 --data '{"party": {"jobTitle": "CEO"}}'`,
  options: {
    data: { type: 'string', value: 'JSON|@FILE', describe: 'request body (JSON text, or @ and a file name)' },
    query: { type: 'string', multiple: true, value: 'KEY=VALUE', describe: 'query parameter (repeatable)' },
    paginate: { type: 'boolean', describe: 'follow the Link header and print every record as one JSON line' },
    ...connectionFlags,
  },
  async run(args, io) {
    return runApi(await apiOptions(args, io.cwd), io, args);
  },
};
