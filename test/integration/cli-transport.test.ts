import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, type Server } from 'node:net';
import { networkInterfaces, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { CredentialStore, defaultCredentialsPath } from '../../src/client/credentials.ts';
import { runCli } from '../helpers/fake-io.ts';

const ROOT = resolve(import.meta.dirname, '../..');

/**
 * An address of this machine that is not loopback, where one exists, with a listener that counts
 * connections: the commands must refuse before connecting, even though the address would answer.
 * Without such an interface, a documentation address (TEST-NET-1) that nobody answers on.
 */
function outsideAddress(): string {
  for (const list of Object.values(networkInterfaces())) {
    for (const item of list ?? []) if (!item.internal && item.family === 'IPv4') return item.address;
  }
  return '192.0.2.1';
}

let listener: Server | null = null;
let connections = 0;
let baseUrl = '';
let dir = '';
const SECRET = 'client-secret-that-must-stay-home';
const REFRESH = 'refresh-token-that-must-stay-home';

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), 'ferry-transport-'));
  const host = outsideAddress();
  const server = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  const port = await new Promise<number>((done) => {
    server.once('error', () => done(9));
    server.listen(0, host, () => done((server.address() as { port: number }).port));
  });
  if (server.listening) listener = server;
  baseUrl = `http://${host}:${port}`;
  // A login stored for that address, as an older crm-ferry (or a hand edit) could have left it.
  await new CredentialStore(defaultCredentialsPath(env())).put('default', {
    baseUrl,
    clientId: 'ferry-cli',
    clientSecret: SECRET,
    accessToken: 'access-token-that-must-stay-home',
    refreshToken: REFRESH,
    expiresAt: Date.now() - 1000,
    scope: 'read write',
  });
});
afterAll(async () => {
  await new Promise<void>((done) => (listener ? listener.close(() => done()) : done()));
  await rm(dir, { recursive: true, force: true });
});

function env(): NodeJS.ProcessEnv {
  return { XDG_CONFIG_HOME: dir };
}

const token = ['--token', 'personal-token-1234'];
const mapping = join(ROOT, 'mappings/generic-people.yaml');
const input = join(ROOT, 'samples/contacts.csv');

/** Every command that sends a secret, each pointed at a plain-http address that is not this machine's loopback. */
const COMMANDS: Array<[string, () => string[]]> = [
  [
    'auth login',
    () => [
      'auth',
      'login',
      '--base-url',
      baseUrl,
      '--client-id',
      'ferry-cli',
      '--client-secret',
      SECRET,
      '--no-browser',
      '--redirect-uri',
      'http://127.0.0.1:0/callback',
    ],
  ],
  ['auth status (a stored login, refreshed first)', () => ['auth', 'status']],
  ['auth logout (revokes the stored refresh token)', () => ['auth', 'logout']],
  ['api with a token', () => ['api', '/parties', '--base-url', baseUrl, ...token]],
  ['api with the stored login', () => ['api', '/parties']],
  [
    'import',
    () => [
      'import',
      '--mapping',
      mapping,
      '--input',
      input,
      '--base-url',
      baseUrl,
      ...token,
      '--state-dir',
      join(dir, 'import-state'),
    ],
  ],
  [
    'run',
    () => [
      'run',
      join(ROOT, 'samples/plans/contacts.plan.yaml'),
      '--base-url',
      baseUrl,
      ...token,
      '--state-dir',
      join(dir, 'run-state'),
    ],
  ],
  ['export', () => ['export', 'parties', '--out', join(dir, 'parties.csv'), '--base-url', baseUrl, ...token]],
  [
    'validate --online',
    () => [
      'validate',
      '--mapping',
      mapping,
      '--input',
      input,
      '--online',
      '--base-url',
      baseUrl,
      ...token,
      '--rejects',
      join(dir, 'rejects.csv'),
    ],
  ],
];

describe('credentials never travel in clear off loopback', () => {
  it.each(COMMANDS)('%s: exit 2, CONFIG_INSECURE_TRANSPORT, nothing sent', async (_name, args) => {
    const before = connections;
    const { code, stdout, stderr } = await runCli(args(), { env: env(), cwd: dir });
    expect(stderr).toMatch(
      /CONFIG_INSECURE_TRANSPORT.*refusing to send credentials over http:\/\/ to [\d.]+: they would travel in clear/,
    );
    expect(code).toBe(2);
    expect(connections).toBe(before);
    for (const text of [stdout, stderr]) {
      expect(text).not.toContain(SECRET);
      expect(text).not.toContain(REFRESH);
      expect(text).not.toContain('personal-token-1234');
    }
  });

  it('keeps the stored login when logout is refused (nothing was revoked)', async () => {
    await runCli(['auth', 'logout'], { env: env(), cwd: dir });
    expect(await new CredentialStore(defaultCredentialsPath(env())).get('default')).toMatchObject({
      refreshToken: REFRESH,
    });
  });

  it('the listener was reachable, so a refusal is the rule and not a network failure', () => {
    if (!listener) return; // no non-loopback interface on this machine: the address is unreachable anyway
    expect(connections).toBe(0);
  });
});
