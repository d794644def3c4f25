// What the importer's benchmarks share: the sandbox in a child process of its own (so that its
// CPU is not the importer's), and the plan they import (organisations, then people linked to them
// with tags and a custom field).
import { fork, type ChildProcess } from 'node:child_process';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { SandboxOptions } from '../src/sandbox/index.ts';

export const BENCH_TOKEN = 'bench-import-token-0123';

export interface ServedSandbox {
  url: string;
  /** The sandbox process's CPU so far (user and system), in milliseconds; NaN where /proc is not there. */
  cpuMs(): number;
  stop(): Promise<void>;
}

/** The sandbox in a child process (bench/sandbox-child.ts), with `options` and the bench token. */
export async function serveSandbox(options: SandboxOptions): Promise<ServedSandbox> {
  const script = fileURLToPath(new URL('./sandbox-child.ts', import.meta.url));
  const child: ChildProcess = fork(script, [JSON.stringify({ ...options, tokens: [BENCH_TOKEN] })], {
    stdio: 'inherit',
    execArgv: ['--import', 'tsx'],
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m: { url: string }) => resolve(m.url));
    child.once('exit', (code) => reject(new Error(`sandbox exited (${code})`)));
  });
  return {
    url,
    cpuMs: () => processCpuMs(child.pid),
    stop: () =>
      new Promise<void>((resolve) => {
        child.once('exit', () => resolve());
        child.send('stop');
      }),
  };
}

/** A process's CPU time from /proc/PID/stat (fields 14 and 15, in clock ticks of 10 ms). */
function processCpuMs(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return (Number(fields[11]) + Number(fields[12])) * 10;
  } catch {
    return Number.NaN;
  }
}

/** `people` people linked to `organisations` organisations, with tags and a custom field; the plan file. */
export function writePlan(dir: string, people: number, organisations: number): string {
  mkdirSync(dir, { recursive: true });
  writeFileSync(
    join(dir, 'orgs.csv'),
    `id,name\n${Array.from({ length: organisations }, (_, i) => `O${i},Bench Org ${i}`).join('\n')}\n`,
  );
  const rows = Array.from(
    { length: people },
    (_, i) =>
      `P${i},First${i},Last${i},p${i}@bench.example,O${i % organisations},${i % 3 === 0 ? 'vip;customer' : 'lead'},${i % 2 === 0 ? 'true' : 'false'}`,
  );
  writeFileSync(join(dir, 'people.csv'), `id,first,last,email,org,tags,vip\n${rows.join('\n')}\n`);
  writeFileSync(
    join(dir, 'orgs.yaml'),
    'version: 1\nentity: party\nkey: "{{id}}"\nfields:\n  - { to: type, value: organisation }\n  - { to: name, value: { column: name } }\n',
  );
  writeFileSync(
    join(dir, 'people.yaml'),
    [
      'version: 1',
      'entity: party',
      'key: "{{id}}"',
      'fields:',
      '  - { to: type, value: person }',
      '  - { to: firstName, value: { column: first } }',
      '  - { to: lastName, value: { column: last } }',
      '  - { to: email, type: Work, value: { column: email } }',
      '  - { to: organisation, ref: organisations, key: "{{org}}" }',
      '  - { to: tags, value: { column: tags, transform: [{ split: ";" }] } }',
      '  - { to: custom, definition: VIP, tag: null, value: { column: vip, transform: [boolean] } }',
      '',
    ].join('\n'),
  );
  const plan = join(dir, 'plan.yaml');
  writeFileSync(
    plan,
    'version: 1\nsteps:\n  - { name: organisations, mapping: orgs.yaml, input: orgs.csv }\n  - { name: people, mapping: people.yaml, input: people.csv }\n',
  );
  return plan;
}
