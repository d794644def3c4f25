import { describe, expect, it } from 'vitest';
import { EXIT } from '../../../src/errors/index.ts';
import {
  checkJobSpec,
  describeJob,
  jobArguments,
  jobEnvironment,
  jobOutcome,
  withoutSecrets,
} from '../../../src/fleet/index.ts';

describe('a job of the worker queue', () => {
  it.each([
    [
      { command: 'run', args: ['plan.yaml'] },
      { command: 'run', args: ['plan.yaml'] },
    ],
    [
      { command: 'export', args: [], profile: 'acme' },
      { command: 'export', args: [], profile: 'acme' },
    ],
    [
      { command: 'backup', args: ['--out', 'b'], tokenEnv: 'ACME_TOKEN', baseUrl: 'https://acme.example' },
      { command: 'backup', args: ['--out', 'b'], tokenEnv: 'ACME_TOKEN', baseUrl: 'https://acme.example' },
    ],
  ])('takes %j', (given, expected) => {
    expect(checkJobSpec(given)).toEqual(expected);
  });

  it.each([
    [null, /a job is not an object/],
    [{ command: 'rollback', args: [] }, /a job runs run, import, export, backup; got "rollback"/],
    [{ command: 'run', args: 'plan.yaml' }, /arguments are not a list of words/],
    [{ command: 'run', args: ['plan.yaml', '--token', 'abc'] }, /may not hold --token/],
    [{ command: 'run', args: ['plan.yaml', '--token=abc'] }, /may not hold --token/],
    [{ command: 'run', args: ['--state-store', 'postgresql://x/y'] }, /may not hold --state-store/],
    [{ command: 'run', args: ['--base-url=https://a.example'] }, /may not hold --base-url/],
    [{ command: 'run', args: [], tokenEnv: 'secret value' }, /takes the NAME of an environment variable/],
    [{ command: 'run', args: [], tokenEnv: 'A', profile: 'b' }, /--profile or --token-env, not both/],
    [{ command: 'run', args: [], profile: '../x' }, /is not a login's name/],
    [{ command: 'run', args: [], baseUrl: 'https://user:pw@acme.example' }, /holds a user name or password/],
  ])('refuses %j', (given, message) => {
    expect(() => checkJobSpec(given)).toThrow(message);
  });

  it('is run as its command line, with the worker’s state store', () => {
    expect(jobArguments({ command: 'run', args: ['plan.yaml', '--state-key', 'k'] }, 'postgresql://h/db')).toEqual([
      'run',
      'plan.yaml',
      '--state-key',
      'k',
      '--state-store',
      'postgresql://h/db',
    ]);
    expect(describeJob({ command: 'run', args: ['my plan.yaml'], tokenEnv: 'T' })).toBe(
      'run "my plan.yaml" (token from $T)',
    );
  });

  it.each([
    [
      'a token variable becomes CRM_FERRY_TOKEN, over any token or login of the worker',
      { command: 'run' as const, args: [], tokenEnv: 'ACME', baseUrl: 'https://acme.example' },
      {
        ACME: 'tok-acme',
        CRM_FERRY_TOKEN: 'tok-worker',
        CRM_FERRY_PROFILE: 'p',
        CRM_FERRY_STATE_STORE: 'postgresql://x',
      },
      { CRM_FERRY_TOKEN: 'tok-acme', CRM_FERRY_BASE_URL: 'https://acme.example' },
      ['tok-acme'],
    ],
    [
      "a profile replaces the worker's token",
      { command: 'export' as const, args: [], profile: 'acme' },
      { CRM_FERRY_TOKEN: 'tok-worker' },
      { CRM_FERRY_PROFILE: 'acme' },
      [],
    ],
    [
      "neither: the worker's own credentials",
      { command: 'backup' as const, args: [] },
      { CRM_FERRY_TOKEN: 'tok-worker', CRM_FERRY_BASE_URL: 'https://w.example' },
      { CRM_FERRY_TOKEN: 'tok-worker', CRM_FERRY_BASE_URL: 'https://w.example' },
      ['tok-worker'],
    ],
  ])('resolves its credentials from the worker: %s', (_name, spec, workerEnv, expected, secrets) => {
    const resolved = jobEnvironment(spec, workerEnv);
    expect(resolved.env).toEqual({
      ...Object.fromEntries(Object.entries(workerEnv).filter(([k]) => k === 'ACME')),
      ...expected,
    });
    expect(resolved.secrets).toEqual(secrets);
  });

  it('fails, naming the variable and not a value, when the worker lacks the token variable', () => {
    expect(() => jobEnvironment({ command: 'run', args: [], tokenEnv: 'ACME' }, { CRM_FERRY_TOKEN: 'x' })).toThrow(
      /takes its token from \$ACME, which this worker's environment does not set/,
    );
  });

  it.each([
    ['run', EXIT.OK, 'completed'],
    ['run', EXIT.ROWS_REJECTED, 'completed-with-rejects'],
    ['import', EXIT.ROWS_REJECTED, 'completed-with-rejects'],
    ['export', EXIT.ROWS_REJECTED, 'failed'],
    ['backup', EXIT.INTERRUPTED, 'interrupted'],
    ['run', EXIT.TERMINATED, 'interrupted'],
    ['run', EXIT.INVALID_INPUT, 'failed'],
    ['run', EXIT.SERVICE, 'failed'],
    ['export', EXIT.BUG, 'failed'],
  ] as const)('ends a %s that exits %i as %s', (command, code, outcome) => {
    expect(jobOutcome(command, code)).toBe(outcome);
  });

  it('keeps secrets out of what it stores', () => {
    expect(withoutSecrets('sent tok-123 twice: tok-123', ['tok-123'])).toBe('sent *** twice: ***');
  });
});
