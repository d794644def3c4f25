/**
 * The README's walk ("Migrating an account"), followed literally: every command it shows, in its
 * order, from a folder of one's own where `mappings/` and `samples/` are crm-ferry's own (linked
 * to the checkout), against a sandbox. Issue 26: the walk leaves nothing inside crm-ferry's
 * folders (item 9: a ready-made plan's state goes to `.crm-ferry/NAME/` in the current folder),
 * and the mapping `mapping init` drafts is used by the walk (item 12).
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { CHECKOUT } from '../helpers/checkout-copy.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const readme = await readFile(join(CHECKOUT, 'README.md'), 'utf8');

/** The walk's commands, as the README writes them: `npx crm-ferry ...` in the numbered steps. */
function walkCommands(): string[] {
  const start = readme.indexOf('1. **Look at the file**');
  const end = readme.indexOf('### From a live legacy account');
  if (start === -1 || end < start) throw new Error('README.md has no walk (1. **Look at the file** ... ### From a live legacy account)');
  return [...readme.slice(start, end).matchAll(/`npx crm-ferry ([^`]+)`/g)].map((m) => (m[1] as string).replace(/\s+/g, ' ').trim());
}

/** Splits a command line as the shell does, for the quoting the README uses ('...' and "..."). */
function words(line: string): string[] {
  return [...line.matchAll(/'([^']*)'|"([^"]*)"|(\S+)/g)].map((m) => m[1] ?? m[2] ?? (m[3] as string));
}

/** Every file under a folder of the checkout, with its size and time: what a run could have left or changed. */
function listing(folder: string): string[] {
  const out: string[] = [];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir)) {
      const path = join(dir, name);
      const info = statSync(path);
      if (info.isDirectory()) walk(path);
      else out.push(`${relative(CHECKOUT, path)} ${info.size} ${info.mtimeMs}`);
    }
  };
  walk(join(CHECKOUT, folder));
  return out.sort();
}

let box: TestSandbox;
let work: string;

beforeAll(async () => {
  box = await startTestSandbox({ tokens: ['rehearsal-token-1'] });
  work = mkdtempSync(join(tmpdir(), 'ferry-readme-walk-'));
  for (const folder of ['mappings', 'samples']) symlinkSync(join(CHECKOUT, folder), join(work, folder));
});

afterAll(async () => {
  await box?.close();
  if (work) rmSync(work, { recursive: true, force: true });
});

describe('the README walk, followed literally', () => {
  it("runs every command, uses the drafted mapping, and leaves nothing in crm-ferry's own folders", async () => {
    const commands = walkCommands();
    expect(commands[0]).toBe('inspect samples/contacts.csv');
    const before = [...listing('mappings'), ...listing('samples')];
    const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: 'rehearsal-token-1' };
    for (const command of commands) {
      const [argv, into] = command.split(' > ') as [string, string | undefined];
      const result = await runCli(words(argv), { cwd: work, env });
      expect(result.code, `npx crm-ferry ${command}\n${result.stdout}\n${result.stderr}`).toBe(0);
      if (into !== undefined) writeFileSync(join(work, into), result.stdout);
    }
    // Item 12: what `mapping init` drafted is what a later step of the walk reads.
    const drafted = commands.find((c) => c.startsWith('mapping init'))?.split(' > ')[1];
    expect(drafted).toBeDefined();
    expect(commands.some((c) => !c.startsWith('mapping init') && words(c).includes(drafted as string))).toBe(true);
    // Item 9: the ready-made plan's state and results are in the folder the walk was made from.
    expect(existsSync(join(work, '.crm-ferry', 'generic', 'state.json'))).toBe(true);
    expect(readdirSync(join(work, '.crm-ferry', 'generic', 'results')).length).toBeGreaterThan(0);
    expect([...listing('mappings'), ...listing('samples')]).toEqual(before);
  }, 120_000);
});
