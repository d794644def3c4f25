import { spawnSync } from 'node:child_process';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin/crm-ferry.js');

/** A folder with a `crm-ferry` on it, as `npm install -g` would leave one, for the shell to call. */
const dir = mkdtempSync(join(tmpdir(), 'ferry-completion-'));
writeFileSync(join(dir, 'crm-ferry'), `#!/bin/sh\nexec "${process.execPath}" "${BIN}" "$@"\n`);
chmodSync(join(dir, 'crm-ferry'), 0o755);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('crm-ferry completion', () => {
  it.each([
    [['crm-ferry', 'insp'], 'inspect'],
    [['crm-ferry', 'auth', 'lo'], 'login'],
    [['crm-ferry', 'inspect', '--sh'], '--sheet'],
    [['crm-ferry', 'mapping', 'init', '--ent'], '--entity'],
    [['crm-ferry', 'export', 'parties', '--ord'], '--order-by'],
  ])('the words %j complete to %s', async (words, expected) => {
    const { code, stdout } = await runCli(['--get-yargs-completions', ...words], { env: {} });
    expect(code).toBe(0);
    expect(stdout.split('\n')).toContain(expected);
  });

  it.each([
    [['crm-ferry', 'export', '--out', '']],
    [['crm-ferry', 'inspect', '']],
    [['crm-ferry', 'mapping', 'init', 'samples/con']],
    [['crm-ferry', 'api', '/parties', '--token', '']],
  ])('the words %j are for the shell to complete (file names): nothing from crm-ferry', async (words) => {
    const { code, stdout } = await runCli(['--get-yargs-completions', ...words], { env: {} });
    expect(code).toBe(0);
    expect(stdout.trim()).toBe('');
  });

  it('options are offered for a word starting with -, and after a boolean option', async () => {
    expect(
      (await runCli(['--get-yargs-completions', 'crm-ferry', 'inspect', '-'], { env: {} })).stdout.split('\n'),
    ).toContain('--sheet');
    expect(
      (await runCli(['--get-yargs-completions', 'crm-ferry', 'export', '--plain', '--'], { env: {} })).stdout.split(
        '\n',
      ),
    ).toContain('--out');
  });

  it('prints the script of the shell asked for, or of SHELL', async () => {
    expect((await runCli(['completion', 'bash'])).stdout).toMatch(
      /complete -o bashdefault -o default -F _crm_ferry_completions crm-ferry/,
    );
    expect((await runCli(['completion', 'zsh'])).stdout).toMatch(
      /^#compdef crm-ferry\n[\s\S]*compdef _crm_ferry_completions crm-ferry/,
    );
    expect((await runCli(['completion'], { env: { SHELL: '/usr/bin/zsh' } })).stdout).toMatch(/^#compdef crm-ferry/);
    const fish = await runCli(['completion', 'fish']);
    expect(fish.code).toBe(2);
    expect(fish.stderr).toMatch(/completion knows bash and zsh, got "fish"/);
  });

  it('bash, with the script sourced, completes a command and an option', () => {
    const script = spawnSync(process.execPath, [BIN, 'completion', 'bash'], { encoding: 'utf8' }).stdout;
    writeFileSync(join(dir, 'completion.bash'), script);
    const ask = (line: string): string[] => {
      const words = line.split(' ');
      const run = spawnSync(
        'bash',
        [
          '-c',
          `source "${join(dir, 'completion.bash')}"; COMP_WORDS=(${words.map((w) => `'${w}'`).join(' ')}); COMP_CWORD=${words.length - 1}; _crm_ferry_completions; printf '%s\\n' "\${COMPREPLY[@]}"`,
        ],
        {
          encoding: 'utf8',
          env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` },
        },
      );
      expect(run.stderr).toBe('');
      return run.stdout.trim().split('\n');
    };
    expect(ask('crm-ferry insp')).toEqual(['inspect']);
    expect(ask('crm-ferry sandbox --rate')).toEqual(['--rate-limit']);
    // Nothing from crm-ferry: bash's own file names (-o default), not the options.
    expect(ask('crm-ferry inspect ')).toEqual(['']);
  }, 30_000);

  // zsh's completion system needs a terminal; _describe and compdef stand in for it, so the test
  // checks what the script hands over and reads back. Machines without zsh skip it.
  it.skipIf(spawnSync('zsh', ['-c', 'true']).status !== 0)(
    'zsh, with the script sourced, offers a command and an option with their descriptions',
    () => {
      const script = spawnSync(process.execPath, [BIN, 'completion', 'zsh'], { encoding: 'utf8' }).stdout;
      writeFileSync(join(dir, 'completion.zsh'), script);
      const ask = (line: string): string[] => {
        const words = line.split(' ');
        const run = spawnSync(
          'zsh',
          [
            '-c',
            `compdef() { :; }; _describe() { print -l -- "\${(@P)2}"; }; _files() { print -- FILES; }; source "${join(dir, 'completion.zsh')}"; words=(${words.map((w) => `'${w}'`).join(' ')}); CURRENT=${words.length}; _crm_ferry_completions`,
          ],
          { encoding: 'utf8', env: { ...process.env, PATH: `${dir}:${process.env.PATH ?? ''}` } },
        );
        expect(run.stderr).toBe('');
        return run.stdout.trim().split('\n');
      };
      expect(ask('crm-ferry insp')).toContain('inspect:show the format, columns, samples and errors of a source file');
      expect(ask('crm-ferry sandbox --ra')).toContain(
        '--rate-limit:<N/h|N/min|N/s> limit requests per user, like the service (default off)',
      );
      expect(ask('crm-ferry export --out ')).toEqual(['FILES']);
    },
    30_000,
  );

  it('zsh gets each command with its summary', () => {
    const run = spawnSync(process.execPath, [BIN, '--get-yargs-completions', 'crm-ferry', 'insp'], {
      encoding: 'utf8',
      env: { ...process.env, SHELL: '/bin/zsh' },
    });
    expect(run.stdout).toMatch(/^inspect:show the format, columns, samples and errors of a source file$/m);
  }, 30_000);
});
