/**
 * Fills a sandbox with a data file with attachments up to a total size, closes it (the final
 * snapshot), starts it again on the same files and reads every attachment back: what "a state
 * holding gigabytes of attachments saves and reloads" means. The storage test runs it small,
 * `npm run bench -- sandbox-attachments` at 2 GiB.
 */
import { createHash, randomBytes } from 'node:crypto';
import { readdir, stat } from 'node:fs/promises';
import { performance } from 'node:perf_hooks';
import { request } from 'undici';
import { startSandbox, type RunningSandbox } from '../../src/sandbox/index.ts';

export interface FillOptions {
  /** The sandbox's data file; its folder is the caller's to remove. */
  file: string;
  totalBytes: number;
  /** Size of each attachment (the sandbox takes bodies up to 10 MiB). */
  eachBytes: number;
}

export interface FillFigures {
  attachments: number;
  totalMiB: number;
  /** Upload and attach, synced before each answer. */
  writeSeconds: number;
  /** close(): the final snapshot. */
  closeSeconds: number;
  /** Start on the saved files, up to listening. */
  reloadSeconds: number;
  /** Reading every attachment back and checking its bytes. */
  verifySeconds: number;
  /** The snapshot holds the records only; the bytes are files beside it. */
  snapshotBytes: number;
  blobFiles: number;
  /** Attachments missing or with other bytes after the reload (must be none). */
  problems: string[];
  peakRssMiB: number;
}

const TOKEN = 'attachment-fill-token';
const sha = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');

async function call(
  sandbox: RunningSandbox,
  method: 'GET' | 'POST',
  path: string,
  body?: Buffer | string,
  headers: Record<string, string> = {},
): Promise<{ status: number; bytes: Buffer }> {
  const answer = await request(`${sandbox.url}/api/v2${path}`, {
    method,
    headers: {
      authorization: `Bearer ${TOKEN}`,
      ...(typeof body === 'string' ? { 'content-type': 'application/json' } : {}),
      ...headers,
    },
    body: body ?? null,
  });
  return { status: answer.statusCode, bytes: Buffer.from(await answer.body.arrayBuffer()) };
}

const json = (bytes: Buffer): any => JSON.parse(bytes.toString('utf8'));

export async function fillWithAttachments(options: FillOptions): Promise<FillFigures> {
  const count = Math.ceil(options.totalBytes / options.eachBytes);
  const start = (): Promise<RunningSandbox> =>
    startSandbox({ port: 0, host: '127.0.0.1', tokens: [TOKEN], dataFile: options.file });
  let peakRss = process.memoryUsage().rss;
  const sample = (): void => void (peakRss = Math.max(peakRss, process.memoryUsage().rss));
  const expected: Array<{ id: number; sha: string }> = [];
  const problems: string[] = [];

  let sandbox = await start();
  const began = performance.now();
  const party = await call(
    sandbox,
    'POST',
    '/parties',
    JSON.stringify({ party: { type: 'organisation', name: 'Holds the files Ltd' } }),
  );
  if (party.status !== 201) throw new Error(`party create answered ${party.status}`);
  const partyId = json(party.bytes).party.id as number;
  for (let i = 0; i < count; i += 1) {
    const bytes = randomBytes(Math.min(options.eachBytes, options.totalBytes - i * options.eachBytes));
    const upload = await call(sandbox, 'POST', '/attachments/upload', bytes, {
      'content-type': 'application/octet-stream',
      'x-attachment-filename': `file-${i}.bin`,
    });
    if (upload.status !== 200 && upload.status !== 201)
      throw new Error(`upload ${i} answered ${upload.status}: ${upload.bytes.toString().slice(0, 200)}`);
    const token = json(upload.bytes).upload.token as string;
    const entry = await call(
      sandbox,
      'POST',
      '/entries',
      JSON.stringify({
        entry: { type: 'note', party: { id: partyId }, content: `file ${i}`, attachments: [{ token }] },
      }),
    );
    if (entry.status !== 201)
      throw new Error(`entry ${i} answered ${entry.status}: ${entry.bytes.toString().slice(0, 200)}`);
    expected.push({ id: json(entry.bytes).entry.attachments[0].id as number, sha: sha(bytes) });
    sample();
  }
  const written = performance.now();
  await sandbox.close();
  const closed = performance.now();
  sandbox = await start();
  const reloaded = performance.now();
  try {
    for (const item of expected) {
      const read = await call(sandbox, 'GET', `/attachments/${item.id}`);
      if (read.status !== 200) problems.push(`attachment ${item.id} answered ${read.status} after the reload`);
      else if (sha(read.bytes) !== item.sha) problems.push(`attachment ${item.id} came back with other bytes`);
      sample();
    }
  } finally {
    await sandbox.close();
  }
  const verified = performance.now();
  return {
    attachments: count,
    totalMiB: Math.round(options.totalBytes / 2 ** 20),
    writeSeconds: round((written - began) / 1000),
    closeSeconds: round((closed - written) / 1000),
    reloadSeconds: round((reloaded - closed) / 1000),
    verifySeconds: round((verified - reloaded) / 1000),
    snapshotBytes: (await stat(options.file)).size,
    blobFiles: (await readdir(`${options.file}.blobs`)).length,
    problems,
    peakRssMiB: Math.round(peakRss / 2 ** 20),
  };
}

const round = (value: number): number => Number(value.toFixed(2));
