import { describe, expect, it } from 'vitest';
import { formatCount } from './limits.ts';

describe('formatCount', () => {
  it("writes a count as toLocaleString('en-GB') does", () => {
    for (const n of [
      0,
      7,
      999,
      1000,
      12_345,
      999_999,
      1_000_000,
      4_000,
      123_456_789,
      -1,
      -1234,
      -999_999_999,
      Number.MAX_SAFE_INTEGER,
      0.5,
      1234.5678,
      -0.25,
      1e21,
      Number.NaN,
      Number.POSITIVE_INFINITY,
    ]) {
      expect(formatCount(n)).toBe(n.toLocaleString('en-GB'));
    }
  });
});
