import { readFile } from 'node:fs/promises';
import { describe, expect, it } from 'vitest';
import { commands } from '../../../src/cli/commands.ts';
import { ERROR_CODES } from '../../../src/errors/index.ts';

const readme = await readFile(new URL('../../../README.md', import.meta.url), 'utf8');

describe('README stays true to the code', () => {
  it.each(ERROR_CODES)('documents the error code %s', (code) => {
    expect(readme).toMatch(new RegExp(`^\\| \`${code}\` \\|`, 'm'));
  });

  it.each(commands.map((c) => c.name))('documents the command %s', (name) => {
    const [first, second] = name.split(' ');
    expect(readme).toContain(second ? `crm-ferry ${first} ${second}` : `crm-ferry ${first}`);
  });

  it('documents every sandbox flag', async () => {
    const sandbox = await commands.find((c) => c.name === 'sandbox')?.load();
    for (const flag of Object.keys(sandbox?.options ?? {})) expect(readme).toContain(`\`--${flag}`);
  });
});
