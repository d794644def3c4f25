import { describe, expect, it } from 'vitest';
import { Pool } from './undici-pool.ts';

describe('undici-pool', () => {
  it('is the Pool that the undici door exports (the file has not moved)', async () => {
    const undici = await import('undici');
    expect(Pool).toBe(undici.Pool);
  });
});
