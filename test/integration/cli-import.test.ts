import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeContactsPlan } from '../helpers/contacts-plan.ts';
import { runCli } from '../helpers/fake-io.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-cli-import-'));
let box: TestSandbox;

beforeAll(async () => {
  box = await startTestSandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 40, latencyJitterMs: 0 } });
  writeContactsPlan(dir);
});

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });

describe('crm-ferry import / run / rollback: usage', () => {
  it.each([
    [['import', '--mapping', 'people.yaml'], /import needs --mapping M and --input F/],
    [['import', 'people.yaml'], /import takes no positional arguments/],
    // A mapping with `ref:` needs its plan: the hint names the command that takes one.
    [
      ['import', '--mapping', 'people.yaml', '--input', 'contacts.csv'],
      /only a plan can provide\n  Use the plan that holds both steps \(`crm-ferry run PLAN`/,
    ],
    [['run'], /run takes one PLAN file/],
    [['run', 'plan.yaml', '--limit', '0'], /--limit takes a whole number from 1/],
    [['run', 'plan.yaml', '--concurrency', '500'], /--concurrency takes a whole number from 1 to 64/],
    [['run', 'plan.yaml', '--limit', '5', '--delete-missing'], /--delete-missing does not go with --limit/],
    [['run', 'plan.yaml', '--fresh'], /add --yes to confirm it in a script/],
    [['rollback'], /rollback needs the PLAN/],
    // A mistyped state folder is said so, and not created.
    [['rollback', '--state-dir', 'no-such-state'], /error \[USAGE\] at .*no-such-state: there is no import state in/],
    [['rollback', 'elsewhere/plan.yaml'], /there is no import state in .*elsewhere\/\.crm-ferry/],
    [['export', 'parties', '--out', 'x.csv', '--where', 'nope is 1'], /parties have no field "nope"/],
  ])('%j exits 2 with one clear line', async (args, message) => {
    const { code, stderr } = await runCli(args, { cwd: dir, env: env() });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/internal error|\n\s+at /);
    expect(existsSync(join(dir, 'no-such-state')) || existsSync(join(dir, 'elsewhere'))).toBe(false);
  });
});

describe('crm-ferry run: a real process interrupted', () => {
  it.each([
    ['SIGINT', 130],
    ['SIGTERM', 143],
  ] as const)(
    'stops on %s with exit %i and says how to go on; the same command then finishes',
    async (signal, exitCode) => {
      const stateDir = join(dir, `${signal}-state`);
      const child = spawn(
        process.execPath,
        [join(ROOT, 'bin/crm-ferry.js'), 'run', join(dir, 'plan.yaml'), '--state-dir', stateDir, '--concurrency', '1'],
        {
          cwd: dir,
          env: { ...process.env, ...env() },
          stdio: ['ignore', 'pipe', 'pipe'],
        },
      );
      let stdout = '';
      let stderr = '';
      child.stdout.on('data', (chunk) => (stdout += chunk));
      child.stderr.on('data', (chunk) => (stderr += chunk));
      const exited = new Promise<number | null>((done) => child.on('exit', (c) => done(c)));
      // Interrupted in the middle of the rows: once the account holds a record of this run (an
      // event of the account, not a delay), while each of the 40-odd writes waits 40 ms in the sandbox.
      const before = box.store.parties.size;
      while (box.store.parties.size === before && child.exitCode === null) await new Promise((r) => setTimeout(r, 10));
      child.kill(signal);
      const code = await exited;
      expect(code, stderr).toBe(exitCode);
      expect(stdout).toContain('Interrupted. Run the same command again to go on where it stopped.');
      expect(stdout).toMatch(/not reached\s+\d+/);

      const again = await runCli(['run', join(dir, 'plan.yaml'), '--state-dir', stateDir], { cwd: dir, env: env() });
      expect(again.code).toBe(0);
      expect(again.stdout).toMatch(/unchanged\s+\d+/);
      expect(again.stdout).toContain('Done: every row is in the account.');
    },
    60_000,
  );

  it('exit 3 when rows are rejected, with the rejects file named', async () => {
    writeFileSync(
      join(dir, 'bad.yaml'),
      'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: type, value: person }\n  - { to: lastName, value: { column: last } }\n  - { to: custom, definition: Account number, tag: null, value: { column: account } }\n',
    );
    writeFileSync(join(dir, 'bad.csv'), 'id,last,account\n1,Good,AB-1234\n2,Bad,nope\n');
    const { code, stdout } = await runCli(
      ['import', '--mapping', 'bad.yaml', '--input', 'bad.csv', '--state-dir', 'bad-state'],
      { cwd: dir, env: env() },
    );
    expect(code).toBe(3);
    expect(stdout).toMatch(/rejected\s+1\s+-> bad-state\/results\/bad\.rejects\.csv/);
    // A plain re-run takes the fixed row, and the hint says so (not that --retry-rejects is needed).
    expect(stdout).toContain('then run the same command again: rejected rows are taken again');
    expect(stdout).not.toMatch(/run again with --retry-rejects/);
    writeFileSync(join(dir, 'bad.csv'), 'id,last,account\n1,Good,AB-1234\n2,Bad,CD-5678\n');
    const again = await runCli(['import', '--mapping', 'bad.yaml', '--input', 'bad.csv', '--state-dir', 'bad-state'], {
      cwd: dir,
      env: env(),
    });
    expect(again.code, again.stdout).toBe(0);
    expect(again.stdout).toMatch(/created\s+1\n\s+unchanged\s+1\n/);
    expect(again.stdout).toContain('Done: every row is in the account.');
  });
});

