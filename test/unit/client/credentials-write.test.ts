import { mkdtemp, readdir, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, expect, it, vi } from 'vitest';
import { CredentialStore } from '../../../src/client/credentials.ts';

// The rename that replaces the credentials file fails (a full disk, a file system gone read-only):
// the store must say so and leave no temporary copy of the tokens behind.
vi.mock('node:fs/promises', async (original) => {
  const actual = await original<typeof import('node:fs/promises')>();
  return {
    ...actual,
    rename: vi.fn(async () =>
      Promise.reject(Object.assign(new Error('ENOSPC: no space left on device'), { code: 'ENOSPC' })),
    ),
  };
});

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-cred-write-'));
});
afterEach(() => rm(dir, { recursive: true, force: true }));

it('says plainly when the file cannot be replaced, and removes its temporary file', async () => {
  const store = new CredentialStore(join(dir, 'crm-ferry', 'credentials.json'));
  const profile = {
    baseUrl: 'https://acme.crm.example',
    clientId: 'cli',
    clientSecret: 'secret-value',
    accessToken: 'a1',
    refreshToken: 'r1',
    expiresAt: 0,
    scope: 'read',
  };
  await expect(store.put('default', profile)).rejects.toMatchObject({
    code: 'CONFIG_INVALID',
    message: expect.stringMatching(/cannot write the credentials file: ENOSPC/),
  });
  expect(await readdir(join(dir, 'crm-ferry'))).toEqual([]);
});
