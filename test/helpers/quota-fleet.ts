/**
 * Several `crm-ferry import` processes writing to one account at once, each with its own mapping
 * input and state folder, as a nightly sync and a consultant's import would: for the shared quota's
 * test and benchmark. Each runs through bin/crm-ferry.js with --verbose, so that the times of its
 * first and last requests are seen as they happen; the sandbox's own request log (`--log`) says
 * what it answered and when.
 */
import { spawn } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const CLI = fileURLToPath(new URL('../../bin/crm-ferry.js', import.meta.url));

/** One organisation per row, no matching: one request per row. */
const MAPPING = `version: 1
name: fleet-organisations
entity: party
source:
  format: csv
key: "{{name}}"
fields:
  - to: type
    value: organisation
  - to: name
    value: { column: name }
    required: true
`;

export interface FleetOptions {
  /** A folder of the run's own. */
  dir: string;
  baseUrl: string;
  token: string;
  /** `--state-store`; without it each process paces itself alone. */
  stateStore?: string;
  processes: number;
  /** Rows (requests) per process. */
  rows: number;
}

export interface FleetProcess {
  code: number | null;
  stdout: string;
  stderr: string;
  /** When its first and last request lines were read (ms since the epoch). */
  firstAt: number;
  lastAt: number;
}

/** Starts the processes together and resolves when every one has ended. */
export async function runFleet(options: FleetOptions): Promise<FleetProcess[]> {
  mkdirSync(options.dir, { recursive: true });
  writeFileSync(join(options.dir, 'organisations.yaml'), MAPPING);
  const runs = Array.from({ length: options.processes }, (_, index) => {
    const name = `p${index}`;
    const rows = Array.from({ length: options.rows }, (_, row) => `Fleet ${name} ${row}\n`).join('');
    writeFileSync(join(options.dir, `${name}.csv`), `name\n${rows}`);
    const args = [
      CLI,
      'import',
      '--mapping',
      'organisations.yaml',
      '--input',
      `${name}.csv`,
      '--state-dir',
      `${name}-state`,
      '--verbose',
      // One mapping over several inputs: with a store, each run's state needs a key of its own.
      ...(options.stateStore ? ['--state-store', options.stateStore, '--state-key', `fleet ${name}`] : []),
    ];
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      CRM_FERRY_BASE_URL: options.baseUrl,
      CRM_FERRY_TOKEN: options.token,
    };
    delete env.CRM_FERRY_STATE_STORE;
    const child = spawn(process.execPath, args, { cwd: options.dir, env, stdio: ['ignore', 'pipe', 'pipe'] });
    const seen: FleetProcess = { code: null, stdout: '', stderr: '', firstAt: 0, lastAt: 0 };
    child.stdout.on('data', (chunk: Buffer) => {
      seen.stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      const text = chunk.toString();
      seen.stderr += text;
      if (/ -> \d{3}$/m.test(text)) {
        const now = Date.now();
        if (seen.firstAt === 0) seen.firstAt = now;
        seen.lastAt = now;
      }
    });
    return new Promise<FleetProcess>((resolve) =>
      child.once('close', (code) => {
        seen.code = code;
        resolve(seen);
      }),
    );
  });
  return Promise.all(runs);
}

/** One answer of the sandbox's request log (`--log`): when its request arrived (as the limit counts it), and its status. */
export interface LoggedAnswer {
  time: number;
  status: number;
}

/** The answers in a sandbox's `--log` output. */
export function loggedAnswers(log: string): LoggedAnswer[] {
  const arrived = new Map<string, number>();
  const answers: LoggedAnswer[] = [];
  for (const line of log.split('\n')) {
    if (!line.startsWith('{')) continue;
    const entry = JSON.parse(line) as { time: number; reqId?: string; msg: string; res?: { statusCode: number } };
    if (entry.reqId === undefined) continue;
    if (entry.msg === 'incoming request') arrived.set(entry.reqId, entry.time);
    else if (entry.msg === 'request completed' && entry.res)
      answers.push({ time: arrived.get(entry.reqId) ?? entry.time, status: entry.res.statusCode });
  }
  return answers.sort((a, b) => a.time - b.time);
}

export interface FleetFigures {
  /** Requests answered (not 429) that arrived in the sandbox's windows lying wholly in the time every process was sending. */
  requests: number;
  /** Those windows' length in all. */
  seconds: number;
  /** Requests per second over those windows, and its share of the limit. */
  perSecond: number;
  share: number;
  /** The most requests any window got, 429s included (as the limit counts them). */
  busiestWindow: number;
  /** 429s answered over the whole run. */
  rateLimited: number;
}

/**
 * The rate the processes reached together while all of them were sending, against the sandbox's
 * limit of `limit` requests a `windowMs` window (windows aligned to the epoch, as the sandbox's):
 * counted in whole windows, so that a window's burst is neither half counted nor left out.
 */
export function fleetFigures(
  processes: FleetProcess[],
  answers: LoggedAnswer[],
  limit: number,
  windowMs = 1000,
): FleetFigures {
  const from = Math.ceil(Math.max(...processes.map((p) => p.firstAt)) / windowMs) * windowMs;
  const to = Math.floor(Math.min(...processes.map((p) => p.lastAt)) / windowMs) * windowMs;
  const perWindow = new Map<number, number>();
  for (const answer of answers) {
    const window = Math.floor(answer.time / windowMs);
    perWindow.set(window, (perWindow.get(window) ?? 0) + 1);
  }
  const requests = answers.filter((a) => a.time >= from && a.time < to && a.status !== 429).length;
  const seconds = Math.max(0, (to - from) / 1000);
  const perSecond = seconds > 0 ? requests / seconds : 0;
  return {
    requests,
    seconds,
    perSecond,
    share: perSecond / ((limit * 1000) / windowMs),
    busiestWindow: Math.max(0, ...perWindow.values()),
    rateLimited: answers.filter((a) => a.status === 429).length,
  };
}
