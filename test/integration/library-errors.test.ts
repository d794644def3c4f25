import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  accountOf,
  type BackupOptionsInput,
  connect,
  type CrmClient,
  type ExportOptionsInput,
  type ExportSummary,
  FerryError,
  runBackup,
  runExport,
  runImport,
  runRestore,
  runVerify,
} from '../../src/index.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * The library's one channel for failures, as docs/library.md ("Errors and cancellation") says:
 * a job resolves with its summary or rejects with a FerryError, of kind `input` for a wrong option
 * (named), and carrying the summary of what it had done where there is one.
 */
const dir = mkdtempSync(join(tmpdir(), 'ferry-library-errors-'));
let box: TestSandbox;
let client: CrmClient;

beforeAll(async () => {
  box = await startTestSandbox();
  // Without `env`: a token and an address are enough.
  ({ client } = await connect({ token: box.token, baseUrl: box.url }));
  for (let i = 0; i < 150; i += 1)
    await box.v2('POST', '/parties', { party: { type: 'person', lastName: `Person ${i}` } });
});

afterAll(async () => {
  await client?.close();
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

const caught = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => null,
    (error: unknown) => error,
  );

describe('the jobs of the library', () => {
  it.each([
    [
      'runExport',
      () =>
        runExport(
          { entity: 'parties', out: join(dir, 'a.csv'), where: 'lastName is x' } as unknown as ExportOptionsInput,
          { client },
        ),
      'option `where`',
    ],
    [
      'runExport',
      () =>
        runExport({ entity: 'parties', out: join(dir, 'a.csv'), colour: 'red' } as unknown as ExportOptionsInput, {
          client,
        }),
      '"colour"',
    ],
    [
      'runExport',
      () => runExport({ entity: 'parties', out: join(dir, 'a.csv'), since: 'auto' }, { client }),
      '`since` auto needs `stateFile`',
    ],
    [
      'runBackup',
      () => runBackup({ out: join(dir, 'backup'), since: 'yesterday' } as unknown as BackupOptionsInput, { client }),
      'option `since`',
    ],
    ['runRestore', () => runRestore({ from: join(dir, 'backup'), concurrency: 0 }, { client }), 'option `concurrency`'],
    [
      'runImport',
      () =>
        runImport(
          { source: { kind: 'plan', planFile: join(dir, 'plan.yaml') }, stateDir: join(dir, 'state'), concurrency: 0 },
          { client, account: accountOf(client) },
        ),
      'option `concurrency`',
    ],
    [
      'runVerify',
      () =>
        runVerify(
          { source: { kind: 'plan', planFile: join(dir, 'plan.yaml') }, stateDir: '' },
          { client, account: accountOf(client) },
        ),
      'option `stateDir`',
    ],
  ])('%s refuses a wrong option before any request: a FerryError of kind input naming it', async (call, run, named) => {
    const before = client.transport.requestsSent;
    const error = await caught(run());
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({ kind: 'input', retryable: false, message: expect.stringContaining(named) });
    expect((error as FerryError).message.startsWith(`${call}: `) || (error as FerryError).code === 'USAGE').toBe(true);
    expect(client.transport.requestsSent - before).toBe(0);
  });

  it('gives an export that fails half-way as a FerryError carrying what it had read, and writes no file', async () => {
    const out = join(dir, 'half.csv');
    const error = await caught(
      runExport(
        { entity: 'parties', out },
        {
          client,
          onEvent: () => {
            throw new TypeError('the caller broke');
          },
        },
      ),
    );
    expect(error).toBeInstanceOf(FerryError);
    expect(error).toMatchObject({
      code: 'INTERNAL',
      kind: 'internal',
      message: 'runExport failed unexpectedly: the caller broke',
    });
    expect((error as FerryError).cause).toBeInstanceOf(TypeError);
    const partial = (error as FerryError).partial as ExportSummary;
    expect(partial).toMatchObject({ records: 100, interrupted: false, files: [] });
    expect(partial.requests).toBeGreaterThan(0);
    expect(existsSync(out)).toBe(false);
  });

  it('resolves an export stopped by its signal with a summary that says so, and writes no file', async () => {
    const out = join(dir, 'stopped.csv');
    const controller = new AbortController();
    const summary = await runExport(
      { entity: 'parties', out },
      { client, signal: controller.signal, onEvent: () => controller.abort() },
    );
    expect(summary).toMatchObject({ interrupted: true, records: 100, files: [] });
    expect(existsSync(out)).toBe(false);
  });

  it('runs a backup and an export with defaults only, the account taken from the client', async () => {
    const backedUp = await runBackup({ out: join(dir, 'backup-defaults') }, { client });
    expect(backedUp.files['parties.jsonl']?.records).toBeGreaterThanOrEqual(150);
    const exported = await runExport({ entity: 'parties', out: join(dir, 'all.jsonl') }, { client });
    expect(exported).toMatchObject({ interrupted: false, files: [join(dir, 'all.jsonl')] });
    expect(exported.records).toBe(backedUp.files['parties.jsonl']?.records);
  });
});
