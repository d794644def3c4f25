import { describe, expect, it } from 'vitest';
import { connectionOptions } from '../../../src/cli/connection-flags.ts';

describe('connection settings: flags, else CRM_FERRY_* from the environment', () => {
  const env = {
    CRM_FERRY_BASE_URL: 'https://env.example',
    CRM_FERRY_TOKEN: 'env-token',
    CRM_FERRY_PROFILE: 'work',
    CRM_FERRY_VERBOSE: '1',
  };

  it('takes every setting from the environment when no flag is given', () => {
    expect(connectionOptions({ values: {}, positionals: [] }, env)).toEqual({
      baseUrl: 'https://env.example',
      token: 'env-token',
      profile: 'work',
      verbose: true,
    });
  });

  it('a flag wins over its variable', () => {
    const args = {
      values: { 'base-url': 'https://flag.example', token: 'flag-token', profile: 'home', verbose: false },
      positionals: [],
    };
    expect(connectionOptions(args, env)).toEqual({
      baseUrl: 'https://flag.example',
      token: 'flag-token',
      profile: 'home',
      verbose: false,
    });
  });

  it('an empty variable counts as not set', () => {
    expect(connectionOptions({ values: {}, positionals: [] }, { CRM_FERRY_TOKEN: '', CRM_FERRY_VERBOSE: '0' })).toEqual(
      { verbose: false },
    );
  });

  it.each(['token', 'base-url', 'profile'])(
    'an empty --%s is refused, not read as absent (a stored login would be used instead)',
    (flag) => {
      expect(() => connectionOptions({ values: { [flag]: '' }, positionals: [] }, env)).toThrow(
        expect.objectContaining({ code: 'USAGE', message: `--${flag} is empty` }),
      );
    },
  );
});
