import { spawn } from 'node:child_process';
import { copyFileSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { call, startTestWorkbench, type TestWorkbench } from '../helpers/workbench.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-wb-untrusted-'));
const outside = mkdtempSync(join(tmpdir(), 'ferry-wb-elsewhere-'));
/** What the uploads under way may hold together in this test's workbench. */
const UPLOAD_LIMIT = 1000;
let box: TestSandbox;
let bench: TestWorkbench;

const MAPPING = (lookup: string): string =>
  `version: 1\nentity: party\nkey: "{{email}}"\nfields:\n  - {to: lastName, value: {column: last_name}}\n  - {to: jobTitle, value: {column: country, transform: [{lookup: {file: ${JSON.stringify(lookup)}, otherwise: keep}}]}}\n`;

/** An upload as the page sends it: the bytes as they come, with the cookie and the own origin. */
async function upload(
  name: string,
  body: string | AsyncIterable<Buffer>,
  length?: number,
): Promise<{ status: number; json: any }> {
  const headers: Record<string, string> = {
    cookie: bench.cookie,
    origin: bench.origin,
    'content-type': 'application/octet-stream',
  };
  if (length !== undefined) headers['content-length'] = String(length);
  const answer = await request(`${bench.origin}/api/upload?name=${encodeURIComponent(name)}`, {
    method: 'POST',
    headers,
    body: typeof body === 'string' ? body : Readable.from(body),
  });
  const text = await answer.body.text();
  return { status: answer.statusCode, json: JSON.parse(text) };
}

/** No answer shows a stack trace, where the project folder is on the server, or what the file outside holds. */
function expectNoServerDetails(text: string): void {
  expect(text).not.toMatch(/\n\s+at |\bat .*\.ts:\d+/);
  expect(text).not.toContain(dir);
  expect(text).not.toContain('not yours');
}

beforeAll(async () => {
  box = await startTestSandbox();
  copyFileSync(join(ROOT, 'samples/contacts.csv'), join(dir, 'contacts.csv'));
  writeFileSync(join(outside, 'secret.csv'), 'from,to\nGermany,not yours\n');
  writeFileSync(join(dir, 'countries.csv'), 'from,to\nGermany,DE\n');
  bench = await startTestWorkbench(box, dir, { uploadLimitBytes: UPLOAD_LIMIT });
});

