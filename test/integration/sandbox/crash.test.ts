import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expect, it } from 'vitest';
import { runCrashRounds } from '../../helpers/crash.ts';

// A longer run: `npm run bench -- sandbox-chaos`.
it('keeps every acknowledged write and never gives an id twice across 20 kill -9 restarts', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'ferry-crash-'));
  try {
    const figures = await runCrashRounds({ dir, rounds: 20, writers: 6, killAfterMs: [50, 400], seed: 12 });
    console.log(`crash test: ${JSON.stringify(figures)}`);
    expect(figures.problems).toEqual([]);
    expect(figures.acknowledged.creates).toBeGreaterThan(0);
    expect(figures.acknowledged.updates).toBeGreaterThan(0);
    expect(figures.acknowledged.attachments).toBeGreaterThan(0);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}, 300_000); // a restart starts `crm-ferry sandbox` from the build: 0.2 to 0.6 s on a busy 2-core machine
