import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-cli-signals-'));
/** How long a stopped run may take to end: docs/errors.md promises a few seconds. */
const STOP_LIMIT_MS = 5000;

/** A service that answers every request the same bad way, and says when it has been asked `times` times. */
async function badService(
  answer: { status: number; headers?: Record<string, string> } | 'never',
): Promise<{ url: string; asked: (times: number) => Promise<void>; close: () => Promise<void> }> {
  let count = 0;
  const waiting: Array<{ times: number; done: () => void }> = [];
  const server: Server = createServer((request, response) => {
    request.resume();
    count += 1;
    // 'never': the request is taken and never answered (a service that hangs mid-read).
    if (answer !== 'never') {
      response.writeHead(answer.status, { 'content-type': 'application/json', ...(answer.headers ?? {}) });
      response.end('{"message":"not now"}');
    }
    for (const wait of waiting.filter((w) => count >= w.times)) {
      waiting.splice(waiting.indexOf(wait), 1);
      wait.done();
    }
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    asked: (times) => (count >= times ? Promise.resolve() : new Promise((done) => waiting.push({ times, done }))),
    close: () =>
      new Promise((done) => {
        server.closeAllConnections();
        server.close(() => done());
      }),
  };
}

beforeAll(() => {
  writeFileSync(
    join(dir, 'people.yaml'),
    'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - {to: lastName, value: {column: last}}\n',
  );
  writeFileSync(join(dir, 'people.csv'), 'id,last\n1,Lovelace\n2,Hopper\n');
  writeFileSync(
    join(dir, 'plan.yaml'),
    'version: 1\nsteps:\n  - { name: people, mapping: people.yaml, input: people.csv }\n',
  );
});

afterAll(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe('crm-ferry run ends within seconds of a signal, whatever it is waiting for', () => {
  it.each([
    ['retrying after 500s', { status: 500 }, 'SIGTERM', 143],
    ['retrying after 500s', { status: 503 }, 'SIGINT', 130],
    ['waiting out a rate limit', { status: 429, headers: { 'retry-after': '3000' } }, 'SIGTERM', 143],
    ['waiting out a rate limit', { status: 429, headers: { 'retry-after': '3000' } }, 'SIGINT', 130],
    ['reading from a service that does not answer', 'never', 'SIGTERM', 143],
  ] as const)(
    '%s: %s (%s) exits %i',
    async (_state, answer, signal, exitCode) => {
      const service = await badService(answer);
      try {
        const child = spawn(
          process.execPath,
          [
            join(ROOT, 'bin/crm-ferry.js'),
            'run',
            join(dir, 'plan.yaml'),
            '--state-dir',
            join(dir, `${signal}-${answer === 'never' ? 'never' : answer.status}-state`),
          ],
          {
            cwd: dir,
            env: { ...process.env, CRM_FERRY_BASE_URL: service.url, CRM_FERRY_TOKEN: 'signals-test-token' },
            stdio: ['ignore', 'pipe', 'pipe'],
          },
        );
        let stderr = '';
        child.stderr.on('data', (chunk) => (stderr += chunk));
        const exited = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
        // Asked once: the run now waits (a back-off or the rate limit's pause) before asking again.
        await service.asked(1);
        child.kill(signal);
        let killed = false;
        const stopped = Date.now();
        const limit = setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, STOP_LIMIT_MS);
        const code = await exited;
        clearTimeout(limit);
        expect({ killed, afterMs: killed ? Date.now() - stopped : 'in time' }).toEqual({
          killed: false,
          afterMs: 'in time',
        });
        expect(code, stderr).toBe(exitCode);
        expect(stderr).not.toMatch(/internal error|\n\s+at /);
      } finally {
        await service.close();
      }
    },
    60_000,
  );
});