describe('crm-ferry rollback: finding the state', () => {
  it('takes the plan and --state-dir together, as run does: --state-dir names the state', async () => {
    const ran = await runCli(['run', 'plan.yaml', '--state-dir', 'both-state', '--limit', '1'], {
      cwd: dir,
      env: env(),
    });
    expect(ran.code, ran.stderr).toBe(0);
    const back = await runCli(['rollback', 'plan.yaml', '--state-dir', 'both-state'], { cwd: dir, env: env() });
    expect(back.stderr).toBe('');
    expect(back.code).toBe(0);
    expect(back.stdout).toMatch(/Rolled back run /);
    expect(back.stdout).toMatch(/people\s+1 record deleted/);
    // The folder beside the plan was not the one used.
    expect(existsSync(join(dir, '.crm-ferry'))).toBe(false);
  });
});

describe('crm-ferry run: results, events and the exit codes', () => {
  it('--json prints one event per line: start, a row event per row, the summary at the end', async () => {
    const { code, stdout } = await runCli(
      ['run', join(dir, 'plan.yaml'), '--state-dir', 'json-state', '--json', '--concurrency', '8'],
      { cwd: dir, env: env() },
    );
    expect(code).toBe(0);
    const events = stdout
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(events[0]).toMatchObject({ type: 'start', steps: ['organisations', 'people'], dryRun: false });
    const end = events.at(-1);
    expect(end.type).toBe('end');
    const rows = events.filter((e) => e.type === 'row' && e.action === 'created');
    expect(rows.length).toBe(end.summary.steps.reduce((sum: number, s: { created: number }) => sum + s.created, 0));
    expect(rows[0]).toMatchObject({
      step: expect.any(String),
      row: expect.any(Number),
      key: expect.any(String),
      id: expect.any(Number),
    });
    expect(end.summary).toMatchObject({ interrupted: false, stopped: null });
    // The success file: one line per row with its action, id and address.
    const success = readFileSync(join(dir, 'json-state', 'results', 'people.success.csv'), 'utf8').split('\r\n');
    expect(success[0]).toBe('\uFEFF_row,key,action,id,url,warnings');
    expect(success[1]).toMatch(
      new RegExp(
        `^2,anna\\.mueller@beispiel\\.de,created,(\\d+),${box.url.replace(/[.]/g, '\\.')}/api/v2/parties/\\1,$`,
      ),
    );
  });

  it('exit 4 when the service refuses the run, state kept; the same command goes on once it is fixed', async () => {
    const limited = await runCli(['run', join(dir, 'plan.yaml'), '--state-dir', 'refused-state', '--limit', '2'], {
      cwd: dir,
      env: env(),
    });
    expect(limited.code).toBe(0);
    // The summary: what was done per step, requests and requests per record written.
    expect(limited.stdout).toMatch(/Step people: contacts\.csv with people\.yaml\n  rows read\s+2\n  created\s+2\n/);
    expect(limited.stdout).toMatch(
      /Requests: \d+ \(\d+ to read the account's names once, 4 for the rows, 1\.00 per record written\); elapsed \d+\.\d s\./,
    );
    // A sample is not the whole migration, and the summary does not say it is.
    expect(limited.stdout).not.toContain('every row is in the account');
    expect(limited.stdout).toContain('Run the same command without --limit for the rest.');
    const refused = await runCli(['run', join(dir, 'plan.yaml'), '--state-dir', 'refused-state'], {
      cwd: dir,
      env: { ...env(), CRM_FERRY_TOKEN: 'not-the-right-token-0000' },
    });
    expect(refused.code).toBe(4);
    expect(refused.stderr).toMatch(/^error \[API_/);
    expect(refused.stderr).not.toContain('not-the-right-token-0000');
    const again = await runCli(['run', join(dir, 'plan.yaml'), '--state-dir', 'refused-state'], {
      cwd: dir,
      env: env(),
    });
    expect(again.code).toBe(0);
    expect(again.stdout).toMatch(/unchanged\s+2/);
    expect(again.stdout).toContain('Done: every row is in the account.');
  });

  it('a step whose input lacks a column the mapping reads stops the run with exit 2, and says to fix it, not just to run again', async () => {
    writeFileSync(join(dir, 'no-company.csv'), 'first_name,last_name,email\nAda,Lovelace,ada@example.org\n');
    writeFileSync(
      join(dir, 'broken-plan.yaml'),
      'version: 1\nsteps:\n  - { name: organisations, mapping: organisations.yaml, input: contacts.csv }\n  - { name: people, mapping: people.yaml, input: no-company.csv }\n',
    );
    const { code, stdout, stderr } = await runCli(['run', 'broken-plan.yaml', '--state-dir', 'broken-plan-state'], {
      cwd: dir,
      env: env(),
    });
    expect(code).toBe(2);
    expect(stderr).toMatch(/error \[MAPPING_INVALID\] at .*people\.yaml: the input has no columns/);
    expect(stdout).toContain('fix what the error below says');
    expect(stdout).not.toContain('Nothing is lost: run the same command again');
  });

  it('--dry-run prints the requests, the time at the rate limit and three sample bodies', async () => {
    const { code, stdout } = await runCli(['run', join(dir, 'plan.yaml'), '--state-dir', 'dry-state', '--dry-run'], {
      cwd: dir,
      env: env(),
    });
    expect(code).toBe(0);
    expect(stdout).toContain('Dry run: nothing was written to the account.');
    expect(stdout).toMatch(/Requests needed: \d+ \(\d+ to read the account's names once, \d+ for the rows\)\./);
    expect(stdout).toMatch(
      /At the account's limit of [\d,]+ requests per hour that takes about|The service did not say its rate limit/,
    );
    expect(stdout.match(/^Sample create \(step \w+, key [^)]+\):$/gm)).toHaveLength(3);
  });
});

/** `script` (util-linux) runs a command on a pseudo-terminal, as a person at a terminal would. */
const hasScript = spawnSync('script', ['--version']).status === 0;

/** Runs the command line on a terminal, typing `keys` once the question shows; the exit code and what the terminal showed. */
function onTerminal(args: string[], keys: string): Promise<{ code: number | null; shown: string }> {
  const command = [process.execPath, join(ROOT, 'bin/crm-ferry.js'), ...args]
    .map((a) => `'${a.replace(/'/g, `'\\''`)}'`)
    .join(' ');
  const child = spawn('script', ['-qec', command, '/dev/null'], {
    cwd: dir,
    env: { ...process.env, ...env() },
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  let shown = '';
  let typed = false;
  child.stdout.on('data', (chunk) => {
    shown += chunk;
    if (!typed && shown.includes('[y/N]')) {
      typed = true;
      child.stdin.write(keys);
    }
  });
  // A question never shown must not leave the process behind.
  const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
  return new Promise((done) =>
    child.on('exit', (code) => {
      clearTimeout(guard);
      child.stdin.end();
      done({ code, shown });
    }),
  );
}

describe.skipIf(!hasScript)('crm-ferry run --fresh on a terminal', () => {
  it('asks; Ctrl-C stops (130), Ctrl-D and "n" change nothing, "y" sets the state aside', async () => {
    const stateDir = join(dir, 'fresh-state');
    const first = await runCli(['run', join(dir, 'plan.yaml'), '--state-dir', stateDir, '--limit', '1'], {
      cwd: dir,
      env: env(),
    });
    expect(first.code).toBe(0);
    const args = ['run', join(dir, 'plan.yaml'), '--state-dir', stateDir, '--limit', '1', '--fresh'];
    const asideNow = (): string[] => readdirSync(stateDir).filter((name) => name.startsWith('previous-'));

    const ctrlC = await onTerminal(args, '\x03');
    expect(ctrlC.code, ctrlC.shown).toBe(130);
    expect(ctrlC.shown).toContain('Nothing done.');
    expect(ctrlC.shown).not.toMatch(/internal error|\n\s+at /);
    for (const keys of ['\x04', 'n\r']) {
      const no = await onTerminal(args, keys);
      expect(no.code, no.shown).toBe(0);
      expect(no.shown).toContain('Nothing done.');
    }
    expect(asideNow()).toEqual([]);

    const yes = await onTerminal(args, 'y\r');
    expect(yes.code, yes.shown).toBe(0);
    expect(asideNow()).toHaveLength(1);
    expect(yes.shown).toMatch(/created\s+1/);
  }, 60_000);

  it('shows the question on the terminal when standard output goes to a file', async () => {
    const stateDir = join(dir, 'fresh-redirected');
    const out = join(dir, 'fresh-out.txt');
    const args = ['run', join(dir, 'plan.yaml'), '--state-dir', stateDir, '--limit', '1', '--fresh'];
    const command = `${[process.execPath, join(ROOT, 'bin/crm-ferry.js'), ...args].map((a) => `'${a}'`).join(' ')} > '${out}'`;
    const child = spawn('script', ['-qec', command, '/dev/null'], {
      cwd: dir,
      env: { ...process.env, ...env() },
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let shown = '';
    let answered = false;
    child.stdout.on('data', (chunk) => {
      shown += chunk;
      // Answered once: a chunk after the question (the child may have ended) is not asked again.
      if (!answered && shown.includes('[y/N]')) {
        answered = true;
        child.stdin.write('n\r');
      }
    });
    const guard = setTimeout(() => child.kill('SIGKILL'), 20_000);
    const code = await new Promise<number | null>((done) => child.on('exit', done));
    clearTimeout(guard);
    expect(code).toBe(0);
    expect(shown).toContain('Start over?');
    expect(readFileSync(out, 'utf8')).not.toContain('Start over?');
  }, 30_000);
});

describe('rejected rows: validate and import say and do the same thing (issue 18 item 10)', () => {
  // The mapping reads `;`-separated files; the rejects file crm-ferry writes uses `,`.
  const MAPPING =
    'version: 1\nentity: party\nkey: "{{id}}"\nsource: { delimiter: ";" }\nfields:\n  - { to: type, value: person }\n  - { to: lastName, value: { column: last }, required: true }\n';
  const ADVICE =
    'or fix it in the rejects file and give it back (`validate --input FILE` checks it, `import` or `run` with --retry-rejects FILE writes its rows)';

  it('a rejects file fixed by hand is validated as --input and written with --retry-rejects FILE', async () => {
    const work = join(dir, 'fix-in-rejects');
    mkdirSync(work);
    writeFileSync(join(work, 'people.yaml'), MAPPING);
    writeFileSync(join(work, 'people.csv'), 'id;last\n1;Lovelace\n2;\n3;Hopper\n');
    const validated = await runCli(['validate', '--mapping', 'people.yaml', '--input', 'people.csv'], {
      cwd: work,
      env: {},
    });
    expect(validated.code).toBe(3);
    expect(validated.stdout).toContain(ADVICE);
    const rejects = join(work, 'rejects.csv');
    expect(readFileSync(rejects, 'utf8')).toMatch(
      /^\uFEFFid,last,_row,_field,_code,_message,_rule,_raw\r\n2,,3,lastName,/,
    );
    // Fixed in a spreadsheet, which saved it with `;` and without the byte-order mark.
    writeFileSync(
      rejects,
      'id;last;_row;_field;_code;_message;_raw\r\n2;Babbage;3;lastName;MAPPING_VALUE;required;\r\n',
    );
    const again = await runCli(['validate', '--mapping', 'people.yaml', '--input', 'rejects.csv'], {
      cwd: work,
      env: {},
    });
    expect(again.stdout).toContain('All rows are valid.');
    expect(again.code).toBe(0);

    const imported = await runCli(
      ['import', '--mapping', 'people.yaml', '--input', 'people.csv', '--state-dir', 'state'],
      { cwd: work, env: env() },
    );
    expect(imported.code).toBe(3);
    // The importer gives the same advice as validate.
    expect(imported.stdout).toContain(ADVICE);
    const retried = await runCli(
      [
        'import',
        '--mapping',
        'people.yaml',
        '--input',
        'people.csv',
        '--state-dir',
        'state',
        '--retry-rejects',
        'rejects.csv',
      ],
      { cwd: work, env: env() },
    );
    expect(retried.code, retried.stdout + retried.stderr).toBe(0);
    expect(retried.stdout).toMatch(/rows read\s+1\n\s+created\s+1\n/);
    // The rows the rejects file does not hold are not taken for gone from the input.
    expect(retried.stdout).not.toMatch(/gone from input/);
    const names = (await allPages(box, '/parties', 'parties')).map((p: { lastName?: string }) => p.lastName);
    expect(names.filter((n: unknown) => n === 'Babbage')).toHaveLength(1);
    expect(names.filter((n: unknown) => n === 'Lovelace')).toHaveLength(1);
  });

  it('--retry-rejects FILE takes only a rejects file crm-ferry wrote, and in a plan the step it is named after', async () => {
    const notRejects = await runCli(
      [
        'import',
        '--mapping',
        'organisations.yaml',
        '--input',
        'contacts.csv',
        '--retry-rejects',
        'contacts.csv',
        '--state-dir',
        'state-r',
      ],
      { cwd: dir, env: env() },
    );
    expect(notRejects.code).toBe(2);
    expect(notRejects.stderr).toMatch(
      /--retry-rejects takes a rejects file crm-ferry wrote \(its last columns are _row, _field, _code, _message, _rule, _raw\); .*contacts\.csv is not one/,
    );
    writeFileSync(
      join(dir, 'nosuchstep.rejects.csv'),
      'company,_row,_field,_code,_message,_raw\nX,2,name,MAPPING_VALUE,m,\n',
    );
    const unnamed = await runCli(
      ['run', 'plan.yaml', '--retry-rejects', 'nosuchstep.rejects.csv', '--state-dir', 'state-r'],
      { cwd: dir, env: env() },
    );
    expect(unnamed.code).toBe(2);
    expect(unnamed.stderr).toContain(
      "nosuchstep.rejects.csv names no step of the plan; a step's rejects file is <step>.rejects.csv (organisations.rejects.csv, people.rejects.csv)",
    );
    const swapped = await runCli(['run', '--retry-rejects', 'plan.yaml'], { cwd: dir, env: env() });
    expect(swapped.stderr).toMatch(/--retry-rejects takes a rejects file, got "plan.yaml"; put the plan before it/);
  });
});
