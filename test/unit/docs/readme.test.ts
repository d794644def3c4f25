import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { commands } from '../../../src/cli/commands.ts';
import { ERROR_CODES } from '../../../src/errors/index.ts';
import { VERIFY_COUNTS } from '../../../src/report/build.ts';

const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
const page = (name: string): Promise<string> => readFile(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');
const errors = await page('errors.md');
const sandboxPage = await page('sandbox.md');
const pages = (await readdir(new URL('../../../docs/', import.meta.url))).filter((f) => f.endsWith('.md')).sort();

describe('README stays true to the code', () => {
  it.each(ERROR_CODES)('documents the error code %s in docs/errors.md', (code) => {
    expect(errors).toMatch(new RegExp(`^\\| \`${code}\` \\|`, 'm'));
  });

  it.each(commands.map((c) => c.name))('documents the command %s', (name) => {
    const [first, second] = name.split(' ');
    expect(readme).toContain(second ? `crm-ferry ${first} ${second}` : `crm-ferry ${first}`);
  });

  it('documents every sandbox flag in docs/sandbox.md', async () => {
    const sandbox = await commands.find((c) => c.name === 'sandbox')?.load();
    expect(Object.keys(sandbox?.options ?? {}).length).toBeGreaterThan(5);
    for (const flag of Object.keys(sandbox?.options ?? {})) expect(sandboxPage).toContain(`\`--${flag}`);
  });

  it('links every page of docs/, and every docs link leads to a page', async () => {
    const pages = (await readdir(new URL('../../../docs/', import.meta.url))).filter((f) => f.endsWith('.md')).sort();
    const linked = [...readme.matchAll(/\]\(docs\/([^)#]+)(#[^)]*)?\)/g)].map((m) => m[1] as string);
    expect([...new Set(linked)].sort()).toEqual(pages);
    for (const name of pages) {
      for (const match of (await page(name)).matchAll(/\]\(([a-z0-9-]+\.md)(#[^)]*)?\)/g))
        expect(pages).toContain(match[1]);
    }
  });

  it("names every function and class of the module's doors in docs/library.md", async () => {
    const library = await page('library.md');
    const entry = await import('../../../src/index.ts');
    const sandbox = await import('../../../src/sandbox-door.ts');
    const missing = [...Object.keys(entry), ...Object.keys(sandbox)].filter((name) => !library.includes(`\`${name}\``));
    expect(Object.keys(entry).length).toBeGreaterThan(20);
    expect(Object.keys(sandbox)).toEqual(['startSandbox']);
    expect(missing).toEqual([]);
  });

  it('names every option of every command in the README or docs/', async () => {
    const text = [readme, ...(await Promise.all(pages.map(page)))].join('\n');
    const undocumented: string[] = [];
    for (const command of commands) {
      for (const flag of Object.keys((await command.load()).options))
        if (!text.includes(`--${flag}`)) undocumented.push(`crm-ferry ${command.name} --${flag}`);
    }
    expect(undocumented).toEqual([]);
  });

  it('gives each command written out in the README or docs/ only options it has', async () => {
    const options = new Map<string, Set<string>>();
    for (const command of commands)
      options.set(command.name, new Set([...Object.keys((await command.load()).options), 'help', 'version']));
    // Longest first, so that `auth login` wins over a command named `auth`.
    const names = [...options.keys()].sort((a, b) => b.length - a.length);
    const wrong: string[] = [];
    for (const [file, text] of [
      ['README.md', readme],
      ...(await Promise.all(pages.map(async (name) => [`docs/${name}`, await page(name)]))),
    ] as Array<[string, string]>) {
      for (const [index, line] of text.split('\n').entries()) {
        // A command as typed: up to the end of its code span, a comment or a table cell.
        for (const match of line.matchAll(/crm-ferry ([a-z][a-z ]*?)(?=[ `]|$)([^`#|]*)/g)) {
          // `crm-ferry enqueue [its options] -- COMMAND [its options]`: each part against its own command.
          for (const part of `${match[1]} ${match[2]}`.trim().split(/\s--(?:\s+|$)/)) {
            const typed = part.trim();
            const name = names.find((n) => typed === n || typed.startsWith(`${n} `));
            if (name === undefined) continue;
            for (const flag of typed.slice(name.length).matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)) {
              if (!options.get(name)?.has((flag[1] as string).replace(/^no-/, '')))
                wrong.push(`${file}:${index + 1}: crm-ferry ${name} has no --${flag[1]}`);
            }
          }
        }
      }
    }
    expect(wrong).toEqual([]);
  });

  it.each(VERIFY_COUNTS.map(([, label]) => label))(
    'explains the verify count "%s" in docs/verify.md by the words the summary prints',
    async (label) => {
      expect(await page('verify.md')).toContain(`\n| ${label} | `);
    },
  );

  it('keeps the README a path: under 250 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(250);
  });
});
