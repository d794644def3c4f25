/**
 * A missing input is found before anything is done (issue 26, item 10): exit 2 promises that
 * nothing was, so the account is not asked anything and no state folder is made, and the message
 * is about the missing file even where an older state of another account lies in the folder.
 */
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox } from '../helpers/sandbox.ts';
import { CHECKOUT } from '../helpers/checkout-copy.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-missing-input-'));
/** An account address that counts what it is asked (and answers nothing useful). */
let server: Server;
let asked = 0;
let url = '';

beforeAll(async () => {
  server = createServer((request, response) => {
    asked += 1;
    response.writeHead(500, { 'content-type': 'application/json' }).end('{"message":"not for this test"}');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const address = server.address();
  url = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
});
afterAll(async () => {
  await new Promise((resolve) => server.close(resolve));
  rmSync(dir, { recursive: true, force: true });
});

/** A folder with a mapping copied from the checkout and the README's input not there. */
function project(name: string): string {
  const folder = join(dir, name);
  mkdirSync(folder, { recursive: true });
  writeFileSync(
    join(folder, 'organisations.yaml'),
    readFileSync(join(CHECKOUT, 'mappings/generic-organisations.yaml')),
  );
  writeFileSync(
    join(folder, 'plan.yaml'),
    ['version: 1', 'steps:', '  - { name: organisations, mapping: organisations.yaml, input: contacts.csv }', ''].join(
      '\n',
    ),
  );
  return folder;
}

const env = (): NodeJS.ProcessEnv => ({ CRM_FERRY_BASE_URL: url, CRM_FERRY_TOKEN: 'missing-input-token' });

describe('a missing input (issue 26, item 10)', () => {
  it.each([
    ['import', ['import', '--mapping', 'organisations.yaml', '--input', 'contacts.csv']],
    ['import --dry-run', ['import', '--mapping', 'organisations.yaml', '--input', 'contacts.csv', '--dry-run']],
    ['run', ['run', 'plan.yaml']],
    ['setup', ['setup', 'plan.yaml']],
  ])('%s: exit 2 naming the file, no request, no state folder', async (name, argv) => {
    const folder = project(name.replace(/\W+/g, '-'));
    asked = 0;
    const result = await runCli(argv, { cwd: folder, env: env() });
    expect(result.code, result.stderr).toBe(2);
    expect(result.stderr).toMatch(/error \[(SOURCE_NOT_FOUND|PLAN_INVALID)\]/);
    expect(result.stderr).toContain(join(folder, 'contacts.csv'));
    expect(asked).toBe(0);
    expect(existsSync(join(folder, '.crm-ferry'))).toBe(false);
  });

  it('is what a folder holding an older state of another account is told, not the state', async () => {
    const folder = project('older-state');
    // A first import into one account leaves its state; the input is there then.
    writeFileSync(
      join(folder, 'contacts.csv'),
      'company,street,city,postcode,country\nAcme,1 Main St,Leeds,LS1 1AA,United Kingdom\n',
    );
    const old = await startTestSandbox();
    try {
      const first = await runCli(['import', '--mapping', 'organisations.yaml', '--input', 'contacts.csv'], {
        cwd: folder,
        env: { CRM_FERRY_BASE_URL: old.url, CRM_FERRY_TOKEN: old.token },
      });
      expect(first.code, first.stderr).toBe(0);
    } finally {
      await old.close();
    }
    rmSync(join(folder, 'contacts.csv'));
    const other = await startTestSandbox();
    try {
      const result = await runCli(['import', '--mapping', 'organisations.yaml', '--input', 'contacts.csv'], {
        cwd: folder,
        env: { CRM_FERRY_BASE_URL: other.url, CRM_FERRY_TOKEN: other.token },
      });
      expect(result.code).toBe(2);
      expect(result.stderr).toMatch(/error \[SOURCE_NOT_FOUND\]/);
      expect(result.stderr).not.toMatch(/JOURNAL_ACCOUNT/);
    } finally {
      await other.close();
    }
  });
});
