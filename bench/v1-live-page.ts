// Memory of reading one huge page of a live legacy v1 account: a server on 127.0.0.1 answers the
// party list with a single page of `--mb` megabytes (every record at once, whatever the limit),
// generated as it is sent, and the reader reads it through to rows as an import does. Prints the
// peak RSS of the process (the server's share is the few kilobytes of the record it is writing).
// A page over the cap (512 MiB unless `--cap-mb`) ends with the error it gives.
// Not a test; run it with `npm run bench -- v1-live-page [--mb 200] [--format xml|json] [--spool]`.
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { Transport, V1Reader } from '../src/client/index.ts';
import { readV1Live } from '../src/sources/index.ts';

const { values } = parseArgs({
  options: {
    mb: { type: 'string' },
    format: { type: 'string' },
    'cap-mb': { type: 'string' },
    spool: { type: 'boolean' },
  },
  strict: false,
});
const megabytes = Number(values.mb ?? 200);
const format = values.format === 'json' ? 'json' : 'xml';
const target = megabytes * 1024 * 1024;

/** A record of about 1 KiB, its custom fields and tags nested (so it costs no request of its own). */
function record(id: number): string {
  const about = `Customer since ${2000 + (id % 24)}; ${'notes '.repeat(120)}`;
  return format === 'xml'
    ? `<organisation><id>${id}</id><name>Org ${id}</name><about>${about}</about><customFields/><tags/></organisation>`
    : `${id === 1 ? '' : ','}{"id":"${id}","type":"organisation","name":"Org ${id}","about":"${about}","customFields":[],"tags":[]}`;
}

const [open, close] = format === 'xml' ? ['<parties>', '</parties>'] : ['{"parties":[', ']}'];
const server = createServer((request, response) => {
  const start = Number(new URL(request.url ?? '/', 'http://x').searchParams.get('start'));
  response.writeHead(200, { 'content-type': `application/${format}` });
  if (start > 0) {
    response.end(`${open}${close}`);
    return;
  }
  let sent = 0;
  let id = 0;
  const pump = (): void => {
    while (sent < target) {
      const text = id === 0 ? open : record(id);
      id += 1;
      sent += Buffer.byteLength(text);
      if (!response.write(text)) {
        response.once('drain', pump);
        return;
      }
    }
    response.end(close);
  };
  response.on('close', () => response.removeAllListeners('drain'));
  pump();
});
await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

let peak = 0;
const sample = (): void => {
  peak = Math.max(peak, process.memoryUsage().rss);
};
const sampler = setInterval(sample, 20);
const spool = values.spool ? mkdtempSync(join(tmpdir(), 'ferry-bench-spool-')) : undefined;
const transport = new Transport({ baseUrl: url, auth: 'bench-token-0123456789', authScheme: 'basic' });
const limits =
  values['cap-mb'] === undefined ? {} : { limits: { maxAnswerBytes: Number(values['cap-mb']) * 1024 * 1024 } };
const reader = new V1Reader(transport, format, limits);
const started = performance.now();
let rows = 0;
let failure: string | null = null;
try {
  for await (const item of readV1Live(reader, { record: 'organisation', ...(spool ? { spool } : {}) })) {
    if (item.kind === 'row') rows += 1;
    if ((rows & 1023) === 0) sample();
  }
} catch (error) {
  failure = `${(error as { code?: string }).code ?? 'error'}: ${(error as Error).message}`;
} finally {
  clearInterval(sampler);
  sample();
  await transport.close();
  server.close();
  if (spool) rmSync(spool, { recursive: true, force: true });
}
console.log(
  JSON.stringify({
    format,
    pageMB: megabytes,
    spooled: spool !== undefined,
    rows,
    seconds: +((performance.now() - started) / 1000).toFixed(1),
    peakRssMB: Math.round(peak / (1024 * 1024)),
    failure,
  }),
);
