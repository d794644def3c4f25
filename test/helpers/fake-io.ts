import { PassThrough } from 'node:stream';
import type { CliIo } from '../../src/cli/command.ts';

/** A CliIo that collects what a command writes. */
export function fakeIo(
  env: NodeJS.ProcessEnv = {},
  cwd = process.cwd(),
): { io: CliIo; out: () => string; err: () => string } {
  const stdout = new PassThrough();
  const stderr = new PassThrough();
  let out = '';
  let err = '';
  stdout.on('data', (c: Buffer) => (out += c.toString()));
  stderr.on('data', (c: Buffer) => (err += c.toString()));
  return { io: { stdout, stderr, env, cwd, signal: new AbortController().signal }, out: () => out, err: () => err };
}

/** Runs the command line in-process, as a person would type `crm-ferry ARGS`, and collects what it printed. */
export async function runCli(
  argv: string[],
  options: { cwd?: string; env?: NodeJS.ProcessEnv } = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  const { main } = await import('../../src/cli/main.ts');
  const f = fakeIo(options.env ?? {}, options.cwd ?? process.cwd());
  const code = await main(argv, f.io);
  // Let the streams deliver what was written last.
  await new Promise((resolve) => setImmediate(resolve));
  return { code, stdout: f.out(), stderr: f.err() };
}
