// A live legacy v1 account is untrusted: a server that sends a byte a second, one that answers the
// same page forever, one whose page is huge or nested 500,000 levels deep, one that sends bytes that
// are not UTF-8, each ends the read with a clear error; and the old account is sent its token as the
// legacy service takes it (HTTP Basic), tested against a server that takes nothing else.
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterEach, describe, expect, it } from 'vitest';
import { v1LiveConnection, type V1ReadLimits, type V1WireFormat } from '../../src/client/v1-reader.ts';
import { FerryError } from '../../src/errors/index.ts';
import type { SourceItem } from '../../src/sources/types.ts';
import { readV1Live, type V1LiveReadOptions } from '../../src/sources/v1/v1-live.ts';
import { runCli } from '../helpers/fake-io.ts';
import { startTestSandbox } from '../helpers/sandbox.ts';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
const TOKEN = 'old-account-token-0123456789';
const BASIC = `Basic ${Buffer.from(`${TOKEN}:x`).toString('base64')}`;

interface OldAccount {
  url: string;
  /** Path and query, and the Authorization header, of every request, in order. */
  requests: Array<{ url: string; authorization: string | undefined }>;
  close(): Promise<void>;
}

const open: OldAccount[] = [];
const folders: string[] = [];
afterEach(async () => {
  for (const server of open.splice(0)) await server.close();
  for (const folder of folders.splice(0)) rmSync(folder, { recursive: true, force: true });
});

/** A server on 127.0.0.1, port 0, answering with `handler`; closed after the test. */
async function oldAccount(handler: (request: IncomingMessage, response: ServerResponse) => void): Promise<OldAccount> {
  const requests: OldAccount['requests'] = [];
  const server = createServer((request, response) => {
    requests.push({ url: request.url ?? '', authorization: request.headers.authorization });
    handler(request, response);
  });
  await new Promise<void>((done) => server.listen(0, '127.0.0.1', done));
  const account: OldAccount = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    requests,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((done) => server.close(() => done()));
    },
  };
  open.push(account);
  return account;
}

/** An organisation as the party list carries it: custom fields and tags nested, so it costs no request of its own. */
const organisation = (id: number): string =>
  `<organisation><id>${id}</id><name>Org ${id}</name><customFields/><tags/></organisation>`;

interface Read {
  rows: string[];
  error: FerryError | undefined;
  log: string[];
}

/** Reads the party list of `account` as an import does (the old account's own token and transport), to its end or its first error. */
async function read(
  account: OldAccount,
  options: {
    format?: V1WireFormat;
    giveUpAfterMs?: number;
    limits?: Partial<V1ReadLimits>;
    read?: V1LiveReadOptions;
  } = {},
): Promise<Read> {
  const log: string[] = [];
  const live = v1LiveConnection({
    token: TOKEN,
    format: options.format ?? 'xml',
    transport: { retry: { limit: 0 }, giveUpAfterMs: options.giveUpAfterMs ?? 0, log: (line) => log.push(line) },
    ...(options.limits ? { limits: options.limits } : {}),
  });
  const rows: string[] = [];
  let error: FerryError | undefined;
  try {
    const items: AsyncIterable<SourceItem> = readV1Live(live.readerFor(account.url), {
      record: 'organisation',
      pageSize: 2,
      ...(options.read ?? {}),
    });
    for await (const item of items) {
      if (item.kind === 'row') rows.push(String(item.values['name']));
      else throw item.error;
    }
  } catch (caught) {
    if (!(caught instanceof FerryError)) throw caught;
    error = caught;
  } finally {
    await live.close();
  }
  return { rows, error, log };
}

