import { copyFileSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';
import { call, startTestWorkbench, type TestWorkbench } from '../helpers/workbench.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-wb-security-'));
const outside = mkdtempSync(join(tmpdir(), 'ferry-wb-outside-'));
let box: TestSandbox;
let bench: TestWorkbench;

beforeAll(async () => {
  box = await startTestSandbox();
  copyFileSync(join(ROOT, 'samples/contacts.csv'), join(dir, 'contacts.csv'));
  writeFileSync(join(outside, 'secret.csv'), 'name\nnot yours\n');
  // A link planted in the folder, to a file outside it.
  symlinkSync(join(outside, 'secret.csv'), join(dir, 'planted.csv'));
  bench = await startTestWorkbench(box, dir);
});

afterAll(async () => {
  await bench?.stop();
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
  rmSync(outside, { recursive: true, force: true });
});

describe('the workbench refuses what is not its own page', () => {
  it('listens on 127.0.0.1 only, and prints one URL whose secret is traded for an HttpOnly SameSite=Strict cookie', async () => {
    expect((bench.app.server.address() as { address: string }).address).toBe('127.0.0.1');
    expect(bench.url).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/\?session=[\w-]{43}$/);
    const answer = await request(bench.url.replace('/?', '/files?'));
    expect(answer.statusCode).toBe(303);
    expect(answer.headers.location).toBe('/files');
    expect(String(answer.headers['set-cookie'])).toMatch(
      /^crm-ferry-workbench-\d+=[\w-]{43}; HttpOnly; SameSite=Strict; Path=\/$/,
    );
    // The cookie is not the URL's secret: the secret is never stored in the browser.
    expect(String(answer.headers['set-cookie'])).not.toContain(new URL(bench.url).searchParams.get('session'));
    await answer.body.dump();
  });

  it('refuses a request without the session, and a wrong secret', async () => {
    for (const path of ['/', '/files', '/api/files', '/api/session', '/assets/app.js']) {
      const answer = await call(bench, 'GET', path, { headers: { cookie: undefined } });
      expect(answer.status, path).toBe(401);
      expect(answer.text).toContain('no session');
    }
    expect(
      (await call(bench, 'GET', '/api/files', { headers: { cookie: `${bench.cookie.split('=')[0]}=wrong` } })).status,
    ).toBe(401);
    expect((await call(bench, 'GET', '/?session=wrong', { headers: { cookie: undefined } })).status).toBe(403);
    // With the session, the same reads are answered.
    expect((await call(bench, 'GET', '/api/files')).status).toBe(200);
  });

  it('refuses a foreign Host (DNS rebinding), even with the session', async () => {
    const answer = await call(bench, 'GET', '/api/files', { headers: { host: `evil.example:${bench.port}` } });
    expect(answer.status).toBe(421);
    expect(answer.text).toContain('evil.example');
    expect((await call(bench, 'GET', '/api/files', { headers: { host: `localhost:${bench.port}` } })).status).toBe(200);
  });

  it('refuses a cross-origin POST, and one without an origin', async () => {
    const map = { input: 'contacts.csv' };
    const foreign = await call(bench, 'POST', '/api/map', { body: map, headers: { origin: 'http://evil.example' } });
    expect(foreign.status).toBe(403);
    expect(foreign.text).toContain('evil.example');
    expect((await call(bench, 'POST', '/api/run', { body: {}, headers: { origin: undefined } })).status).toBe(403);
    expect(
      (await call(bench, 'POST', '/api/map', { body: map, headers: { 'sec-fetch-site': 'cross-site' } })).status,
    ).toBe(403);
    // The same request from the workbench's own page goes through.
    expect((await call(bench, 'POST', '/api/map', { body: map })).status).toBe(200);
  });

  it('answers a malformed map request with what is wrong, not a crash', async () => {
    const bad = [
      await call(bench, 'POST', '/api/map', { body: { input: 'contacts.csv', yaml: { version: 1 } } }),
      await call(bench, 'POST', '/api/map', {
        body: { input: 'contacts.csv', yaml: 'version: 1', edit: { kind: 'drop-table' } },
      }),
      await call(bench, 'POST', '/api/map', { body: { yaml: 'version: 1' } }),
    ];
    expect(bad.map((answer) => answer.status)).toEqual([400, 400, 400]);
    expect(bad.map((answer) => answer.json().error.message)).toEqual([
      'the mapping is sent as text',
      expect.stringContaining('does not know'),
      'the input is missing',
    ]);
  });

  it('refuses every path out of the folder, and through a link', async () => {
    const refused = [
      await call(bench, 'GET', '/api/inspect?file=../etc/passwd'),
      await call(bench, 'GET', '/api/inspect?file=%2Fetc%2Fpasswd'),
      await call(bench, 'GET', '/api/download?file=../../etc/passwd'),
      await call(bench, 'GET', '/api/download?file=planted.csv'),
      await call(bench, 'GET', '/api/inspect?file=planted.csv'),
      await call(bench, 'POST', '/api/map', { body: { input: '../secret.csv' } }),
      await call(bench, 'POST', '/api/save', { body: { input: 'contacts.csv/../../x.csv', yaml: 'version: 1' } }),
      await call(bench, 'POST', '/api/upload?name=..%2Fx.csv', {
        body: undefined,
        headers: { 'content-type': 'application/octet-stream' },
      }),
    ];
    for (const answer of refused) {
      expect([400, 403], answer.text).toContain(answer.status);
      expect(answer.text).not.toContain('not yours');
    }
    expect(refused.filter((a) => a.status === 403).length).toBeGreaterThanOrEqual(6);
    expect(refused[0]?.json().error.code).toBe('PATH_UNSAFE');
  });

  it('answers with a policy that loads nothing from elsewhere, and shows the account, never its token', async () => {
    const page = await call(bench, 'GET', '/files');
    expect(page.status).toBe(200);
    const policy = String(page.headers['content-security-policy']);
    expect(policy).toContain("default-src 'none'");
    expect(policy).toContain("script-src 'self'");
    expect(policy).toContain("connect-src 'self'");
    expect(policy).not.toMatch(/https?:|\*/);
    expect(page.text).not.toMatch(/<script(?![^>]*src="\/assets\/)/);
    const session = await call(bench, 'GET', '/api/session');
    expect(session.json().account.address).toBe(box.url);
    expect(session.text).not.toContain(box.token);
  });
});
