import { z } from 'zod';
import { describe, expect, it } from 'vitest';
import { AmbiguousWriteError, ApiError } from '../../../src/client/index.ts';
import {
  asFerryError,
  ERROR_CODES,
  exitCodeForCode,
  FerryError,
  guard,
  parseOptions,
} from '../../../src/errors/index.ts';
import { connect, openSource } from '../../../src/index.ts';
import { startSandbox } from '../../../src/sandbox-door.ts';

describe('the kind and retryability of an error', () => {
  it.each(ERROR_CODES)('gives %s the kind its exit code says', (code) => {
    const kind = new FerryError(code, 'x').kind;
    expect({ 1: 'internal', 2: 'input', 4: 'service' }[exitCodeForCode(code)]).toBe(kind);
  });

  it('calls retryable what may pass unchanged later, and nothing the caller must fix', () => {
    expect(ERROR_CODES.filter((code) => new FerryError(code, 'x').retryable)).toEqual([
      'API_RATE_LIMITED',
      'API_AMBIGUOUS_WRITE',
      'API_NETWORK',
      'API_TIMEOUT',
      'API_SERVER',
      'JOURNAL_LOCKED',
      'JOURNAL_STORE',
    ]);
    expect(new ApiError('API_SERVER', 'down', { method: 'GET', path: '/parties', status: 503 })).toMatchObject({
      kind: 'service',
      retryable: true,
    });
    expect(new AmbiguousWriteError('cut', { method: 'POST', path: '/parties' })).toMatchObject({
      kind: 'service',
      retryable: true,
    });
    expect(new ApiError('API_UNAUTHORIZED', 'no', { method: 'GET', path: '/users' })).toMatchObject({
      kind: 'service',
      retryable: false,
    });
  });

  it('turns anything else into an INTERNAL FerryError that keeps its cause', () => {
    const bug = new TypeError('x is undefined');
    expect(asFerryError(bug, 'runExport')).toMatchObject({
      code: 'INTERNAL',
      kind: 'internal',
      retryable: false,
      cause: bug,
      message: 'runExport failed unexpectedly: x is undefined',
    });
    const own = new FerryError('USAGE', 'no');
    expect(asFerryError(own, 'runExport')).toBe(own);
  });

  it('gives a call through the door as the same call, ending in a FerryError whatever happens inside', async () => {
    const parse = guard('parseCount', async (text: string, base: number = 10) => {
      const value = Number.parseInt(text, base);
      if (Number.isNaN(value)) throw new RangeError(`not a number: ${text}`);
      return value;
    });
    expect(await parse('ff', 16)).toBe(255);
    await expect(parse('x')).rejects.toMatchObject({
      code: 'INTERNAL',
      message: 'parseCount failed unexpectedly: not a number: x',
      cause: expect.any(RangeError),
    });
  });

  it("keeps the door's calls' own FerryErrors, of kind input for what was given", async () => {
    await expect(openSource('/no/such/file.csv')).rejects.toMatchObject({ code: 'SOURCE_NOT_FOUND', kind: 'input' });
    await expect(connect({ token: 'a token with spaces', baseUrl: 'https://acme.example.com' })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      kind: 'input',
    });
  });
});

describe('options of a library call', () => {
  const schema = z
    .object({ port: z.number().int(), rateLimit: z.object({ limit: z.number().positive() }).optional() })
    .strict();

  it('are given back with their defaults when right', () => {
    expect(parseOptions(schema, { port: 1 }, 'startSandbox')).toEqual({ port: 1 });
  });

  it('are refused as a FerryError of kind input naming each option at fault, never a ZodError', () => {
    const error = (() => {
      try {
        return parseOptions(schema, { port: 'any', rateLimit: { limit: -1 }, colour: 'red' }, 'startSandbox');
      } catch (caught) {
        return caught;
      }
    })();
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({ code: 'CONFIG_INVALID', kind: 'input', retryable: false });
    const { message } = error as FerryError;
    expect(message).toMatch(/^startSandbox: /);
    expect(message).toContain('option `port`');
    expect(message).toContain('option `rateLimit.limit`');
    expect(message).toContain('"colour"');
  });

  it('of startSandbox: a wrong one is refused before anything listens', async () => {
    await expect(startSandbox({ port: 70_000 })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      kind: 'input',
      message: expect.stringContaining('option `port`'),
    });
    // @ts-expect-error a misspelt option is a type error too
    await expect(startSandbox({ prot: 1 })).rejects.toMatchObject({
      code: 'CONFIG_INVALID',
      message: expect.stringContaining('"prot"'),
    });
  });
});
