// The importer as the file grows: `crm-ferry import` of N people (an e-mail address, a phone and an
// organisation by name, one organisation for forty people) into a sandbox in a process of its
// own, then the same command again with nothing changed (the re-run), then `validate` of the
// file, `verify` of the import and `export parties` of the account, each timed by
// /usr/bin/time: wall, CPU (user + system) and peak RSS of the command's process. Not a test.
//   npm run bench -- import-scale [--rows 10000] [--latency 0] [--concurrency 16] [--root DIR ...]
//     [--limit N] [--only import,validate,verify,export]
// `--root` names a checkout of other code (e.g. main, exported with `git archive`, with a link to
// this node_modules) to run the same way, side by side: its importer against its own sandbox.
// Both run from their TypeScript sources (tsx), start-up included. `--limit N` stops the first run
// after N rows and lets a second run go on from there (a run in parts, resumed); its figures are
// the two runs'. The machine may be shared: the load average is printed with every line.
import { spawn } from 'node:child_process';
import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { timedNode, type Timed } from './harness.ts';

const { values } = parseArgs({
  options: {
    rows: { type: 'string', default: '10000' },
    latency: { type: 'string', default: '0' },
    concurrency: { type: 'string', default: '16' },
    root: { type: 'string', multiple: true },
    limit: { type: 'string' },
    /** The commands to time besides the import (which every other needs): e.g. `import` alone. */
    only: { type: 'string', default: 'import,validate,verify,export' },
  },
});
const rows = Number(values.rows);
const here = fileURLToPath(new URL('..', import.meta.url));
const roots = (values.root ?? [here]).map((root) => resolve(root));
const TOKEN = 'bench-token-0123456789';

function writeInput(dir: string): { mapping: string; input: string } {
  mkdirSync(dir, { recursive: true });
  const input = join(dir, 'people.csv');
  const lines = ['id,first,last,email,phone,company'];
  for (let i = 0; i < rows; i += 1)
    lines.push(
      `P${i},First${i},Last${i},p${i}@bench.example,+44 20 ${30_000_000 + i},Bench Company ${Math.floor(i / 40)}`,
    );
  writeFileSync(input, `${lines.join('\n')}\n`);
  const mapping = join(dir, 'people.yaml');
  writeFileSync(
    mapping,
    [
      'version: 1',
      'entity: party',
      'key: "{{id}}"',
      'fields:',
      '  - { to: type, value: person }',
      '  - { to: firstName, value: { column: first } }',
      '  - { to: lastName, value: { column: last } }',
      '  - { to: email, type: Work, value: { column: email } }',
      '  - { to: phone, type: Work, value: { column: phone } }',
      '  - { to: organisation, value: { column: company } }',
      '',
    ].join('\n'),
  );
  return { mapping, input };
}

/** A sandbox of `root`'s code in a process of its own, with `latency` ms added to every answer. */
async function sandboxOf(root: string, latencyMs: number): Promise<{ url: string; stop(): Promise<void> }> {
  const options = {
    tokens: [TOKEN],
    ...(latencyMs > 0 ? { faults: { errorRate: 0, latencyMs, latencyJitterMs: 0, dropAfterWriteRate: 0 } } : {}),
  };
  const child = spawn(
    process.execPath,
    ['--max-old-space-size=8192', '--import', 'tsx', join(root, 'bench', 'sandbox-child.ts'), JSON.stringify(options)],
    { stdio: ['ignore', 'inherit', 'inherit', 'ipc'], cwd: root },
  );
  const url = await new Promise<string>((ok, fail) => {
    child.once('message', (m: { url: string }) => ok(m.url));
    child.once('exit', (code) => fail(new Error(`sandbox exited (${code})`)));
  });
  return { url, stop: () => new Promise<void>((ok) => (child.once('exit', () => ok()), child.send('stop'))) };
}

function add(a: Timed, b: Timed): Timed {
  return {
    wallSeconds: a.wallSeconds + b.wallSeconds,
    cpuSeconds: a.cpuSeconds + b.cpuSeconds,
    peakRssMb: Math.max(a.peakRssMb, b.peakRssMb),
    stdout: a.stdout + b.stdout,
  };
}

async function main(): Promise<void> {
  const work = join(tmpdir(), `crm-ferry-bench-import-scale-${process.pid}`);
  const { mapping, input } = writeInput(join(work, 'input'));
  try {
    for (const root of roots) {
      const server = await sandboxOf(root, Number(values.latency));
      const stateDir = join(work, `state-${roots.indexOf(root)}`);
      const env = { CRM_FERRY_TOKEN: TOKEN, CRM_FERRY_BASE_URL: server.url };
      const ferry = (args: string[]): Timed => timedNode([join(root, 'bin', 'crm-ferry.js'), ...args], env);
      const command = (extra: string[] = []): Timed =>
        ferry([
          'import',
          '--mapping',
          mapping,
          '--input',
          input,
          '--concurrency',
          values.concurrency,
          '--state-dir',
          stateDir,
          ...extra,
        ]);
      try {
        const first = values.limit ? add(command(['--limit', values.limit]), command()) : command();
        const line = (what: string, t: Timed): void => {
          const result = {
            bench: 'import-scale',
            root,
            rows,
            latencyMs: Number(values.latency),
            concurrency: Number(values.concurrency),
            run: what,
            ...t,
            load: Number(loadavg()[0]?.toFixed(2)),
          };
          process.stdout.write(`${JSON.stringify(result)}\n`);
          process.stdout.write(
            `# ${resolve(root) === resolve(here) ? 'this code' : root}, ${rows.toLocaleString('en-US')} rows, ${what}: wall ${t.wallSeconds.toFixed(1)} s, CPU ${t.cpuSeconds.toFixed(1)} s, peak RSS ${t.peakRssMb} MB (load ${result.load})\n`,
          );
        };
        line(values.limit ? `first run (in two parts, ${values.limit} rows first)` : 'first run', first);
        line('re-run, nothing changed', command());
        const only = new Set(values.only.split(','));
        if (only.has('validate'))
          line(
            'validate',
            ferry(['validate', '--mapping', mapping, '--input', input, '--rejects', join(work, 'rejects.csv')]),
          );
        if (only.has('verify'))
          line(
            'verify',
            ferry([
              'verify',
              '--mapping',
              mapping,
              '--input',
              input,
              '--state-dir',
              stateDir,
              '--concurrency',
              values.concurrency,
              '--differences',
              join(work, 'differences.csv'),
            ]),
          );
        if (only.has('export'))
          line(
            'export parties (CSV)',
            ferry(['export', 'parties', '--out', join(work, `parties-${roots.indexOf(root)}.csv`)]),
          );
      } finally {
        await server.stop();
      }
    }
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await main();
