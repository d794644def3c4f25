import { spawn, type ChildProcess } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobsView } from '../../src/workbench/api.ts';
import { runCli } from '../helpers/fake-io.ts';
import { allPages, startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

/**
 * A run started in the workbench, the workbench killed (kill -9) while it writes, and the same
 * plan finished by `crm-ferry run`: every row in the account once.
 */
const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-wb-crash-'));
const PEOPLE = 200;
const COMPANIES = 40;
let box: TestSandbox;
let child: ChildProcess | undefined;

const env = (): NodeJS.ProcessEnv => ({ ...process.env, CRM_FERRY_BASE_URL: box.url, CRM_FERRY_TOKEN: box.token });

beforeAll(async () => {
  // Each request takes a while, so that the kill lands while rows are being written.
  box = await startTestSandbox({ faults: { errorRate: 0, dropAfterWriteRate: 0, latencyMs: 60, latencyJitterMs: 0 } });
  copyFileSync(join(ROOT, 'mappings/generic-organisations.yaml'), join(dir, 'organisations.yaml'));
  copyFileSync(join(ROOT, 'mappings/generic-people.yaml'), join(dir, 'people.yaml'));
  const rows = Array.from(
    { length: PEOPLE },
    (_, i) => `Pat,Person ${i},pat.${i}@example.com,,Company ${i % COMPANIES},,,,,,,,`,
  );
  writeFileSync(
    join(dir, 'contacts.csv'),
    `first_name,last_name,email,phone,company,job_title,street,city,postcode,country,tags,notes,date_added\n${rows.join('\n')}\n`,
  );
  writeFileSync(
    join(dir, 'plan.yaml'),
    'version: 1\nsteps:\n  - { name: organisations, mapping: organisations.yaml, input: contacts.csv }\n  - { name: people, mapping: people.yaml, input: contacts.csv }\n',
  );
});

afterAll(async () => {
  if (child && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  await box?.close();
  rmSync(dir, { recursive: true, force: true });
});

/** Reads the events stream until `until` holds for a view. */
async function waitForEvent(origin: string, cookie: string, until: (view: JobsView) => boolean): Promise<JobsView> {
  const answer = await request(`${origin}/api/events`, { headers: { cookie } });
  let buffer = '';
  try {
    for await (const chunk of answer.body) {
      buffer += chunk.toString();
      let end: number;
      while ((end = buffer.indexOf('\n\n')) !== -1) {
        const message = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        if (!message.startsWith('data: ')) continue;
        const view = JSON.parse(message.slice('data: '.length)) as JobsView;
        if (until(view)) return view;
      }
    }
  } finally {
    answer.body.destroy();
  }
  throw new Error('the events stream ended first');
}

describe('a run started in the workbench and killed', () => {
  it('is finished by `crm-ferry run` on the same plan, every row once', async () => {
    child = spawn(process.execPath, [join(ROOT, 'bin/crm-ferry.js'), 'workbench', dir], {
      env: env(),
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stderr = '';
    child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
    const lines = createInterface({ input: child.stdout! });
    const url = await new Promise<string>((found, failed) => {
      lines.on('line', (line) => {
        const match = /^\s+(http:\/\/127\.0\.0\.1:\d+\/\?session=\S+)$/.exec(line);
        if (match) found(match[1] as string);
      });
      child?.once('exit', (code) =>
        failed(new Error(`the workbench exited (${code}) before printing its address: ${stderr}`)),
      );
    });
    const origin = new URL(url).origin;
    const entered = await request(url);
    await entered.body.dump();
    const cookie = String(entered.headers['set-cookie']).split(';')[0] as string;
    const started = await request(`${origin}/api/run`, {
      method: 'POST',
      headers: { cookie, origin, 'content-type': 'application/json' },
      body: '{}',
    });
    expect(started.statusCode, await started.body.text()).toBe(200);

    // Killed as soon as the workbench says some people are written: mid-run.
    const seen = await waitForEvent(
      origin,
      cookie,
      (view) => (view.current?.progress?.steps.find((s) => s.step === 'people')?.created ?? 0) >= 5,
    );
    const exited = new Promise((done) => child?.once('exit', done));
    child.kill('SIGKILL');
    await exited;
    const writtenBefore = seen.current?.progress?.steps.reduce((sum, s) => sum + s.created, 0) ?? 0;
    expect(writtenBefore).toBeGreaterThan(0);

    const finished = await runCli(['run', 'plan.yaml'], { cwd: dir, env: env() });
    expect(finished.code, finished.stdout + finished.stderr).toBe(0);
    expect(finished.stdout).toContain('Done: every row is in the account.');
    // The run had not ended: `run` wrote the rest.
    const createdAfter = [...finished.stdout.matchAll(/^\s+created\s+(\d+)/gm)].reduce(
      (sum, m) => sum + Number(m[1]),
      0,
    );
    expect(createdAfter).toBeGreaterThan(0);

    const parties = await allPages(box, '/parties', 'parties');
    for (let i = 0; i < PEOPLE; i += 1) {
      const email = `pat.${i}@example.com`;
      const found = parties.filter((p) =>
        (p.emailAddresses ?? []).some((e: { address: string }) => e.address === email),
      );
      expect(found.length, email).toBe(1);
    }
    for (let i = 0; i < COMPANIES; i += 1) {
      expect(parties.filter((p) => p.type === 'organisation' && p.name === `Company ${i}`).length, `Company ${i}`).toBe(
        1,
      );
    }
  }, 180_000);
});
