import { Worker } from 'node:worker_threads';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../../src/client/client.ts';
import { partySchema } from '../../../src/client/schemas.ts';

// A service of three pages in a thread of its own, which marks in shared memory the page each
// request asked for: the test can then wait for a request while holding its own thread, as an
// export does while it writes a page.
const SERVICE = `
const { parentPort, workerData } = require('node:worker_threads');
const http = require('node:http');
const asked = new Int32Array(workerData);
const server = http.createServer((request, response) => {
  const page = Number(new URL(request.url, 'http://127.0.0.1').searchParams.get('page') ?? '1');
  Atomics.store(asked, 0, page);
  Atomics.notify(asked, 0);
  const headers = { 'content-type': 'application/json' };
  if (page < 3) headers.link = '<http://127.0.0.1:' + server.address().port + '/api/v2/parties?page=' + (page + 1) + '&perPage=100>; rel="next"';
  response.writeHead(200, headers);
  response.end(JSON.stringify({ parties: [{ id: page, type: 'person', firstName: 'P' + page }] }));
});
// The connections the first read opens stay open for the second, however slow the machine.
server.keepAliveTimeout = 120000;
server.listen(0, '127.0.0.1', () => parentPort.postMessage(server.address().port));
parentPort.on('message', () => server.close(() => parentPort.close()));
`;

describe('CrmClient.pages', () => {
  const asked = new Int32Array(new SharedArrayBuffer(4));
  let worker: Worker;
  let client: CrmClient;
  beforeAll(async () => {
    worker = new Worker(SERVICE, { eval: true, workerData: asked.buffer });
    const port = await new Promise<number>((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    client = new CrmClient({ baseUrl: `http://127.0.0.1:${port}`, auth: 'tok-123456789' });
  });
  afterAll(async () => {
    await client.close();
    worker.postMessage('close');
    await new Promise((resolve) => worker.once('exit', resolve));
  });

  it('has asked for the next page before the caller works through the current one', async () => {
    // A first read opens the connections: a new one opens as the kernel lets it, and the
    // check below is for the connections a long read goes on with.
    const first: unknown[] = [];
    for await (const page of client.pages('/parties', 'parties', partySchema)) first.push(...page.records);
    expect(first).toHaveLength(3);
    const seen: number[] = [];
    for await (const page of client.pages('/parties', 'parties', partySchema)) {
      const id = page.records[0]?.id as number;
      seen.push(id);
      if (page.next === null) continue;
      // The caller's work, without a turn of the event loop (a page written to a file): the
      // service gets the next page's request meanwhile. The wait ends when it does; its bound
      // is only there for a client that would send the request after the work, which fails.
      const outcome = Atomics.wait(asked, 0, id, 10_000);
      expect(outcome).not.toBe('timed-out');
      expect(Atomics.load(asked, 0)).toBe(id + 1);
    }
    expect(seen).toEqual([1, 2, 3]);
  });
});
