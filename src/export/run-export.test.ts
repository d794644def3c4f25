import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { FerryError } from '../errors/index.ts';
import { openWriter } from './writers.ts';

describe('the export as a library', () => {
  it('reads nothing of the process it runs in: run-export.ts names no `process`', () => {
    const source = readFileSync(new URL('./run-export.ts', import.meta.url), 'utf8')
      .replace(/\/\*[\s\S]*?\*\//g, '')
      .replace(/\/\/.*$/gm, '');
    expect(source).not.toMatch(/\bprocess\b/);
  });

  it.each(['csv', 'jsonl'] as const)(
    'a %s export to standard output without the stream to write to is refused as a bug',
    (format) => {
      let error: unknown = null;
      try {
        openWriter(format, null, ['id'], { plain: false, raw: false });
      } catch (e) {
        error = e;
      }
      expect(error).toBeInstanceOf(FerryError);
      expect((error as FerryError).code).toBe('INTERNAL');
      expect((error as FerryError).message).toContain('needs the stream to write to');
    },
  );
});
