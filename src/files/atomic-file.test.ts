import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonText, writeFileAtomic } from './atomic-file.ts';

/** When on, a write creates its file and then fails as on a full disk (ENOSPC), leaving it empty. */
const fullDisk = vi.hoisted(() => ({ on: false }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const writeFile: typeof fs.writeFile = async (path, data, options) => {
    if (!fullDisk.on) return fs.writeFile(path, data, options);
    await fs.writeFile(path, '', options);
    throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
  };
  return { ...fs, default: { ...fs, writeFile }, writeFile };
});

describe('writeFileAtomic', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-atomic-'));
  afterEach(() => {
    for (const name of readdirSync(dir)) rmSync(join(dir, name), { recursive: true, force: true });
  });

  it('replaces the file whole, mode 0600, and leaves no temporary file', async () => {
    const file = join(dir, 'state.json');
    writeFileSync(file, 'old', { mode: 0o644 });
    await writeFileAtomic(file, jsonText({ a: 1 }));
    expect(readFileSync(file, 'utf8')).toBe('{\n  "a": 1\n}\n');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    expect(readdirSync(dir)).toEqual(['state.json']);
  });

  it('on failure keeps the old file, removes its temporary file and throws the error as it came', async () => {
    const file = join(dir, 'state.json');
    writeFileSync(file, 'old');
    // A folder where the file should be: the rename fails after the temporary file is written.
    const blocked = join(dir, 'blocked');
    mkdirSync(join(blocked, 'inside'), { recursive: true });
    await expect(writeFileAtomic(blocked, 'new')).rejects.toMatchObject({ code: expect.stringMatching(/^E/) });
    expect(readdirSync(dir).sort()).toEqual(['blocked', 'state.json']);
    expect(readFileSync(file, 'utf8')).toBe('old');
  });

  it('on a full disk removes the empty temporary file the failed write made', async () => {
    const file = join(dir, 'state.json');
    writeFileSync(file, 'old');
    fullDisk.on = true;
    try {
      await expect(writeFileAtomic(file, 'new')).rejects.toMatchObject({ code: 'ENOSPC' });
    } finally {
      fullDisk.on = false;
    }
    expect(readdirSync(dir)).toEqual(['state.json']);
    expect(readFileSync(file, 'utf8')).toBe('old');
  });
});
