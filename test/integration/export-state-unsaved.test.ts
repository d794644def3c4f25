import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { FerryError } from '../../src/errors/index.ts';
import { normaliseExportOptions, runExport } from '../../src/export/index.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

// The disk fills up just as the export's state is saved: every other file is written as usual.
vi.mock('../../src/files/atomic-file.ts', async (original) => {
  const real = await original<typeof import('../../src/files/atomic-file.ts')>();
  return {
    ...real,
    writeFileAtomic: async (file: string, data: string | Buffer, options?: { mode?: number }) => {
      if (file.endsWith('.state.json'))
        throw Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' });
      return real.writeFileAtomic(file, data, options);
    },
  };
});

const dir = mkdtempSync(join(tmpdir(), 'ferry-export-unsaved-'));
let box: TestSandbox;
let client: CrmClient;

beforeAll(async () => {
  box = await startTestSandbox();
  client = new CrmClient({ baseUrl: box.url, auth: box.token });
});

afterAll(async () => {
  await client?.close();
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

it('a state that cannot be saved is an EXPORT_WRITE error saying the export is written and the next run repeats it', async () => {
  const out = join(dir, 'unsaved.csv');
  const state = join(dir, 'unsaved.state.json');
  const options = normaliseExportOptions({ entity: 'parties', out, columns: 'id', since: 'auto', state, cwd: dir });
  const error = await runExport(options, { client, account: { baseUrl: box.url, account: box.url } }).then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(FerryError);
  expect((error as FerryError).code).toBe('EXPORT_WRITE');
  expect((error as FerryError).message).toContain(`the export is written, but its state ${state} could not be saved`);
  expect(existsSync(out)).toBe(true);
  expect(existsSync(state)).toBe(false);
});
