import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';

const bin = fileURLToPath(new URL('../../bin/crm-ferry.js', import.meta.url));

/** Starts `crm-ferry sandbox` as a person would and reads its first two lines. */
function startCli(args: string[]): Promise<{ lines: string[]; stop: () => Promise<number | null> }> {
  const child = spawn(process.execPath, [bin, 'sandbox', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start: ${err}`)), 15_000);
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const lines = out.split('\n');
      if (lines.length >= 3) {
        clearTimeout(timer);
        resolve({
          lines: lines.slice(0, 2),
          stop: () =>
            new Promise((done) => {
              child.once('exit', (code) => done(code));
              child.kill('SIGINT');
            }),
        });
      }
    });
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`sandbox exited with ${code}: ${err}`));
    });
  });
}

describe('crm-ferry sandbox (command line)', () => {
  it('prints its address and token, answers with that token, and stops on SIGINT', async () => {
    const { lines, stop } = await startCli(['--port', '0', '--token', 'cli-test-token-123']);
    const match = /^sandbox listening on (http:\/\/127\.0\.0\.1:\d+)$/.exec(lines[0] ?? '');
    expect(match).not.toBeNull();
    expect(lines[1]).toBe('token: cli-test-token-123');
    const base = match?.[1] as string;
    const ok = await request(`${base}/api/v2/jobs/none`, { headers: { authorization: 'Bearer cli-test-token-123' } });
    expect(ok.statusCode).toBe(404);
    await ok.body.dump();
    const refused = await request(`${base}/api/v2/jobs/none`, { headers: { authorization: 'Bearer wrong-token-000' } });
    expect(refused.statusCode).toBe(401);
    await refused.body.dump();
    expect(await stop()).toBe(0);
  });

  it('refuses a malformed flag with exit code 2', async () => {
    const child = spawn(process.execPath, [bin, 'sandbox', '--rate-limit', 'lots'], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let err = '';
    child.stderr.on('data', (chunk: Buffer) => (err += chunk.toString()));
    const code = await new Promise((done) => child.once('exit', done));
    expect(code).toBe(2);
    expect(err).toContain('error [USAGE]: --rate-limit takes N/h, N/min or N/s, got "lots"');
  });
});
