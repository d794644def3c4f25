import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { main } from '../../src/cli/main.ts';
import { fakeIo } from '../helpers/fake-io.ts';
import { addParty } from '../helpers/records.ts';
import { startTestSandbox, type TestSandbox } from '../helpers/sandbox.ts';

describe('crm-ferry api', () => {
  let sandbox: TestSandbox;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  beforeAll(async () => {
    sandbox = await startTestSandbox();
    dir = await mkdtemp(join(tmpdir(), 'ferry-api-'));
    env = { CRM_FERRY_BASE_URL: sandbox.url, CRM_FERRY_TOKEN: sandbox.token, XDG_CONFIG_HOME: dir };
    for (let i = 0; i < 130; i += 1) addParty(sandbox.store, { firstName: 'Api', lastName: `Person ${i}` });
  });
  afterAll(async () => {
    await sandbox.close();
    await rm(dir, { recursive: true, force: true });
  });

  it('streams every page as JSON lines with --paginate', async () => {
    const f = fakeIo(env);
    expect(await main(['api', '/parties', '--paginate'], f.io)).toBe(0);
    const lines = f
      .out()
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(lines).toHaveLength(130);
    expect(lines[0]).toMatchObject({ type: 'person', firstName: 'Api' });
  });

  it('POSTs --data from a file and prints the answer', async () => {
    const file = join(dir, 'org.json');
    await writeFile(file, JSON.stringify({ party: { type: 'organisation', name: 'From File Ltd' } }));
    const f = fakeIo(env, dir);
    expect(await main(['api', '/parties', '--data', '@org.json'], f.io)).toBe(0);
    expect(JSON.parse(f.out()).party).toMatchObject({ type: 'organisation', name: 'From File Ltd' });
  });

  it('sends PUT with query parameters', async () => {
    const id = sandbox.store.parties.all()[0]?.id;
    const f = fakeIo(env);
    expect(
      await main(
        ['api', 'PUT', `/parties/${id}`, '--data', '{"party":{"jobTitle":"Chief"}}', '--query', 'embed=tags'],
        f.io,
      ),
    ).toBe(0);
    expect(JSON.parse(f.out()).party).toMatchObject({ id, jobTitle: 'Chief', tags: [] });
  });

  it('reports a service error with its code and exit code 4, never the token', async () => {
    const f = fakeIo(env);
    expect(await main(['api', '/parties/999999999'], f.io)).toBe(4);
    expect(f.err()).toMatch(/^error \[API_NOT_FOUND\]: GET \/api\/v2\/parties\/999999999: the service answered 404/);
    expect(f.err()).not.toContain(sandbox.token);
  });

  it.each([
    [['api'], /api needs a PATH/],
    [['api', 'FETCH', '/parties'], /unknown method "FETCH"/],
    [['api', 'parties'], /PATH must start with \//],
    [['api', '/parties', '--data', '{broken'], /--data is not valid JSON/],
    [['api', '/parties', '--query', 'novalue'], /--query takes KEY=VALUE/],
  ])('refuses %j with exit code 2', async (argv, message) => {
    const f = fakeIo(env);
    expect(await main(argv, f.io)).toBe(2);
    expect(f.err()).toMatch(message);
  });

  it('says how to log in when there are no credentials', async () => {
    const f = fakeIo({ CRM_FERRY_BASE_URL: sandbox.url, XDG_CONFIG_HOME: dir });
    expect(await main(['api', '/parties'], f.io)).toBe(2);
    expect(f.err()).toMatch(/error \[CONFIG_MISSING\]: no credentials/);
    expect(f.err()).toMatch(/crm-ferry auth login/);
  });
});
