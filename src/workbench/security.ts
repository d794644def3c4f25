/**
 * The workbench's guard: every request passes `admit` before any route sees it. A page on a
 * shared machine is reachable by every user of the machine and by every web page the browser has
 * open (a site can send requests to 127.0.0.1, or rebind its own name to it), so:
 *
 * - the server listens on 127.0.0.1 only (the command does that);
 * - the Host header must be the workbench's own address: a rebound name (`evil.example`) is refused;
 * - every request needs the session: the random secret in the URL printed at start, once, which
 *   is traded for an HttpOnly, SameSite=Strict cookie and taken out of the address bar;
 * - a request that changes something (not GET or HEAD) must come from the workbench's own origin;
 * - every answer carries a Content-Security-Policy that lets the page load nothing from elsewhere.
 */
import { randomBytes, timingSafeEqual } from 'node:crypto';

/** The query parameter of the printed URL that holds the secret. */
export const SECRET_PARAM = 'session';

export interface Session {
  /** In the printed URL only. */
  secret: string;
  /** The cookie's value: another random value, so that the URL's secret is never stored in the browser. */
  cookie: string;
  /** Cookies are shared by every port of a host: the name carries the port, so two workbenches do not trade theirs. */
  cookieName: string;
  port: number;
}

/** A fresh session for a workbench listening on `port`; `random` is injected by tests. */
export function newSession(port: number, random: (size: number) => Buffer = randomBytes): Session {
  return {
    secret: random(32).toString('base64url'),
    cookie: random(32).toString('base64url'),
    cookieName: `crm-ferry-workbench-${port}`,
    port,
  };
}

/** The one URL to print (and open with --open). */
export function sessionUrl(session: Session): string {
  return `http://127.0.0.1:${session.port}/?${SECRET_PARAM}=${session.secret}`;
}

function sameSecret(given: string, expected: string): boolean {
  const a = Buffer.from(given);
  const b = Buffer.from(expected);
  return a.length === b.length && timingSafeEqual(a, b);
}

/** The value of cookie `name` in a Cookie header, or undefined. */
export function cookieValue(header: string | undefined, name: string): string | undefined {
  if (!header) return undefined;
  for (const part of header.split(';')) {
    const at = part.indexOf('=');
    if (at === -1) continue;
    if (part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** What the guard needs of a request. */
export interface RequestFacts {
  method: string;
  /** The path and query as sent. */
  url: string;
  host: string | undefined;
  origin: string | undefined;
  cookie: string | undefined;
  /** `Sec-Fetch-Site`, which browsers send with every request. */
  fetchSite: string | undefined;
}

export type Admission =
  | { kind: 'pass' }
  /** The secret was right: set the cookie and send the browser to the same address without it. */
  | { kind: 'enter'; location: string; setCookie: string }
  | { kind: 'refuse'; status: 400 | 401 | 403 | 421; message: string };

/** The addresses the workbench answers to: what it printed, and `localhost` on the same port. */
export function ownHosts(port: number): string[] {
  return [`127.0.0.1:${port}`, `localhost:${port}`];
}

const SAFE_METHODS = new Set(['GET', 'HEAD']);

/** Decides what to do with a request before any route sees it. */
export function admit(request: RequestFacts, session: Session): Admission {
  const hosts = ownHosts(session.port);
  if (request.host === undefined || !hosts.includes(request.host.toLowerCase())) {
    return {
      kind: 'refuse',
      status: 421,
      message: `this workbench answers only to ${hosts[0]}; the request named the host ${JSON.stringify(request.host ?? '')}`,
    };
  }
  const url = new URL(request.url, `http://${hosts[0]}`);
  const given = url.searchParams.get(SECRET_PARAM);
  if (given !== null) {
    if (!SAFE_METHODS.has(request.method) || !sameSecret(given, session.secret)) {
      return {
        kind: 'refuse',
        status: 403,
        message:
          "the session in the address is not this workbench's: open the address the workbench printed when it started",
      };
    }
    url.searchParams.delete(SECRET_PARAM);
    const setCookie = `${session.cookieName}=${session.cookie}; HttpOnly; SameSite=Strict; Path=/`;
    return { kind: 'enter', location: `${url.pathname}${url.search}`, setCookie };
  }
  const cookie = cookieValue(request.cookie, session.cookieName);
  if (cookie === undefined || !sameSecret(cookie, session.cookie)) {
    return {
      kind: 'refuse',
      status: 401,
      message: 'no session: open the address the workbench printed when it started (it holds the session)',
    };
  }
  if (!SAFE_METHODS.has(request.method)) {
    const origins = hosts.map((host) => `http://${host}`);
    if (request.origin === undefined || !origins.includes(request.origin.toLowerCase())) {
      return {
        kind: 'refuse',
        status: 403,
        message: `a change must come from the workbench's own page; this request came from ${JSON.stringify(request.origin ?? 'no origin')}`,
      };
    }
    if (request.fetchSite !== undefined && request.fetchSite !== 'same-origin') {
      return {
        kind: 'refuse',
        status: 403,
        message: `a change must come from the workbench's own page; the browser says this one is ${request.fetchSite}`,
      };
    }
  }
  return { kind: 'pass' };
}

/**
 * The page's policy: its own scripts, styles and requests only; no inline script, no frame of
 * anything but its own report, no form sent elsewhere, never framed by another site.
 */
export const PAGE_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "frame-src 'self'",
  "form-action 'self'",
  "base-uri 'none'",
  "frame-ancestors 'none'",
].join('; ');

/**
 * The verify report's policy: it is the same self-contained page `verify --report` writes, with
 * its styles inline and no script at all; only the workbench's own page may frame it.
 */
export const REPORT_POLICY = [
  "default-src 'none'",
  "style-src 'unsafe-inline'",
  'img-src data:',
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'self'",
  'sandbox',
].join('; ');

/** Headers of every answer. */
export function commonHeaders(policy: string = PAGE_POLICY): Record<string, string> {
  return {
    'content-security-policy': policy,
    'x-content-type-options': 'nosniff',
    'referrer-policy': 'no-referrer',
    'cache-control': 'no-store',
    'cross-origin-opener-policy': 'same-origin',
    'cross-origin-resource-policy': 'same-origin',
    'x-frame-options': policy === PAGE_POLICY ? 'DENY' : 'SAMEORIGIN',
  };
}
