import { describe, expect, it } from 'vitest';
import { admit, cookieValue, newSession, type RequestFacts, sessionUrl } from './security.ts';

let fill = 0;
const session = newSession(4321, (size) => Buffer.alloc(size, (fill += 1)));
const cookie = `${session.cookieName}=${session.cookie}`;
const page: RequestFacts = {
  method: 'GET',
  url: '/api/files',
  host: '127.0.0.1:4321',
  origin: undefined,
  cookie,
  fetchSite: 'same-origin',
};
const change: RequestFacts = { ...page, method: 'POST', url: '/api/run', origin: 'http://127.0.0.1:4321' };

describe('admit: the guard in front of every route', () => {
  const cases: Array<[string, RequestFacts, string]> = [
    ['a read of the page with the cookie', page, 'pass'],
    ['a read from localhost on the same port', { ...page, host: 'localhost:4321' }, 'pass'],
    ['a change from its own origin', change, 'pass'],
    ['no cookie', { ...page, cookie: undefined }, 'refuse 401'],
    ["another workbench's cookie", { ...page, cookie: `crm-ferry-workbench-9999=${session.cookie}` }, 'refuse 401'],
    ['a wrong cookie', { ...page, cookie: `${session.cookieName}=x${session.cookie.slice(1)}` }, 'refuse 401'],
    ['a foreign Host', { ...page, host: 'evil.example:4321' }, 'refuse 421'],
    ['another port in the Host', { ...page, host: '127.0.0.1:80' }, 'refuse 421'],
    ['no Host', { ...page, host: undefined }, 'refuse 421'],
    ['a change from another origin', { ...change, origin: 'http://evil.example' }, 'refuse 403'],
    ['a change without an origin', { ...change, origin: undefined }, 'refuse 403'],
    ['a change the browser calls cross-site', { ...change, fetchSite: 'cross-site' }, 'refuse 403'],
    ['the secret, right', { ...page, url: `/files?session=${session.secret}`, cookie: undefined }, 'enter /files'],
    ['the secret, wrong', { ...page, url: '/?session=nope', cookie: undefined }, 'refuse 403'],
    ['the secret in a change', { ...change, url: `/api/run?session=${session.secret}` }, 'refuse 403'],
  ];
  it.each(cases)('%s', (_what, request, expected) => {
    const admission = admit(request, session);
    const said =
      admission.kind === 'pass'
        ? 'pass'
        : admission.kind === 'enter'
          ? `enter ${admission.location}`
          : `refuse ${admission.status}`;
    expect(said).toBe(expected);
  });

  it('trades the secret for an HttpOnly SameSite=Strict cookie that is not the secret', () => {
    const admission = admit({ ...page, url: `/?session=${session.secret}&x=1`, cookie: undefined }, session);
    expect(admission).toEqual({
      kind: 'enter',
      location: '/?x=1',
      setCookie: `${session.cookieName}=${session.cookie}; HttpOnly; SameSite=Strict; Path=/`,
    });
    expect(session.cookie).not.toBe(session.secret);
    expect(sessionUrl(session)).toBe(`http://127.0.0.1:4321/?session=${session.secret}`);
  });

  it('reads a cookie among others', () => {
    expect(cookieValue(`a=1; ${cookie}; b=2`, session.cookieName)).toBe(session.cookie);
    expect(cookieValue('a=1', session.cookieName)).toBeUndefined();
  });
});