describe('a live v1 account that is slow, endless, huge or deep', () => {
  it('ends the wait for a page sent one byte at a time within --give-up-after, with API_TIMEOUT', async () => {
    const account = await oldAccount((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/xml' });
      const page = `<parties>${organisation(1)}${organisation(2)}</parties>`;
      let sent = 0;
      const drip = setInterval(() => response.write(page[sent++ % page.length] as string), 20);
      response.on('close', () => clearInterval(drip));
    });
    const { rows, error } = await read(account, { giveUpAfterMs: 1000 });
    expect(rows).toEqual([]);
    expect(error).toMatchObject({
      code: 'API_TIMEOUT',
      message: expect.stringMatching(
        /^GET \/api\/party\?start=0&limit=2: the answer did not come whole within 1 s \(\d+ bytes had come\)$/,
      ),
    });
    expect(account.requests).toHaveLength(1);
  });

  it('ends the wait for headers that never come within --give-up-after, without trying again past it', async () => {
    const account = await oldAccount(() => undefined);
    const { error } = await read(account, { giveUpAfterMs: 1000 });
    expect(error).toMatchObject({ code: 'API_TIMEOUT', message: expect.stringMatching(/no whole answer within 1 s/) });
    expect(account.requests).toHaveLength(1);
  });

  it.each([false, true])(
    'stops a server that answers every page with the same full page (spooled: %s), before spooling it again',
    async (spooled) => {
      const account = await oldAccount((_request, response) => {
        response.writeHead(200, { 'content-type': 'application/xml' });
        response.end(`<?xml version="1.0"?><parties>${organisation(1)}${organisation(2)}</parties>`);
      });
      const spool = mkdtempSync(join(tmpdir(), 'ferry-v1-endless-'));
      folders.push(spool);
      const { rows, error } = await read(account, spooled ? { read: { spool } } : {});
      expect(rows).toEqual(['Org 1', 'Org 2']);
      expect(error).toMatchObject({
        code: 'API_RESPONSE_INVALID',
        message:
          'GET /api/party?start=2&limit=2: the old account answered with the very page it gave for /api/party?start=0&limit=2: it does not go on through the list (it ignores start), and reading on would never end',
      });
      expect(account.requests.map((r) => r.url)).toEqual(['/api/party?start=0&limit=2', '/api/party?start=2&limit=2']);
      if (spooled) {
        const [records] = readdirSync(spool).filter((name) => name.endsWith('.jsonl'));
        expect(
          readFileSync(join(spool, records as string), 'utf8')
            .trim()
            .split('\n'),
        ).toHaveLength(2);
      }
    },
  );

  it('refuses a page over the size cap as it streams in, and one that declares it in Content-Length before reading it', async () => {
    const big = `<parties>${Array.from({ length: 2000 }, (_, i) => organisation(i + 1)).join('')}</parties>`;
    const streamed = await oldAccount((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(big);
    });
    const limits = { maxAnswerBytes: 64 * 1024, spillBytes: 16 * 1024 };
    const { error } = await read(streamed, { limits });
    expect(error).toMatchObject({
      code: 'API_RESPONSE_INVALID',
      message:
        'GET /api/party?start=0&limit=2: the answer is larger than 64 KiB, the most one answer of the old account may have',
    });
    expect(error?.hint).toMatch(/pageSize/);
    const declared = await oldAccount((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/xml', 'content-length': String(Buffer.byteLength(big)) });
      response.end(big);
    });
    expect((await read(declared, { limits })).error).toMatchObject({ code: 'API_RESPONSE_INVALID' });
  });

  it('reads a page larger than what is kept in memory through a temporary file, and removes the file', async () => {
    const count = 600;
    const account = await oldAccount((request, response) => {
      const start = Number(new URL(request.url ?? '', 'http://x').searchParams.get('start'));
      response.writeHead(200, { 'content-type': 'application/xml' });
      // The server gives every record at once, whatever the limit: one page of about 50 KiB.
      response.end(
        start === 0
          ? `<parties>${Array.from({ length: count }, (_, i) => organisation(i + 1)).join('')}</parties>`
          : '<parties/>',
      );
    });
    const before = readdirSync(tmpdir()).filter((name) => name.startsWith('crm-ferry-v1-')).length;
    const { rows, error } = await read(account, { limits: { spillBytes: 4 * 1024 } });
    expect(error).toBeUndefined();
    expect(rows).toHaveLength(count);
    expect(rows.at(-1)).toBe(`Org ${count}`);
    expect(readdirSync(tmpdir()).filter((name) => name.startsWith('crm-ferry-v1-')).length).toBeLessThanOrEqual(before);
  });

  it.each([
    ['json', `{"parties": ${'['.repeat(500_000)}`, /^the document nests deeper than 100 levels/],
    [
      'xml',
      `<parties>${'<a>'.repeat(300_000)}${'</a>'.repeat(300_000)}</parties>`,
      /^the document nests deeper than 100 levels/,
    ],
  ] as const)(
    'refuses a %s page nested 300,000 levels deep or more with SOURCE_TOO_DEEP, not a stack overflow',
    async (format, page, message) => {
      const account = await oldAccount((_request, response) => {
        response.writeHead(200, { 'content-type': `application/${format}` });
        response.end(page);
      });
      const { error } = await read(account, { format });
      expect(error).toMatchObject({
        code: 'SOURCE_TOO_DEEP',
        message: expect.stringMatching(message),
        location: { file: `v1+${account.url}/api/party?start=0&limit=2` },
      });
    },
  );

  it('refuses a page with bytes that are not UTF-8 with SOURCE_ENCODING, not a silent U+FFFD', async () => {
    const account = await oldAccount((_request, response) => {
      response.writeHead(200, { 'content-type': 'application/xml' });
      response.end(
        Buffer.concat([
          Buffer.from('<parties><organisation><id>1</id><name>Soci'),
          Buffer.from([0xe9, 0x74, 0xe9]),
          Buffer.from('</name></organisation></parties>'),
        ]),
      );
    });
    const { rows, error } = await read(account);
    expect(rows).toEqual([]);
    expect(error).toMatchObject({ code: 'SOURCE_ENCODING', message: 'byte 43 is not valid UTF-8' });
  });
});

