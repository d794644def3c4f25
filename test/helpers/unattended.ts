/**
 * One `crm-ferry run` of a generated plan, left alone against a sandbox that fails 5xx and drops
 * answers, signs the login in with short-lived OAuth tokens, and is killed (SIGKILL) and started
 * again on its data file and port while the run goes on. The suite's chaos test and
 * `npm run bench -- import-unattended` share it.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { request } from 'undici';
import { CredentialStore } from '../../src/client/credentials.ts';
import { profileFromAnswer, type TokenAnswer } from '../../src/client/oauth.ts';
import type { SandboxOptions } from '../../src/sandbox/index.ts';
import { killSandboxProcess, type SandboxProcessOptions, startSandboxProcess } from './sandbox-process.ts';
import { checkChaos, type ChaosFigures } from './chaos-check.ts';
import { writeChaosPlan, type ChaosSizes } from './chaos-plan.ts';
import type { TestSandbox } from './sandbox.ts';

const ROOT = resolve(fileURLToPath(new URL('.', import.meta.url)), '../..');
const CLI = join(ROOT, 'bin/crm-ferry.js');
/** The personal token the check reads the account with; the run itself signs in with OAuth. */
const TOKEN = 'unattended-check-token-1';
const CLIENT = {
  clientId: 'ferry-unattended',
  clientSecret: 'unattended-secret-0123456789',
  redirectUri: 'http://127.0.0.1:5555/cb',
  name: 'crm-ferry',
};

export interface UnattendedOptions {
  /** Folder for the plan, the state, the sandbox's data and the login; the caller removes it. */
  dir: string;
  sizes: ChaosSizes;
  /** Kills of the sandbox, spread over the run (at these shares of the rows written). */
  killAt: number[];
  /** How long the sandbox stays down at each kill, in milliseconds. */
  downMs: number;
  faults: NonNullable<SandboxOptions['faults']>;
  /** Lifetime of the OAuth access tokens, in seconds. */
  tokenTtlSeconds: number;
  concurrency: number;
  seed: number;
}

export interface UnattendedResult {
  /** The run's exit code. */
  code: number | null;
  /** Kills made (fewer than asked when the run ended first). */
  kills: number;
  elapsedMs: number;
  /** From the run's summary: requests sent, and writes whose answer was lost, found applied or not. */
  requests: number | null;
  reconciled: { applied: number; notApplied: number } | null;
  rejected: number | null;
  /** Whether the run refreshed the login (the stored access token changed). */
  refreshed: boolean;
  figures: ChaosFigures;
  /** The run's standard error, and its last output lines, for a failing test's message. */
  stderr: string;
  tail: string[];
}

