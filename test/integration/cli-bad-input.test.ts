import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/fake-io.ts';

const dir = mkdtempSync(join(tmpdir(), 'ferry-bad-input-'));
const FIFO = join(dir, 'pipe.csv');
const BOMB = join(dir, 'bomb.yaml');
execFileSync('mkfifo', [FIFO]);
// Each line repeats the one before ten times: nine lines are a billion values once expanded.
writeFileSync(
  BOMB,
  ['version: 1', 'entity: party', 'key: "{{id}}"', 'a0: &a0 [x, x, x, x, x, x, x, x, x, x]', ...Array.from({ length: 8 }, (_, i) => `a${i + 1}: &a${i + 1} [${Array(10).fill(`*a${i}`).join(', ')}]`), 'fields: [{ to: firstName, value: { column: a } }]', ''].join('\n'),
);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

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
  ['a client whose redirect is not a URI', ['sandbox', '--client', 'id:sec:notauri'], /the redirect URI "notauri" is not an http\(s\) address/],
  ['an address not on this machine', ['sandbox', '--host', '192.0.2.1', '--port', '0', '--token', 'bad-input-token'], /--host 192.0.2.1 is not an address of this machine/],
  ['an unknown option', ['sandbox', '--prot', '80'], /unknown option --prot; did you mean --port\?/],
  ['import without its input', ['import', '--mapping', 'm.yaml'], /import needs --mapping M and --input F/],
  ['run with a bad concurrency', ['run', 'p.yaml', '--concurrency', 'many'], /--concurrency takes a whole number from 1 to 64/],
  ['export of an unknown entity', ['export', 'widgets', '--out', 'x.csv'], /export needs an ENTITY/],
  ['export to a format it cannot tell', ['export', 'parties', '--out', 'x.txt'], /cannot tell the format of x.txt/],
  ['XLSX to standard output', ['export', 'parties', '--out', '-', '--format', 'xlsx'], /XLSX cannot go to standard output/],
  ['an api path without a slash', ['api', 'parties'], /PATH must start with \//],
  ['a base address that is no URL', ['api', '/parties', '--base-url', 'not a url', '--token', 'abcdefgh'], /the base address "not a url" is not a URL/],
  ['a base address that is not http(s)', ['api', '/parties', '--base-url', 'ftp://crm.example', '--token', 'abcdefgh'], /"ftp:\/\/crm.example" is not an http\(s\) address/],
  ['a token with a line break', ['api', '/parties', '--base-url', 'http://127.0.0.1:9', '--token', 'abc\r\ndef'], /the token holds a character a token cannot have/],
  ['a missing mapping file', ['validate', '--mapping', 'no-such-mapping.yaml', '--input', 'x.csv'], /MAPPING_NOT_FOUND.*the mapping file does not exist/],
  ['a missing plan file', ['validate', '--plan', 'no-such-plan.yaml'], /the plan file .*no-such-plan.yaml does not exist/],
  ['a folder for a file', ['inspect', '.'], /this is a folder, not a file/],
  ['a FIFO for a file', ['inspect', FIFO], /this is not a regular file/],
  ['a YAML alias bomb in a mapping', ['validate', '--mapping', BOMB, '--input', 'x.csv'], /more than 100 times over/],
];

describe('bad input on the command line', () => {
  it.each(CASES)('%s: exit 2, one clean message', async (_name, args, message) => {
    const { code, stderr, stdout } = await runCli(args, { env: {} });
    expect(code).toBe(2);
    expect(stderr).toMatch(message);
    expect(stderr).not.toMatch(/internal error|\n\s+at [\w.<]+ \(|node:internal/);
    expect(stdout).toBe('');
  });

  it('a port already in use', async () => {
    const { code, stderr } = await runCli(['sandbox', '--port', String(busyPort), '--token', 'bad-input-token']);
    expect(code).toBe(2);
    expect(stderr).toMatch(new RegExp(`port ${busyPort} on 127.0.0.1 is in use; give another --port`));
  });
});
