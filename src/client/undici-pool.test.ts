import { spawnSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { Pool } from './undici-pool.ts';

const HERE = fileURLToPath(new URL('./undici-pool.ts', import.meta.url));

describe('undici-pool', () => {
  it('is the Pool that the undici door exports (the file has not moved)', async () => {
    const undici = await import('undici');
    expect(Pool).toBe(undici.Pool);
  });

  it('streams an answer in a process that never loads the door (as the command line does)', () => {
    // This test file loads the door, which gives every dispatcher request(): a child is the only
    // place to see the Pool as the command line has it.
    const script = `
      import { createServer } from 'node:http';
      import { Pool, streamRequest } from ${JSON.stringify(HERE)};
      const server = createServer((_req, res) => res.end('streamed'));
      await new Promise((done) => server.listen(0, '127.0.0.1', done));
      const pool = new Pool('http://127.0.0.1:' + server.address().port);
      const answer = await streamRequest(pool, { method: 'GET', path: '/' });
      console.log(typeof pool.request, answer.statusCode, await answer.body.text());
      await pool.close();
      server.close();`;
    const child = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      encoding: 'utf8',
      timeout: 60_000,
    });
    expect(child.stderr).toBe('');
    expect(child.stdout.trim()).toBe('undefined 200 streamed');
  });
});
