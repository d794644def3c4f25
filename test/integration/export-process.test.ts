// The export as cron runs it: a process of its own, killed or interrupted half-way, and its exit
// codes. The sandbox answers slowly (latency), so that the export is caught in the middle.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CrmClient } from '../../src/client/index.ts';
import { normaliseExportOptions, runExport } from '../../src/export/index.ts';
import { runCli } from '../helpers/fake-io.ts';
import { addParty } from '../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const BIN = join(ROOT, 'bin/crm-ferry.js');
const PARTIES = 3_000;

let box: TestSandbox;
const dir = mkdtempSync(join(tmpdir(), 'ferry-export-process-'));

beforeAll(async () => {
  // 30 pages of 100 at 40 ms each: the export runs for over a second.
  box = await startTestSandbox({ faults: { latencyMs: 40 } });
  for (let i = 0; i < PARTIES; i += 1)
    addParty(box.store, {
      type: 'organisation',
      firstName: null,
      lastName: null,
      name: `Company ${i}`,
      about: `A longer text that fills the rows of company ${i}, so that the file grows page by page`,
    });
});

afterAll(async () => {
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** A complete export in-process: the previous night's good file and its state. */
async function goodNight(out: string, state: string): Promise<{ file: string; deleted: string; state: string }> {
  const client = new CrmClient({ baseUrl: box.url, auth: box.token });
  try {
    await runExport(normaliseExportOptions({ entity: 'parties', out, since: 'auto', state, cwd: dir }), {
      client,
      account: { baseUrl: box.url, account: box.url },
    });
  } finally {
    await client.close();
  }
  // Make the next run export everything again, as after a busy day.
  writeFileSync(
    state,
    JSON.stringify({ ...JSON.parse(readFileSync(state, 'utf8')), since: '2000-01-01T00:00:00.000Z' }),
  );
  return {
    file: readFileSync(out, 'utf8'),
    deleted: readFileSync(out.replace(/\.csv$/, '.deleted.csv'), 'utf8'),
    state: readFileSync(state, 'utf8'),
  };
}

function temps(prefix: string): string[] {
  return readdirSync(dir).filter((name) => name.startsWith(prefix) && name.endsWith('.tmp'));
}

/**
 * Starts `crm-ferry export` in a child process and sends `signal` once its temporary file holds
 * some rows (the export is half-way); resolves with its exit code or signal and what it printed.
 */
async function killHalfWay(
  out: string,
  state: string,
  signal: NodeJS.Signals,
): Promise<{ code: number | null; signal: string | null; stderr: string; stdout: string; records: number }> {
  const child = spawn(
    process.execPath,
    [
      BIN,
      'export',
      'parties',
      '--out',
      out,
      '--since',
      'auto',
      '--state',
      state,
      '--base-url',
      box.url,
      '--token',
      box.token,
    ],
    { cwd: dir, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  const ended = new Promise<{ code: number | null; signal: string | null }>((done) =>
    child.on('close', (code, sig) => done({ code, signal: sig })),
  );
  let stderr = '';
  let stdout = '';
  child.stderr.on('data', (chunk) => (stderr += chunk));
  child.stdout.on('data', (chunk) => (stdout += chunk));
  const prefix = `.${out.split('/').pop()}.${child.pid}.`;
  let records = 0;
  for (;;) {
    const temp = temps(prefix)[0];
    if (temp) {
      const text = readFileSync(join(dir, temp), 'utf8');
      records = text.split('\r\n').length - 2;
      if (records > 0) break;
    }
    if (child.exitCode !== null) throw new Error(`the export ended before it could be stopped: ${stderr}`);
    await new Promise((r) => setTimeout(r, 10));
  }
  child.kill(signal);
  return { ...(await ended), stderr, stdout, records };
}

describe('export in a process of its own', () => {
  it('killed outright half-way (SIGKILL): no output file appears, the previous one and the state stay, the next export clears the leftover', async () => {
    const out = join(dir, 'killed.csv');
    const state = join(dir, 'killed.state.json');
    const before = await goodNight(out, state);
    const run = await killHalfWay(out, state, 'SIGKILL');
    expect(run.signal).toBe('SIGKILL');
    expect(run.records).toBeGreaterThan(0);
    expect(run.records).toBeLessThan(PARTIES);
    expect(readFileSync(out, 'utf8')).toBe(before.file);
    expect(readFileSync(join(dir, 'killed.deleted.csv'), 'utf8')).toBe(before.deleted);
    expect(readFileSync(state, 'utf8')).toBe(before.state);
    // A killed process cannot clean up after itself: its temporary file is there, under a name
    // that cannot be taken for the export...
    expect(temps('.killed.csv.')).toHaveLength(1);
    // ...and the next export of the same file removes it.
    const { code, stderr } = await runCli(
      [
        'export',
        'parties',
        '--out',
        out,
        '--since',
        'auto',
        '--state',
        state,
        '--base-url',
        box.url,
        '--token',
        box.token,
      ],
      { cwd: dir },
    );
    expect(code, stderr).toBe(0);
    expect(temps('.killed.csv.')).toEqual([]);
    expect(readFileSync(out, 'utf8').split('\r\n').length - 2).toBe(PARTIES);
  }, 60_000);

  it('interrupted half-way (SIGINT, Ctrl-C): exit 130, said plainly, nothing left behind, the previous file and the state unchanged', async () => {
    const out = join(dir, 'stopped.csv');
    const state = join(dir, 'stopped.state.json');
    const before = await goodNight(out, state);
    const run = await killHalfWay(out, state, 'SIGINT');
    expect(run.code, run.stderr).toBe(130);
    expect(run.stderr).toMatch(/Interrupted: no file was written and the state is unchanged/);
    expect(readFileSync(out, 'utf8')).toBe(before.file);
    expect(readFileSync(state, 'utf8')).toBe(before.state);
    expect(temps('.stopped.csv.')).toEqual([]);
    expect(temps('.stopped.deleted.csv.')).toEqual([]);
  }, 60_000);

  it('the first run killed: neither an output file nor a state file appears', async () => {
    const out = join(dir, 'first.csv');
    const state = join(dir, 'first.state.json');
    const run = await killHalfWay(out, state, 'SIGKILL');
    expect(run.signal).toBe('SIGKILL');
    expect(existsSync(out)).toBe(false);
    expect(existsSync(join(dir, 'first.deleted.csv'))).toBe(false);
    expect(existsSync(state)).toBe(false);
  }, 60_000);
});

describe('export exit codes and what it prints for a log', () => {
  const connection = (): string[] => ['--base-url', box.url, '--token', box.token];

  it('done: exit 0; without a terminal no progress line is rewritten in place, and the summary names the file', async () => {
    const out = join(dir, 'log.csv');
    const { code, stdout, stderr } = await runCli(
      ['export', 'parties', '--out', out, '--columns', 'id,name', ...connection()],
      { cwd: dir },
    );
    expect(code, stderr).toBe(0);
    expect(stderr).not.toContain('\r');
    expect(stdout).toMatch(
      new RegExp(
        `^Exported ${PARTIES.toLocaleString('en-GB')} records, \\d+ requests, \\d+\\.\\d s\\.\\n  -> ${out.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}\\n$`,
      ),
    );
    expect(statSync(out).size).toBeGreaterThan(0);
  }, 30_000);

  it.each([
    ['a field the entity does not have', ['--where', 'colour is red'], /parties have no field "colour"/],
    [
      'an operator that does not fit the field',
      ['--where', 'name is within last 3'],
      /`is within last` does not apply to name/,
    ],
    ['--any with one condition', ['--where', 'name is x', '--any'], /--any combines two or more --where conditions/],
    ['an unknown --order-by field', ['--order-by', 'colour:desc'], /--order-by: parties have no field "colour"/],
    ['a value of the wrong kind', ['--where', 'addedOn is after last week'], /takes a date as YYYY-MM-DD/],
    ['--since without a date', ['--since', 'recently'], /--since takes auto, a date/],
    ['a filter file that is not there', ['--filter', 'nowhere.yaml'], /cannot read the filter file/],
    [
      'a filter file naming a field parties do not have',
      ['--filter', 'bad-filter.json'],
      /conditions\[0\]: parties have no field "colour"/,
    ],
  ])('%s: exit 2 before any request, nothing written', async (_, flags, message) => {
    const out = join(dir, 'bad.csv');
    writeFileSync(
      join(dir, 'bad-filter.json'),
      JSON.stringify({ conditions: [{ field: 'colour', operator: 'is', value: 'red' }] }),
    );
    // Nothing listens there: had a request been made, the exit code would be 4.
    const closed = await startTestSandbox();
    await closed.close();
    const { code, stderr } = await runCli(
      ['export', 'parties', '--out', out, ...flags, '--base-url', closed.url, '--token', box.token],
      { cwd: dir },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(existsSync(out)).toBe(false);
    expect(temps('.bad.csv.')).toEqual([]);
  });

  it('a state file of another account: exit 2, and the state is left as it is', async () => {
    const out = join(dir, 'other.csv');
    const state = join(dir, 'other.state.json');
    const foreign = `${JSON.stringify({ format: 1, account: 'https://another-account.example', entity: 'parties', query: '{}', since: '2026-01-01T00:00:00.000Z' })}\n`;
    writeFileSync(state, foreign);
    const { code, stderr } = await runCli(
      ['export', 'parties', '--out', out, '--since', 'auto', '--state', state, ...connection()],
      { cwd: dir },
    );
    expect(code).toBe(2);
    expect(stderr).toMatch(/belongs to https:\/\/another-account\.example/);
    expect(stderr).toMatch(/Give each account its own --state file/);
    expect(readFileSync(state, 'utf8')).toBe(foreign);
    expect(existsSync(out)).toBe(false);
  });

  it('the service refuses (a wrong token): exit 4, no file', async () => {
    const out = join(dir, 'refused.csv');
    const { code, stderr } = await runCli(
      ['export', 'parties', '--out', out, '--base-url', box.url, '--token', 'not-the-right-token-0000'],
      { cwd: dir },
    );
    expect(code).toBe(4);
    expect(stderr).not.toContain('not-the-right-token-0000');
    expect(existsSync(out)).toBe(false);
  });

  it('the service cannot be reached: exit 4, no file', async () => {
    const closed = await startTestSandbox();
    const url = closed.url;
    await closed.close();
    const out = join(dir, 'unreachable.csv');
    const { code, stderr } = await runCli(
      ['export', 'parties', '--out', out, '--base-url', url, '--token', box.token],
      { cwd: dir },
    );
    expect(code, stderr).toBe(4);
    expect(existsSync(out)).toBe(false);
  }, 60_000);
});
