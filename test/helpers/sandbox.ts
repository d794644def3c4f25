import { request } from 'undici';
import { startSandbox, type RunningSandbox, type SandboxOptions } from '../../src/sandbox/index.ts';

export interface ApiAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  /** Parsed JSON when the answer is JSON, the text otherwise ('' for an empty body). */
  body: any;
  text: string;
}

export interface TestSandbox extends RunningSandbox {
  /**
   * Sends a request. `path` is relative to the base address (`/api/v2/parties`, `/oauth/token`);
   * `body` objects are sent as JSON. The Administrator's token is sent unless `token` is null.
   */
  call(
    method: string,
    path: string,
    options?: { body?: unknown; token?: string | null; headers?: Record<string, string>; rawBody?: string | Buffer },
  ): Promise<ApiAnswer>;
  /** call() under `/api/v2`. */
  v2(method: string, path: string, body?: unknown): Promise<ApiAnswer>;
}

/** Starts a sandbox on 127.0.0.1, port 0; close it in afterAll/afterEach. */
export async function startTestSandbox(options: SandboxOptions = {}): Promise<TestSandbox> {
  const sandbox = await startSandbox({ port: 0, host: '127.0.0.1', ...options });
  const call: TestSandbox['call'] = async (method, path, opts = {}) => {
    const headers: Record<string, string> = { ...(opts.headers ?? {}) };
    const token = opts.token === undefined ? sandbox.token : opts.token;
    if (token !== null) headers.authorization = `Bearer ${token}`;
    let body: string | Buffer | undefined = opts.rawBody;
    if (opts.body !== undefined) {
      body = JSON.stringify(opts.body);
      headers['content-type'] ??= 'application/json';
    }
    const answer = await request(`${sandbox.url}${path}`, { method: method as 'GET', headers, body });
    const text = await answer.body.text();
    const type = String(answer.headers['content-type'] ?? '');
    let parsed: unknown = text;
    if (type.includes('json') && text !== '') parsed = JSON.parse(text);
    return { status: answer.statusCode, headers: answer.headers, body: parsed, text };
  };
  return {
    ...sandbox,
    call,
    v2: (method, path, body) => call(method, `/api/v2${path}`, body === undefined ? {} : { body }),
  };
}

/**
 * Every record of a list, page after page. A sandbox injecting faults answers some of these reads
 * with a 5xx too: they are asked again.
 */
export async function allPages(box: TestSandbox, path: string, key: string): Promise<any[]> {
  const out: any[] = [];
  for (let page = 1; ; page += 1) {
    const answer = await box.v2('GET', `${path}${path.includes('?') ? '&' : '?'}perPage=100&page=${page}`);
    if (answer.status >= 500) {
      page -= 1;
      continue;
    }
    const list = answer.body[key] as any[];
    out.push(...list);
    if (list.length < 100) return out;
  }
}
