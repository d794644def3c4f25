import Fastify from 'fastify';
import { describe, expect, it } from 'vitest';

/**
 * package.json `overrides` gives fastify's light-my-request cookie 1.1.1 instead of the 2.x it
 * asks for: cookie 2 declares Node >= 22, so `npm ci` on Node 20.19 warned EBADENGINE. 1.1.1 has
 * the same stringifySetCookie light-my-request calls; this fails if a later light-my-request
 * needs more of cookie 2 (then drop the override, and the README's note about it).
 */
describe('the cookie override under light-my-request', () => {
  it('still encodes the cookies of an injected request', async () => {
    const app = Fastify();
    app.get('/', async (request) => ({ cookie: request.headers.cookie }));
    const answer = await app.inject({ method: 'GET', url: '/', cookies: { a: 'b c', session: 'x' } });
    expect(answer.json()).toEqual({ cookie: 'a=b%20c; session=x' });
    await app.close();
  });
});