afterAll(async () => {
  await bench?.stop();
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('the workbench keeps to one path rule for what a mapping or plan names', () => {
  it.each([join(outside, 'secret.csv'), `../${outside.split('/').at(-1)}/secret.csv`])(
    'refuses the lookup file %s in the preview and on saving, with PATH_UNSAFE',
    async (lookup) => {
      for (const [path, body] of [
        ['/api/map', { input: 'contacts.csv', yaml: MAPPING(lookup) }],
        ['/api/save', { input: 'contacts.csv', yaml: MAPPING(lookup) }],
      ] as const) {
        const answer = await call(bench, 'POST', path, { body });
        expect(answer.status, answer.text).toBe(403);
        expect(answer.json().error.code).toBe('PATH_UNSAFE');
        expect(answer.json().error.message).toContain("the page's mapping's lookup file");
        expectNoServerDetails(answer.text);
      }
      expect(existsSync(join(dir, 'contacts.mapping.yaml'))).toBe(false);
    },
  );

  it('reads a lookup file inside the folder', async () => {
    const answer = await call(bench, 'POST', '/api/map', {
      body: { input: 'contacts.csv', yaml: MAPPING('countries.csv') },
    });
    expect(answer.status, answer.text).toBe(200);
    expect(JSON.stringify(answer.json().preview)).toContain('jobTitle DE');
  });

  it.each([
    [
      'a lookup file outside',
      'version: 1\nsteps:\n  - {name: people, mapping: people.yaml, input: contacts.csv}\n',
      MAPPING(join(outside, 'secret.csv')),
    ],
    [
      'an input outside',
      `version: 1\nsteps:\n  - {name: people, mapping: people.yaml, input: ${join(outside, 'secret.csv')}}\n`,
      MAPPING('countries.csv'),
    ],
    [
      'a mapping outside',
      `version: 1\nsteps:\n  - {name: people, mapping: ../${outside.split('/').at(-1)}/people.yaml, input: contacts.csv}\n`,
      MAPPING('countries.csv'),
    ],
  ])('refuses a check and a run of a plan edited by hand naming %s', async (_what, plan, mapping) => {
    writeFileSync(join(dir, 'plan.yaml'), plan);
    writeFileSync(join(dir, 'people.yaml'), mapping);
    writeFileSync(join(outside, 'people.yaml'), mapping);
    try {
      for (const kind of ['check', 'run'] as const) {
        const started = await call(bench, 'POST', `/api/${kind}`, { body: {} });
        expect(started.status, started.text).toBe(200);
        await bench.jobs.settled();
        const job = bench.jobs.view().last[kind];
        expect(job?.state).toBe('failed');
        expect(job?.error?.code).toBe('PATH_UNSAFE');
        expectNoServerDetails(JSON.stringify(job));
      }
      expect(box.store.parties.size).toBe(0);
    } finally {
      rmSync(join(dir, 'plan.yaml'));
      rmSync(join(dir, 'people.yaml'));
    }
  });
});

describe('the workbench answers without stacks or server paths', () => {
  it('answers a download of a missing file 404 with a code', async () => {
    const answer = await call(bench, 'GET', '/api/download?file=no-such.csv');
    expect(answer.status).toBe(404);
    expect(answer.json().error.code).toBe('SOURCE_NOT_FOUND');
    expectNoServerDetails(answer.text);
  });

  it('says a path out of the folder without naming the folder', async () => {
    const answer = await call(bench, 'GET', '/api/download?file=../../etc/passwd');
    expect(answer.status).toBe(403);
    expect(answer.json().error.message).toContain('the project folder');
    expectNoServerDetails(answer.text);
  });
});

describe('uploads', () => {
  it.each(['two\nlines.csv', '<img src=x onerror=alert(1)>.csv', 'quote".csv', 'tab\t.csv', 'bidi\u202Egnp.csv'])(
    'refuses the name %j',
    async (name) => {
      const answer = await upload(name, 'a,b\n1,2\n');
      expect(answer.status).toBe(400);
      expect(answer.json.error.code).toBe('USAGE');
      expect(answer.json.error.message).toMatch(/control character|plain name/);
      expect(existsSync(join(dir, name))).toBe(false);
    },
  );

  it('streams an upload to its file', async () => {
    const answer = await upload('added (1).csv', 'a,b\n1,2\n');
    expect(answer.status).toBe(200);
    expect(readFileSync(join(dir, 'added (1).csv'), 'utf8')).toBe('a,b\n1,2\n');
  });

  it('holds all uploads under way to one limit together, and frees it when they end', async () => {
    let letGo: () => void = () => {};
    const held = new Promise<void>((done) => {
      letGo = done;
    });
    let firstSent: () => void = () => {};
    const sent = new Promise<void>((done) => {
      firstSent = done;
    });
    async function* slow(): AsyncIterable<Buffer> {
      yield Buffer.from('a,b\n'.padEnd(400, 'x'));
      firstSent();
      await held;
      yield Buffer.alloc(400, 0x79);
    }
    const first = upload('first.csv', slow(), 800);
    await sent;
    // 800 bytes under way: another 800 would pass the 1000 together.
    const second = await upload('second.csv', 'b'.repeat(800), 800);
    expect(second.status).toBe(400);
    expect(second.json.error.message).toContain('the uploads under way would pass 1000 bytes together');
    expect(existsSync(join(dir, 'second.csv'))).toBe(false);
    letGo();
    expect((await first).status).toBe(200);
    // Once the first is in, the limit is free again.
    expect((await upload('third.csv', 'c'.repeat(800), 800)).status).toBe(200);
  });

  it('cuts off an upload that sends more than the limit without saying its length, and keeps nothing of it', async () => {
    async function* endless(): AsyncIterable<Buffer> {
      for (let i = 0; i < 50; i += 1) yield Buffer.alloc(100, 0x7a);
    }
    const answer = await upload('big.csv', endless());
    expect(answer.status).toBe(400);
    expect(existsSync(join(dir, 'big.csv'))).toBe(false);
  });
});

describe('crm-ferry workbench on a port in use', () => {
  it('exits 2 (USAGE) with one line saying so, as the sandbox does', async () => {
    const taken = createServer();
    await new Promise<void>((done) => taken.listen(0, '127.0.0.1', done));
    const port = (taken.address() as { port: number }).port;
    try {
      const child = spawn(
        process.execPath,
        [join(ROOT, 'bin/crm-ferry.js'), 'workbench', dir, '--port', String(port)],
        {
          env: { ...process.env, CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stderr = '';
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const code = await new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
      expect(code, stderr).toBe(2);
      expect(stderr).toContain(`port ${port} on 127.0.0.1 is in use; give another --port`);
      expect(stderr).not.toMatch(/internal error|\n\s+at /);
    } finally {
      await new Promise((done) => taken.close(done));
    }
  }, 60_000);
});
