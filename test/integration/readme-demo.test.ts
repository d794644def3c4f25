// The README's `npm run demo` block is the first output a reader meets: every line it shows must be
// a line the program prints now (the request figures, the set-up, the wording), run as the demo
// runs it (src/demo.ts: the bundled v1 plan, twice, into a sandbox with the service's rate limit).
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const root = resolve(fileURLToPath(import.meta.url), '../../..');
const readme = await readFile(join(root, 'README.md'), 'utf8');

/** The demo block's commands, each with the lines the README shows it printing. */
function demoBlock(): { command: string; lines: string[] }[] {
  const block = /```\n\$ npm run demo\n([\s\S]*?)```/.exec(readme)?.[1];
  if (block === undefined) throw new Error('README.md has no "$ npm run demo" block');
  const runs: { command: string; lines: string[] }[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith('$ crm-ferry ')) runs.push({ command: line, lines: [] });
    else if (runs.length > 0 && line.trim() !== '' && line !== '...') runs.at(-1)?.lines.push(line);
  }
  return runs;
}

/** What varies from run to run: the elapsed time and the ids the account gives. */
const steady = (line: string): string =>
  line.replace(/elapsed \d+(\.\d+)? s/, 'elapsed T s').replace(/\(id \d+\)/g, '(id N)');

let box: TestSandbox;
let dir: string;

beforeAll(async () => {
  box = await startTestSandbox({ rateLimit: { limit: 4000, windowSeconds: 3600 } });
  dir = await mkdtemp(join(tmpdir(), 'ferry-readme-demo-'));
});

afterAll(async () => {
  await box?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
});

describe('the README demo block', () => {
  it('shows two runs of the bundled v1 plan, each line as the program prints it', async () => {
    const runs = demoBlock();
    expect(runs.map((r) => r.command.replace(/ --state-dir \S+/, ''))).toEqual([
      '$ crm-ferry run mappings/plans/v1-migration.yaml',
      '$ crm-ferry run mappings/plans/v1-migration.yaml   # again: nothing changed, so nothing is sent',
    ]);
    const env = { CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token };
    for (const run of runs) {
      const result = await runCli(
        ['run', join(root, 'mappings/plans/v1-migration.yaml'), '--state-dir', join(dir, 'state')],
        { cwd: root, env },
      );
      expect(result.code).toBe(0);
      const printed = new Set(`${result.stderr}\n${result.stdout}`.split('\n').map(steady));
      const absent = run.lines.filter((line) => !printed.has(steady(line)));
      expect(absent, `README lines the program no longer prints (${run.command})`).toEqual([]);
    }
  }, 60_000);
});
