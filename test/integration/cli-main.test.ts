import { spawn, spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin/crm-ferry.js');

describe('the command line itself', () => {
  it('--version prints the package version', async () => {
    const { version } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const { code, stdout } = await runCli(['--version']);
    expect(code).toBe(0);
    expect(stdout).toBe(`${version}\n`);
  });

  it.each([
    [['inpsect', 'x'], /unknown command: inpsect; did you mean `crm-ferry inspect`\?/],
    [['-V', 'inpsect'], /^unknown command: inpsect; did you mean `crm-ferry inspect`\?/],
    // The word after may be an option's value, a secret: never shown.
    [['exprot', 's3cret-value-1'], /^unknown command: exprot; did you mean `crm-ferry export`\?\n(?![\s\S]*s3cret)/],
    [['frobnicate', 's3cret-value-1'], /^unknown command: frobnicate\n(?![\s\S]*s3cret)/],
    [['auth', 'logni'], /did you mean `crm-ferry auth login`\?/],
    [['exprot', 'parties'], /did you mean `crm-ferry export`\?/],
    // Help asked for a command that does not exist is a mistake, not the overview with exit 0.
    [['help', 'exprot'], /^unknown command: exprot; did you mean `crm-ferry export`\?/],
    [['nonsense', '--help'], /^unknown command: nonsense\n/],
    [['auth', 'logni', '--help'], /^unknown command: auth logni; did you mean `crm-ferry auth login`\?/],
  ])('%j suggests the command meant, exit 2', async (args, message) => {
    const { code, stderr } = await runCli(args);
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
  });

  it.each([
    [['help']],
    [['--help']],
    [['help', 'export']],
    [['auth', '--help']],
    [['mapping', '-h']],
    [['auth', 'login', '--help']],
  ])('%j shows help, exit 0', async (args) => {
    const { code, stdout, stderr } = await runCli(args);
    expect(stderr).toBe('');
    expect(code).toBe(0);
    expect(stdout).toMatch(/^Usage: crm-ferry /);
  });

  it('an unknown option names the closest one, in one line, exit 2', async () => {
    const { code, stderr } = await runCli(['inspect', '--shet', '2', 'samples/contacts.xlsx'], { cwd: ROOT });
    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toBe('crm-ferry inspect: unknown option --shet; did you mean --sheet?');
    expect(stderr).not.toMatch(/positional argument|place it at the end/);
  });

  it('an option without its value says so', async () => {
    const { code, stderr } = await runCli(['validate', '--plan']);
    expect(code).toBe(2);
    expect(stderr.split('\n')[0]).toBe('crm-ferry validate: --plan needs a value');
  });

  it('a full disk on standard output is one clear line, no stack', () => {
    const result = spawnSync(process.execPath, [BIN, 'mapping', 'schema'], {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
      env: process.env,
    });
    expect(result.status).toBe(0);
    const full = spawnSync('sh', ['-c', `"${process.execPath}" "${BIN}" mapping schema > /dev/full`], {
      cwd: ROOT,
      encoding: 'utf8',
    });
    expect(full.status).toBe(2);
    expect(full.stderr.trim().split('\n')).toHaveLength(1);
    expect(full.stderr).toMatch(/cannot write to standard output: .*ENOSPC/);
  });
});

describe('piped into head', () => {
  let box: TestSandbox;
  beforeAll(async () => {
    box = await startTestSandbox();
    for (let i = 0; i < 400; i += 1)
      await box.v2('POST', '/parties', { party: { type: 'organisation', name: `Piped ${i}` } });
  });
  afterAll(async () => box?.close());

  it('api --paginate stops quietly when the reader goes away (EPIPE), exit 0', async () => {
    const child = spawn(
      process.execPath,
      [BIN, 'api', '/parties', '--paginate', '--base-url', box.url, '--token', box.token],
      { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
    );
    // Listen for the end from the start: a child that is quick can exit before its first line is read.
    const exited = new Promise<number | null>((done) => child.on('close', (c) => done(c)));
    let stderr = '';
    child.stderr.on('data', (chunk) => (stderr += chunk));
    // Read the first line, then close the pipe, as `| head -1` does.
    let lines = 0;
    await new Promise<void>((done) => {
      child.stdout.once('data', (chunk: Buffer) => {
        lines = chunk.toString('utf8').split('\n').length;
        child.stdout.destroy();
        done();
      });
      child.stdout.once('end', () => done());
    });
    const code = await exited;
    expect(lines, stderr).toBeGreaterThan(0);
    expect(code, stderr).toBe(0);
    expect(stderr).toBe('');
  }, 30_000);
});
