/**
 * The README's walk ("Migrating an account"), done as a user does it (issue 37): the `crm-ferry`
 * command on the PATH as `npm link` puts it there (a bin folder whose `crm-ferry` leads through
 * `lib/node_modules/crm-ferry` to the checkout's bin/crm-ferry.js), every line of the walk given
 * to a shell in a scratch folder, in the README's order, against a sandbox started here. Each
 * step's exit code and what it says are checked; `rollback --all` must leave the account as it
 * was, and the walk must leave the checkout as it was (`git status`, and the ignored files under
 * `mappings/` and `samples/`, which git does not show).
 */
import { spawn, spawnSync } from 'node:child_process';
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
} from 'node:fs';
import { readFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CHECKOUT } from '../helpers/checkout-copy.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const readme = await readFile(join(CHECKOUT, 'README.md'), 'utf8');

/** The walk as the README writes it: the lines of its shell block, then the `crm-ferry ...` of its numbered steps. */
function walkLines(): string[] {
  const start = readme.indexOf('## Migrating an account');
  const end = readme.indexOf('### From a live legacy account');
  if (start === -1 || end < start)
    throw new Error('README.md has no walk (## Migrating an account ... ### From a live legacy account)');
  const walk = readme.slice(start, end);
  const block = /```sh\n([\s\S]*?)```/.exec(walk)?.[1];
  if (block === undefined) throw new Error("the README walk has no ```sh block to set up the walk's folder");
  const setUp = block
    .split('\n')
    .map((line) => line.replace(/\s+#.*$/, '').trim())
    .filter((line) => line !== '');
  const steps = walk.slice(walk.indexOf('1. **')).matchAll(/`(crm-ferry [^`]+)`/g);
  return [...setUp, ...[...steps].map((m) => (m[1] as string).replace(/\s+/g, ' ').trim())];
}

interface Shell {
  cwd: string;
  env: Record<string, string>;
}

interface Ran {
  code: number | null;
  out: string;
}

/**
 * Runs one line in `sh` as a terminal's shell would, then carries the shell's folder and exported
 * variables to the next line (a `cd` or an `export` in the README holds for the lines after it).
 */
async function runLine(shell: Shell, line: string, stateFile: string): Promise<Ran> {
  const dump = `'${process.execPath}' -e 'require("node:fs").writeFileSync(process.argv[1], JSON.stringify({ cwd: process.cwd(), env: process.env }))' "$1"`;
  const child = spawn('sh', ['-c', `${line}\nstatus=$?\n${dump}\nexit $status`, 'sh', stateFile], {
    cwd: shell.cwd,
    env: shell.env,
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (chunk) => (out += chunk));
  child.stderr.on('data', (chunk) => (out += chunk));
  const code = await new Promise<number | null>((done) => child.on('close', done));
  const state = JSON.parse(readFileSync(stateFile, 'utf8')) as Shell;
  shell.cwd = state.cwd;
  shell.env = state.env;
  return { code, out };
}

/** Every file under a folder of the checkout with its size and time, ignored files included. */
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

/** What the walk could leave in the checkout: git's view, the top folder's names, and mappings/ and samples/ file by file. */
function checkoutState(): { git: string; top: string[]; bundled: string[] } {
  const git = spawnSync('git', ['-C', CHECKOUT, 'status', '--porcelain'], { encoding: 'utf8' });
  if (git.status !== 0) throw new Error(`git status in ${CHECKOUT} failed: ${git.stderr}`);
  return {
    git: git.stdout,
    top: readdirSync(CHECKOUT).sort(),
    bundled: [...listing('mappings'), ...listing('samples')],
  };
}

let box: TestSandbox;
let scratch: string;
let prefix: string;

beforeAll(async () => {
  box = await startTestSandbox({ tokens: ['rehearsal-token-1'] });
  scratch = mkdtempSync(join(tmpdir(), 'ferry-readme-walk-'));
  // What `npm link` makes under npm's prefix: lib/node_modules/crm-ferry is the checkout, and
  // bin/crm-ferry the package's bin file reached through it.
  prefix = join(scratch, 'npm-prefix');
  mkdirSync(join(prefix, 'lib', 'node_modules'), { recursive: true });
  mkdirSync(join(prefix, 'bin'));
  symlinkSync(CHECKOUT, join(prefix, 'lib', 'node_modules', 'crm-ferry'));
  symlinkSync('../lib/node_modules/crm-ferry/bin/crm-ferry.js', join(prefix, 'bin', 'crm-ferry'));
  mkdirSync(join(scratch, 'home'));
});

afterAll(async () => {
  await box?.close();
  if (scratch) rmSync(scratch, { recursive: true, force: true });
});

describe('the README walk, as a user does it', () => {
  it('runs in a folder of its own with the linked command, rollback --all leaves the account as it was, and the checkout is untouched', async () => {
    const lines = walkLines();
    const checkoutBefore = checkoutState();
    const partiesBefore = await allPages(box, '/parties', 'parties');
    const partiesNow = async (): Promise<number> => (await allPages(box, '/parties', 'parties')).length;

    // The shell a user has: npm's prefix (npm_config_prefix, any spelling) is the linked one, so
    // `npm root -g` and the PATH find the checkout; no connection settings of this machine leak in.
    const env: Record<string, string> = {};
    for (const [key, value] of Object.entries(process.env)) {
      if (value !== undefined && !/^npm_config_prefix$/i.test(key) && !key.startsWith('CRM_FERRY_')) env[key] = value;
    }
    Object.assign(env, {
      npm_config_prefix: prefix,
      PATH: `${join(prefix, 'bin')}${delimiter}${env.PATH ?? ''}`,
      HOME: join(scratch, 'home'),
      XDG_CONFIG_HOME: join(scratch, 'home', '.config'),
    });
    const shell: Shell = { cwd: scratch, env };
    const stateFile = join(scratch, 'shell-state.json');
    const sandboxLine = 'crm-ferry sandbox --token rehearsal-token-1';

    // Each line of the walk with what it must do; a line the test does not know fails it, so the
    // README's walk and this test change together.
    const steps: Array<[RegExp, (ran: Ran) => Promise<void> | void]> = [
      [/^mkdir rehearsal && cd rehearsal$/, () => expect(shell.cwd).toBe(join(scratch, 'rehearsal'))],
      [
        /^cp -r .*\/samples" \.$/,
        () => expect(lstatSync(join(shell.cwd, 'samples', 'contacts.csv')).isFile()).toBe(true),
      ],
      [
        /^ln -s .*\/mappings" \.$/,
        () => {
          expect(lstatSync(join(shell.cwd, 'mappings')).isSymbolicLink()).toBe(true);
          expect(existsSync(join(shell.cwd, 'mappings', 'plans', 'generic.yaml'))).toBe(true);
        },
      ],
      [
        /^export CRM_FERRY_BASE_URL=/,
        () => expect([shell.env.CRM_FERRY_BASE_URL, shell.env.CRM_FERRY_TOKEN]).toEqual([box.url, 'rehearsal-token-1']),
      ],
      [/^crm-ferry inspect samples\/contacts\.csv$/, (ran) => expect(ran.out).toMatch(/Rows:\s+30\n/)],
      [
        /^crm-ferry mapping init samples\/contacts\.csv --online > people\.yaml$/,
        (ran) => {
          expect(ran.out).toContain('mapped 12 of 13 columns');
          expect(ran.out).toMatch(/"date_added": .*create a custom field "date_added" \(Date\)/);
          expect(readFileSync(join(shell.cwd, 'people.yaml'), 'utf8')).toContain('entity: party');
        },
      ],
      [
        /^crm-ferry validate --mapping people\.yaml --input samples\/contacts\.csv$/,
        (ran) => expect(ran.out).toMatch(/ok\s+30\n[\s\S]*All rows are valid\./),
      ],
      [
        /^crm-ferry validate --plan mappings\/plans\/generic\.yaml --online$/,
        (ran) =>
          expect(ran.out).toMatch(/Step people:[^\n]*\n\s+rows read\s+30\n\s+ok\s+30\n[\s\S]*All rows are valid\./),
      ],
      [
        /^crm-ferry setup mappings\/plans\/generic\.yaml$/,
        (ran) => expect(ran.out).toContain('Set-up: nothing to create'),
      ],
      [
        /^crm-ferry run mappings\/plans\/generic\.yaml --limit 20$/,
        async (ran) => {
          expect(ran.out).toContain('Sample done');
          expect(await partiesNow()).toBe(partiesBefore.length + 40);
        },
      ],
      [
        /^crm-ferry run mappings\/plans\/generic\.yaml$/,
        async (ran) => {
          expect(ran.out).toContain('Done: every row is in the account.');
          expect(await partiesNow()).toBe(partiesBefore.length + 60);
          expect(existsSync(join(shell.cwd, '.crm-ferry', 'generic', 'state.json'))).toBe(true);
        },
      ],
      [
        /^crm-ferry verify mappings\/plans\/generic\.yaml --report migration\.html$/,
        (ran) => {
          expect(ran.out).toContain('60 of 60 rows are in the account as in the file');
          expect(existsSync(join(shell.cwd, 'migration.html'))).toBe(true);
        },
      ],
      [
        /^crm-ferry export parties --out parties\.xlsx --where 'city is Berlin'$/,
        (ran) => {
          expect(ran.out).toMatch(/Exported [1-9]\d* records/);
          expect(existsSync(join(shell.cwd, 'parties.xlsx'))).toBe(true);
        },
      ],
      [
        /^crm-ferry rollback mappings\/plans\/generic\.yaml --all$/,
        async (ran) => {
          expect(ran.out).toMatch(/people\s+30 records deleted/);
          expect(ran.out).toMatch(/organisations\s+30 records deleted/);
          expect(await allPages(box, '/parties', 'parties')).toEqual(partiesBefore);
        },
      ],
    ];

    // The sandbox is this test's, on a port of its own: the README's line for it is checked, not run,
    // and its address (the sandbox's default port) stands for this one's.
    expect(lines[0]).toBe(sandboxLine);
    const walked: string[] = [];
    for (const written of lines.slice(1)) {
      const line = written.replace('http://127.0.0.1:8787', box.url);
      const step = steps.find(([pattern]) => pattern.test(line));
      if (step === undefined) throw new Error(`the README walk has a line this test does not know: ${written}`);
      const ran = await runLine(shell, line, stateFile);
      expect(ran.code, `${written}\n${ran.out}`).toBe(0);
      await step[1](ran);
      walked.push(written);
    }
    expect(walked).toHaveLength(steps.length);
    // The commands ran from the checkout, reached through the link as `npm link` leaves it.
    expect(spawnSync('sh', ['-c', 'command -v crm-ferry'], { env, encoding: 'utf8' }).stdout.trim()).toBe(
      join(prefix, 'bin', 'crm-ferry'),
    );

    // Everything the walk wrote is in its own folder; nothing in the checkout.
    expect(readdirSync(join(scratch, 'rehearsal')).sort()).toEqual([
      '.crm-ferry',
      'mappings',
      'migration.html',
      'parties.xlsx',
      'people.yaml',
      'samples',
    ]);
    expect(checkoutState()).toEqual(checkoutBefore);
  }, 60_000);
});
