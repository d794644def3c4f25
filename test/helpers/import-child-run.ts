import { spawn } from 'node:child_process';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const CHILD = join(ROOT, 'test/helpers/import-child.ts');

/**
 * Runs one import in a child (import-child.ts, with its arguments); kills it with SIGKILL
 * `killAfterMs` after its first row is written, unless it ends first.
 */
export function runImportChild(
  args: string[],
  killAfterMs: number | null,
): Promise<{ code: number | null; killed: boolean; out: string }> {
  return new Promise((done) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let killed = false;
    let timer: NodeJS.Timeout | null = null;
    child.stdout.on('data', (chunk) => {
      out += chunk;
      if (killAfterMs !== null && timer === null && out.includes('writing\n')) {
        timer = setTimeout(() => {
          killed = true;
          child.kill('SIGKILL');
        }, killAfterMs);
      }
    });
    child.stderr.on('data', (chunk) => (out += chunk));
    child.on('exit', (code) => {
      if (timer) clearTimeout(timer);
      done({ code, killed, out });
    });
  });
}