async function form(
  url: string,
  path: string,
  values: Record<string, string>,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  const answer = await request(`${url}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(values).toString(),
  });
  return { status: answer.statusCode, headers: answer.headers, body: await answer.body.text() };
}

/** Logs in as a person would with `auth login`: approval, code, tokens, stored under `configDir`. */
async function logIn(url: string, configDir: string): Promise<string> {
  const approval = await form(url, '/oauth/authorise', {
    response_type: 'code',
    client_id: CLIENT.clientId,
    redirect_uri: CLIENT.redirectUri,
    scope: 'read write',
    state: 's',
    decision: 'approve',
  });
  const code = new URL(String(approval.headers.location)).searchParams.get('code');
  if (!code) throw new Error(`the sandbox did not approve the login (${approval.status})`);
  const exchange = await form(url, '/oauth/token', {
    grant_type: 'authorization_code',
    code,
    redirect_uri: CLIENT.redirectUri,
    client_id: CLIENT.clientId,
    client_secret: CLIENT.clientSecret,
  });
  if (exchange.status !== 200) throw new Error(`the token exchange failed (${exchange.status}): ${exchange.body}`);
  const config = { baseUrl: url, clientId: CLIENT.clientId, clientSecret: CLIENT.clientSecret };
  const profile = profileFromAnswer(config, JSON.parse(exchange.body) as TokenAnswer, Date.now());
  await new CredentialStore(credentialsFile(configDir)).put('default', profile);
  return profile.accessToken;
}

function credentialsFile(configDir: string): string {
  return join(configDir, 'crm-ferry', 'credentials.json');
}

/** Reads the account with the personal token, as checkChaos expects of a test sandbox. */
function reader(url: string): TestSandbox {
  const call: TestSandbox['call'] = async (method, path) => {
    const answer = await request(`${url}${path}`, {
      method: method as 'GET',
      headers: { authorization: `Bearer ${TOKEN}` },
    });
    const text = await answer.body.text();
    return {
      status: answer.statusCode,
      headers: answer.headers,
      body: String(answer.headers['content-type'] ?? '').includes('json') && text ? JSON.parse(text) : text,
      text,
    };
  };
  return { call, v2: (method: string, path: string) => call(method, `/api/v2${path}`) } as unknown as TestSandbox;
}

export async function runUnattended(options: UnattendedOptions): Promise<UnattendedResult> {
  const plan = writeChaosPlan(join(options.dir, 'plan'), options.sizes, options.seed);
  const total = Object.values(options.sizes).reduce((a, b) => a + b, 0);
  const dataFile = join(options.dir, 'sandbox.json');
  const configDir = join(options.dir, 'config');
  mkdirSync(configDir, { recursive: true });
  const sandboxOptions = (seed: number, port: number): SandboxProcessOptions => ({
    port,
    seed,
    faults: options.faults,
    clients: [CLIENT],
    tokenTtlSeconds: options.tokenTtlSeconds,
  });
  let sandbox = await startSandboxProcess(dataFile, TOKEN, sandboxOptions(options.seed, 0));
  const port = Number(new URL(sandbox.url).port);
  const firstToken = await logIn(sandbox.url, configDir);

  const started = Date.now();
  const run = spawn(
    process.execPath,
    [
      CLI,
      'run',
      plan.plan,
      '--state-dir',
      join(options.dir, 'state'),
      '--json',
      '--concurrency',
      String(options.concurrency),
      '--give-up-after',
      '2m',
    ],
    {
      cwd: options.dir,
      env: { ...process.env, XDG_CONFIG_HOME: configDir, CRM_FERRY_TOKEN: '', CRM_FERRY_BASE_URL: '' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  run.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const tail: string[] = [];
  const end: {
    summary: {
      requests?: number;
      reconciled?: { applied: number; notApplied: number };
      steps?: Array<{ rejected: number }>;
    } | null;
  } = { summary: null };
  let rows = 0;
  let kills = 0;
  let restarting: Promise<void> | null = null;
  const thresholds = options.killAt.map((share) => Math.floor(total * share));
  const restart = async (): Promise<void> => {
    await killSandboxProcess(sandbox.child);
    kills += 1;
    await new Promise((resolve) => setTimeout(resolve, options.downMs));
    // The same data and port; other fault draws.
    sandbox = await startSandboxProcess(dataFile, TOKEN, sandboxOptions(options.seed + kills, port));
  };
  const lines = createInterface({ input: run.stdout! });
  lines.on('line', (line) => {
    tail.push(line);
    if (tail.length > 5) tail.shift();
    if (line.startsWith('{"type":"row"')) rows += 1;
    if (line.startsWith('{"type":"end"')) end.summary = (JSON.parse(line) as typeof end).summary;
    if (restarting === null && thresholds.length > 0 && rows >= (thresholds[0] as number)) {
      thresholds.shift();
      restarting = restart().finally(() => (restarting = null));
    }
  });
  const code = await new Promise<number | null>((resolve) => run.once('exit', resolve));
  const elapsedMs = Date.now() - started;
  await restarting;
  try {
    const figures = await checkChaos(reader(sandbox.url), plan);
    const found = end.summary;
    const stored = await new CredentialStore(credentialsFile(configDir)).get('default');
    return {
      code,
      kills,
      elapsedMs,
      requests: found?.requests ?? null,
      reconciled: found?.reconciled ?? null,
      rejected: found?.steps ? found.steps.reduce((sum, s) => sum + s.rejected, 0) : null,
      refreshed: stored !== undefined && stored.accessToken !== firstToken,
      figures,
      stderr,
      tail,
    };
  } finally {
    await killSandboxProcess(sandbox.child);
  }
}
