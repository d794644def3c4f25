import { describe, expect, it } from 'vitest';
import { runCli } from '../../helpers/fake-io.ts';

/** The flags of `enqueue` and `worker`, refused before any database is reached. */
describe('crm-ferry enqueue and worker: usage', () => {
  const store = ['--state-store', 'postgresql://nobody@127.0.0.1:1/none'];
  it.each([
    [['enqueue', '--', 'run', 'plan.yaml'], /enqueue needs the state store that holds the queue/],
    [['worker'], /worker needs the state store that holds the queue/],
    [['enqueue', ...store], /enqueue needs the command of the job/],
    [['enqueue', ...store, '--', 'rollback', 'plan.yaml'], /a job runs run, import, export, backup; got "rollback"/],
    [['enqueue', ...store, '--', 'run', 'plan.yaml', '--token', 'abc'], /may not hold --token/],
    [['enqueue', ...store, '--token-env', 'tok en', '--', 'run', 'p'], /takes the NAME of an environment variable/],
    [
      ['enqueue', ...store, '--token-env', 'A', '--profile', 'b', '--', 'run', 'p'],
      /--profile or --token-env, not both/,
    ],
    [['enqueue', ...store, '--retries', '-1', '--', 'run', 'p'], /--retries takes a whole number from 0 to 100/],
    [['enqueue', ...store, '--retry-delay', 'soon', '--', 'run', 'p'], /--retry-delay takes a whole number/],
    [['enqueue', ...store, '--queue', 'Big Queue', '--', 'run', 'p'], /the queue name "Big Queue" is not a plain/],
    [['enqueue', ...store, '--list', 'extra'], /enqueue --list takes no arguments/],
    [['worker', ...store, 'extra'], /worker takes no arguments/],
    [['worker', ...store, '--jobs', '0'], /--jobs takes a whole number from 1 to 64/],
    [['worker', ...store, '--reap-every', 'often'], /--reap-every takes a duration/],
    [['worker', ...store, '--poll', '100ms'], /--poll must be at least 1s/],
  ])('%j', async (argv, message) => {
    const result = await runCli(argv, { env: {} });
    expect(result.stderr).toMatch(message);
    expect(result.code).toBe(2);
  });

  it('takes the store from CRM_FERRY_STATE_STORE, and says so when it cannot be reached', async () => {
    const result = await runCli(['enqueue', '--', 'run', 'plan.yaml'], {
      env: { CRM_FERRY_STATE_STORE: 'postgresql://nobody:secret-pw@127.0.0.1:1/none' },
    });
    expect(result.code).toBe(2);
    expect(result.stderr).toMatch(
      /error \[JOURNAL_STORE\]: cannot open the job queue in the state store at postgresql:\/\/127\.0\.0\.1:1\/none/,
    );
    expect(result.stderr).not.toContain('secret-pw');
  });
});
