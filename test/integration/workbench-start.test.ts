import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

/**
 * The workbench asks the account for its users as it starts. An account that takes the request
 * and never answers must not hold the command: Ctrl-C stops it at once (exit 130), rather than
 * after the 65 minutes a run may wait.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-wb-start-'));
let silent: Server;
const asked: IncomingMessage[] = [];
const waiting: Array<() => void> = [];

beforeAll(async () => {
  silent = createServer((request) => {
    asked.push(request);
    for (const wake of waiting.splice(0)) wake();
  });
  await new Promise<void>((done) => silent.listen(0, '127.0.0.1', done));
});

afterAll(async () => {
  silent.closeAllConnections();
  await new Promise((done) => silent.close(done));
  rmSync(dir, { recursive: true, force: true });
});

describe('crm-ferry workbench, an account that does not answer', () => {
  it('stops on Ctrl-C while it waits for the account, exit 130', async () => {
    const url = `http://127.0.0.1:${(silent.address() as AddressInfo).port}`;
    const child = spawn(process.execPath, [join(ROOT, 'bin/crm-ferry.js'), 'workbench', dir], {
      env: { ...process.env, CRM_FERRY_BASE_URL: url, CRM_FERRY_TOKEN: 'silent-token-1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const ended = new Promise<number | null>((done) => child.on('exit', (code) => done(code)));
    // The account has the request: the workbench now waits for it.
    while (asked.length === 0) await new Promise<void>((wake) => waiting.push(wake));
    expect(asked[0]?.url).toMatch(/\/users/);
    child.kill('SIGINT');
    expect(await ended).toBe(130);
  }, 60_000);
});
