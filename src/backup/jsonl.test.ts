import { mkdtemp, open, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { readJsonLines } from './jsonl.ts';

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'jsonl-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function read(text: string | Buffer, maxLineBytes?: number): Promise<Array<{ line: number; value: unknown }>> {
  const file = join(dir, 'f.jsonl');
  await writeFile(file, text);
  const out = [];
  for await (const line of readJsonLines({ file, ...(maxLineBytes ? { maxLineBytes } : {}) })) out.push(line);
  return out;
}

describe('readJsonLines', () => {
  it.each([
    [
      'lines with their numbers, blank ones skipped',
      '{"a":1}\n\n{"b":2}\n',
      [
        { line: 1, value: { a: 1 } },
        { line: 3, value: { b: 2 } },
      ],
    ],
    [
      'a last line without a newline',
      '{"a":1}\n{"b":2}',
      [
        { line: 1, value: { a: 1 } },
        { line: 2, value: { b: 2 } },
      ],
    ],
    ['an empty file', '', []],
    ['characters of several bytes', '{"n":"é€😀"}\n', [{ line: 1, value: { n: 'é€😀' } }]],
  ])('%s', async (_name, text, expected) => {
    expect(await read(text)).toEqual(expected);
  });

  it('reads lines that cross the read buffer, whole', async () => {
    const long = 'x'.repeat(3 * 1024 * 1024);
    expect(await read(`{"a":"${long}"}\n{"b":1}\n`)).toEqual([
      { line: 1, value: { a: long } },
      { line: 2, value: { b: 1 } },
    ]);
  });

  it('refuses a line that is not JSON, naming the file and line', async () => {
    await expect(read('{"a":1}\n{oops\n')).rejects.toMatchObject({
      code: 'SOURCE_UNREADABLE',
      message: expect.stringMatching(/f\.jsonl, line 2: not JSON/),
      location: { line: 2 },
    });
  });

  it('refuses a line over the cap before it becomes a string, naming the line', async () => {
    await expect(read(`{"a":1}\n{"b":"${'x'.repeat(5000)}"}\n`, 1000)).rejects.toMatchObject({
      code: 'SOURCE_UNREADABLE',
      message: expect.stringMatching(/line 2: a line longer than 1,000 bytes/),
      location: { line: 2 },
    });
    // A last line without a newline is measured too.
    await expect(read(`{"a":1}\n${'y'.repeat(5000)}`, 1000)).rejects.toMatchObject({ location: { line: 2 } });
  });

  it('a 2 GB line (sparse file) is a clear error, not RangeError, and reads at most the cap', async () => {
    const file = join(dir, 'huge.jsonl');
    const handle = await open(file, 'w');
    await handle.write('{"a":"');
    await handle.truncate(2 * 1024 ** 3 + 10);
    await handle.close();
    const lines = readJsonLines({ file, maxLineBytes: 8 * 1024 * 1024 });
    await expect(lines.next()).rejects.toMatchObject({ code: 'SOURCE_UNREADABLE', location: { file, line: 1 } });
  });
});
