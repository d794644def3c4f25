import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, describe, expect, it, vi } from 'vitest';
import { FerryError } from '../../../src/errors/index.ts';
import { StateDir } from '../../../src/journal/index.ts';

/**
 * When on, the n-th removal of a lock file waits n times 40 ms: the runs that found the lock stale
 * at the same instant come to remove it one after the other, as when the machine is busy.
 */
const slowRemoval = vi.hoisted(() => ({ on: false, count: 0 }));
vi.mock('node:fs/promises', async (importOriginal) => {
  const fs = await importOriginal<typeof import('node:fs/promises')>();
  const delayed = async (path: unknown): Promise<void> => {
    if (!slowRemoval.on || !String(path).endsWith('/lock')) return;
    slowRemoval.count += 1;
    await new Promise((resolve) => setTimeout(resolve, (slowRemoval.count - 1) * 40));
  };
  const rm: typeof fs.rm = async (path, options) => {
    await delayed(path);
    return fs.rm(path, options);
  };
  const unlink: typeof fs.unlink = async (path) => {
    await delayed(path);
    return fs.unlink(path);
  };
  return { ...fs, default: { ...fs, rm, unlink }, rm, unlink };
});

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
const dir = mkdtempSync(join(tmpdir(), 'ferry-lock-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const account = { baseUrl: 'https://a.example', account: 'https://a.example' };
const users = async (): Promise<number[]> => [];
/** A lock left by a process that no longer runs. */
const stale = (): string => JSON.stringify({ pid: 2 ** 22 + 23, host: hostname(), since: '2026-01-01T00:00:00.000Z' });

describe('the state lock, taken over from a dead process', () => {
  it('goes to exactly one of several runs that start at the same instant', async () => {
    for (let round = 0; round < 20; round += 1) {
      const stateDir = join(dir, `round-${round}`);
      mkdirSync(stateDir);
      writeFileSync(join(stateDir, 'lock'), stale());
      const outcomes = await Promise.allSettled(
        Array.from({ length: 6 }, () => StateDir.open({ dir: stateDir, account, users })),
      );
      const winners = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
      const refusals = outcomes.flatMap((o) => (o.status === 'rejected' ? [o.reason as FerryError] : []));
      expect(winners, `round ${round}`).toHaveLength(1);
      expect(refusals.map((e) => e.code)).toEqual(Array(5).fill('JOURNAL_LOCKED'));
      await winners[0]?.close();
      // No lock, claim or temporary file stays behind.
      expect(readdirSync(stateDir).sort()).toEqual(['journal', 'results', 'state.json']);
    }
  });

  it('goes to one run when the others come to remove the stale lock late (they do not remove the new one)', async () => {
    slowRemoval.on = true;
    try {
      for (let round = 0; round < 5; round += 1) {
        slowRemoval.count = 0;
        const stateDir = join(dir, `slow-${round}`);
        mkdirSync(stateDir);
        writeFileSync(join(stateDir, 'lock'), stale());
        const outcomes = await Promise.allSettled(
          Array.from({ length: 4 }, () => StateDir.open({ dir: stateDir, account, users })),
        );
        const winners = outcomes.flatMap((o) => (o.status === 'fulfilled' ? [o.value] : []));
        expect(winners, `round ${round}`).toHaveLength(1);
        for (const winner of winners) await winner.close();
      }
    } finally {
      slowRemoval.on = false;
    }
  });

  it('goes to exactly one of several processes that start at the same instant', async () => {
    const stateDir = join(dir, 'processes');
    mkdirSync(stateDir);
    writeFileSync(join(stateDir, 'lock'), stale());
    // Started by events, not by the clock (a child that starts late on a busy machine would find
    // the lock released): each child says `ready` once loaded and opens the state at `go`, which
    // all get together; the one that took the lock holds it until every child has said how it went.
    const script = `
      import { createInterface } from 'node:readline';
      import { StateDir } from ${JSON.stringify(join(ROOT, 'src/journal/index.ts'))};
      const lines = createInterface({ input: process.stdin });
      const next = () => new Promise((resolve) => lines.once('line', resolve));
      const go = next();
      console.log('ready');
      await go;
      try {
        const state = await StateDir.open({ dir: ${JSON.stringify(stateDir)}, account: ${JSON.stringify(account)}, users: async () => [] });
        const release = next();
        console.log('took');
        await release;
        await state.close();
      } catch (error) {
        console.log(error.code);
      }
      lines.close();`;
    const children = Array.from({ length: 4 }, () => {
      const child = spawn(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
        cwd: ROOT,
        stdio: ['pipe', 'pipe', 'inherit'],
      });
      const said: string[] = [];
      const waiters: Array<() => void> = [];
      child.stdout.setEncoding('utf8');
      let buffer = '';
      child.stdout.on('data', (chunk: string) => {
        buffer += chunk;
        const parts = buffer.split('\n');
        buffer = parts.pop() ?? '';
        said.push(...parts.filter((line) => line !== ''));
        for (const wake of waiters.splice(0)) wake();
      });
      const closed = new Promise<void>((resolve, reject) => {
        child.on('error', reject);
        child.on('close', () => resolve());
      });
      /** Resolves when the child has said `count` lines. */
      const lines = (count: number): Promise<string[]> =>
        new Promise((resolve, reject) => {
          const check = (): void => {
            if (said.length >= count) resolve(said.slice(0, count));
            else if (child.exitCode !== null) reject(new Error(`a child ended after saying ${JSON.stringify(said)}`));
            else waiters.push(check);
          };
          child.once('exit', () => waiters.push(check) && check());
          check();
        });
      return { child, lines, closed };
    });
    await Promise.all(children.map((c) => c.lines(1)));
    for (const { child } of children) child.stdin.write('go\n');
    const outcomes = await Promise.all(children.map(async (c) => (await c.lines(2))[1] as string));
    for (const [i, { child }] of children.entries()) {
      if (outcomes[i] === 'took') child.stdin.write('release\n');
      child.stdin.end();
    }
    await Promise.all(children.map((c) => c.closed));
    expect([...outcomes].sort()).toEqual(['JOURNAL_LOCKED', 'JOURNAL_LOCKED', 'JOURNAL_LOCKED', 'took']);
  }, 60_000);

  it('a run that closes does not remove a lock that is no longer its own', async () => {
    const stateDir = join(dir, 'replaced');
    const first = await StateDir.open({ dir: stateDir, account, users });
    // Someone removed the lock by hand, and another run took the state.
    rmSync(join(stateDir, 'lock'));
    const second = await StateDir.open({ dir: stateDir, account, users });
    await first.close();
    expect(
      (await StateDir.open({ dir: stateDir, account, users }).catch((e: unknown) => e)) as FerryError,
    ).toMatchObject({ code: 'JOURNAL_LOCKED' });
    await second.close();
  });
});

describe('a lock whose holder is not what it says', () => {
  /** The lock, and what opening the state over it gives: the state (the lock was stale) or the refusal. */
  async function openOver(
    name: string,
    holder: Record<string, unknown>,
  ): Promise<{ opened: boolean; error: FerryError | null; lockFile: string }> {
    const stateDir = join(dir, name);
    mkdirSync(stateDir);
    const lockFile = join(stateDir, 'lock');
    writeFileSync(lockFile, JSON.stringify({ host: hostname(), since: '2026-01-01T00:00:00.000Z', ...holder }));
    try {
      const state = await StateDir.open({ dir: stateDir, account, users });
      await state.close();
      return { opened: true, error: null, lockFile };
    } catch (error) {
      return { opened: false, error: error as FerryError, lockFile };
    }
  }

  it.each([0, -1, 1.5, '123'])('takes over a lock naming process %j, which is no process', async (pid) => {
    const { opened, error } = await openOver(`pid-${String(pid)}`, { pid });
    expect(error).toBeNull();
    expect(opened).toBe(true);
  });

  it('takes over a lock whose process id now belongs to another program (another start time)', async () => {
    // The test's own parent runs, but it is not the process that took this lock.
    const { opened, error } = await openOver('reused-pid', { pid: process.ppid, start: '1', token: 'x' });
    expect(error).toBeNull();
    expect(opened).toBe(true);
  });

  it('takes over a lock taken before the machine last started (another boot)', async () => {
    const { opened, error } = await openOver('other-boot', { pid: process.ppid, boot: 'an-earlier-boot' });
    expect(error).toBeNull();
    expect(opened).toBe(true);
  });

  it('refuses a lock its running holder took, saying how to clear it if that is wrong', async () => {
    const { readFileSync } = await import('node:fs');
    const start = readFileSync(`/proc/${process.ppid}/stat`, 'utf8');
    const ticks = start.slice(start.lastIndexOf(')') + 2).split(' ')[19];
    const { error, lockFile } = await openOver('alive', { pid: process.ppid, start: ticks });
    expect(error?.code).toBe('JOURNAL_LOCKED');
    expect(error?.hint).toContain(
      `If no crm-ferry runs as process ${process.ppid} (\`ps -p ${process.ppid}\`), remove ${lockFile} and run again.`,
    );
  });

  it('refuses a lock from another machine, naming it and the file to remove', async () => {
    const { error, lockFile } = await openOver('other-host', { pid: 4242, host: 'build-7.example' });
    expect(error?.code).toBe('JOURNAL_LOCKED');
    expect(error?.message).toContain('process 4242 on build-7.example');
    expect(error?.hint).toBe(
      `A lock taken on another machine (build-7.example) cannot be checked from here: if no crm-ferry runs there on this state any more, remove ${lockFile} and run again.`,
    );
  });
});

describe('opening a state folder', () => {
  it('removes the temporary file a run left when its atomic write failed or it was killed', async () => {
    const stateDir = join(dir, 'left-temps');
    mkdirSync(stateDir);
    const left = `.state.json.${2 ** 22 + 23}.0a1b2c3d4e5f.tmp`;
    writeFileSync(join(stateDir, left), '');
    const state = await StateDir.open({ dir: stateDir, account, users });
    await state.close();
    expect(readdirSync(stateDir)).not.toContain(left);
  });
});
