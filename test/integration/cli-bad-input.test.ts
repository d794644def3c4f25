import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fakeIo, runCli } from '../helpers/fake-io.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-bad-input-'));
const FIFO = join(dir, 'pipe.csv');
const BOMB = join(dir, 'bomb.yaml');
execFileSync('mkfifo', [FIFO]);
// Each line repeats the one before ten times: nine lines are a billion values once expanded.
writeFileSync(
  BOMB,
  [
    'version: 1',
    'entity: party',
    'key: "{{id}}"',
    'a0: &a0 [x, x, x, x, x, x, x, x, x, x]',
    ...Array.from({ length: 8 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`),
    'fields: [{ to: firstName, value: { column: a } }]',
    '',
  ].join('\n'),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// Past the limits of docs/errors.md: each is refused before the work starts.
const WIDE = join(dir, 'wide.csv');
writeFileSync(WIDE, `${Array.from({ length: 300_000 }, (_, i) => `c${i}`).join(',')}\n${'1,'.repeat(299_999)}1\n`);
const SMALL = join(dir, 'small.csv');
writeFileSync(SMALL, 'c0,c1\n1,2\n');
const mappingOf = (entries: string[]): string =>
  ['version: 1', 'entity: party', 'key: "{{c0}}"', 'fields:', ...entries, ''].join('\n');
const HEAVY = join(dir, 'heavy.yaml');
writeFileSync(
  HEAVY,
  mappingOf(
    Array.from(
      { length: 30_000 },
      (_, i) => `  - {to: custom, definition: "Field number ${i}", tag: null, value: {column: c0}}`,
    ),
  ),
);
const MANY = join(dir, 'many.yaml');
writeFileSync(MANY, mappingOf(Array.from({ length: 6_000 }, () => '  - {to: about, value: {column: c0}}')));
const PLAN_BOMB = join(dir, 'bomb.plan.yaml');
writeFileSync(PLAN_BOMB, readFileSync(BOMB, 'utf8').replace('entity: party', 'steps: []'));

/** A port that is taken for the length of the test. */
let busy: Server;
let busyPort = 0;
beforeAll(async () => {
  busy = createServer();
  await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
  busyPort = (busy.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((resolve) => busy.close(() => resolve())));

/**
 * Every bad value is refused before anything runs: exit 2, one message saying what is wrong and
 * what is accepted, no stack trace, no "internal error".
 */
const CASES: Array<[string, string[], RegExp]> = [
  ['a token too short', ['sandbox', '--token', 't1'], /--token takes at least 8 visible characters/],
  ['an empty token', ['sandbox', '--token', ''], /--token takes at least 8/],
  ['a port out of range', ['sandbox', '--port', '99999'], /--port takes a whole number from 0 to 65535, got "99999"/],
  ['a negative port', ['sandbox', '--port=-1'], /--port takes a whole number from 0 to 65535/],
  ['an empty port', ['sandbox', '--port', ''], /--port takes a whole number/],
  ['a hex port', ['sandbox', '--port', '0x50'], /--port takes a whole number from 0 to 65535, got "0x50"/],
  ['a zero token lifetime', ['sandbox', '--token-ttl', '0'], /--token-ttl takes a whole number from 1/],
  ['a zero rate limit', ['sandbox', '--rate-limit', '0/h'], /the limit must be at least 1/],
  ['a rate over 1', ['sandbox', '--faults', '5xx=7'], /5xx is a share of requests from 0 to 1/],
  ['a negative latency', ['sandbox', '--faults', 'latency=-100'], /"latency=-100" is not KEY=NUMBER/],
  ['an infinite rate', ['sandbox', '--faults', '5xx=Infinity'], /"5xx=Infinity" is not KEY=NUMBER/],
  ['a fault without a value', ['sandbox', '--faults', '5xx='], /"5xx=" is not KEY=NUMBER/],
  ['a fault with two values', ['sandbox', '--faults', 'latency=1=2'], /"latency=1=2" is not KEY=NUMBER/],
  [
    'a client whose redirect is not a URI',
    ['sandbox', '--client', 'id:sec:notauri'],
    /the redirect URI "notauri" is not an http\(s\) address/,
  ],
  [
    'an address not on this machine',
    ['sandbox', '--host', '192.0.2.1', '--port', '0', '--token', 'bad-input-token'],
    /--host 192.0.2.1 is not an address of this machine/,
  ],
  ['an unknown option', ['sandbox', '--prot', '80'], /unknown option --prot; did you mean --port\?/],
  ['import without its input', ['import', '--mapping', 'm.yaml'], /import needs --mapping M and --input F/],
  [
    'run with a bad concurrency',
    ['run', 'p.yaml', '--concurrency', 'many'],
    /--concurrency takes a whole number from 1 to 64/,
  ],
  ['export of an unknown entity', ['export', 'widgets', '--out', 'x.csv'], /export needs an ENTITY/],
  ['export to a format it cannot tell', ['export', 'parties', '--out', 'x.txt'], /cannot tell the format of x.txt/],
  [
    'XLSX to standard output',
    ['export', 'parties', '--out', '-', '--format', 'xlsx'],
    /XLSX cannot go to standard output/,
  ],
  ['an api path without a slash', ['api', 'parties'], /PATH must start with \//],
  [
    'a base address that is no URL',
    ['api', '/parties', '--base-url', 'not a url', '--token', 'abcdefgh'],
    /the base address "not a url" is not a URL/,
  ],
  [
    'a base address that is not http(s)',
    ['api', '/parties', '--base-url', 'ftp://crm.example', '--token', 'abcdefgh'],
    /"ftp:\/\/crm.example" is not an http\(s\) address/,
  ],
  [
    'a base address with a password',
    ['api', '/parties', '--base-url', 'http://user:SECRETPW@127.0.0.1:8787', '--token', 'abcdefgh'],
    /^error \[CONFIG_INVALID\]: the base address "http:\/\/\*\*\*@127\.0\.0\.1:8787" holds a user name or password; crm-ferry does not send them\n/,
  ],
  [
    'a base address with a user',
    ['export', 'parties', '--out', '-', '--base-url', 'https://someone@crm.example.com', '--token', 'abcdefgh'],
    /the base address "https:\/\/\*\*\*@crm\.example\.com" holds a user name or password/,
  ],
  [
    'a login base address with a password',
    ['auth', 'login', '--client-id', 'x', '--base-url', 'https://u:SECRETPW@crm.example.com'],
    /the base address "https:\/\/\*\*\*@crm\.example\.com" holds a user name or password/,
  ],
  [
    'a token with a line break',
    ['api', '/parties', '--base-url', 'http://127.0.0.1:9', '--token', 'abc\r\ndef'],
    /the token holds a character a token cannot have/,
  ],
  [
    'a missing mapping file',
    ['validate', '--mapping', 'no-such-mapping.yaml', '--input', 'x.csv'],
    /MAPPING_NOT_FOUND.*the mapping file does not exist/,
  ],
  [
    'a missing plan file',
    ['validate', '--plan', 'no-such-plan.yaml'],
    /the plan file .*no-such-plan.yaml does not exist/,
  ],
  ['a folder for a file', ['inspect', '.'], /this is a folder, not a file/],
  ['a FIFO for a file', ['inspect', FIFO], /this is not a regular file/],
  ['a YAML alias bomb in a mapping', ['validate', '--mapping', BOMB, '--input', 'x.csv'], /more than 100 times over/],
  ['a YAML alias bomb in a plan', ['validate', '--plan', PLAN_BOMB], /more than 100 times over/],
  [
    'a CSV of 300,000 columns',
    ['inspect', WIDE],
    /SOURCE_HEADER.*the file has 300,000 columns; crm-ferry reads at most 16,384/,
  ],
  ['300,000 columns without a header', ['inspect', WIDE, '--header-row', 'none'], /the file has 300,000 columns/],
  ['a draft of 300,000 columns', ['mapping', 'init', WIDE], /the file has 300,000 columns/],
  [
    'a mapping file over 1 MB',
    ['validate', '--mapping', HEAVY, '--input', SMALL],
    /MAPPING_INVALID.*the mapping file is 2\.\d MB; a mapping file is at most 1 MB/,
  ],
  [
    'a mapping of 6,000 fields',
    ['validate', '--mapping', MANY, '--input', SMALL],
    /MAPPING_INVALID.*fields: the mapping has 6,000 field entries; a mapping takes at most 5,000/,
  ],
  [
    'a login base address that is no URL',
    ['auth', 'login', '--client-id', 'x', '--base-url', 'garbage'],
    /the base address "garbage" is not a URL/,
  ],
  [
    'a redirect URI that is no URL',
    ['auth', 'login', '--client-id', 'x', '--base-url', 'http://127.0.0.1:9', '--redirect-uri', 'garbage'],
    /CONFIG_INVALID.*the redirect URI must be a loopback http address/,
  ],
  [
    'a redirect URI that is not loopback',
    [
      'auth',
      'login',
      '--client-id',
      'x',
      '--base-url',
      'http://127.0.0.1:9',
      '--redirect-uri',
      'http://example.com/cb',
    ],
    /CONFIG_INVALID.*the redirect URI must be a loopback http address/,
  ],
  [
    'a profile with no stored login',
    ['api', '/parties', '--profile', 'nope', '--base-url', 'http://127.0.0.1:9'],
    /CONFIG_MISSING[\s\S]*Run `crm-ferry auth login --client-id ID --profile nope`, or pass a personal token/,
  ],
  [
    'a token over plain http',
    ['api', '/parties', '--base-url', 'http://crm.example.com', '--token', 'abcdefgh'],
    /^error \[CONFIG_INSECURE_TRANSPORT\]: refusing to send credentials over http:\/\/ to crm\.example\.com: they would travel in clear\n/,
  ],
];

describe('bad input on the command line', () => {
  it.each(CASES)('%s: exit 2, one clean message', async (_name, args, message) => {
    const { code, stderr, stdout } = await runCli(args, { env: {} });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/internal error|\n\s+at [\w.<]+ \(|node:internal/);
    expect(stdout).toBe('');
    expect(stderr).not.toContain('SECRETPW');
  });

  it('a mapping with thousands of problems prints the first 50 and the count', async () => {
    const file = join(dir, 'problems.yaml');
    writeFileSync(
      file,
      mappingOf(Array.from({ length: 4_000 }, (_, i) => `  - {to: nosuchtarget${i}, value: {column: c0}}`)),
    );
    const { code, stderr } = await runCli(['validate', '--mapping', file, '--input', SMALL], { env: {} });
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /^error \[MAPPING_INVALID\] at .*problems\.yaml: 4,000 problems in the mapping \(the first 50 here; fix them and validate again to see the rest\):\n/,
    );
    expect(stderr.trim().split('\n').length).toBeLessThanOrEqual(52);
    expect(stderr).toContain('fields[49].to: unknown target `nosuchtarget49`');
    expect(stderr).not.toContain('nosuchtarget50`');
  });

  it('an input of 16,000 columns is named in one pass, and a message lists 50 of them', async () => {
    const file = join(dir, 'same-name.csv');
    writeFileSync(file, `${Array(16_000).fill('a').join(',')}\n${Array(16_000).fill('1').join(',')}\n`);
    const mapping = join(dir, 'reads-b.yaml');
    writeFileSync(mapping, mappingOf(['  - {to: about, value: {column: b}}']));
    const { code, stderr } = await runCli(['validate', '--mapping', mapping, '--input', file], { env: {} });
    expect(code).toBe(2);
    expect(stderr).toMatch(
      /the input has no columns `c0`, `b` \(did you mean `a`\?\), which the mapping reads\n  The input's 16,000 columns are: "a", "a_2", .*"a_50" and 15,950 more\n$/,
    );
  });

  it('Ctrl-C while a login waits for the browser: exit 130, nothing else said', async () => {
    const f = fakeIo({ XDG_CONFIG_HOME: dir });
    const controller = new AbortController();
    const io = { ...f.io, signal: controller.signal };
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const { port: free } = probe.address() as { port: number };
        probe.close(() => resolve(free));
      });
    });
    const { main } = await import('../../src/cli/main.ts');
    const running = main(
      [
        'auth',
        'login',
        '--client-id',
        'x',
        '--base-url',
        'http://127.0.0.1:9',
        '--redirect-uri',
        `http://127.0.0.1:${port}/callback`,
        '--no-browser',
      ],
      io,
    );
    for (let i = 0; i < 200 && !f.out().includes('/oauth/authorise'); i += 1)
      await new Promise((r) => setTimeout(r, 10));
    controller.abort();
    expect(await running).toBe(130);
    expect(f.err()).toBe('');
  });

  it('a port already in use', async () => {
    const { code, stderr } = await runCli(['sandbox', '--port', String(busyPort), '--token', 'bad-input-token']);
    expect(code).toBe(2);
    expect(stderr).toMatch(new RegExp(`port ${busyPort} on 127.0.0.1 is in use; give another --port`));
  });
});
