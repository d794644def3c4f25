import { mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { removeStaleTemps } from './stale-temps.ts';

describe('removeStaleTemps', () => {
  it('removes the temporary files of processes that no longer run, and keeps those of one that does and every other file', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ferry-stale-temps-'));
    try {
      const gone = 2 ** 22 + 23;
      const names = [
        `.state.json.${gone}.0a1b2c3d4e5f.tmp`,
        `.verify.differences.csv.${gone}.7.tmp`,
        `.state.json.${process.ppid}.0a1b2c3d4e5f.tmp`,
        'state.json',
        `.notes.${gone}.tmp`,
      ];
      for (const name of names) writeFileSync(join(dir, name), '');
      await removeStaleTemps(dir);
      expect(readdirSync(dir).sort()).toEqual([
        `.notes.${gone}.tmp`,
        `.state.json.${process.ppid}.0a1b2c3d4e5f.tmp`,
        'state.json',
      ]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
