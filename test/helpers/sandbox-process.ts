/**
 * A sandbox in a process of its own, for tests that kill it (`kill -9`) and start it again on the
 * same data file: `crm-ferry sandbox`, as a user runs it, started through bin/crm-ferry.js. That
 * runs the built bundle (a tenth of a second to start) unless a source is newer than the build, when
 * it runs the sources, so a test never tries a stale sandbox.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { createInterface } from 'node:readline';
import type { SandboxOptions } from '../../src/sandbox/index.ts';

const CLI = fileURLToPath(new URL('../../bin/crm-ferry.js', import.meta.url));

/** What a test may ask of the sandbox process: the command line's own options. */
export type SandboxProcessOptions = Pick<SandboxOptions, 'port' | 'seed' | 'faults' | 'clients' | 'tokenTtlSeconds'> & {
  /** More of the command's options, as written (`--log`, `--reset`). */
  extra?: string[];
};

export interface SandboxProcess {
  child: ChildProcess;
  url: string;
  /** What it printed so far. */
  stdout(): string;
  stderr(): string;
  /** Its exit code once it has ended (null after a signal). */
  exited: Promise<number | null>;
}

/** The command line of a sandbox keeping its state in `file`, accepting `token`. */
function argumentsOf(file: string, token: string, options: SandboxProcessOptions): string[] {
  const args = [CLI, 'sandbox', '--data', file, '--token', token, '--port', String(options.port ?? 0)];
  if (options.seed !== undefined) args.push('--seed', String(options.seed));
  const faults = options.faults;
  if (faults !== undefined && faults !== null) {
    const spec = [
      ['5xx', faults.errorRate],
      ['drop', faults.dropAfterWriteRate],
      ['latency', faults.latencyMs],
      ['jitter', faults.latencyJitterMs],
    ]
      .filter(([, value]) => value !== undefined)
      .map(([key, value]) => `${key}=${value}`);
    if (spec.length > 0) args.push('--faults', spec.join(','));
  }
  for (const client of options.clients ?? [])
    args.push('--client', `${client.clientId}:${client.clientSecret ?? ''}:${client.redirectUri}`);
  if (options.tokenTtlSeconds !== undefined) args.push('--token-ttl', String(options.tokenTtlSeconds));
  return [...args, ...(options.extra ?? [])];
}

/** Starts the sandbox and resolves once it listens, with its address. */
export async function startSandboxProcess(
  file: string,
  token: string,
  options: SandboxProcessOptions = {},
  cwd?: string,
): Promise<SandboxProcess> {
  const child = spawn(process.execPath, argumentsOf(file, token, options), {
    stdio: ['ignore', 'pipe', 'pipe'],
    ...(cwd === undefined ? {} : { cwd }),
  });
  let stdout = '';
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  // On 'close', not 'exit': by then everything it printed has been read.
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const lines = createInterface({ input: child.stdout! });
  const url = await new Promise<string>((resolve, reject) => {
    lines.on('line', (line) => {
      stdout += `${line}\n`;
      const listening = /^sandbox listening on (http:\/\/\S+)$/.exec(line);
      if (listening) resolve(listening[1] as string);
    });
    void exited.then((code) => reject(new Error(`the sandbox process exited (${code}) before listening: ${stderr}`)));
  });
  return { child, url, stdout: () => stdout, stderr: () => stderr, exited };
}

/** Kills the process as a crash would (SIGKILL), once it has exited. */
export async function killSandboxProcess(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGKILL');
  await exited;
}
