import { createWriteStream, mkdtempSync, rmSync } from 'node:fs';
import { once } from 'node:events';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, Writable } from 'node:stream';
import { crc32 } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import yauzl from 'yauzl';
import { ZipWriter } from './zip.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-zip-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

interface Read {
  name: string;
  crc: number;
  size: number;
  text: string;
  modified: Date;
}

/** Every entry as yauzl reads it, with the CRC the central directory states. */
function readZip(file: string): Promise<Read[]> {
  return new Promise((resolve, reject) => {
    yauzl.open(file, { lazyEntries: true, strictFileNames: true, validateEntrySizes: true }, (error, zip) => {
      if (error || !zip) return reject(error);
      const entries: Read[] = [];
      zip.on('entry', (entry: yauzl.Entry) => {
        zip.openReadStream(entry, (err, stream) => {
          if (err || !stream) return reject(err);
          const chunks: Buffer[] = [];
          stream.on('data', (chunk: Buffer) => chunks.push(chunk));
          stream.on('error', reject);
          stream.on('end', () => {
            entries.push({
              name: entry.fileName,
              crc: entry.crc32,
              size: entry.uncompressedSize,
              text: Buffer.concat(chunks).toString('utf8'),
              modified: entry.getLastModDate(),
            });
            zip.readEntry();
          });
        });
      });
      zip.on('end', () => resolve(entries));
      zip.on('error', reject);
      zip.readEntry();
    });
  });
}

describe('ZipWriter', () => {
  it('writes streamed and whole entries that read back with their CRC-32, sizes, names and time', async () => {
    const file = join(dir, 'a.zip');
    const out = createWriteStream(file);
    const modified = new Date(2026, 10, 24, 13, 45, 30);
    const zip = new ZipWriter(out, modified);
    const sink = await zip.addStream('xl/worksheets/sheet1.xml');
    const pieces: string[] = [];
    // Enough text, in pieces of different sizes, to pass zlib's buffers several times over.
    for (let i = 0; i < 2_000; i += 1) {
      const piece = `<row r="${i}"><c><v>${i * 7919}</v></c><c t="inlineStr"><is><t>Ångström ${'x'.repeat(i % 300)}</t></is></c></row>`;
      pieces.push(piece);
      await sink.write(piece);
    }
    await sink.end();
    await zip.addBuffer('[Content_Types].xml', Buffer.from('<Types/>'));
    await zip.addBuffer('empty.xml', Buffer.alloc(0));
    await zip.finish();
    out.end();
    await once(out, 'close');

    const entries = await readZip(file);
    expect(entries.map((e) => e.name)).toEqual(['xl/worksheets/sheet1.xml', '[Content_Types].xml', 'empty.xml']);
    const sheet = pieces.join('');
    expect(entries[0]?.text).toBe(sheet);
    for (const entry of entries) {
      expect(entry.crc).toBe(crc32(Buffer.from(entry.text, 'utf8')));
      expect(entry.size).toBe(Buffer.byteLength(entry.text));
    }
    expect(entries[1]?.text).toBe('<Types/>');
    // Zip times have two-second steps, in local time.
    expect(entries[0]?.modified.getTime()).toBe(new Date(2026, 10, 24, 13, 45, 30).getTime());
  });

  it('fails, instead of waiting for ever, when its output was destroyed by an earlier error (a full disk)', async () => {
    const out = new Writable({ highWaterMark: 16, write: (_chunk, _encoding, done) => done() });
    out.on('error', () => undefined);
    const closed = new Promise((resolve) => out.on('close', resolve));
    out.destroy(new Error('ENOSPC: no space left on device'));
    await closed;
    const zip = new ZipWriter(out, new Date());
    await expect(zip.addBuffer('a.xml', Buffer.from('x'.repeat(100)))).rejects.toThrow(
      /closed before it took everything/,
    );
  }, 5_000);

  it('fails when its output closes while it waits for it to drain', async () => {
    const out = new Writable({ highWaterMark: 16, write: () => undefined });
    const zip = new ZipWriter(out, new Date());
    const adding = zip.addBuffer('a.xml', Buffer.from('y'.repeat(100)));
    out.destroy();
    await expect(adding).rejects.toThrow(/closed before it took everything/);
  }, 5_000);

  it('refuses a second entry while a streamed one is open', async () => {
    const out = new PassThrough();
    out.resume();
    const zip = new ZipWriter(out, new Date());
    await zip.addStream('one.xml');
    await expect(zip.addBuffer('two.xml', Buffer.from('x'))).rejects.toThrow(/still being written/);
    await expect(zip.finish()).rejects.toThrow(/still being written/);
  });
});
