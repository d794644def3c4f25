import { PassThrough } from 'node:stream';
import type { CliIo } from '../../src/cli/command.ts';

/** A CliIo that collects what a command writes. */
export function fakeIo(env: NodeJS.ProcessEnv = {}, cwd = process.cwd()): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { io: { stdout, stderr, env, cwd, signal: new AbortController().signal }, out: () => out, err: () => err };
}
