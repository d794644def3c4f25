import { describe, expect, it } from 'vitest';
import { newTokenValue } from './auth.ts';

describe('newTokenValue', () => {
  it('never starts with "-", which the command line would read as a flag (one in 64 did)', () => {
    const tokens = Array.from({ length: 2_000 }, () => newTokenValue());
    expect(tokens.filter((t) => t.startsWith('-'))).toEqual([]);
    expect(new Set(tokens).size).toBe(tokens.length);
    expect(tokens.every((t) => /^[A-Za-z0-9_-]{32}$/.test(t))).toBe(true);
  });
});
