import { readdir, readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { commands } from '../../../src/cli/commands.ts';
import { ERROR_CODES } from '../../../src/errors/index.ts';

const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');
const page = (name: string): Promise<string> => readFile(new URL(`../../../docs/${name}`, import.meta.url), 'utf8');
const errors = await page('errors.md');
const sandboxPage = await page('sandbox.md');

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
      for (const match of (await page(name)).matchAll(/\]\(([a-z0-9-]+\.md)(#[^)]*)?\)/g)) expect(pages).toContain(match[1]);
    }
  });

  it('keeps the README a path: under 250 lines', () => {
    expect(readme.split('\n').length).toBeLessThan(250);
  });
});
