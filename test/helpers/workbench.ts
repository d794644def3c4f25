/**
 * A workbench started in-process over a project folder, against a test sandbox, and the HTTP
 * calls a page makes (with the session cookie and the workbench's own origin).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent, type Dispatcher, request } from 'undici';
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

/**
 * Holds the workbench's requests to the account that a test picks, from a given one on, until the
 * test lets them go: "mid-run" is then a state the test is sure of, on a machine however busy.
 */
export class RequestGate {
  #rule: { pick: (method: string, path: string) => boolean; after: number; passed: number; held: () => void } | null =
    null;
  readonly #waiting: Array<() => void> = [];

  /** Lets `after` requests `pick` chooses through, then holds the next ones; resolves when the first is held. */
  hold(pick: (method: string, path: string) => boolean, after: number): Promise<void> {
    return new Promise((held) => {
      this.#rule = { pick, after, passed: 0, held };
    });
  }

  /** Lets every held request go, and holds no more. */
  release(): void {
    this.#rule = null;
    for (const go of this.#waiting.splice(0)) go();
  }

  readonly interceptor: Dispatcher.DispatcherComposeInterceptor = (dispatch) => (options, handler) => {
    const rule = this.#rule;
    if (rule === null || !rule.pick(String(options.method), String(options.path))) return dispatch(options, handler);
    if (rule.passed < rule.after) {
      rule.passed += 1;
      return dispatch(options, handler);
    }
    this.#waiting.push(() => dispatch(options, handler));
    rule.held();
    return true;
  };
}

export interface TestWorkbench extends RunningWorkbench {
  dir: string;
  /** The session cookie, as the browser holds it after opening the printed URL. */
  cookie: string;
  origin: string;
  /** Holds the workbench's requests to the account (see RequestGate). */
  gate: RequestGate;
  /** Closes the workbench and its client. */
  stop(): Promise<void>;
}

/** Starts a workbench over `dir` writing to `box`, and trades the printed URL's secret for the cookie. */
export async function startTestWorkbench(
  box: TestSandbox,
  dir: string,
  options: { progressEveryMs?: number; uploadLimitBytes?: number } = {},
): Promise<TestWorkbench> {
  const gate = new RequestGate();
  const agent = new Agent().compose(gate.interceptor);
  const { client } = await connect({ baseUrl: box.url, token: box.token, env: {}, dispatcher: agent });
  const account = { baseUrl: client.transport.origin, account: client.transport.origin };
  const accountView = { address: account.baseUrl, user: 'a personal API token from CRM_FERRY_TOKEN', problem: null };
  const engine = new Engine({
    words: await workbenchWords(),
    project: new Project(dir),
    client,
    account,
    accountView,
    v1Token: undefined,
    version: 'test',
    ...options,
  });
  const server = await startWorkbenchServer({
    engine,
    session: { dir, account: accountView, plan: 'plan.yaml', version: 'test' },
    pageDir: await builtPage(),
  });
  const entered = await request(server.url, { method: 'GET' });
  await entered.body.dump();
  const cookie = String(entered.headers['set-cookie']).split(';')[0] as string;
  return {
    ...server,
    dir,
    cookie,
    origin: `http://127.0.0.1:${server.port}`,
    gate,
    async stop() {
      gate.release();
      await server.close();
      await client.close();
      await agent.close();
    },
  };
}

/** A request as the page sends it (cookie, own origin), with headers to change. */
export async function call(
  bench: TestWorkbench,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string | undefined> } = {},
): Promise<{ status: number; headers: Record<string, unknown>; text: string; json: () => any }> {
  const headers: Record<string, string> = { cookie: bench.cookie, origin: bench.origin };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  for (const [name, value] of Object.entries(options.headers ?? {})) {
    if (value === undefined) delete headers[name];
    else headers[name] = value;
  }
  const answer = await request(`${bench.origin}${path}`, {
    method: method as 'GET',
    headers,
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
  const text = await answer.body.text();
  return { status: answer.statusCode, headers: answer.headers, text, json: () => JSON.parse(text) };
}
