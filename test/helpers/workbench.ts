/**
 * A workbench started in-process over a project folder, against a test sandbox, and the HTTP
 * calls a page makes (with the session cookie and the workbench's own origin).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { connect } from '../../src/client/index.ts';
import { workbenchWords } from '../../src/cli/workbench.ts';
import { Engine, Project, startWorkbenchServer, type RunningWorkbench } from '../../src/workbench/index.ts';
import { buildPage } from '../../web/workbench/build.ts';
import type { TestSandbox } from './sandbox.ts';

let built: Promise<string> | null = null;

/** The page, built once per test file into a folder of its own (the sources may be newer than dist/). */
export function builtPage(): Promise<string> {
  built ??= (async () => {
    const out = `${mkdtempSync(join(tmpdir(), 'ferry-page-'))}/`;
    await buildPage(out);
    return out;
  })();
  return built;
}

export interface TestWorkbench extends RunningWorkbench {
  dir: string;
  /** The session cookie, as the browser holds it after opening the printed URL. */
  cookie: string;
  origin: string;
  /** Closes the workbench and its client. */
  stop(): Promise<void>;
}

/** Starts a workbench over `dir` writing to `box`, and trades the printed URL's secret for the cookie. */
export async function startTestWorkbench(box: TestSandbox, dir: string, options: { progressEveryMs?: number } = {}): Promise<TestWorkbench> {
  const { client } = await connect({ baseUrl: box.url, token: box.token, env: {} });
  const account = { baseUrl: client.transport.origin, account: client.transport.origin };
  const accountView = { address: account.baseUrl, user: 'a personal API token from CRM_FERRY_TOKEN', problem: null };
  const engine = new Engine({ words: await workbenchWords(), project: new Project(dir), client, account, accountView, v1Token: undefined, version: 'test', ...options });
  const server = await startWorkbenchServer({ engine, session: { dir, account: accountView, plan: 'plan.yaml', version: 'test' }, pageDir: await builtPage() });
  const entered = await request(server.url, { method: 'GET' });
  await entered.body.dump();
  const cookie = String(entered.headers['set-cookie']).split(';')[0] as string;
  return {
    ...server,
    dir,
    cookie,
    origin: `http://127.0.0.1:${server.port}`,
    async stop() {
      await server.close();
      await client.close();
    },
  };
}

/** A request as the page sends it (cookie, own origin), with headers to change. */
export async function call(bench: TestWorkbench, method: string, path: string, options: { body?: unknown; headers?: Record<string, string | undefined> } = {}): Promise<{ status: number; headers: Record<string, unknown>; text: string; json: () => any }> {
  const headers: Record<string, string> = { cookie: bench.cookie, origin: bench.origin };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  const answer = await request(`${bench.origin}${path}`, { method: method as 'GET', headers, body: options.body === undefined ? undefined : JSON.stringify(options.body) });
  const text = await answer.body.text();
  return { status: answer.statusCode, headers: answer.headers, text, json: () => JSON.parse(text) };
}