describe('the old account is sent its token as the legacy service takes it', () => {
  /** A legacy service that takes HTTP Basic with the token as the user name, and nothing else. */
  function basicOnly(request: IncomingMessage, response: ServerResponse): void {
    const [scheme, credentials] = (request.headers.authorization ?? '').split(' ');
    const user =
      scheme === 'Basic'
        ? Buffer.from(credentials ?? '', 'base64')
            .toString('utf8')
            .split(':')[0]
        : undefined;
    if (user !== TOKEN) {
      response.writeHead(401, { 'content-type': 'application/xml', 'www-authenticate': 'Basic realm="legacy"' });
      response.end('<error>authentication required</error>');
      return;
    }
    const url = new URL(request.url ?? '', 'http://x');
    response.writeHead(200, { 'content-type': 'application/xml' });
    if (url.pathname.endsWith('/customfields'))
      response.end(
        '<customFields><customField><label>Industry</label><text>Shipping</text></customField></customFields>',
      );
    else if (url.pathname.endsWith('/tag')) response.end('<tags><tag><name>VIP</name></tag></tags>');
    else
      response.end(
        Number(url.searchParams.get('start')) === 0
          ? '<parties><organisation><id>7</id><name>Org 7</name></organisation></parties>'
          : '<parties/>',
      );
  }

  it('reads a server that takes HTTP Basic only, the token as the user name, and logs neither', async () => {
    const account = await oldAccount(basicOnly);
    const { rows, error, log } = await read(account);
    expect(error).toBeUndefined();
    expect(rows).toEqual(['Org 7']);
    expect(account.requests.map((r) => r.url)).toEqual([
      '/api/party?start=0&limit=2',
      '/api/party/7/customfields',
      '/api/party/7/tag',
    ]);
    expect(account.requests.every((r) => r.authorization === BASIC)).toBe(true);
    expect(log).toHaveLength(3);
    for (const line of log) expect(line).not.toMatch(new RegExp(`${TOKEN}|${BASIC.slice(6)}`));
  });

  it('says API_UNAUTHORIZED for a token the server does not take, without the token', async () => {
    const account = await oldAccount((request, response) => {
      request.headers.authorization = 'Basic d3Jvbmc6eA==';
      basicOnly(request, response);
    });
    const { error } = await read(account);
    expect(error).toMatchObject({
      code: 'API_UNAUTHORIZED',
      message: 'GET /api/party?start=0&limit=2: the service answered 401 (<error>authentication required</error>)',
    });
    expect(`${error?.message} ${error?.hint}`).not.toContain(TOKEN);
  });
});

describe('a rate limit of the old account past --give-up-after', () => {
  it('stops the run at once (exit 4) on a 429 with Retry-After: 3000 and --give-up-after 20s, saying when to run again', async () => {
    const account = await oldAccount((_request, response) => {
      response.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3000' });
      response.end('{"error": "rate limit reached"}');
    });
    const target = await startTestSandbox();
    const state = mkdtempSync(join(tmpdir(), 'ferry-v1-429-'));
    folders.push(state);
    try {
      const run = await runCli(
        [
          'import',
          '--mapping',
          join(ROOT, 'mappings/v1-organisations.yaml'),
          '--input',
          `v1+${account.url}`,
          '--give-up-after',
          '20s',
          '--state-dir',
          state,
        ],
        {
          cwd: state,
          env: { CRM_FERRY_BASE_URL: target.url, CRM_FERRY_TOKEN: target.token, CRM_FERRY_V1_TOKEN: TOKEN },
        },
      );
      expect(run.code, run.stdout + run.stderr).toBe(4);
      expect(run.stderr).toMatch(
        /\[API_RATE_LIMITED\].*GET \/api\/party\?start=0&limit=100: the service answered 429 \(rate limit reached\); its Retry-After asks for a wait of 50 min, longer than the 20 s a wait may take \(--give-up-after\): run again after \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/,
      );
      expect(run.stderr).not.toContain(TOKEN);
      expect(account.requests).toHaveLength(1);
    } finally {
      await target.close();
    }
  });
});
