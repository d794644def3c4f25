/**
 * A PostgreSQL database of a test's own: a new database on the server at 127.0.0.1:5432 (trust
 * authentication, as on the machines the tests run on), or, when none answers there, on a private
 * cluster started for the test run from the server binaries (initdb, pg_ctl) in a temporary folder,
 * listening on 127.0.0.1 only. Without either, `null`, and the caller skips, saying why.
 */
import { execFile } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

const run = promisify(execFile);

export interface TestDatabase {
  url: string;
  /** Drops the database (and stops a private cluster started for it). */
  drop(): Promise<void>;
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** The folder of initdb and pg_ctl: on the PATH, or Debian's /usr/lib/postgresql/VERSION/bin. */
function serverBinaries(): string | null {
  for (const dir of (process.env.PATH ?? '').split(':'))
    if (dir && existsSync(join(dir, 'initdb')) && existsSync(join(dir, 'pg_ctl'))) return dir;
  const debian = '/usr/lib/postgresql';
  if (!existsSync(debian)) return null;
  for (const version of readdirSync(debian).sort().reverse()) {
    const bin = join(debian, version, 'bin');
    if (existsSync(join(bin, 'initdb'))) return bin;
  }
  return null;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Starts a cluster in a temporary folder; as root, as the `postgres` user (initdb refuses root). */
async function privateCluster(bin: string): Promise<{ url: string; stop(): Promise<void> } | null> {
  const dir = mkdtempSync(join(tmpdir(), 'ferry-pg-'));
  const asRoot = process.getuid?.() === 0;
  const as = async (command: string, args: string[]): Promise<void> => {
    if (asRoot) await run('runuser', ['-u', 'postgres', '--', join(bin, command), ...args]);
    else await run(join(bin, command), args);
  };
  try {
    if (asRoot) await run('chown', ['postgres', dir]);
    const data = join(dir, 'data');
    await as('initdb', ['-D', data, '-U', 'postgres', '--auth=trust', '--no-sync']);
    const port = await freePort();
    await as('pg_ctl', [
      '-D',
      data,
      '-w',
      '-l',
      join(dir, 'log'),
      '-o',
      `-p ${port} -c listen_addresses=127.0.0.1 -k ${dir}`,
      'start',
    ]);
    return {
      url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
      stop: async () => {
        await as('pg_ctl', ['-D', data, '-m', 'immediate', 'stop']).catch(() => undefined);
        rmSync(dir, { recursive: true, force: true });
      },
    };
  } catch {
    rmSync(dir, { recursive: true, force: true });
    return null;
  }
}

/** A new, empty database, or null (with `why`) when no PostgreSQL can be had. */
export async function testDatabase(): Promise<TestDatabase | { why: string }> {
  let server = process.env.CRM_FERRY_TEST_POSTGRES ?? 'postgresql://postgres@127.0.0.1:5432/postgres';
  let stop: (() => Promise<void>) | undefined;
  if (!(await answers(server))) {
    const bin = serverBinaries();
    const cluster = bin === null ? null : await privateCluster(bin);
    if (cluster === null)
      return {
        why: `no PostgreSQL answers at ${server}, and ${bin === null ? 'no server binaries (initdb, pg_ctl) were found' : 'a private cluster could not be started'}`,
      };
    server = cluster.url;
    stop = cluster.stop;
  }
  const name = `ferry_test_${process.pid}_${Math.floor(Math.random() * 1e9)}`;
  const admin = new pg.Client({ connectionString: server });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  await admin.end();
  const url = new URL(server);
  url.pathname = `/${name}`;
  return {
    url: url.toString(),
    drop: async () => {
      const client = new pg.Client({ connectionString: server });
      await client.connect();
      await client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
      await client.end();
      await stop?.();
    },
  };
}
